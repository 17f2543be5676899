// src/runtime/tensormap_and_ringbuffer/aicpu/tmr_scheduler.cpp — retirement in id order and the end of a run.
#include "tmr_scheduler.h"

#include "pto/device_log.h"

namespace pto {
namespace tmr {

Scheduler::Scheduler(Header *h, uint32_t idx, uint32_t count)
    : loop_(graph::env_from_header(h, h->sched_threads, h->sched_threads, h->trace_capacity,
                                   reinterpret_cast<MixSync *>(h->mix_addr)),
            TmrPolicy(h), idx, count) {}

// seq_cst on orch_done / finished: the orchestrator stores orch_done then rings everyone, and the
// scheduler finishing the last task increments finished then reads orch_done. A total order
// guarantees one of the two sees the other, so the final wake-up is never lost.
// orch_done is read first: it sits on a line of its own that nobody writes during the run, so
// the check after every pass costs no cache-line transfer until the orchestration has ended.
bool TmrPolicy::done() const {
  return h_->orch_done.load(std::memory_order_seq_cst) != 0 &&
         h_->finished.load(std::memory_order_seq_cst) == h_->next_task.load(std::memory_order_seq_cst);
}

// After the fanout walk: the slot may be reused once retirement passes it. True when this was
// the run's last task (the loop then wakes every peer to stop). orch_done is read before
// next_task (as in done()): a scheduler that sees it set also sees the final next_task, one
// that does not is woken by the orchestrator's wake_all after it sets it.
bool TmrPolicy::retire(int64_t id) {
  slot_of(h_, id).retired_id.store(id, std::memory_order_seq_cst);
  const int64_t fin = h_->finished.fetch_add(1, std::memory_order_seq_cst) + 1;
  try_retire(id);
  return h_->orch_done.load(std::memory_order_seq_cst) != 0 &&
         fin == h_->next_task.load(std::memory_order_seq_cst);
}

// Retirement in id order is the window's (graph::TaskWindow::advance, where its seq_cst is
// explained): a slot counts as retired once its retired_id names the task. Tasks up to `id`
// (the one this thread just retired) are known to be published, and so are those below the
// last next_task this thread read.
void TmrPolicy::try_retire(int64_t id) {
  if (published_ <= id) published_ = id + 1;
  const int64_t moved_to = window_of(h_).advance(
      published_, [&] { return h_->next_task.load(std::memory_order_seq_cst); },
      [&](int64_t t) { return slot_of(h_, t).retired_id.load(std::memory_order_seq_cst) == t; });
  // seq_cst load after the seq_cst CAS: pairs with the orchestrator's store of orch_wake_at
  // before it re-reads last_task_alive, so one of the two always sees the other.
  if (moved_to >= 0 && moved_to >= h_->orch_wake_at.load(std::memory_order_seq_cst))
    doorbell_ring(h_->orch_bell);
}

}  // namespace tmr
}  // namespace pto
