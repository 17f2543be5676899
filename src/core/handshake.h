// src/core/handshake.h — the per-core handshake slot between an AICPU scheduler thread and a core.
//
// Seed 000's protocol (scheduler ready, core ready, task pointer, busy/done, quit) with sequence
// numbers instead of flags, so a slot never needs resetting between tasks and no ABA arises,
// and room for kDepth payloads, so a scheduler can hand a core its next task while it still
// runs the current one (a short kernel then never waits for the scheduler's round trip):
//   scheduler: write payload[s % kDepth] (relaxed) -> ring `dispatch` to s (seq_cst RMW,
//              releases the payload); never more than kDepth dispatched and not yet collected
//   core:      sees dispatch.seq >= s (acquire) -> read payload[s % kDepth] -> run -> write
//              report[s % kDepth] -> store done_seq = s (release) -> ring the owner's doorbell;
//              then s + 1 if it was dispatched meanwhile, else wait
//   scheduler: done_seq >= s (acquire) -> task s's writes and report are visible; it reads the
//              report before it dispatches s + kDepth, the only payload that reuses the entry.
// Quit is a ring with `control` set instead of a payload; it is only sent to an idle core.
//
// A chip's handshake block has one slot per core, in the order core/cluster_layout.h gives
// (AIC cores first, then AIV). The host's context owns it (host/device_runner.h) and hands it to the
// device, whose cores serve it from load to shutdown.
#ifndef PTO_CORE_HANDSHAKE_H
#define PTO_CORE_HANDSHAKE_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/cluster_layout.h"
#include "pto/types.h"
#include "pto_platform/clock.h"
#include "pto_platform/doorbell.h"

namespace pto {

constexpr size_t kCacheLine = 64;

// What a core needs to run one task. Lives in device memory, written before dispatch.
struct DispatchPayload {
  uint64_t kernel_addr;  // entry point: void (*)(int64_t *args)
  uint64_t call_addr;    // device address of the task's pto_kernel_call (args inside)
};

// One block of an SPMD task (launched with block_num > 1): the task's payload, which block this
// dispatch runs, and for a MIX task the sync block of the cluster it runs on. The task's call
// blocks are shared by all its blocks, so what differs per block travels here; the scheduler
// keeps one per core and handshake place (core/core_pool.h) and hands the core its address
// with kBlockDispatch set (a DispatchPayload's address, 8-aligned, has that bit clear).
struct BlockDispatch {
  DispatchPayload payload;
  uint64_t mix_sync;  // MIX: the cluster's MixSync (core/mix_sync.h); 0 otherwise
  int32_t block_idx;
  int32_t block_num;
};
constexpr uint64_t kBlockDispatch = 1;

// The payload a handshake place names, and its block (null for an ordinary dispatch).
inline const DispatchPayload *payload_of(uint64_t word, const BlockDispatch **block) {
  if ((word & kBlockDispatch) == 0) {
    *block = nullptr;
    return reinterpret_cast<const DispatchPayload *>(word);
  }
  *block = reinterpret_cast<const BlockDispatch *>(word & ~kBlockDispatch);
  return &(*block)->payload;
}

enum : uint32_t { kControlRun = 0, kControlQuit = 1 };

// What a core reports about one finished payload, next to its completion.
struct CoreReport {
  uint64_t kernel_start = 0, kernel_end = 0;  // ticks (pto_platform/clock.h)
  // enable_pmu: the kernel's counters (pto_platform/pmu.h).
  uint64_t pmu_cycles = 0, pmu_instructions = 0, pmu_cache_misses = 0;
  uint32_t pmu_valid = 0;  // kPmu* bits
  int32_t pmu_error = 0;   // errno of a refused counter
};

struct alignas(kCacheLine) Handshake {
  static constexpr uint32_t kDepth = 4;  // payloads a core holds: the one it runs and the next

  // --- Written by the owning scheduler thread, read by the core. ---
  std::atomic<uint64_t> payload[kDepth] = {};  // device addresses of DispatchPayloads, by seq % kDepth
  std::atomic<uint64_t> owner_bell{0};         // device address of the owner's Doorbell (before 1st ring)
  std::atomic<uint32_t> control{kControlRun};
  uint32_t core_type = 0;        // device-written at creation; never changes
  Doorbell dispatch;             // rung after each payload / control write
  std::atomic<uint32_t> pmu{0};  // 1: the core reads its PMU counters around each kernel (per run)

  // --- Written by the core, read by the owning scheduler thread. ---
  alignas(kCacheLine) std::atomic<uint32_t> aicore_ready{0};  // 1 once the core polls the slot
  std::atomic<uint32_t> done_seq{0};     // dispatch seq of the last completed payload (release)
  std::atomic<uint32_t> task_status{0};  // 1 while running a task, 0 when idle (diagnostics)
  CoreReport report[kDepth];             // by seq % kDepth, written before done_seq

  // --- Written by the owning scheduler thread with each payload; read only by a crash report
  // (handshake_current), so it stays off the line the core polls. ---
  alignas(kCacheLine) std::atomic<int64_t> task_id[kDepth] = {};  // the task of payload[s % kDepth]

  // --- Sim timing mode: what priced payload s's kernel, by seq % kDepth, written by the core
  // before done_seq like the report and read with it only by runs that keep prices (profiled
  // timed runs; stale otherwise). On lines of their own: the untimed path never touches them.
  alignas(kCacheLine) KernelPrice price[kDepth];
};
static_assert(sizeof(Handshake) == 9 * kCacheLine, "scheduler- and core-written parts on own lines");
static_assert(offsetof(Handshake, aicore_ready) == kCacheLine, "core-written part starts a line");

// Tells an idle core to leave its loop (core/aicore_loop.h): at shutdown, no run in flight.
inline void handshake_send_quit(Handshake &hs) {
  hs.control.store(kControlQuit, std::memory_order_relaxed);
  doorbell_ring(hs.dispatch);  // releases `control`
}

// The kernel and task a core runs (or runs next, when idle): the core runs payloads in order
// and publishes done_seq after each, so it is the one after done_seq. Plain relaxed reads
// only, so a fault handler on the core's thread may call it (async-signal-safe).
inline void handshake_current(const Handshake &hs, uint64_t *kernel_addr, int64_t *task_id) {
  const uint32_t s = hs.done_seq.load(std::memory_order_relaxed) + 1;
  const uint64_t payload = hs.payload[s % Handshake::kDepth].load(std::memory_order_relaxed);
  *task_id = hs.task_id[s % Handshake::kDepth].load(std::memory_order_relaxed);
  const BlockDispatch *block;
  *kernel_addr = payload ? payload_of(payload, &block)->kernel_addr : 0;
}

}  // namespace pto
#endif  // PTO_CORE_HANDSHAKE_H
