// src/core/aicore_loop.h — what every compute core runs: wait for a payload, run it, report, repeat.
//
// Shared by every runtime variant: a core only knows its handshake slot (core/handshake.h for
// the protocol and the memory orders).
#ifndef PTO_CORE_AICORE_LOOP_H
#define PTO_CORE_AICORE_LOOP_H

#include "core/handshake.h"
#include "core/mix_sync.h"
#include "core/profiling.h"
#include "pto/kernel.h"
#include "pto_platform/clock.h"
#include "pto_platform/kernel_call.h"
#include "pto_platform/pmu.h"

namespace pto {

using KernelFn = void (*)(int64_t *args);

// enable_pmu: the kernel between two counter reads, the differences into the report. Returns
// what platform_call_kernel returned.
inline int32_t run_with_pmu(CoreReport &r, KernelFn kernel, int64_t *args) {
  PmuSample a, b;
  int32_t error = 0;
  const uint32_t valid = platform_pmu_read(&a, &error);
  r.kernel_start = platform_ticks();
  const int32_t stopped = platform_call_kernel(kernel, args);
  platform_kernel_end();
  r.kernel_end = platform_ticks();
  platform_pmu_read(&b, &error);
  r.pmu_cycles = b.cycles - a.cycles;
  r.pmu_instructions = b.instructions - a.instructions;
  r.pmu_cache_misses = b.cache_misses - a.cache_misses;
  r.pmu_valid = valid;
  r.pmu_error = error;
  return stopped;
}

inline void aicore_loop(Handshake &hs) {
  uint32_t done = 0;  // the host lays slots out with dispatch.seq == 0
  hs.aicore_ready.store(1, std::memory_order_release);
  for (;;) {
    const uint32_t seq = doorbell_prepare(hs.dispatch);
    if (seq == done) {
      doorbell_wait(hs.dispatch, seq);
      continue;
    }
    if (hs.control.load(std::memory_order_relaxed) == kControlQuit) return;  // sent only when idle
    // Every payload up to seq (at most kDepth of them), in order.
    for (uint32_t s = done + 1; s != seq + 1; ++s) {
      const auto *p = reinterpret_cast<const DispatchPayload *>(
          hs.payload[s % Handshake::kDepth].load(std::memory_order_relaxed));
      auto *call = reinterpret_cast<pto_kernel_call *>(p->call_addr);
      const auto kernel = reinterpret_cast<KernelFn>(p->kernel_addr);
      CoreReport &r = hs.report[s % Handshake::kDepth];
      hs.task_status.store(1, std::memory_order_relaxed);
      const bool mix = call->is_mix != 0 && call->mix_sync != 0;
      if (mix) call->mix_ops = reinterpret_cast<uint64_t>(&kMixOps);  // this program's waits (mix_sync.h)
      // Sim timing mode: its virtual time, and what priced it (read only in timed runs, which write it).
      platform_kernel_begin(p->kernel_addr, call->args, call->num_args, &hs.price[s % Handshake::kDepth]);
      int32_t stopped;  // non-zero: the platform stopped the kernel (pto_platform/kernel_call.h)
      if (kProfilingBuilt && hs.pmu.load(std::memory_order_relaxed)) {
        stopped = run_with_pmu(r, kernel, call->args);
      } else {
        r.kernel_start = platform_ticks();  // always: the run's busy counters (core/run_counters.h)
        stopped = platform_call_kernel(kernel, call->args);
        platform_kernel_end();  // sim timing mode: the clock moves to the kernel's end
        r.kernel_end = platform_ticks();
      }
      if (stopped != 0) call->status = stopped;  // the scheduler reads it after done_seq
      if (mix) mix_part_returned(call);          // before the report: the block is reused after it
      hs.task_status.store(0, std::memory_order_relaxed);
      hs.done_seq.store(s, std::memory_order_release);  // publishes the kernel's writes and r
      doorbell_ring(*reinterpret_cast<Doorbell *>(hs.owner_bell.load(std::memory_order_relaxed)));
    }
    done = seq;
  }
}

}  // namespace pto
#endif  // PTO_CORE_AICORE_LOOP_H
