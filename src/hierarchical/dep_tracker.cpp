// src/hierarchical/dep_tracker.cpp — region-overlap dependency inference for L3 tasks.
#include "hierarchical/dep_tracker.h"

#include <algorithm>

namespace pto {
namespace l3 {
namespace {

Region host_region(const void *ptr, uint64_t nbytes) {
  const int64_t shape = static_cast<int64_t>(nbytes), stride = 1;
  // One address space: buffer 0, byte elements at the host address.
  return make_region(0, static_cast<int64_t>(reinterpret_cast<uintptr_t>(ptr)), 1, 1, &shape, &stride);
}

void add_pred(std::vector<std::shared_ptr<Task>> *preds, const std::shared_ptr<Task> &t, const Task *self) {
  if (t.get() == self) return;
  for (const auto &p : *preds)
    if (p == t) return;
  preds->push_back(t);
}

}  // namespace

void DepTracker::add(const std::shared_ptr<Task> &task, const std::vector<Access> &accesses,
                     std::vector<std::shared_ptr<Task>> *preds) {
  for (const Access &a : accesses) {
    if (a.nbytes == 0) continue;
    const Region r = host_region(a.ptr, a.nbytes);
    auto it = entries_.lower_bound(r.lo - max_len_);
    while (it != entries_.end() && it->first < r.hi) {
      Entry &e = it->second;
      if (stale(e, task->run_id)) {
        it = entries_.erase(it);
        continue;
      }
      bool covered = false;
      if (regions_overlap(e.region, r)) {
        if (e.write || a.write) add_pred(preds, e.task, task.get());
        covered = a.write && e.task != task && region_covers(r, e.region);
      }
      it = covered ? entries_.erase(it) : std::next(it);
    }
    entries_.emplace(r.lo, Entry{r, a.write, task});
    max_len_ = std::max(max_len_, r.hi - r.lo);
  }
  if (entries_.size() >= sweep_at_) sweep(task->run_id);
}

bool DepTracker::stale(const Entry &e, uint64_t run_id) {
  if (!e.task->finished.load(std::memory_order_acquire)) return false;
  return e.task->state == TaskState::kDone || e.task->run_id != run_id;  // final once finished is set
}

void DepTracker::sweep(uint64_t run_id) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = stale(it->second, run_id) ? entries_.erase(it) : std::next(it);
  }
  sweep_at_ = std::max<size_t>(1024, entries_.size() * 2);
}

}  // namespace l3
}  // namespace pto
