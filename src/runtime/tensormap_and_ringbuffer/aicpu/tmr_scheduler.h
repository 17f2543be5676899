// src/runtime/tensormap_and_ringbuffer/aicpu/tmr_scheduler.h — one scheduler thread of the tensormap runtime.
//
// The loop is the shared one (core/graph/scheduler_loop.h); this runtime's policy is how a
// graph that grows while it runs is walked and retired. Tasks arrive while the graph is being
// built: the orchestrator publishes a task by dropping its submission guard; whoever takes
// fanin_remaining to zero (the orchestrator, or the scheduler finishing the last producer)
// enqueues it, so each task is enqueued exactly once. Finishing a task closes its fanout list
// (exchange with kListClosed) and releases the consumers found there; the orchestrator, which
// pushes onto that list with CAS, sees the close and does not count the dependency. Retirement
// is in id order: any scheduler that finishes a task advances last_task_alive over every
// finished task (CAS), which frees ring slots, dependency entries and heap bytes for the
// orchestrator.
#ifndef PTO_TMR_SCHEDULER_H
#define PTO_TMR_SCHEDULER_H

#include "core/graph/scheduler_loop.h"
#include "tmr_layout.h"

namespace pto {
namespace tmr {

// The tensormap runtime's part of the shared loop (the hooks are described there).
class TmrPolicy {
 public:
  static constexpr bool kHasMix = true;
  static constexpr bool kZeroSubmit = false;  // the orchestrator wrote the trace's submit field

  explicit TmrPolicy(Header *h) : h_(h) {}

  graph::TaskRecord &task(int64_t id) const { return slot_of(h_, id); }

  // Closes id's fanout list, then walks it; the orchestrator's later pushes fail and skip the
  // dependency. (A failure record, written before this, is ordered before the close, so an
  // orchestrator that sees the list closed also sees the failure.)
  template <typename Each>
  void for_each_consumer(int64_t id, Each &&each) const {
    const DepEntry *deps = deps_of(h_);
    for (uint32_t e = slot_of(h_, id).fanout_head.exchange(kListClosed, std::memory_order_acq_rel);
         e != kListEmpty; e = deps[e].next) {
      each(deps[e].consumer);
    }
  }

  // A task's status: its kernel's, or for a MIX task the first non-zero of its three parts.
  int32_t status_of(int64_t id) const {
    const uint32_t parts = slot_of(h_, id).core_type == PTO_CORE_MIX ? 3 : 1;
    for (uint32_t p = 0; p < parts; ++p) {
      if (const int32_t s = call_of(h_, id, p)->status) return s;
    }
    return 0;
  }

  void on_failed(int64_t id, int32_t status) const {
    int64_t none = -1;
    if (h_->failed_task.compare_exchange_strong(none, id, std::memory_order_acq_rel)) {
      h_->failed_status.store(status, std::memory_order_relaxed);
      h_->failed_func.store(slot_of(h_, id).func_id, std::memory_order_relaxed);
    }
  }

  // Counted here and added to the header once, when the loop ends (end()): a shared counter
  // per task would move a cache line between the schedulers' CPUs at every task.
  void on_ran(int64_t id) { ++ran_[slot_of(h_, id).core_type]; }
  void end() const {
    for (uint32_t t = 0; t < PTO_TASK_SHAPE_COUNT; ++t) {
      if (ran_[t] != 0) h_->run_by_type[t].fetch_add(ran_[t], std::memory_order_relaxed);
    }
  }

  bool retire(int64_t id);
  bool done() const;

  DispatchPredicate predicate(int64_t id) const { return predicate_of(slot_of(h_, id)); }

  void mix_parts(int64_t id, const DispatchPayload *parts[3]) const {
    TaskSlot &t = slot_of(h_, id);
    parts[0] = &t.payload;
    parts[1] = &t.mix_payload[0];
    parts[2] = &t.mix_payload[1];
  }

 private:
  void try_retire(int64_t id);

  Header *h_;
  uint64_t ran_[PTO_TASK_SHAPE_COUNT] = {};  // tasks this scheduler ran, by shape (on_ran)
  int64_t published_ = 0;                    // tasks below it are published (try_retire)
};

class Scheduler {
 public:
  // Scheduler `idx` of `count` owns cores idx, idx + count, ...
  Scheduler(Header *h, uint32_t idx, uint32_t count);

  // One pass: collect finished tasks, then feed idle cores. Returns whether anything moved.
  bool poll() { return loop_.poll(); }
  // Loops until every task of the run has finished (or the run was aborted and its cores are idle).
  void run() { loop_.run(); }
  Doorbell &bell() { return loop_.bell(); }
  // Every task of the run finished (TmrPolicy::done, where its memory orders are explained).
  bool done() const { return loop_.policy().done(); }

  // Shared with the orchestrator thread: enqueue a task whose fanin reached zero.
  static void make_ready(Header *h, int64_t id) {
    TaskSlot &t = slot_of(h, id);
    graph::make_ready(t, h->ready, id, graph::ready_pool(t, [&t] { return predicate_of(t); }));
  }

 private:
  graph::SchedulerLoop<TmrPolicy> loop_;
};

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_SCHEDULER_H
