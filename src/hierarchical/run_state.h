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
