// src/runtime/tensormap_and_ringbuffer/aicpu/back_pressure.h — how the orchestrator waits for ring space.
//
// Included by the orchestrator's .cpp files that wait (submit, dependencies, heap_alloc). The
// schedulers free ring space by advancing last_task_alive; the orchestrator publishes in
// orch_wake_at the value it needs (seq_cst, then re-checks ready()) and parks on its doorbell,
// which a scheduler rings only once retirement reaches that value (tmr_layout.h). With one
// AICPU thread there is nobody else to retire tasks, so it runs scheduling passes instead.
#ifndef PTO_TMR_BACK_PRESSURE_H
#define PTO_TMR_BACK_PRESSURE_H

#include <string>

#include "orchestrator.h"
#include "pto_platform/clock.h"
#include "pto_platform/doorbell.h"

namespace pto {
namespace tmr {

inline const char *stall_name(Stall what) {
  static const char *const kNames[] = {"task window", "heap ring", "dependency pool", "TensorMap",
                                       "tasks using a tensor it reads or writes itself"};
  return kNames[what];
}

// Re-checks `ready` each time the schedulers retire something (or, when this thread schedules
// too, after each scheduling pass). Gives up only when the run is aborted. The fast path (ready
// at once) costs one call of ready() and one read of last_task_alive: live_from() is refreshed
// before every call of ready(), which may depend on it.
template <typename Ready>
bool DeviceOrchestrator::wait_until(Stall what, Ready ready_now, int64_t wake_at) {
  auto ready = [&] {
    refresh_live();
    return ready_now();
  };
  if (ready()) return true;
  flush_ready();  // the held ready tasks may be what it waits for
  // batch_deps: a batch never spans a wait — its accesses are filed before ring space is
  // awaited (a TensorMap that must make room then sees them, and no batch entry outlives a
  // long wait). flush_batch's own waits (for TensorMap room) do not flush again.
  if (batch_ && !flushing_ && !batch_->empty()) {
    if (!flush_batch()) return false;
    if (ready()) return true;
  }
  const uint64_t t0 = platform_now_ns();
  h_->stalls[what].fetch_add(1, std::memory_order_relaxed);
  h_->waiting_for.store(what + 1, std::memory_order_relaxed);
  h_->orch_wake_at.store(wake_at, std::memory_order_seq_cst);
  bool ok = true;
  for (;;) {
    const uint32_t seen = doorbell_prepare(*wait_bell_);
    const bool progress = poller_ && poller_->poll();
    if (ready()) break;
    if (h_->abort.load(std::memory_order_acquire) != 0) {
      error(PTO_RUN_TIMEOUT,
            std::string("the run was aborted while the orchestrator waited for the ") + stall_name(what));
      ok = false;
      break;
    }
    if (!progress) doorbell_wait(*wait_bell_, seen);
  }
  h_->orch_wake_at.store(INT64_MAX, std::memory_order_relaxed);  // not waiting: schedulers stop ringing
  h_->waiting_for.store(0, std::memory_order_relaxed);
  h_->stall_ns[what].fetch_add(platform_now_ns() - t0, std::memory_order_relaxed);
  return ok;
}

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_BACK_PRESSURE_H
