// src/core/run_counters.h — the counters every run collects, profiling or not.
//
// Cheap by construction: a core timestamps each kernel (two tick reads, written next to its
// completion in the handshake slot), and its owning scheduler thread folds them into the
// pool's per-core sums when it collects the completion; scheduler threads time only their
// parked waits (the slow path). At the end of the run each scheduler thread writes its own
// SchedulerCounters entry and the CoreCounters of the cores it owns (one writer each); the host
// reads them after every device thread has returned. Times are platform ticks
// (pto_platform/clock.h) except the scheduler's clock pairs, which let the host convert them
// (core/tick_clock.h).
#ifndef PTO_CORE_RUN_COUNTERS_H
#define PTO_CORE_RUN_COUNTERS_H

#include <cstdint>

#include "core/handshake.h"
#include "pto_platform/clock.h"

namespace pto {

struct CoreCounters {
  uint64_t busy_ticks = 0;                 // sum of its kernels' durations
  uint64_t tasks = 0;                      // kernels run (a MIX task counts once on each of its three cores)
  uint64_t first_start = 0, last_end = 0;  // ticks; 0 when it ran nothing
};

struct alignas(kCacheLine) SchedulerCounters {
  ClockPair start, end;       // the thread's scheduling loop, both clocks
  uint64_t parked_ticks = 0;  // time it waited on its doorbell with nothing to do
  // dispatch_threshold (core/graph/dispatch_threshold.h), 0 when off: tasks this thread
  // started under each DispatchPolicy, and its decisions that flipped below <-> above.
  uint32_t dispatched[3] = {0, 0, 0};
  uint32_t dispatch_switches = 0;
  // Tasks this thread finished without a core (dependency-only, or a false dispatch predicate).
  uint32_t retired_inline = 0;
};
static_assert(sizeof(SchedulerCounters) == kCacheLine, "one line per scheduler thread");

// Task timing slots (pto::Launch::timing_slot), as one scheduler thread saw them: for each slot,
// the earliest dispatch and latest finish of the tagged tasks, blocks and MIX tasks it
// dispatched or collected. Each is stored as platform ticks + 1, so 0 means "none" while a timed
// run's virtual tick 0 stays a stamp; read them with first_dispatch / last_finish. Each thread
// folds into its own copy with no atomics (the scheduler loop's member) and writes it out once at
// the end of its run; the host merges the threads' copies after every device thread has returned.
struct alignas(kCacheLine) TaskTimingSlots {
  uint64_t dispatch[PTO_TASK_TIMING_SLOTS] = {};
  uint64_t finish[PTO_TASK_TIMING_SLOTS] = {};

  // `tag`: TaskRecord::timing_tag (slot + 1; the caller tests it non-zero).
  void dispatched(uint8_t tag, uint64_t ticks) {
    uint64_t &d = dispatch[tag - 1];
    d = d == 0 || ticks + 1 < d ? ticks + 1 : d;
  }
  void finished(uint8_t tag, uint64_t ticks) {
    uint64_t &f = finish[tag - 1];
    f = ticks + 1 > f ? ticks + 1 : f;
  }
  // Another thread's copy folded into this one (min dispatch, max finish), by the same rules.
  void merge(const TaskTimingSlots &o) {
    for (uint32_t k = 0; k < PTO_TASK_TIMING_SLOTS; ++k) {
      if (o.dispatch[k] != 0 && (dispatch[k] == 0 || o.dispatch[k] < dispatch[k]))
        dispatch[k] = o.dispatch[k];
      if (o.finish[k] > finish[k]) finish[k] = o.finish[k];
    }
  }
  // Slot k's stamps in platform ticks; false when no task of the slot was dispatched (finished).
  bool first_dispatch(uint32_t k, uint64_t *ticks) const { return unstamp(dispatch[k], ticks); }
  bool last_finish(uint32_t k, uint64_t *ticks) const { return unstamp(finish[k], ticks); }

 private:
  static bool unstamp(uint64_t stored, uint64_t *ticks) {
    *ticks = stored - 1;
    return stored != 0;
  }
};
static_assert(sizeof(TaskTimingSlots) == 4 * kCacheLine, "16 slots, two stamps each");

// The counters region of a run: SchedulerCounters[threads], then CoreCounters[cores] by slot,
// then TaskTimingSlots[threads] (on a line boundary).
inline uint64_t run_counters_slots_offset(uint32_t threads, uint32_t cores) {
  const uint64_t end = threads * sizeof(SchedulerCounters) + cores * sizeof(CoreCounters);
  return (end + kCacheLine - 1) / kCacheLine * kCacheLine;
}
inline uint64_t run_counters_bytes(uint32_t threads, uint32_t cores) {
  return run_counters_slots_offset(threads, cores) + threads * sizeof(TaskTimingSlots);
}
inline SchedulerCounters *scheduler_counters(uint64_t region) {
  return reinterpret_cast<SchedulerCounters *>(region);
}
inline CoreCounters *core_counters(uint64_t region, uint32_t threads) {
  return reinterpret_cast<CoreCounters *>(region + threads * sizeof(SchedulerCounters));
}
inline TaskTimingSlots *task_timing_slots(uint64_t region, uint32_t threads, uint32_t cores) {
  return reinterpret_cast<TaskTimingSlots *>(region + run_counters_slots_offset(threads, cores));
}

}  // namespace pto
#endif  // PTO_CORE_RUN_COUNTERS_H
