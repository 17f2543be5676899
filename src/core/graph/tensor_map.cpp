// src/core/graph/tensor_map.cpp — TensorMap look-up, insertion, retirement.
#include "core/graph/tensor_map.h"

#include <cstring>

#include "core/check.h"
#include "core/trace.h"

namespace pto {
namespace graph {

// Entries are handed out from a fresh watermark before the free list is used, so building a
// map costs its bucket array only, not the whole pool: the orchestrator makes one per run.
TensorMap::TensorMap(uint32_t capacity) : capacity_(capacity ? capacity : 1) {
  uint32_t nb = 64;
  while (nb < capacity_ / 2) nb <<= 1;
  const size_t e = arena_.reserve<Entry>(capacity_), r = arena_.reserve<RegionSlot>(capacity_),
               b = arena_.reserve<uint32_t>(nb);
  arena_.allocate("TensorMap");
  entries_ = arena_.at<Entry>(e);
  regions_ = arena_.at<RegionSlot>(r);
  buckets_ = arena_.at<uint32_t>(b);
  static_assert(kNone == 0xFFFFFFFFu, "an empty bucket is all ones");
  memset(buckets_, 0xFF, nb * sizeof(uint32_t));  // 8k buckets by default: a loop was ~3 us per run
  bucket_mask_ = nb - 1;
  PTO_CHECK(capacity_ <= ~bucket_mask_, "TensorMap: entry indices would reach the chains' head markers");
}

TensorMap::Period TensorMap::strided_period(const Region &r) {
  Period p{0, 0, 0};
  int64_t outer = -1, extent = r.esize;
  uint32_t od = 0;
  for (uint32_t d = 0; d < r.ndim; ++d) {
    if (r.shape[d] > 1 && r.stride[d] > outer) {
      outer = r.stride[d];
      od = d;
    }
  }
  if (outer <= 0 || outer > static_cast<int64_t>(UINT32_MAX)) return p;
  for (uint32_t d = 0; d < r.ndim; ++d) {
    if (d != od && r.shape[d] > 1) extent += (r.shape[d] - 1) * r.stride[d];
  }
  const int64_t col = r.base % outer;
  if (col + extent > outer) return p;  // wraps (or no gap at all): no filter
  p.period = static_cast<uint32_t>(outer);
  p.col = static_cast<uint32_t>(col);
  p.width = static_cast<uint32_t>(extent);
  return p;
}

void TensorMap::release(uint32_t e) {
  Entry &x = entries_[e];
  PTO_DCHECK(used_ > 0 && per_level_[x.level] > 0 && x.task >= 0, "TensorMap: releasing a free entry");
  (x.prev < capacity_ ? entries_[x.prev].next : buckets_[~x.prev]) = x.next;  // prev ~b: heads bucket b
  if (x.next != kNone) entries_[x.next].prev = x.prev;
  (x.older != kNone ? entries_[x.older].younger : oldest_) = x.younger;
  (x.younger != kNone ? entries_[x.younger].older : youngest_) = x.older;
  if (--per_level_[x.level] == 0) filled_levels_ &= ~(1u << x.level);
  if (x.flags & kStraddles) --straddling_[x.level];
  x.task = -1;
  x.next = free_;
  free_ = e;
  --used_;
}

template <typename Fn>
void TensorMap::for_candidates(const Region &r, const Place &at, int64_t live_from, Fn &&fn) {
  // The chain of (level, granule g); the large level's entries match on buffer and level alone.
  // The chain r is filed in is one of them (its bucket known: `at`).
  auto scan = [&](int level, int64_t g) {
    const int shift = level == kLarge ? 0 : kShift[level];
    const uint32_t b = level == at.level && g == at.granule
                           ? at.bucket
                           : bucket(r.buffer, level == kLarge ? -1 : key(level, g));
    for (uint32_t e = buckets_[b]; e != kNone;) {
      const Entry &x = entries_[e];
      const uint32_t next = x.next;  // fn may release e
      if (x.task < live_from) {
        release(e);  // filed out of task order (never by the orchestrator): reclaim missed it
      } else if (x.buffer == r.buffer && x.level == level && (level == kLarge || (x.lo >> shift) == g)) {
        fn(e);  // chains mix keys that hash alike: only entries filed under this very key
      }
      e = next;
    }
  };
  uint32_t pool_scan = 0;  // bit l: level l is looked up by a scan of the pool
  if (filled_levels_ & (1u << kLarge)) scan(kLarge, 0);
  for (uint32_t levels = filled_levels_ & ((1u << kLevels) - 1); levels != 0; levels &= levels - 1) {
    const int l = __builtin_ctz(levels);
    const int64_t first = (r.lo >> kShift[l]) - (straddling_[l] != 0 ? 1 : 0), last = (r.hi - 1) >> kShift[l];
    const int64_t probes = last - first + 1;
    if (probes > kMaxProbes && probes > static_cast<int64_t>(fresh_)) {  // the scan is cheaper
      pool_scan |= 1u << l;
      continue;
    }
    for (int64_t g = first; g <= last; ++g) scan(l, g);
  }
  if (pool_scan == 0) return;
  for (uint32_t e = 0; e < fresh_; ++e) {
    const Entry &x = entries_[e];
    if (x.task >= live_from && ((pool_scan >> x.level) & 1u) && x.buffer == r.buffer) fn(e);
  }
}

// Inlined into access() (most submits file every access); add() and insert() call it too.
inline bool TensorMap::file(const Region &r, bool write, int64_t task, const Period &rp, const Place &at) {
  uint32_t e;
  if (free_ != kNone) {
    e = free_;
    free_ = entries_[e].next;
  } else if (fresh_ < capacity_) {
    e = fresh_++;
  } else {
    return false;
  }
  ++used_;
  PTO_DCHECK(used_ <= capacity_, "TensorMap: more entries in use than the pool holds");
  const int level = at.level;
  const uint32_t b = at.bucket;
  if (per_level_[level]++ == 0) filled_levels_ |= 1u << level;
  Entry &x = entries_[e];
  x.buffer = r.buffer;
  x.lo = r.lo;
  x.hi = r.hi;
  x.task = task;
  x.filter = rp;
  x.level = static_cast<uint8_t>(level);
  x.write = write;
  x.contiguous = r.contiguous;
  const bool straddles = level < kLevels && ((r.hi - 1) >> kShift[level]) != at.granule;
  if (straddles) ++straddling_[level];
  x.flags = straddles ? kStraddles : 0;
  if (needs_copy(r, rp)) {
    x.flags |= kCopied;
    // A fixed-size copy (the compiler inlines it; a copy of ndim dimensions became two memcpy calls).
    std::memcpy(static_cast<void *>(&regions_[e]), &r, sizeof(Region));
  }
  x.prev = ~b;
  x.next = buckets_[b];
  if (x.next != kNone) entries_[x.next].prev = e;
  buckets_[b] = e;
  x.younger = kNone;
  x.older = youngest_;
  (youngest_ != kNone ? entries_[youngest_].younger : oldest_) = e;
  youngest_ = e;
  return true;
}

bool TensorMap::access(const Region &r, bool write, int64_t task, int64_t live_from, IdList *out,
                       EdgeKindList *kinds) {
  if (r.empty()) return true;
  retire(live_from);
  // Each live entry is reported at most once below: room for used() keeps every push. A debug
  // check (hot path): a list that did overflow says so anyway (FixedList::overflowed).
  PTO_DCHECK(out->room() >= used_ && (!kinds || kinds->room() >= used_),
             "TensorMap::access: the result list has no room for used() more producers");
  bool duplicate = false;
  const Period rp = period_of(r);
  const Place at = place_of(r);
  for_candidates(r, at, live_from, [&](uint32_t e) {
    const Entry &x = entries_[e];
    if (x.task == task) {  // an earlier access of this same task
      duplicate |= x.write == write && x.lo == r.lo && x.hi == r.hi && x.contiguous && r.contiguous;
      return;
    }
    if (!(write || x.write) || !overlaps(e, r, rp)) return;
    out->push_back(x.task);
    if (kinds) kinds->push_back(EdgeKind{x.task, !write ? kEdgeRaw : x.write ? kEdgeWaw : kEdgeWar});
    if (write && r.contiguous && r.lo <= x.lo && x.hi <= r.hi) release(e);  // covered: see the header
  });
  return duplicate || file(r, write, task, rp, at);
}

int64_t TensorMap::youngest_conflict(const Region &r, bool write, int64_t live_from) {
  if (r.empty()) return -1;
  retire(live_from);
  int64_t youngest = -1;
  const Period rp = period_of(r);
  for_candidates(r, place_of(r), live_from, [&](uint32_t e) {
    const Entry &x = entries_[e];
    if ((write || x.write) && x.task > youngest && overlaps(e, r, rp)) youngest = x.task;
  });
  return youngest;
}

bool TensorMap::insert(const Region &r, bool write, int64_t task, int64_t live_from) {
  if (r.empty()) return true;
  retire(live_from);
  bool duplicate = false;
  const Place at = place_of(r);
  for_candidates(r, at, live_from, [&](uint32_t e) {  // did the task pass this region before?
    const Entry &x = entries_[e];
    duplicate |=
        x.task == task && x.write == write && x.lo == r.lo && x.hi == r.hi && x.contiguous && r.contiguous;
  });
  return duplicate || file(r, write, task, period_of(r), at);
}

bool TensorMap::add(const Region &r, bool write, int64_t task) {
  return file(r, write, task, period_of(r), place_of(r));
}

bool TensorMap::shapes_overlap(uint32_t e, const Region &r) const {
  const Entry &x = entries_[e];
  if (x.contiguous) {  // r is strided: has it an element in x's bytes?
    const int meets = region_meets_bytes(r, x.lo, x.hi);
    if (meets >= 0) return meets == 1;
  }
  Region scratch;
  return regions_overlap(region(e, &scratch), r);
}

const Region &TensorMap::region(uint32_t e, Region *scratch) const {
  if (entries_[e].flags & kCopied) return *std::launder(reinterpret_cast<const Region *>(&regions_[e]));
  // Contiguous: elements of filter.width bytes from lo (bytes, if they do not divide the range);
  // else one dimension: filter.width-byte elements every filter.period bytes from lo.
  const Entry &x = entries_[e];
  Region &r = *scratch;
  r.buffer = x.buffer;
  r.base = r.lo = x.lo;
  r.hi = x.hi;
  r.esize = x.contiguous && (x.hi - x.lo) % x.filter.width != 0 ? 1 : x.filter.width;
  r.ndim = 1;
  r.stride[0] = x.contiguous ? r.esize : x.filter.period;
  r.shape[0] = (x.hi - x.lo - r.esize) / r.stride[0] + 1;
  r.contiguous = x.contiguous;
  return r;
}

uint32_t TensorMap::retire(int64_t live_from) {
  uint32_t freed = 0;
  while (oldest_ != kNone && entries_[oldest_].task < live_from) {
    release(oldest_);
    ++freed;
  }
  return freed;
}

uint32_t TensorMap::reclaim(int64_t live_from) {
  const uint32_t freed = retire(live_from);
#if PTO_DCHECK_IS_ON
  // O(pool), so only here (a full pool, and the white-box tests), not in every access's retire.
  if (freed != 0) check_invariants();
#endif
  return freed;
}

void TensorMap::check_invariants() const {
  PTO_CHECK(fresh_ <= capacity_ && used_ <= fresh_, "TensorMap: pool watermarks out of order");
  uint32_t chained = 0, levels[kLevels + 1] = {}, straddles[kLevels] = {};
  for (uint32_t b = 0; b <= bucket_mask_; ++b) {
    uint32_t prev = ~b;
    for (uint32_t e = buckets_[b]; e != kNone; prev = e, e = entries_[e].next) {
      PTO_CHECK(e < fresh_ && chained < fresh_, "TensorMap: chain leaves the pool or loops");
      const Entry &x = entries_[e];
      PTO_CHECK(x.task >= 0, "TensorMap: a free entry is filed in a chain");
      PTO_CHECK(x.prev == prev, "TensorMap: a chain's back link is wrong");
      PTO_CHECK(x.level <= kLarge && bucket(x.buffer, key_of(x.lo, x.level)) == b,
                "TensorMap: entry filed under the wrong bucket");
      PTO_CHECK((x.flags & kCopied) || x.filter.width != 0, "TensorMap: an entry without its region");
      ++chained;
      ++levels[x.level];
      if (x.flags & kStraddles) ++straddles[x.level];
    }
  }
  PTO_CHECK(chained == used_, "TensorMap: used() differs from the entries in chains");
  for (int l = 0; l <= kLevels; ++l) {
    PTO_CHECK(levels[l] == per_level_[l], "TensorMap: per-level count is off");
    PTO_CHECK(((filled_levels_ >> l) & 1u) == (levels[l] != 0 ? 1u : 0u), "TensorMap: level mask is off");
  }
  for (int l = 0; l < kLevels; ++l)
    PTO_CHECK(straddles[l] == straddling_[l], "TensorMap: straddling count is off");
  uint32_t aged = 0, older = kNone;
  for (uint32_t e = oldest_; e != kNone; older = e, e = entries_[e].younger) {
    PTO_CHECK(e < fresh_ && aged < fresh_, "TensorMap: age list leaves the pool or loops");
    PTO_CHECK(entries_[e].task >= 0 && entries_[e].older == older, "TensorMap: age list is broken");
    ++aged;
  }
  PTO_CHECK(aged == used_ && older == youngest_, "TensorMap: the age list differs from the chains");
  uint32_t free_count = 0;
  for (uint32_t e = free_; e != kNone; e = entries_[e].next) {
    PTO_CHECK(e < fresh_ && free_count < fresh_, "TensorMap: free list leaves the pool or loops");
    PTO_CHECK(entries_[e].task == -1, "TensorMap: a live entry is on the free list");
    ++free_count;
  }
  PTO_CHECK(free_count + used_ == fresh_, "TensorMap: entries lost between chains and free list");
}

}  // namespace graph
}  // namespace pto
