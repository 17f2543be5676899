// src/runtime/tensormap_and_ringbuffer/aicpu/dep_batch.h — batch_deps: the accesses of the last few
// submits, looked at before the TensorMap.
//
// Private to the orchestrator thread; a fixed pool (batch_deps x max_args entries) allocated
// once per run, nothing allocated after. An entry is one tensor access of a task of the current
// batch: (buffer, touched bytes, full region when strided, task, read/write, filed).
//
// scan() does for the batch what TensorMap::access does for the global map, by a linear walk
// (a batch is small): every earlier task of the batch whose access conflicts (a read with
// writers; a write with writers and readers) is appended to the producers, and a write drops
// the entries it covers from the batch (it now stands for them: it depends on their tasks,
// and whatever later conflicts with a covered entry conflicts with the write). scan() returns
// whether an EARLIER task of the batch wrote a region covering this one: then the TensorMap
// look-up may be skipped — that writer was itself ordered after every older conflicting
// access (it looked them up, or was covered in turn by an earlier batch writer), and every
// access filed since it belongs to the batch and was just scanned.
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

#include "core/region.h"
#include "core/trace.h"

namespace pto {
namespace tmr {

class DepBatch {
 public:
  // `capacity`: accesses the batch can hold (tasks per batch x arguments per task).
  explicit DepBatch(uint32_t capacity)
      : entries_(new Entry[capacity ? capacity : 1]), regions_(new RegionSlot[capacity ? capacity : 1]),
        capacity_(capacity ? capacity : 1) {}

  // Task `task`'s access to r against the batch: appends every conflicting earlier task of the
  // batch to *out (and (task, TraceEdgeKind) to *kinds when given); a write drops the entries
  // it covers. True when an earlier task's write in the batch covers r (the TensorMap look-up
  // may be skipped). Out: anything with push_back(int64_t); Kinds: emplace_back(int64_t, uint32_t).
  template <typename Out, typename Kinds>
  bool scan(const Region &r, bool write, int64_t task, Out *out, Kinds *kinds) {
    bool covered = false;
    int64_t last = -1;  // entries are in task order: a task listed once per scan, not per access
    for (uint32_t e = 0; e < used_; ++e) {
      Entry &x = entries_[e];
      if (x.dropped || x.task == task || x.buffer != r.buffer || x.hi <= r.lo || r.hi <= x.lo) continue;
      if (!(write || x.write)) continue;
      if (!x.contiguous || !r.contiguous) {
        if (!regions_overlap(x.contiguous ? contiguous_region(x) : region(e), r)) continue;
      }
      if (x.task != last) out->push_back(x.task);
      last = x.task;
      if (kinds) kinds->emplace_back(x.task, !write ? kEdgeRaw : x.write ? kEdgeWaw : kEdgeWar);
      if (x.write && covers(e, r)) covered = true;
      if (write && r.contiguous && r.lo <= x.lo && x.hi <= r.hi) {  // the same rule as TensorMap::access
        x.dropped = true;
        if (!x.filed) ++unfiled_, --deferred_;
      }
    }
    return covered;
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
    deferred_ += filed ? 0 : 1;
    if (!r.contiguous) std::memcpy(static_cast<void *>(&regions_[used_]), &r, sizeof(Region));
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
      if (!file(x.contiguous ? contiguous_region(x) : region(flushed_), x.write, x.task)) return false;
    }
    used_ = flushed_ = deferred_ = 0;
    return true;
  }

  bool empty() const { return used_ == 0; }
  uint32_t size() const { return used_; }
  uint32_t capacity() const { return capacity_; }
  // Deferred accesses dropped before any flush filed them (never filed), since construction.
  uint64_t unfiled() const { return unfiled_; }
  // Deferred accesses in the batch now (neither filed nor dropped): what a flush would file.
  uint32_t deferred() const { return deferred_; }

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
  static_assert(std::is_trivially_copyable<Region>::value, "add() copies a region in with memcpy");

  // A contiguous access is kept as its bytes only: the same bytes as one dimension of 1-byte
  // elements (overlap and coverage of a contiguous region depend on its bytes alone).
  static Region contiguous_region(const Entry &x) {
    Region r;
    r.buffer = x.buffer;
    r.base = r.lo = x.lo;
    r.hi = x.hi;
    r.esize = 1;
    r.ndim = 1;
    r.shape[0] = x.hi - x.lo;
    r.stride[0] = 1;
    r.contiguous = true;
    return r;
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
  uint32_t capacity_;
  uint32_t used_ = 0;
  uint32_t flushed_ = 0;  // flush() resumes here after a stop
  uint32_t deferred_ = 0;
  uint64_t unfiled_ = 0;
};

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_DEP_BATCH_H
