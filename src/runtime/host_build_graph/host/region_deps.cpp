// src/runtime/host_build_graph/host/region_deps.cpp — recorded accesses per buffer: filing, look-ups, drops.
#include "host/region_deps.h"

#include <algorithm>

namespace pto {
namespace hbg {

// The finest level whose granules hold [lo, hi) in at most two of them.
int RegionDeps::level_of(int64_t lo, int64_t hi) {
  int l = kMinLevel;
  while (l < kLevels - 2 && ((hi - 1) >> l) - (lo >> l) > 1) ++l;
  return l;
}

void RegionDeps::List::add(const Region &r, uint32_t task) {
  uint32_t slot;
  if (!free.empty()) {
    slot = free.back();
    free.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots.size());
    slots.emplace_back();
  }
  const int l = level_of(r.lo, r.hi);
  slots[slot] = Entry{r.lo, r.hi, task, static_cast<uint8_t>(l), r.contiguous, true, r};
  buckets[key(l, r.lo >> l)].push_back(slot);
  if (per_level[l]++ == 0) levels |= uint64_t{1} << l;
}

void RegionDeps::List::remove(uint32_t slot) {
  Entry &e = slots[slot];
  std::vector<uint32_t> &b = buckets[key(e.level, e.lo >> e.level)];
  *std::find(b.begin(), b.end(), slot) = b.back();  // filed there by add
  b.pop_back();
  if (--per_level[e.level] == 0) levels &= ~(uint64_t{1} << e.level);
  e.live = false;
  free.push_back(slot);
}

void RegionDeps::List::candidates(const Region &r, std::vector<uint32_t> *out) const {
  out->clear();
  for (uint64_t ls = levels; ls != 0; ls &= ls - 1) {
    const int l = __builtin_ctzll(ls);
    // An entry of level l that meets r starts in the granule before r's first or in one of r's.
    const int64_t g0 = (r.lo >> l) - 1, g1 = (r.hi - 1) >> l;
    if (g1 - g0 >= kMaxProbes) {  // a view far larger than this level's entries: scan them all
      for (uint32_t s = 0; s < slots.size(); ++s)
        if (slots[s].live && slots[s].level == l) out->push_back(s);
      continue;
    }
    for (int64_t g = g0; g <= g1; ++g) {
      auto it = buckets.find(key(l, g));
      if (it == buckets.end()) continue;
      for (uint32_t s : it->second) {  // a bucket may hold another (level, granule) whose key wrapped
        if (slots[s].level == l && (slots[s].lo >> l) == g) out->push_back(s);
      }
    }
  }
}

// Entry `slot` and r share a byte (or core/region.h cannot tell that they do not).
bool RegionDeps::List::meets(uint32_t slot, const Region &r) const {
  const Entry &e = slots[slot];
  if (e.hi <= r.lo || r.hi <= e.lo) return false;
  return (e.contiguous && r.contiguous) || regions_overlap(e.region, r);
}

void RegionDeps::scan(List &list, const Region &r, uint32_t task, uint32_t kind, bool drop,
                      std::vector<Producer> *out) {
  list.candidates(r, &scratch_);
  for (uint32_t s : scratch_) {
    if (!list.meets(s, r)) continue;
    if (list.slots[s].task != task) out->push_back(Producer{list.slots[s].task, kind});
    if (drop && region_covers(r, list.slots[s].region)) list.remove(s);
  }
}

void RegionDeps::access(const Region &r, bool write, uint32_t task, std::vector<Producer> *out) {
  if (r.empty()) return;  // touches nothing: orders nothing
  Buffer &b = buffers_[r.buffer];
  scan(b.writers, r, task, write ? kEdgeWaw : kEdgeRaw, write, out);
  if (write) scan(b.readers, r, task, kEdgeWar, true, out);
  (write ? b.writers : b.readers).add(r, task);
}

void RegionDeps::insert(const Region &r, bool write, uint32_t task) {
  if (r.empty()) return;
  Buffer &b = buffers_[r.buffer];
  (write ? b.writers : b.readers).add(r, task);
}

int64_t RegionDeps::youngest(const List &list, const Region &r) {
  list.candidates(r, &scratch_);
  int64_t last = -1;
  for (uint32_t s : scratch_) {
    if (list.meets(s, r)) last = std::max<int64_t>(last, list.slots[s].task);
  }
  return last;
}

int64_t RegionDeps::youngest_conflict(const Region &r, bool write) {
  if (r.empty()) return -1;
  auto it = buffers_.find(r.buffer);
  if (it == buffers_.end()) return -1;
  const int64_t w = youngest(it->second.writers, r);
  return write ? std::max(w, youngest(it->second.readers, r)) : w;
}

}  // namespace hbg
}  // namespace pto
