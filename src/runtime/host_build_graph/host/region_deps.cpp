// src/runtime/host_build_graph/host/region_deps.cpp — recorded accesses per buffer, look-ups, drops.
#include "host/region_deps.h"

#include <algorithm>

namespace pto {
namespace hbg {

void RegionDeps::List::add(const Region &r, uint32_t task) {
  spans.push_back(Span{r.lo, r.hi, task, r.contiguous});
  regions.push_back(r);
}

void RegionDeps::List::remove(size_t i) {
  spans[i] = spans.back();
  spans.pop_back();
  regions[i] = regions.back();
  regions.pop_back();
}

// Entry i and r share a byte (or core/region.h cannot tell that they do not).
bool RegionDeps::List::meets(size_t i, const Region &r) const {
  const Span &s = spans[i];
  if (s.hi <= r.lo || r.hi <= s.lo) return false;
  return (s.contiguous && r.contiguous) || regions_overlap(regions[i], r);
}

void RegionDeps::scan(List &list, const Region &r, uint32_t task, uint32_t kind, bool drop,
                      std::vector<Producer> *out) {
  for (size_t i = 0; i < list.spans.size();) {
    if (!list.meets(i, r)) {
      ++i;
      continue;
    }
    if (list.spans[i].task != task) out->push_back(Producer{list.spans[i].task, kind});
    if (drop && region_covers(r, list.regions[i])) {
      list.remove(i);  // entry i is now another one: look at it again
    } else {
      ++i;
    }
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
  int64_t last = -1;
  for (size_t i = 0; i < list.spans.size(); ++i) {
    if (list.meets(i, r)) last = std::max<int64_t>(last, list.spans[i].task);
  }
  return last;
}

int64_t RegionDeps::youngest_conflict(const Region &r, bool write) const {
  if (r.empty()) return -1;
  auto it = buffers_.find(r.buffer);
  if (it == buffers_.end()) return -1;
  const int64_t w = youngest(it->second.writers, r);
  return write ? std::max(w, youngest(it->second.readers, r)) : w;
}

}  // namespace hbg
}  // namespace pto
