// src/runtime/tensormap_and_ringbuffer/aicpu/tmr_scheduler.h — one scheduler thread of the tensormap runtime.
//
// Tasks arrive while the graph is being built: the orchestrator publishes a task by dropping
// its submission guard; whoever takes fanin_remaining to zero (the orchestrator, or the
// scheduler finishing the last producer) enqueues it, so each task is enqueued exactly once.
// Finishing a task closes its fanout list (exchange with kListClosed) and releases the
// consumers found there; the orchestrator, which pushes onto that list with CAS, sees the
// close and does not count the dependency. Retirement is in id order: any scheduler that
// finishes a task advances last_task_alive over every finished task (CAS), which frees ring
// slots, dependency entries and heap bytes for the orchestrator.
#ifndef PTO_TMR_SCHEDULER_H
#define PTO_TMR_SCHEDULER_H

#include "core/core_pool.h"
#include "tmr_layout.h"

namespace pto {
namespace tmr {

class Scheduler {
 public:
  // Scheduler `idx` of `count` owns cores idx, idx + count, ...
  Scheduler(Header *h, uint32_t idx, uint32_t count);

  // One pass: collect finished tasks, then feed idle cores. Returns whether anything moved.
  bool poll();
  // Loops until every task of the run has finished (or the run was aborted and its cores are idle).
  void run();
  Doorbell &bell() { return *bell_; }

  // Shared with the orchestrator thread: enqueue a task whose fanin reached zero.
  static void make_ready(Header *h, int64_t id);

 private:
  bool dispatch_ready();
  void release(int64_t id);
  int32_t status_of(int64_t id) const;
  void record(int64_t id, uint16_t status, const CoreTiming &timing);
  void start(int64_t id, uint32_t core);
  void dump_before(const TaskSlot &t);  // enable_dump_tensor: a selected task's inputs
  void finish(int64_t id, TaskState state);
  void try_retire();
  bool done() const;

  Header *h_;
  uint32_t idx_;
  Doorbell *bell_;
  PeerWaker peers_;
  CorePool cores_;
  SchedulerCounters counters_;  // written to the run's counters when run() ends
};

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_SCHEDULER_H
