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
#ifndef PTO_CORE_HANDSHAKE_H
#define PTO_CORE_HANDSHAKE_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "pto_platform/doorbell.h"

namespace pto {

constexpr size_t kCacheLine = 64;

// What a core needs to run one task. Lives in device memory, written before dispatch.
struct DispatchPayload {
  uint64_t kernel_addr;  // entry point: void (*)(int64_t *args)
  uint64_t call_addr;    // device address of the task's pto_kernel_call (args inside)
};

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
  // (platform/sim/crash_report_sim.h), so it stays off the line the core polls. ---
  alignas(kCacheLine) std::atomic<int64_t> task_id[kDepth] = {};  // the task of payload[s % kDepth]
};
static_assert(sizeof(Handshake) == 6 * kCacheLine, "scheduler- and core-written parts on own lines");
static_assert(offsetof(Handshake, aicore_ready) == kCacheLine, "core-written part starts a line");

}  // namespace pto
#endif  // PTO_CORE_HANDSHAKE_H
