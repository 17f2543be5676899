// src/core/aicore_loop.h — what every compute core runs: wait for a payload, run it, report, repeat.
//
// Shared by every runtime variant: a core only knows its handshake slot (core/handshake.h for
// the protocol and the memory orders).
#ifndef PTO_CORE_AICORE_LOOP_H
#define PTO_CORE_AICORE_LOOP_H

#include <cstddef>
#include <cstring>

#include "core/handshake.h"
#include "core/mix_sync.h"
#include "core/profiling.h"
#include "pto/kernel.h"
#include "pto_abi/intrinsic.h"
#include "pto_platform/clock.h"
#include "pto_platform/kernel_call.h"
#include "pto_platform/pmu.h"

namespace pto {

using KernelFn = void (*)(int64_t *args);

// enable_pmu: the kernel between two counter reads, the differences into the report. Returns
// what platform_call_kernel returned.
inline int32_t run_with_pmu(CoreReport &r, KernelFn kernel, int64_t *args, const KernelWaits *waits) {
  PmuSample a, b;
  int32_t error = 0;
  const uint32_t valid = platform_pmu_read(&a, &error);
  r.kernel_start = platform_ticks();
  const int32_t stopped = waits != nullptr ? platform_call_kernel_waiting(kernel, args, waits)
                                           : platform_call_kernel(kernel, args);
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

// One block of an SPMD task (core/handshake.h: BlockDispatch). Its blocks share the task's call
// blocks, but each needs its own LocalContext (get_block_idx) and, for MIX, its cluster's sync
// block: the kernel runs on a copy of the call block's header and argument array (a
// descriptor-ABI call block: PTO_ABI_ARGS_LEN arguments) whose local-context slot points at its
// own context; the tensors' descriptors stay where they are. A status the block sets goes back
// to the shared header (any non-zero fails the task).
template <typename Run>
inline int32_t run_block(pto_kernel_call *call, const BlockDispatch &block, Run &&run) {
  constexpr size_t kHead = offsetof(pto_kernel_call, args);
  alignas(pto_kernel_call) char copy[kHead + sizeof(int64_t) * PTO_ABI_ARGS_LEN];
  memcpy(copy, call, kHead);
  memcpy(copy + kHead, call->args, sizeof(int64_t) * PTO_ABI_ARGS_LEN);
  auto *head = reinterpret_cast<pto_kernel_call *>(copy);
  auto *args = reinterpret_cast<int64_t *>(copy + kHead);
  LocalContext local;
  local.block_idx = block.block_idx;
  local.block_num = block.block_num;
  args[PTO_ABI_LOCAL_CONTEXT_INDEX] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&local));
  head->status = 0;
  head->mix_sync = block.mix_sync;
  const bool mix = head->is_mix != 0 && block.mix_sync != 0;
  if (mix) head->mix_ops = reinterpret_cast<uint64_t>(&kMixOps);
  const int32_t stopped = run(args, mix ? head : nullptr);
  // Blocks on other cores may set it too (relaxed atomic: any non-zero fails the task).
  const int32_t status = stopped != 0 ? stopped : head->status;
  if (status != 0) __atomic_store_n(&call->status, status, __ATOMIC_RELAXED);
  if (mix) mix_part_returned(head);
  return 0;  // the status is written
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
      const BlockDispatch *block;
      const DispatchPayload *p =
          payload_of(hs.payload[s % Handshake::kDepth].load(std::memory_order_relaxed), &block);
      auto *call = reinterpret_cast<pto_kernel_call *>(p->call_addr);
      const auto kernel = reinterpret_cast<KernelFn>(p->kernel_addr);
      CoreReport &r = hs.report[s % Handshake::kDepth];
      hs.task_status.store(1, std::memory_order_relaxed);
      const bool mix = block == nullptr && call->is_mix != 0 && call->mix_sync != 0;
      if (mix) call->mix_ops = reinterpret_cast<uint64_t>(&kMixOps);  // this program's waits (mix_sync.h)
      // mix_call: the MIX part's call block (its copy, for a block of an SPMD task); null otherwise.
      // Inlined at both uses, as it was with one: this is every task's path.
      auto run = [&](int64_t * args, pto_kernel_call * mix_call) __attribute__((always_inline)) {
        KernelWaits waits;  // a MIX part's PTO-ISA pipe waits (mix_sync.h, external_wait)
        const KernelWaits *w = nullptr;
        if (mix_call != nullptr) {
          waits = mix_kernel_waits(mix_call);
          w = &waits;
        }
        // Sim timing mode: its virtual time, and what priced it (read only in timed runs, which write it).
        platform_kernel_begin(p->kernel_addr, args, call->num_args, &hs.price[s % Handshake::kDepth]);
        int32_t stopped;  // non-zero: the platform stopped the kernel (pto_platform/kernel_call.h)
        if (kProfilingBuilt && hs.pmu.load(std::memory_order_relaxed)) {
          stopped = run_with_pmu(r, kernel, args, w);
        } else {
          r.kernel_start = platform_ticks();  // always: the run's busy counters (core/run_counters.h)
          stopped = w != nullptr ? platform_call_kernel_waiting(kernel, args, w)
                                 : platform_call_kernel(kernel, args);
          platform_kernel_end();  // sim timing mode: the clock moves to the kernel's end
          r.kernel_end = platform_ticks();
        }
        return stopped;
      };
      const int32_t stopped = block ? run_block(call, *block, run) : run(call->args, mix ? call : nullptr);
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
