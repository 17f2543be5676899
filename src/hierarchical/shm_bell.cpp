// src/hierarchical/shm_bell.cpp — spin, yield, then park on a process-shared futex (see shm_bell.h).
#include "hierarchical/shm_bell.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pto_platform/doorbell.h"  // platform_cpu_relax

namespace pto {
namespace l3 {
namespace {

long futex(std::atomic<uint32_t> *addr, int op, uint32_t val, const timespec *ts) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t *>(addr), op, val, ts, nullptr, 0);
}

}  // namespace

bool ShmBell::wait(uint32_t seen, uint64_t timeout_ns, uint32_t spin_iters, uint32_t yield_iters) {
  for (uint32_t i = spin_iters; i != 0; --i) {
    if (seq.load(std::memory_order_acquire) != seen) return true;
    platform_cpu_relax();
  }
  // Yield: on 2 CPUs the thread we wait for is often queued on ours.
  for (uint32_t i = yield_iters; i != 0; --i) {
    if (seq.load(std::memory_order_acquire) != seen) return true;
    sched_yield();
  }
  const uint64_t deadline = timeout_ns ? platform_now_ns() + timeout_ns : 0;
  for (;;) {
    // The seq_cst increment of sleepers before re-reading seq pairs with ring()'s seq_cst
    // increment of seq before reading sleepers: one side sees the other, no lost wake-up.
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    timespec rel{}, *relp = nullptr;
    if (deadline) {
      const uint64_t now = platform_now_ns();
      if (now >= deadline) {
        sleepers.fetch_sub(1, std::memory_order_relaxed);
        return seq.load(std::memory_order_acquire) != seen;
      }
      const uint64_t left = deadline - now;
      rel.tv_sec = static_cast<time_t>(left / 1000000000ull);
      rel.tv_nsec = static_cast<long>(left % 1000000000ull);
      relp = &rel;
    }
    if (seq.load(std::memory_order_seq_cst) == seen) futex(&seq, FUTEX_WAIT, seen, relp);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
    if (seq.load(std::memory_order_acquire) != seen) return true;
    if (deadline && platform_now_ns() >= deadline) return false;
  }
}

void ShmBell::ring() {
  seq.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) futex(&seq, FUTEX_WAKE, INT32_MAX, nullptr);
}

void ShmBell::ring_one() {
  seq.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) futex(&seq, FUTEX_WAKE, 1, nullptr);
}

}  // namespace l3
}  // namespace pto
