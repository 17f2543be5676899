// src/core/graph/tensor_map.h — which earlier live tasks touched a region.
//
// Private to the orchestrator thread (no atomics, no locks). Portable core: no STL containers,
// no exceptions; its storage is one Arena block allocated at construction (entries, full
// regions, buckets), nothing is allocated after. Results go into caller-sized IdList /
// EdgeKindList (core/graph/id_list.h).
// Entries record (buffer, region, task, read/write) for the tasks still alive, in hash chains
// keyed by (buffer, level, granule). Levels are granule sizes 8 B, 64 B, 1 KiB, 16 KiB and
// 256 KiB; a region is filed at the finest level where its bytes span at most two granules,
// under the granule of its first byte (or in the buffer's "large" chain if it fits none). A
// look-up probes, at each level that holds entries, the granules its own bytes span plus the
// one before — where every region of that level that could overlap it is filed; the one
// before only while some entry of the level spans two granules — so a submit
// among thousands of live tiles of one buffer looks at a few short chains, and 8-byte cells of
// one cache line (a stencil's) do not share one chain. A look-up that would probe more granules
// of a level than both kMaxProbes and the pool's size scans the pool for that level instead
// (a huge view over a buffer written in small pieces): the cost is the smaller of the two.
//
// Retirement: entries also sit on an age list in the order they were filed, which is task
// order; each access first pops the entries of retired tasks off its head (and a chain walk
// frees any retired entry it still meets), so chains hold live entries only and the pool never
// needs a sweep. Chains and the age list are doubly linked: superseding or retiring an entry
// is O(1) wherever it sits.
//
// A chain walk reads only a compact entry (64 bytes, one cache line, aligned: buffer, byte
// range, task, links, and a "period filter" for strided views, below). The entry describes a
// contiguous region (its bytes and element size) and a one-dimensional strided one (the filter
// holds its stride and element size) by itself; only other regions (several strided
// dimensions: tiles) are copied whole (~180 bytes: shape and strides) into a parallel array,
// read only when the byte ranges meet and the filter cannot tell the two apart. A contiguous
// entry against a strided view needs no shape of its own (region_meets_bytes). A submit looks
// up and records each access in one walk (access()).
//
// Period filter (strided tiles of one buffer): a region whose largest stride S (over dimensions
// of extent > 1) exceeds the byte extent E of its other dimensions touches only bytes b with
// b mod S in [c, c + E), c = base mod S. Two regions with the same S whose such intervals do not
// meet share no byte — the usual case for tiles side by side in one row band of a matrix, whose
// byte ranges interleave. Exact in the "no" direction only; anything else goes to
// regions_overlap (core/region.h).
#ifndef PTO_CORE_GRAPH_TENSOR_MAP_H
#define PTO_CORE_GRAPH_TENSOR_MAP_H

#include <cstdint>
#include <new>  // std::launder
#include <type_traits>

#include "core/graph/arena.h"
#include "core/graph/id_list.h"
#include "core/region.h"

namespace pto {
namespace graph {

class TensorMap {
 public:
  explicit TensorMap(uint32_t capacity);
  TensorMap(const TensorMap &) = delete;
  TensorMap &operator=(const TensorMap &) = delete;

  // Task `task`'s access to r, in one walk: appends to *out (deduplicated by the caller) every
  // other live task whose recorded access to an overlapping region conflicts with this one —
  // writers for a read; writers and readers for a write — then records the access. A write
  // drops the entries it covers (their tasks are among *out, so it now stands for them).
  // `live_from` is last_task_alive: entries of older tasks are freed first (reclaim) and never
  // returned. With `kinds` (profiling), also appends each (producer, TraceEdgeKind) found.
  // Each live entry is reported at most once per call, so *out (and *kinds) must have room()
  // for used() more: checked in debug builds (PTO_DCHECK); a list that overflowed anyway
  // refused the extra ids and says so (FixedList::overflowed), it never writes past its end.
  // Returns false when the pool is full and the access could not be recorded (the look-up part
  // is done: the caller reclaims or waits, then calls add).
  // Calling it for a task's accesses one after another equals looking all of them up before
  // recording any: a later access never needs an entry an earlier one dropped, because the
  // earlier one conflicted with it and so already returned its task.
  bool access(const Region &r, bool write, int64_t task, int64_t live_from, IdList *out,
              EdgeKindList *kinds = nullptr);
  // Look-up only, nothing recorded: the youngest live task whose access conflicts with one by
  // `write` to r (writers for a read; writers and readers for a write), or -1. Since tasks
  // retire in id order, once last_task_alive passes it every conflicting task has finished —
  // a covering write dropped older entries, but their tasks are older still.
  int64_t youngest_conflict(const Region &r, bool write, int64_t live_from);
  // Records the access without a look-up (inside a manual scope): nothing is dropped, since the
  // task was not ordered after the entries it covers. Returns false when the pool is full (the
  // caller reclaims or waits, then calls add).
  bool insert(const Region &r, bool write, int64_t task, int64_t live_from);
  // Files the access as a new entry, with no walk at all: what access or insert do last, and
  // their retry once a full pool has room. False when the pool is full. Tasks must be filed in
  // non-decreasing order (the orchestrator's ids are) for reclaim to free them promptly.
  bool add(const Region &r, bool write, int64_t task);
  // Frees the entries of tasks below live_from from the head of the age list (O(freed));
  // returns how many were freed.
  uint32_t reclaim(int64_t live_from);

  uint32_t used() const { return used_; }
  uint32_t capacity() const { return capacity_; }
  // Walks the whole pool and aborts (PTO_CHECK) unless the structure is consistent: chains and
  // the age list are doubly linked both ways, hold the same used() entries, each filed under
  // its bucket; per-level and straddling counts agree; the free list holds the rest of the
  // entries handed out so far. Costs O(pool): called by reclaim() in debug builds (when it
  // freed something) and by tests.
  void check_invariants() const;

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // The period filter of a region (see the header comment): touched bytes b have b mod period in
  // [col, col + width); period 0 = no filter (contiguous, the interval would wrap, or a period of
  // 4 GiB or more). A contiguous region's filter is {0, 0, esize}: an entry keeps its element
  // size there. A filter whose width is the element size describes a one-dimensional region
  // (every other dimension has extent 1 or stride 0): its elements start at base + i * period.
  struct Period {  // trivial, so a new pool of entries is not written (see the constructor)
    uint32_t period, col, width;
  };
  static Period period_of(const Region &r) {
    return r.contiguous || r.empty() ? Period{0, 0, r.esize} : strided_period(r);
  }
  static Period strided_period(const Region &r);
  // Does the entry need the full region (regions_), or do its bytes and filter describe it?
  static bool needs_copy(const Region &r, const Period &rp) {
    return !r.contiguous && !(rp.period != 0 && rp.width == r.esize);
  }
  // Do the two filters prove the regions disjoint? (Same period, intervals that do not meet.)
  static bool period_disjoint(const Period &a, const Period &b) {
    return a.period != 0 && a.period == b.period && (a.col + a.width <= b.col || b.col + b.width <= a.col);
  }
  struct alignas(64) Entry {
    uint64_t buffer;
    int64_t lo, hi;  // the region's touched bytes
    int64_t task;    // -1 while the entry is free
    Period filter;
    // Bucket chain; next: the free list too. The first entry of a chain has prev = ~bucket (no
    // entry index reaches that far: checked at construction), so release() needs no hash.
    uint32_t next, prev;
    uint32_t younger, older;  // age list
    uint8_t level;
    bool write;
    bool contiguous;  // the region touches exactly [lo, hi)
    uint8_t flags;    // kStraddles, kCopied
  };
  static constexpr uint8_t kStraddles = 1;  // its bytes span two granules of its level (not one)
  static constexpr uint8_t kCopied = 2;     // regions_[e] holds its region (needs_copy)
  static_assert(sizeof(Entry) == 64, "one cache line: a chain walk reads one line per entry");
  static_assert(std::is_trivially_default_constructible<Entry>::value, "a new pool is not written");
  static constexpr int kLevels = 5;
  static constexpr int kShift[kLevels] = {3, 6, 10, 14, 18};
  static constexpr int kLarge = kLevels;  // level of regions too big for any granule
  static constexpr int64_t kMaxProbes = 64;

  static int level_of(const Region &r) {
    for (int l = 0; l < kLevels; ++l) {
      if (((r.hi - 1) >> kShift[l]) - (r.lo >> kShift[l]) <= 1) return l;
    }
    return kLarge;
  }
  static int64_t key(int level, int64_t granule) { return level == kLarge ? -1 : granule * 8 + level; }
  static int64_t key_of(int64_t lo, int level) {
    return level == kLarge ? -1 : key(level, lo >> kShift[level]);
  }
  uint32_t bucket(uint64_t buffer, int64_t k) const {
    const uint64_t h =
        (buffer >> 6) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(k) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<uint32_t>(h >> 32) & bucket_mask_;
  }
  // Where an entry for r is filed: its level, the granule of its first byte there (0 for the
  // large level) and that chain's bucket. Computed once per access, for the look-up and the filing.
  struct Place {
    int level;
    int64_t granule;
    uint32_t bucket;
  };
  Place place_of(const Region &r) const {
    const int l = level_of(r);
    const int64_t g = l == kLarge ? 0 : r.lo >> kShift[l];
    return Place{l, g, bucket(r.buffer, l == kLarge ? -1 : key(l, g))};
  }
  // Calls fn(entry) for every live entry that may overlap r, each at most once; fn may release
  // the entry (the walk has already read its link). Retired entries met in chains are freed.
  template <typename Fn>
  void for_candidates(const Region &r, const Place &at, int64_t live_from, Fn &&fn);
  void release(uint32_t e);            // unlinks e from its chain and the age list, and frees it
  uint32_t retire(int64_t live_from);  // reclaim() without its debug-build invariant walk
  // add(), with r's filter and place known. `rp`: period_of(r), computed once per look-up.
  bool file(const Region &r, bool write, int64_t task, const Period &rp, const Place &at);
  bool overlaps(uint32_t e, const Region &r, const Period &rp) const {
    const Entry &x = entries_[e];
    if (x.hi <= r.lo || r.hi <= x.lo) return false;  // buffer checked by the walk
    if (x.contiguous && r.contiguous) return true;
    if (period_disjoint(x.filter, rp)) return false;
    return shapes_overlap(e, r);
  }
  // The byte ranges meet, the two are not both contiguous and the filters cannot tell: compare
  // their elements (regions_overlap; a contiguous entry needs only its bytes).
  bool shapes_overlap(uint32_t e, const Region &r) const;
  // Entry e's region: the copy in regions_, or (not kCopied) rebuilt from the entry into *scratch.
  const Region &region(uint32_t e, Region *scratch) const;

  // Full regions, by entry (kCopied entries only): raw storage, constructed one by one as entries
  // are filed, so a new map (one per run) does not write 16k default regions (~3 MB).
  struct RegionSlot {
    alignas(Region) unsigned char bytes[sizeof(Region)];
  };
  static_assert(std::is_trivially_destructible<Region>::value, "a slot is re-filed without destroying");
  static_assert(std::is_trivially_copyable<Region>::value, "file() copies a region in with memcpy");
  Arena arena_;     // the one allocation: entries_, regions_, buckets_
  Entry *entries_;  // [0, fresh_) have been used; the rest never written
  RegionSlot *regions_;
  uint32_t *buckets_;  // bucket_mask_ + 1 chain heads
  uint32_t capacity_;
  uint32_t fresh_ = 0;
  uint32_t bucket_mask_;
  uint32_t free_ = kNone;                       // entries released since; taken before fresh ones
  uint32_t oldest_ = kNone, youngest_ = kNone;  // the age list's ends
  uint32_t used_ = 0;
  uint32_t per_level_[kLevels + 1] = {};  // live entries at each level (to skip empty levels)
  uint32_t filled_levels_ = 0;            // bit l: per_level_[l] != 0 (a look-up visits only these)
  // Live entries at each level that span two granules. While a level has none, a look-up need
  // not probe the granule before its own (what a straddling entry filed there would reach
  // into): 8-byte cells and aligned tiles then cost one chain per granule, not two.
  uint32_t straddling_[kLevels] = {};
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_TENSOR_MAP_H
