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

// The counters region of a run: SchedulerCounters[threads], then CoreCounters[cores] by slot.
inline uint64_t run_counters_bytes(uint32_t threads, uint32_t cores) {
  return threads * sizeof(SchedulerCounters) + cores * sizeof(CoreCounters);
}
inline SchedulerCounters *scheduler_counters(uint64_t region) {
  return reinterpret_cast<SchedulerCounters *>(region);
}
inline CoreCounters *core_counters(uint64_t region, uint32_t threads) {
  return reinterpret_cast<CoreCounters *>(region + threads * sizeof(SchedulerCounters));
}

}  // namespace pto
#endif  // PTO_CORE_RUN_COUNTERS_H
