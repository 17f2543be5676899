// src/hierarchical/shm_bell.h — an eventcount that works across processes (futex on shared memory).
//
// The L3 scheduler parks on one of these; SUB workers, event fulfillers, chip processes and the
// zygote ring it. Same protocol as pto::Doorbell (src/platform/include/pto_platform/doorbell.h):
//   waiter:   seen = bell.prepare(); if (work) proceed; else bell.wait(seen, timeout);
//   notifier: make work visible; bell.ring();
// but with a process-shared futex (FUTEX_WAIT, not _PRIVATE), so a bell placed in a MAP_SHARED
// mapping wakes a waiter in another process. Waiting spins briefly, then yields, then parks: a
// hand-off between two busy threads costs well under a microsecond, an idle waiter no CPU.
#ifndef PTO_HIERARCHICAL_SHM_BELL_H
#define PTO_HIERARCHICAL_SHM_BELL_H

#include <atomic>
#include <cstdint>

#include "pto_platform/clock.h"  // platform_now_ns: the L3 code's clock too

namespace pto {
namespace l3 {

struct ShmBell {
  std::atomic<uint32_t> seq{0};       // writers: every notifier (fetch_add, seq_cst)
  std::atomic<uint32_t> sleepers{0};  // writers: waiters entering/leaving the parked state

  uint32_t prepare() const { return seq.load(std::memory_order_acquire); }
  // Returns true once seq != seen; false when timeout_ns (0 = none) passed first. Spins spin_iters
  // times and yields yield_iters times before parking.
  bool wait(uint32_t seen, uint64_t timeout_ns = 0, uint32_t spin_iters = 256, uint32_t yield_iters = 64);
  // Bumps seq and wakes parked waiters (one RMW + one load when nobody sleeps).
  void ring();
  // Bumps seq and wakes at most one parked waiter: for a queue whose every push rings, so that
  // one item does not wake a herd of idle consumers that then compete for the CPU (a waiter
  // still spinning sees the bump; a parked one not woken sleeps on until the next ring).
  void ring_one();
};
static_assert(sizeof(ShmBell) == 8, "ShmBell lives in shared memory: two plain words");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex words must be lock-free");

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_SHM_BELL_H
