// src/runtime/tensormap_and_ringbuffer/aicpu/tmr_scheduler.cpp — dispatch, completion, fan-out, retirement.
#include "tmr_scheduler.h"

#include "pto/device_log.h"

namespace pto {
namespace tmr {

Scheduler::Scheduler(Header *h, uint32_t idx, uint32_t count)
    : h_(h), idx_(idx), bell_(&sched_of(h)[idx].bell), peers_(sched_of(h), h->sched_threads, idx) {
  cores_.init(handshakes_of(h), h->num_clusters, h->block_dim, idx, count, bell_, h->trace_addr != 0,
              h->pmu_addr != 0, h->short_task_ticks, h->pipeline_ticks,
              reinterpret_cast<MixSync *>(h->mix_addr));
  counters_.start = platform_clock_pair();
}

void Scheduler::make_ready(Header *h, int64_t id) {
  TaskSlot &t = slot_of(h, id);
  t.state.store(kReady, std::memory_order_relaxed);
  h->ready[t.core_type].try_push(static_cast<uint64_t>(id));  // never full: capacity = window
}

// seq_cst on orch_done / finished: the orchestrator stores orch_done then rings everyone, and the
// scheduler finishing the last task increments finished then reads orch_done. A total order
// guarantees one of the two sees the other, so the final wake-up is never lost.
bool Scheduler::done() const {
  return h_->orch_done.load(std::memory_order_seq_cst) != 0 &&
         h_->finished.load(std::memory_order_seq_cst) == h_->next_task.load(std::memory_order_seq_cst);
}

void Scheduler::finish(int64_t id, TaskState state) {
  TaskSlot &t = slot_of(h_, id);
  t.state.store(state, std::memory_order_relaxed);
  if (state == kFailed) {
    int64_t none = -1;
    if (h_->failed_task.compare_exchange_strong(none, id, std::memory_order_acq_rel)) {
      h_->failed_status.store(status_of(id), std::memory_order_relaxed);
      h_->failed_func.store(t.func_id, std::memory_order_relaxed);
    }
  }
  // Close the fanout list; the orchestrator's later pushes fail and skip the dependency.
  // (The failure record above is ordered before the close, so an orchestrator that sees the
  // list closed also sees the failure.)
  const bool poison = state != kDone;
  const DepEntry *deps = deps_of(h_);
  for (uint32_t e = t.fanout_head.exchange(kListClosed, std::memory_order_acq_rel); e != kListEmpty;
       e = deps[e].next) {
    TaskSlot &c = slot_of(h_, deps[e].consumer);
    if (poison) c.poisoned.store(1, std::memory_order_relaxed);
    if (c.fanin_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) release(deps[e].consumer);
  }
  t.retired_id.store(id, std::memory_order_seq_cst);
  const int64_t fin = h_->finished.fetch_add(1, std::memory_order_seq_cst) + 1;
  try_retire();
  if (fin == h_->next_task.load(std::memory_order_seq_cst) && h_->orch_done.load(std::memory_order_seq_cst)) {
    peers_.wake_all();  // the run is over: peers stop waiting
  }
}

// seq_cst: two threads finishing t and t + 1 each store their retired_id and then read the
// other's; with acquire/release alone both could miss (store buffering) and retirement would
// stop at t forever. In a single total order at least one of them sees both.
void Scheduler::try_retire() {
  int64_t moved_to = -1;
  for (;;) {
    int64_t t = h_->last_task_alive.load(std::memory_order_seq_cst);
    if (t >= h_->next_task.load(std::memory_order_seq_cst)) break;
    if (slot_of(h_, t).retired_id.load(std::memory_order_seq_cst) != t) break;
    if (h_->last_task_alive.compare_exchange_weak(t, t + 1, std::memory_order_seq_cst)) moved_to = t + 1;
  }
  // seq_cst load after the seq_cst CAS: pairs with the orchestrator's store of orch_wake_at
  // before it re-reads last_task_alive, so one of the two always sees the other.
  if (moved_to >= 0 && moved_to >= h_->orch_wake_at.load(std::memory_order_seq_cst))
    doorbell_ring(h_->orch_bell);
}

// A consumer this thread made ready: start it on one of its own idle cores (the warm one if
// possible: a chain stays on one hot core instead of crossing to a peer's parked core), else
// queue it for whoever has a core free (needs_help / wake_one hand it on).
void Scheduler::release(int64_t id) {
  TaskSlot &t = slot_of(h_, id);
  const int32_t core = t.poisoned.load(std::memory_order_relaxed) != 0 ? -1 : cores_.core_for(t.core_type);
  if (core >= 0 && h_->abort.load(std::memory_order_relaxed) == 0) {
    start(id, static_cast<uint32_t>(core));
  } else {
    make_ready(h_, id);
  }
}

void Scheduler::start(int64_t id, uint32_t core) {
  TaskSlot &t = slot_of(h_, id);
  t.core.store(static_cast<int32_t>(cores_.slot(core)), std::memory_order_relaxed);
  t.state.store(kRunning, std::memory_order_relaxed);
  if (t.dump >= 0) dump_before(t);
  cores_.dispatch(core, id, &t.payload);
}

void Scheduler::dump_before(const TaskSlot &t) {
  auto *d = reinterpret_cast<DumpRegion *>(h_->dump_addr);
  dump_task_views(d, dump_tasks(d)[t.dump], kDumpBefore);
}

// Profiling: the task's trace record; submit was written by the orchestrator, the rest here.
void Scheduler::record(int64_t id, uint16_t status, const CoreTiming &timing) {
  if (!kProfilingBuilt || h_->trace_addr == 0 || static_cast<uint64_t>(id) >= h_->trace_capacity) return;
  TaskTrace &r = reinterpret_cast<TaskTrace *>(h_->trace_addr)[id];
  const TaskSlot &t = slot_of(h_, id);
  r.id = id;
  r.func = t.func_id;
  r.shape = static_cast<uint16_t>(t.core_type);
  r.status = status;
  r.core = timing.core;
  r.thread = status == kTraceSkipped ? -1 : static_cast<int32_t>(idx_);
  r.dispatch = timing.dispatch;
  r.start = timing.start;
  r.end = timing.end;
  r.complete = timing.complete;
  if (h_->pmu_addr) reinterpret_cast<PmuTrace *>(h_->pmu_addr)[id] = timing.pmu;
}

bool Scheduler::dispatch_ready() {
  const auto take_mix = [this](int64_t id, uint32_t cluster) {
    TaskSlot &t = slot_of(h_, id);
    if (t.poisoned.load(std::memory_order_relaxed) != 0) {
      record(id, kTraceSkipped, CoreTiming{});
      finish(id, kSkipped);
      return false;
    }
    t.core.store(static_cast<int32_t>(cores_.cluster_aic_slot(cluster)), std::memory_order_relaxed);
    t.state.store(kRunning, std::memory_order_relaxed);
    if (t.dump >= 0) dump_before(t);
    const DispatchPayload *const parts[3] = {&t.payload, &t.mix_payload[0], &t.mix_payload[1]};
    cores_.dispatch_mix(cluster, id, parts);
    return true;
  };
  return cores_.feed(
      h_->ready, PTO_TASK_SHAPE_COUNT,
      [this](int64_t id, uint32_t core) {
        TaskSlot &t = slot_of(h_, id);
        if (t.poisoned.load(std::memory_order_relaxed) != 0) {
          record(id, kTraceSkipped, CoreTiming{});
          finish(id, kSkipped);  // a producer failed: never run it
          return false;
        }
        start(id, core);
        return true;
      },
      take_mix);
}

// A task's status: its kernel's, or for a MIX task the first non-zero of its three parts.
int32_t Scheduler::status_of(int64_t id) const {
  const uint32_t parts = slot_of(h_, id).core_type == PTO_CORE_MIX ? 3 : 1;
  for (uint32_t p = 0; p < parts; ++p) {
    if (const int32_t s = call_of(h_, id, p)->status) return s;
  }
  return 0;
}

bool Scheduler::poll() {
  const bool collected = cores_.collect([this](int64_t id, const CoreTiming &timing) {
    const bool failed = status_of(id) != 0;
    if (failed) {
      DEV_ERROR(reinterpret_cast<const pto_device_log *>(h_->log_addr),
                "task %lld (kernel %u) failed with status %d", static_cast<long long>(id),
                slot_of(h_, id).func_id, status_of(id));
    }
    record(id, failed ? kTraceFailed : kTraceDone, timing);
    if (const int32_t dump = slot_of(h_, id).dump; dump >= 0) {  // its outputs, before any successor runs
      auto *d = reinterpret_cast<DumpRegion *>(h_->dump_addr);
      dump_task_views(d, dump_tasks(d)[dump], kDumpAfter);
    }
    if (!failed) h_->run_by_type[slot_of(h_, id).core_type].fetch_add(1, std::memory_order_relaxed);
    finish(id, failed ? kFailed : kDone);
  }) != 0;
  if (h_->abort.load(std::memory_order_acquire) != 0) return collected;
  const bool dispatched = dispatch_ready();
  if (cores_.needs_help(h_->ready, PTO_TASK_SHAPE_COUNT)) peers_.ask_for_help(dispatched || collected);
  return dispatched || collected;
}

void Scheduler::run() {
  for (;;) {
    const uint32_t seen = doorbell_prepare(*bell_);
    const bool progress = poll();
    if (done()) break;
    if (h_->abort.load(std::memory_order_acquire) != 0 && cores_.busy() == 0) break;
    if (!progress) {
      const uint64_t t = platform_ticks();
      doorbell_wait(*bell_, seen);
      counters_.parked_ticks += platform_ticks() - t;
    }
  }
  counters_.end = platform_clock_pair();
  if (h_->abort.load(std::memory_order_relaxed) != 0)
    DEV_WARN(reinterpret_cast<const pto_device_log *>(h_->log_addr), "scheduler %u: run aborted by the host",
             idx_);
  scheduler_counters(h_->counters_addr)[idx_] = counters_;
  cores_.write_counters(core_counters(h_->counters_addr, h_->sched_threads));
}

}  // namespace tmr
}  // namespace pto
