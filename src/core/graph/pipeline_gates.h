// src/core/graph/pipeline_gates.h — pipeline_depth: token gates that bound the tasks in flight per scope.
//
// With pipeline_depth = D (pto/schedule_config.h) each gate hands out D tokens. A task takes a
// token of its gate when a scheduler is about to dispatch it (SchedulerLoop::start): a task
// that finds none is deferred — appended to its gate's FIFO, linked through
// TaskRecord::next_deferred, and not queued anywhere else. When a gated task completes its
// scheduler returns the token and promotes the oldest deferred task of that gate, which then
// goes the way of any released task (a core of this thread, else the ready queue) and takes a
// token again when it is dispatched. So at every instant a gate's tasks in flight (dispatched,
// completion not yet collected) number at most D: the token is taken before the trace's
// `dispatch` stamp and returned after its `complete` stamp, so the trace shows it too.
//
// Why no deadlock, even with D = 1: a token is held only by a task that is dispatched, and a
// dispatched task finishes without waiting for anything; its completion returns the token and
// promotes a deferred task. The take-or-defer and the return-and-promote of one gate run under
// the gate's spinlock, so a task is never deferred just after the last holder returned its
// token and looked at an empty FIFO (the lost wake-up a lock-free pair of counters would have).
//
// Which gate (PipelineScope): global -> gate 0; per_pool -> the task's pool (AIC, AIV, MIX);
// per_stream -> its stream id; per_target -> its target, tasks without one (kNoTarget) are not
// gated. Gates live in device memory (kPipelineGates of them, one cache line each), allocated
// by the runtime's host only when pipeline_depth is set; without them every call here is a
// null-pointer test on the caller's side (SchedulerLoop: one predictable branch).
// Nothing here allocates or throws: it is built into the AICPU program.
#ifndef PTO_CORE_GRAPH_PIPELINE_GATES_H
#define PTO_CORE_GRAPH_PIPELINE_GATES_H

#include <atomic>
#include <cstdint>

#include "core/graph/task_record.h"
#include "core/handshake.h"  // kCacheLine
#include "pto/schedule_config.h"
#include "pto_platform/doorbell.h"  // platform_cpu_relax

namespace pto {
namespace graph {

constexpr uint32_t kPipelineGates = kMaxStreams > kMaxTargets ? kMaxStreams : kMaxTargets;
static_assert(kPipelineGates >= 3, "per_pool needs a gate per pool");

// One gate. Every field but `lock` is read and written only under `lock` (acquire on taking
// it, release on dropping it), by the scheduler threads; the host zeroes the gates (head and
// tail -1) before launch and reads them after every device thread has returned.
struct alignas(kCacheLine) PipelineGate {
  std::atomic<uint32_t> lock;  // 0 free, 1 held (test-and-test-and-set, as core/mix_sync.h)
  uint32_t in_flight;          // tokens taken and not returned
  uint32_t max_in_flight;      // the most in_flight ever was (RunStats.pipeline_max_in_flight)
  uint32_t reserved;
  int64_t head, tail;  // deferred FIFO of task ids, -1 when empty
  uint64_t deferred;   // tasks that found no token here (RunStats.pipeline_deferred)
};
static_assert(sizeof(PipelineGate) == kCacheLine, "one line per gate: no false sharing between streams");

// Host: the gates of a run before launch.
inline void pipeline_gates_init(PipelineGate *g, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    g[i].lock.store(0, std::memory_order_relaxed);
    g[i].in_flight = g[i].max_in_flight = g[i].reserved = 0;
    g[i].head = g[i].tail = -1;
    g[i].deferred = 0;
  }
}

class PipelineGates {
 public:
  PipelineGates() = default;
  // `gates`: kPipelineGates of them, or null when the run has no pipeline_depth.
  PipelineGates(PipelineGate *gates, uint32_t depth, PipelineScope scope)
      : gates_(depth ? gates : nullptr), depth_(depth), scope_(scope) {}

  bool on() const { return gates_ != nullptr; }

  // The task's gate, or null when its scope leaves it ungated.
  PipelineGate *gate_of(const TaskRecord &t) const {
    switch (scope_) {
      case PipelineScope::kGlobal:
        return &gates_[0];
      case PipelineScope::kPerPool:
        return &gates_[static_cast<uint32_t>(t.core_type) < kPipelineGates ? t.core_type : 0u];
      case PipelineScope::kPerStream:
        return &gates_[t.stream % kPipelineGates];  // checked at submit
      case PipelineScope::kPerTarget:
        return t.target == kNoTarget ? nullptr : &gates_[t.target % kPipelineGates];
    }
    return nullptr;
  }

  // Takes a token for task `id` (record t), or defers it: false means it is now in its gate's
  // FIFO and must not be dispatched; release() hands it back later.
  template <typename TaskOf>
  bool acquire(TaskRecord &t, int64_t id, TaskOf &&task_of) {
    PipelineGate *g = gate_of(t);
    if (!g) return true;
    lock(*g);
    if (g->in_flight < depth_) {
      if (++g->in_flight > g->max_in_flight) g->max_in_flight = g->in_flight;
      unlock(*g);
      return true;
    }
    t.next_deferred = -1;
    if (g->tail >= 0) {
      task_of(g->tail).next_deferred = id;
    } else {
      g->head = id;
    }
    g->tail = id;
    ++g->deferred;
    unlock(*g);
    return false;
  }

  // Task t completed: returns its token; the oldest deferred task of its gate, or -1. The
  // caller releases that task (it takes a token again when dispatched).
  template <typename TaskOf>
  int64_t release(const TaskRecord &t, TaskOf &&task_of) {
    PipelineGate *g = gate_of(t);
    if (!g) return -1;
    lock(*g);
    --g->in_flight;
    const int64_t next = g->head;
    if (next >= 0) {
      g->head = task_of(next).next_deferred;
      if (g->head < 0) g->tail = -1;
    }
    unlock(*g);
    return next;
  }

 private:
  static void lock(PipelineGate &g) {
    while (g.lock.exchange(1, std::memory_order_acquire) != 0) {
      while (g.lock.load(std::memory_order_relaxed) != 0) platform_cpu_relax();
    }
  }
  static void unlock(PipelineGate &g) { g.lock.store(0, std::memory_order_release); }

  PipelineGate *gates_ = nullptr;
  uint32_t depth_ = 0;
  PipelineScope scope_ = PipelineScope::kGlobal;
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_PIPELINE_GATES_H
