// src/hierarchical/dep_tracker.h — the L3 TensorMap: which earlier tasks a new task must wait for.
//
// Host tensors are byte ranges of one address space; each access becomes a core Region
// (src/core/region.h, buffer 0, contiguous) and overlap is decided by regions_overlap. Rules
// (sequential semantics, as on the chip): a reader waits for earlier overlapping writers
// (read-after-write); a writer waits for earlier overlapping writers (write-after-write) AND
// readers (write-after-read). Entries are kept sorted by start address; a query scans from
// (start - longest entry) to its end. Entries of tasks that finished successfully are dropped
// when met; a failed or skipped task's entry stays for the rest of its run, so a task of that run
// touching its data later still gets the edge, and is skipped (the orchestrator poisons it),
// exactly as if the failure had come after it was submitted — the outcome never depends on
// timing. Entries a new write covers completely are dropped (the writer now stands for them),
// and a sweep every time the map doubles keeps it proportional to the tasks in flight.
// Orchestrating thread only.
#ifndef PTO_HIERARCHICAL_DEP_TRACKER_H
#define PTO_HIERARCHICAL_DEP_TRACKER_H

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/region.h"
#include "hierarchical/task.h"

namespace pto {
namespace l3 {

class DepTracker {
 public:
  struct Access {
    const void *ptr;
    uint64_t nbytes;
    bool read, write;
  };
  // Records task's accesses and appends to *preds the unfinished earlier tasks it must wait for
  // (each at most once, never task itself).
  void add(const std::shared_ptr<Task> &task, const std::vector<Access> &accesses,
           std::vector<std::shared_ptr<Task>> *preds);
  size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    Region region;
    bool write;
    std::shared_ptr<Task> task;
  };
  // The entry no longer orders anything: its task succeeded, or failed in another run.
  static bool stale(const Entry &e, uint64_t run_id);
  void sweep(uint64_t run_id);
  std::multimap<int64_t, Entry> entries_;  // keyed by region.lo
  int64_t max_len_ = 0;
  size_t sweep_at_ = 1024;
};

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_DEP_TRACKER_H
