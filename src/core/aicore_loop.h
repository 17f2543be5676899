// src/core/aicore_loop.h — what every compute core runs: wait for a payload, run it, report, repeat.
//
// Shared by every runtime variant: a core only knows its handshake slot (core/handshake.h for
// the protocol and the memory orders).
#ifndef PTO_CORE_AICORE_LOOP_H
#define PTO_CORE_AICORE_LOOP_H

#include "core/handshake.h"
#include "core/profiling.h"
#include "pto/kernel.h"
#include "pto_platform/clock.h"
#include "pto_platform/pmu.h"

namespace pto {

using KernelFn = void (*)(int64_t *args);

// enable_pmu: the kernel between two counter reads, the differences into the slot.
inline void run_with_pmu(Handshake &hs, KernelFn kernel, int64_t *args) {
  PmuSample a, b;
  int32_t error = 0;
  const uint32_t valid = platform_pmu_read(&a, &error);
  hs.kernel_start = platform_ticks();
  kernel(args);
  hs.kernel_end = platform_ticks();
  platform_pmu_read(&b, &error);
  hs.pmu_cycles = b.cycles - a.cycles;
  hs.pmu_instructions = b.instructions - a.instructions;
  hs.pmu_cache_misses = b.cache_misses - a.cache_misses;
  hs.pmu_valid = valid;
  hs.pmu_error = error;
}

inline void aicore_loop(Handshake &hs) {
  uint32_t seen = 0;  // the host lays slots out with dispatch.seq == 0
  hs.aicore_ready.store(1, std::memory_order_release);
  for (;;) {
    const uint32_t seq = doorbell_prepare(hs.dispatch);
    if (seq == seen) {
      doorbell_wait(hs.dispatch, seq);
      continue;
    }
    seen = seq;
    if (hs.control.load(std::memory_order_relaxed) == kControlQuit) return;
    const auto *p = reinterpret_cast<const DispatchPayload *>(hs.payload.load(std::memory_order_relaxed));
    auto *call = reinterpret_cast<pto_kernel_call *>(p->call_addr);
    hs.task_status.store(1, std::memory_order_relaxed);
    if (kProfilingBuilt && hs.pmu.load(std::memory_order_relaxed)) {
      run_with_pmu(hs, reinterpret_cast<KernelFn>(p->kernel_addr), call->args);
    } else {
      hs.kernel_start = platform_ticks();  // always: the run's busy counters (core/run_counters.h)
      reinterpret_cast<KernelFn>(p->kernel_addr)(call->args);
      hs.kernel_end = platform_ticks();
    }
    hs.task_status.store(0, std::memory_order_relaxed);
    hs.done_seq.store(seq, std::memory_order_release);  // publishes the kernel's writes
    doorbell_ring(*reinterpret_cast<Doorbell *>(hs.owner_bell.load(std::memory_order_relaxed)));
  }
}

}  // namespace pto
#endif  // PTO_CORE_AICORE_LOOP_H
