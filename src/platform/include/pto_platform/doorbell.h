// src/platform/include/pto_platform/doorbell.h — how device threads wait for work: the seam.
//
// A Doorbell is a sequence word plus a sleeper count, laid out in device memory by the core.
// The waiting policy is the platform's: on the sim platform a waiter spins briefly and then
// parks in the kernel (futex), so 76 device threads on 2 CPUs do not livelock; on hardware a
// core only spins. The protocol is an eventcount:
//   waiter:   seen = doorbell_prepare(b); if (condition) proceed; else doorbell_wait(b, seen);
//   notifier: make condition true; doorbell_ring(b);
// A ring between prepare and wait makes wait return at once, so no wake-up is lost.
#ifndef PTO_PLATFORM_DOORBELL_H
#define PTO_PLATFORM_DOORBELL_H

#include <atomic>
#include <cstdint>

#include "pto_platform/clock.h"  // platform_now_ns, which the waits below take deadlines in

namespace pto {

struct Doorbell {
  std::atomic<uint32_t> seq{0};       // writers: any notifier (fetch_add, seq_cst)
  std::atomic<uint32_t> sleepers{0};  // writers: waiters entering/leaving the parked state
};
static_assert(sizeof(Doorbell) == 8, "Doorbell is laid out in device memory");

// Acquire-loads the sequence; pass it to doorbell_wait after checking the condition.
// A spin-wait hint to the CPU (pause / yield) between two polls of a word another thread writes.
inline void platform_cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

inline uint32_t doorbell_prepare(const Doorbell &b) {
  return b.seq.load(std::memory_order_acquire);
}

// Returns once the sequence differs from `seen` (possibly spuriously early).
void doorbell_wait(Doorbell &b, uint32_t seen);
// As doorbell_wait, but gives up at the monotonic deadline; returns false on time-out.
bool doorbell_wait_until(Doorbell &b, uint32_t seen, uint64_t deadline_ns);
// Bumps the sequence and wakes parked waiters, if any (one atomic RMW + one load otherwise).
void doorbell_ring(Doorbell &b);

// Between two polls of memory another simulated thread or core writes, when no doorbell is rung
// for it (an orchestration polling what a kernel writes; a kernel spinning on a clock or another
// core's write): on a fiber of the sim's pool, suspends the fiber so that every other runnable
// one goes first, and returns true; elsewhere (an OS thread) does nothing and returns false.
// Without it a polling fiber keeps its worker, and on a pool the size of the CPUs the fibers it
// waits for may never run (docs/design/sim_execution.md, what a kernel may do).
bool platform_fiber_yield();

}  // namespace pto
#endif  // PTO_PLATFORM_DOORBELL_H
