// src/runtime/tensormap_and_ringbuffer/aicpu/dep_batch.h — batch_deps: the accesses of the last few
// submits, looked at before the TensorMap.
//
// Private to the orchestrator thread; a fixed pool (batch_deps x max_args entries) allocated
// once per run, nothing allocated after. An entry is one tensor access of a task of the current
// batch: (buffer, touched bytes, full region when strided, task, read/write, filed).
//
// scan() first asks a small hash of the batch's writes, keyed by byte range, for the newest
// write of r's very bytes by an earlier task (O(1)). If there is one, the TensorMap look-up is
// skipped: that writer was itself ordered after every older conflicting access (it looked them
// up, or was covered in turn), so r's producers are the writer plus the conflicting accesses
// added after it — a walk over those entries only (in an accumulation: the previous task's).
// Otherwise the TensorMap is asked (it holds every filed access) and the batch adds only the
// conflicts with its deferred accesses, the ones the TensorMap does not hold — a walk over a
// list that is empty when nothing was skipped, and skipped when r is outside the list's
// bounding box. So the batch costs a hash probe and an entry per access when it saves nothing,
// and a walk over the entries since the covering writer when it saves a TensorMap walk (short
// in an accumulation; up to the whole batch when many tasks read what one wrote). A contiguous
// write drops the entries it covers among those it walks (it now stands for them, as in
// TensorMap::access). Measured: docs/design/architecture.md, "Schedule primitives".
//
// Filing: an access that was looked up in the TensorMap was recorded there by the same walk
// (TensorMap::access) and is only mirrored here (`filed`); one that skipped the look-up waits
// here until flush(), which files the surviving ones in task order. A deferred access dropped
// by a covering write before the flush is never filed (counted in unfiled()).
#ifndef PTO_TMR_DEP_BATCH_H
#define PTO_TMR_DEP_BATCH_H

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "core/graph/id_list.h"
#include "core/region.h"
#include "core/trace.h"

namespace pto {
namespace tmr {

class DepBatch {
 public:
  // `capacity`: accesses the batch can hold (tasks per batch x arguments per task).
  explicit DepBatch(uint32_t capacity)
      : entries_(new Entry[capacity ? capacity : 1]),
        regions_(new RegionSlot[capacity ? capacity : 1]),
        deferred_(new uint32_t[capacity ? capacity : 1]),
        capacity_(capacity ? capacity : 1) {
    uint32_t n = 16;
    while (n < 2 * capacity_) n <<= 1;
    slots_.reset(new Slot[n]());  // epoch 0: empty (the first batch is epoch 1)
    slot_mask_ = n - 1;
  }

  // Task `task`'s access to r against the batch. Returns true when an earlier task's write in
  // the batch covers r: then the TensorMap look-up may be skipped, and every task of the batch
  // the access conflicts with is appended to *out — the covering writer and the conflicting
  // accesses after it (those before it are ordered through it: they overlap its region and
  // conflict with a write). Returns false otherwise: the caller looks r up in the TensorMap,
  // which holds the batch's filed accesses, so only conflicts with the deferred ones (which
  // it does not hold) are appended here — a walk skipped when r lies outside their bounding
  // box. Either way a contiguous write drops the entries it covers among those it looked at
  // (the same rule as TensorMap::access).
  // Out: push_back(int64_t); Kinds (profiling, may be null): push_back(graph::EdgeKind), each
  // marked kEdgeFromBatch.
  template <typename Out, typename Kinds>
  bool scan(const Region &r, bool write, int64_t task, Out *out, Kinds *kinds) {
    int64_t last = -1;  // entries are in task order: a task is listed once per scan
    const uint32_t cover = covering_write(r, task);
    if (cover != kNone) {
      Entry &c = entries_[cover];
      last = c.task;
      out->push_back(last);
      if (kinds) kinds->push_back(graph::EdgeKind{last, write ? kEdgeWaw : kEdgeRaw, kEdgeFromBatch});
      if (write && r.contiguous) drop(c);  // the same bytes again: this write stands for it now
      for (uint32_t e = cover + 1; e < used_; ++e) visit(e, r, write, task, &last, out, kinds);
      return true;
    }
    // The deferred accesses' bounding box (one buffer, or any): most accesses that are not
    // covered lie outside it and walk nothing.
    if (ndeferred_ == 0 || (deferred_buffer_ != kAnyBuffer &&
                            (deferred_buffer_ != r.buffer || deferred_hi_ <= r.lo || r.hi <= deferred_lo_)))
      return false;
    uint32_t kept = 0;  // the deferred list, compacted as it is walked (dropped ones leave it)
    for (uint32_t i = 0; i < ndeferred_; ++i) {
      const uint32_t e = deferred_[i];
      if (entries_[e].dropped) continue;
      deferred_[kept++] = e;
      visit(e, r, write, task, &last, out, kinds);
    }
    ndeferred_ = kept;
    return false;
  }
  // Adds task `task`'s access; `filed`: the TensorMap holds it already. False when full (the
  // caller flushes first: a batch of batch_deps tasks never fills it).
  bool add(const Region &r, bool write, int64_t task, bool filed) {
    if (r.empty()) return true;
    if (used_ == capacity_) return false;
    Entry &x = entries_[used_];
    x.buffer = r.buffer;
    x.lo = r.lo;
    x.hi = r.hi;
    x.task = task;
    x.write = write;
    x.contiguous = r.contiguous;
    x.filed = filed;
    x.dropped = false;
    if (!r.contiguous) std::memcpy(static_cast<void *>(&regions_[used_]), &r, sizeof(Region));
    if (!filed) {
      if (ndeferred_ == 0) {
        deferred_buffer_ = r.buffer, deferred_lo_ = r.lo, deferred_hi_ = r.hi;
      } else if (deferred_buffer_ != r.buffer) {
        deferred_buffer_ = kAnyBuffer;
      } else {
        deferred_lo_ = r.lo < deferred_lo_ ? r.lo : deferred_lo_;
        deferred_hi_ = r.hi > deferred_hi_ ? r.hi : deferred_hi_;
      }
      deferred_[ndeferred_++] = used_;
      ++live_deferred_;
    }
    if (write) {  // the newest write of these bytes is what a later access of them finds
      uint32_t h = slot_of(r.buffer, r.lo, r.hi);
      while (slots_[h].epoch == epoch_ && !same_bytes(slots_[h].entry, r)) h = (h + 1) & slot_mask_;
      slots_[h] = Slot{used_, epoch_};
    }
    ++used_;
    return true;
  }
  // Calls file(region, write, task) for every deferred access still in the batch, in the order
  // they were added (task order), then empties the batch. file returns false to stop (an
  // aborted run): flush then returns false and the batch keeps the unfiled rest.
  template <typename File>
  bool flush(File &&file) {
    for (; flushed_ < used_; ++flushed_) {
      const Entry &x = entries_[flushed_];
      if (x.filed || x.dropped) continue;
      if (!x.contiguous) {
        if (!file(region(flushed_), x.write, x.task)) return false;
        continue;
      }
      Region r;
      set_contiguous(&r, x);
      if (!file(r, x.write, x.task)) return false;
    }
    used_ = flushed_ = ndeferred_ = live_deferred_ = 0;
    ++epoch_;  // empties the hash
    return true;
  }

  bool empty() const { return used_ == 0; }
  uint32_t size() const { return used_; }
  uint32_t capacity() const { return capacity_; }
  // Deferred accesses dropped before any flush filed them (never filed), since construction.
  uint64_t unfiled() const { return unfiled_; }
  // Deferred accesses in the batch now (neither filed nor dropped): what a flush would file.
  uint32_t deferred() const { return live_deferred_; }

 private:
  struct Entry {  // trivial: a new pool is not written
    uint64_t buffer;
    int64_t lo, hi;  // touched bytes
    int64_t task;
    bool write, contiguous, filed, dropped;
  };
  struct RegionSlot {
    alignas(Region) unsigned char bytes[sizeof(Region)];
  };
  // Hash of the batch's writes by (buffer, lo, hi) -> newest entry; a slot is empty unless its
  // epoch is the current batch's (a flush empties the table by counting up). Open addressing:
  // at most capacity keys in at least twice as many slots.
  struct Slot {
    uint32_t entry, epoch;
  };
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  static constexpr uint64_t kAnyBuffer = ~uint64_t{0};  // deferred accesses on several buffers
  uint32_t slot_of(uint64_t buffer, int64_t lo, int64_t hi) const {
    const uint64_t h = (buffer >> 3) * 0x9E3779B97F4A7C15ull ^
                       static_cast<uint64_t>(lo) * 0xC2B2AE3D27D4EB4Full ^
                       static_cast<uint64_t>(hi) * 0x165667B19E3779F9ull;
    return static_cast<uint32_t>(h >> 32) & slot_mask_;
  }
  bool same_bytes(uint32_t e, const Region &r) const {
    const Entry &x = entries_[e];
    return x.buffer == r.buffer && x.lo == r.lo && x.hi == r.hi;
  }
  // The newest write of the batch with r's very bytes, if it is an earlier task's, still in the
  // batch and covers r (a strided one: the same geometry); else kNone. Only identical byte
  // ranges are found (a hash look-up): a write covering r more widely is a missed skip, not an
  // error — the TensorMap is asked then.
  uint32_t covering_write(const Region &r, int64_t task) const {
    for (uint32_t h = slot_of(r.buffer, r.lo, r.hi); slots_[h].epoch == epoch_; h = (h + 1) & slot_mask_) {
      const uint32_t e = slots_[h].entry;
      if (!same_bytes(e, r)) continue;
      const Entry &x = entries_[e];
      return !x.dropped && x.task != task && covers(e, r) ? e : kNone;
    }
    return kNone;
  }
  // One entry against the access: lists its task if they conflict, drops it if a contiguous
  // write covers it.
  template <typename Out, typename Kinds>
  void visit(uint32_t e, const Region &r, bool write, int64_t task, int64_t *last, Out *out, Kinds *kinds) {
    Entry &x = entries_[e];
    if (x.dropped || x.task == task || x.buffer != r.buffer || x.hi <= r.lo || r.hi <= x.lo) return;
    if (!(write || x.write)) return;
    if (!x.contiguous || !r.contiguous) {
      if (x.contiguous) {
        Region xr;
        set_contiguous(&xr, x);
        if (!regions_overlap(xr, r)) return;
      } else if (!regions_overlap(region(e), r)) {
        return;
      }
    }
    if (x.task != *last) out->push_back(x.task);
    *last = x.task;
    const uint32_t kind = !write ? kEdgeRaw : x.write ? kEdgeWaw : kEdgeWar;
    if (kinds) kinds->push_back(graph::EdgeKind{x.task, kind, kEdgeFromBatch});
    if (write && r.contiguous && r.lo <= x.lo && x.hi <= r.hi) drop(x);
  }
  void drop(Entry &x) {
    x.dropped = true;
    if (!x.filed) ++unfiled_, --live_deferred_;
  }
  static_assert(std::is_trivially_copyable<Region>::value, "add() copies a region in with memcpy");

  // A contiguous access is kept as its bytes only: the same bytes as one dimension of 1-byte
  // elements (overlap and coverage of a contiguous region depend on its bytes alone).
  static void set_contiguous(Region *r, const Entry &x) {
    r->buffer = x.buffer;
    r->base = r->lo = x.lo;
    r->hi = x.hi;
    r->esize = 1;
    r->ndim = 1;
    r->shape[0] = x.hi - x.lo;
    r->stride[0] = 1;
    r->contiguous = true;
  }
  const Region &region(uint32_t e) const {
    return *std::launder(reinterpret_cast<const Region *>(&regions_[e]));
  }
  // Does entry e (a write) touch every byte r touches? Exact for a contiguous entry; a strided
  // entry covers only a region with the same geometry (the common case: the same tile again).
  bool covers(uint32_t e, const Region &r) const {
    const Entry &x = entries_[e];
    if (x.contiguous) return x.lo <= r.lo && r.hi <= x.hi;
    if (r.contiguous) return false;
    const Region &a = region(e);
    if (a.base != r.base || a.esize != r.esize || a.ndim != r.ndim) return false;
    for (uint32_t d = 0; d < a.ndim; ++d) {
      if (a.shape[d] != r.shape[d] || (a.shape[d] > 1 && a.stride[d] != r.stride[d])) return false;
    }
    return true;
  }

  std::unique_ptr<Entry[]> entries_;
  std::unique_ptr<RegionSlot[]> regions_;  // by entry, strided accesses only
  std::unique_ptr<uint32_t[]> deferred_;   // entries not filed, in order (dropped ones leave lazily)
  std::unique_ptr<Slot[]> slots_;
  uint32_t capacity_;
  uint32_t slot_mask_ = 0;
  uint32_t epoch_ = 1;
  uint32_t ndeferred_ = 0;
  // Bounding box of the deferred list since the last flush (not shrunk when entries leave it).
  uint64_t deferred_buffer_ = 0;
  int64_t deferred_lo_ = 0, deferred_hi_ = 0;
  uint32_t used_ = 0;
  uint32_t flushed_ = 0;        // flush() resumes here after a stop
  uint32_t live_deferred_ = 0;  // deferred entries not dropped: what a flush files
  uint64_t unfiled_ = 0;
};

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_DEP_BATCH_H
