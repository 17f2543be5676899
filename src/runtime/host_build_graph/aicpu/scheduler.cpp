// src/runtime/host_build_graph/aicpu/scheduler.cpp — the AICPU program: schedule a host-built graph.
//
// Each of the `thread_num` scheduler threads owns the cores whose slot index is congruent to
// its own index. Ready tasks wait in two shared MPMC queues (AIC, AIV). A thread's loop:
// retire tasks its cores finished (release successors, enqueue the ones that became ready),
// then give its idle cores work from the queue of their type. When nothing moved it waits on
// its doorbell, which its cores ring on completion and peers ring when they enqueue work.
// A task enters a queue exactly once: only the decrement that takes fanin_remaining to zero
// (or the host, for tasks with no predecessors) enqueues it.
#include <cstdint>

#include "core/core_pool.h"
#include "hbg_layout.h"
#include "pto/device_log.h"
#include "pto/error.h"
#include "pto/kernel.h"

namespace pto {
namespace hbg {
namespace {

class Scheduler {
 public:
  Scheduler(RuntimeHeader *h, uint32_t thread_idx, uint32_t thread_num)
      : h_(h),
        tasks_(tasks_of(h)),
        succ_(successors_of(h)),
        bell_(&sched_of(h)[thread_idx].bell),
        peers_(sched_of(h), thread_num, thread_idx) {
    cores_.init(handshakes_of(h), h->num_clusters, h->block_dim, thread_idx, thread_num, bell_,
                h->trace_addr != 0, h->pmu_addr != 0, h->short_task_ticks, h->pipeline_ticks);
    idx_ = thread_idx;
    log_ = reinterpret_cast<const pto_device_log *>(h->log_addr);
    dump_ = reinterpret_cast<DumpRegion *>(h->dump_addr);
  }

  int run() {
    SchedulerCounters counters;
    counters.start = platform_clock_pair();
    DEV_DEBUG(log_, "scheduler %u: %u task(s), %u core(s)", idx_, h_->num_tasks, cores_.size());
    for (;;) {
      const uint32_t seen = doorbell_prepare(*bell_);
      bool progress = retire_finished();
      const bool aborting = h_->abort.load(std::memory_order_acquire) != 0;
      if (!aborting) {
        progress |= dispatch_ready();
        if (cores_.needs_help(h_->ready, PTO_CORE_TYPE_COUNT)) peers_.ask_for_help(progress);
      }
      if (all_finished() || (aborting && cores_.busy() == 0)) break;
      if (!progress) {
        const uint64_t t = platform_ticks();
        doorbell_wait(*bell_, seen);
        counters.parked_ticks += platform_ticks() - t;
      }
    }
    counters.end = platform_clock_pair();
    if (h_->abort.load(std::memory_order_relaxed) != 0)
      DEV_WARN(log_, "scheduler %u: run aborted by the host", idx_);
    DEV_DEBUG(log_, "scheduler %u: done, parked %llu of %llu ticks", idx_,
              static_cast<unsigned long long>(counters.parked_ticks),
              static_cast<unsigned long long>(counters.end.ticks - counters.start.ticks));
    scheduler_counters(h_->counters_addr)[idx_] = counters;
    cores_.write_counters(core_counters(h_->counters_addr, h_->aicpu_threads));
    return PTO_OK;
  }

 private:
  bool all_finished() const { return h_->finished.load(std::memory_order_acquire) == h_->num_tasks; }

  bool retire_finished() {
    return cores_.collect([this](int64_t t, const CoreTiming &timing) {
      const int32_t status = reinterpret_cast<const pto_kernel_call *>(tasks_[t].payload.call_addr)->status;
      record(t, status ? kTraceFailed : kTraceDone, timing);
      if (tasks_[t].dump >= 0) dump_task_views(dump_, dump_tasks(dump_)[tasks_[t].dump], kDumpAfter);
      if (status != 0) {
        DEV_ERROR(log_, "task %lld (kernel %u) failed with status %d", static_cast<long long>(t),
                  tasks_[t].func_id, status);
        int32_t none = -1;
        if (h_->failed_task.compare_exchange_strong(none, static_cast<int32_t>(t),
                                                    std::memory_order_acq_rel)) {
          h_->failed_status.store(status, std::memory_order_relaxed);
        }
        finish(static_cast<int32_t>(t), kFailed);
      } else {
        finish(static_cast<int32_t>(t), kDone);
      }
    }) != 0;
  }

  // Profiling: the task's trace record (written once, by the thread that finishes it).
  void record(int64_t t, uint16_t status, const CoreTiming &timing) {
    if (!kProfilingBuilt || h_->trace_addr == 0) return;
    const bool ran = status != kTraceSkipped;
    reinterpret_cast<TaskTrace *>(h_->trace_addr)[t] =
        TaskTrace{t,          tasks_[t].func_id, static_cast<uint16_t>(tasks_[t].core_type),
                  status,     timing.core,       ran ? static_cast<int32_t>(idx_) : -1,
                  0,          timing.dispatch,   timing.start,
                  timing.end, timing.complete};
    if (h_->pmu_addr) reinterpret_cast<PmuTrace *>(h_->pmu_addr)[t] = timing.pmu;
  }

  // Marks t finished and releases its successors; poisons them if t did not succeed.
  void finish(int32_t t, TaskState state) {
    Task &task = tasks_[t];
    task.state.store(state, std::memory_order_relaxed);
    const bool poison = state != kDone;
    for (uint32_t k = 0; k < task.succ_count; ++k) {
      Task &s = tasks_[succ_[task.succ_begin + k]];
      if (poison) s.poisoned.store(1, std::memory_order_relaxed);
      if (s.fanin_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        s.state.store(kReady, std::memory_order_relaxed);
        release(succ_[task.succ_begin + k]);
      }
    }
    // The last task wakes everyone to stop.
    if (h_->finished.fetch_add(1, std::memory_order_acq_rel) + 1 == h_->num_tasks) peers_.wake_all();
  }

  // A task this thread made ready: run it on one of its own idle cores at once (the warm one if
  // possible: a chain stays on one hot core), else queue it for whoever has a core free.
  void release(uint32_t t) {
    const int32_t core =
        tasks_[t].poisoned.load(std::memory_order_relaxed) ? -1 : cores_.core_for(tasks_[t].core_type);
    if (core >= 0) {
      start(t, static_cast<uint32_t>(core));
    } else {
      h_->ready[tasks_[t].core_type].try_push(t);  // capacity >= num_tasks
    }
  }

  void start(int64_t t, uint32_t core) {
    Task &task = tasks_[t];
    task.core.store(static_cast<int32_t>(cores_.slot(core)), std::memory_order_relaxed);
    task.state.store(kRunning, std::memory_order_relaxed);
    if (task.dump >= 0) dump_task_views(dump_, dump_tasks(dump_)[task.dump], kDumpBefore);  // its inputs
    // Profiling: fetch the task's record line for writing while the core runs it.
    if (kProfilingBuilt && h_->trace_addr)
      __builtin_prefetch(reinterpret_cast<TaskTrace *>(h_->trace_addr) + t, 1);
    cores_.dispatch(core, t, &task.payload);
  }

  bool dispatch_ready() {
    const auto no_mix = [](int64_t, uint32_t) { return false; };  // host_build_graph has no MIX tasks
    return cores_.feed(
        h_->ready, PTO_CORE_TYPE_COUNT,
        [this](int64_t t, uint32_t core) {
          Task &task = tasks_[t];
          if (task.poisoned.load(std::memory_order_relaxed) != 0) {
            record(t, kTraceSkipped, CoreTiming{});
            finish(static_cast<int32_t>(t), kSkipped);  // a predecessor failed: never run it
            return false;
          }
          start(t, core);
          return true;
        },
        no_mix);
  }

  const pto_device_log *log_;
  DumpRegion *dump_;  // enable_dump_tensor, else null
  RuntimeHeader *h_;
  Task *tasks_;
  const uint32_t *succ_;
  Doorbell *bell_;
  uint32_t idx_ = 0;
  PeerWaker peers_;
  CorePool cores_;
};

}  // namespace
}  // namespace hbg
}  // namespace pto

extern "C" __attribute__((visibility("default"))) int pto_aicpu_entry(void *runtime, uint32_t thread_idx,
                                                                      uint32_t thread_num) {
  pto::hbg::Scheduler s(static_cast<pto::hbg::RuntimeHeader *>(runtime), thread_idx, thread_num);
  return s.run();
}
