// src/hierarchical/run_state.h — one submitted run: its tasks, its outcome and its statistics.
#ifndef PTO_HIERARCHICAL_RUN_STATE_H
#define PTO_HIERARCHICAL_RUN_STATE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hierarchical/host_heap.h"
#include "hierarchical/task.h"
#include "pto/worker.h"

namespace pto {
namespace l3 {

// [begin, end) of memory and what it is ("domain 'tp', rank 1 (chip 3), buffer 'flags'").
struct NamedRange {
  uint64_t begin = 0, end = 0;
  std::string label;
};

// `message` with a note for each address in it (0x followed by hex digits) that lies in one of
// `ranges`: "0x7f..40 is domain 'tp', rank 1 (chip 3), buffer 'flags' + 64". Unchanged when
// none does.
std::string name_addresses(const std::string &message, const std::vector<NamedRange> &ranges);

struct RunState {
  uint64_t id = 0;
  // --- guarded by WorkerCore::mu ---
  std::vector<std::shared_ptr<Task>> tasks;  // appended by the orchestrating thread
  uint64_t outstanding = 1;                  // unfinished tasks, plus 1 while the orchestration function runs
  bool done = false;                         // written by whoever brings outstanding to 0; waiters: run_cv
  WorkerRunStats stats;
  pto_status error_code = PTO_OK;  // first failure (the root cause)
  std::string error;
  std::vector<std::string> skipped;  // labels of skipped tasks (first few)
  // What each byte range of the run's communication domains is (comm_domain.cpp), for naming
  // the addresses a failure message shows (name_addresses). Appended by allocate_domain.
  std::vector<NamedRange> named_ranges;
  bool cancelled = false;            // RunHandle::cancel: nothing more of it starts
  // --- written once by submit() before any task exists ---
  uint64_t t_submit_ns = 0;
  double cpu_at_submit_us = 0, sched_cpu_at_submit_us = 0;
  // --- orchestrating thread only ---
  std::vector<std::vector<HostHeap::Block *>> scopes;  // open scopes, outermost first
  // allocate_domain's blocks (comm_domain.cpp): released by complete_run_locked, once no task of
  // the run can reach a window any more. Appended before the orchestration's end, which
  // complete_run_locked follows under mu.
  std::vector<HostHeap::Block *> domains;
};

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_RUN_STATE_H
