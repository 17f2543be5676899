// src/platform/sim/doorbell_sim.cpp — spin, then yield, then park: waiting on the sim platform (Linux futex).
//
// Why spin at all: a wake-up through the kernel costs tens of microseconds here, a spin a few
// hundred nanoseconds. Why yield next: the sim runs up to 76 device threads on 2 CPUs, and the
// thread we wait for is often queued on our own CPU (the kernel wakes a thread where its waker
// ran); a pure spin would hold that CPU until we park, turning every hand-off into a futex
// round trip. sched_yield lets it run at once and costs a fraction of a microsecond when
// nobody is queued. Measured on a 2-vCPU VM (dependent chain of empty tasks, full a2a3
// geometry): 4-30 us per task with spinning alone, 0.8-1 us with the yield phase.
// Budgets: PTO_SIM_SPIN pause iterations (default 128, ~4 us) then PTO_SIM_YIELD yields
// (default 64); both read once.
//
// That is the OS-thread path: the host's waits, and every wait when no fiber pool is bound. A
// wait on a pool fiber (a simulated AICPU thread or core, sim_exec.h) neither spins nor parks
// the OS thread: it suspends the fiber at once and the pool runs another one.
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "pto_platform/doorbell.h"
#include "sim_exec.h"

namespace pto {

std::atomic<const SimExecHooks *> g_sim_exec{nullptr};
std::atomic<const std::atomic<uint32_t> *> g_platform_timed_runs{nullptr};

namespace {

uint32_t env_u32(const char *name, uint32_t fallback) {
  const char *s = getenv(name);
  return s ? static_cast<uint32_t>(strtoul(s, nullptr, 10)) : fallback;
}

uint32_t spin_budget() {
  static const uint32_t budget = env_u32("PTO_SIM_SPIN", 128);
  return budget;
}

uint32_t yield_budget() {
  static const uint32_t budget = env_u32("PTO_SIM_YIELD", 64);
  return budget;
}

long futex(std::atomic<uint32_t> *addr, int op, uint32_t val, const timespec *ts) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex needs a plain word");
  return syscall(SYS_futex, reinterpret_cast<uint32_t *>(addr), op, val, ts, nullptr, 0);
}

// Whether seq moved past `seen` while spinning, then yielding; gives up early at the monotonic
// `deadline_ns`: on a loaded machine each sched_yield may hand the CPU away for a whole time
// slice, so the yields alone can outlast a short wait (wait(0) took 300 ms that way).
bool spin(const Doorbell &b, uint32_t seen, uint64_t deadline_ns = UINT64_MAX) {
  for (uint32_t i = spin_budget(); i != 0; --i) {
    if (b.seq.load(std::memory_order_acquire) != seen) return true;
    platform_cpu_relax();
  }
  for (uint32_t i = yield_budget(); i != 0; --i) {
    if (b.seq.load(std::memory_order_acquire) != seen) return true;
    if (deadline_ns != UINT64_MAX && platform_now_ns() >= deadline_ns) return false;
    sched_yield();
  }
  return false;
}

// Parks until seq != seen or the (relative) timeout passes. The seq_cst increment of
// `sleepers` before re-reading `seq` pairs with the seq_cst increment of `seq` before reading
// `sleepers` in doorbell_ring: one of the two sides must see the other.
void park(Doorbell &b, uint32_t seen, const timespec *rel) {
  b.sleepers.fetch_add(kOsSleeper, std::memory_order_seq_cst);
  if (b.seq.load(std::memory_order_seq_cst) == seen) {
    futex(&b.seq, FUTEX_WAIT_PRIVATE, seen, rel);
  }
  b.sleepers.fetch_sub(kOsSleeper, std::memory_order_relaxed);
}

// The bound hooks, or null. Acquire pairs with pto_sim_bind_exec's release.
const SimExecHooks *exec_hooks() {
  return g_sim_exec.load(std::memory_order_acquire);
}

bool on_fiber() {
  const SimExecHooks *hooks = exec_hooks();
  return hooks != nullptr && hooks->on_fiber();
}

}  // namespace

uint64_t platform_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {
bool platform_virtual_clock(uint64_t *ns) {
  const SimExecHooks *hooks = exec_hooks();
  return hooks != nullptr && hooks->virtual_clock(ns);
}
}  // namespace

// A virtual tick is the virtual clock plus one: tick 0 means "never stamped" to the host
// (core/tick_clock.h), and a scheduler's first stamps are at virtual time 0.
uint64_t platform_virtual_ticks() {
  uint64_t ns;
  return platform_virtual_clock(&ns) ? ns + 1 : platform_host_ticks();
}


void platform_kernel_begin(uint64_t kernel_entry, int64_t *args, uint32_t num_args, KernelPrice *price) {
  if (!platform_timed_runs()) return;
  if (const SimExecHooks *hooks = exec_hooks()) hooks->kernel_begin(kernel_entry, args, num_args, price);
}

void platform_kernel_end() {
  if (!platform_timed_runs()) return;
  if (const SimExecHooks *hooks = exec_hooks()) hooks->kernel_end();
}

uint64_t platform_device_now_ns() {
  if (uint64_t v; platform_timed_runs() && platform_virtual_clock(&v)) return v;
  return platform_now_ns();
}

void platform_device_work_timed(DeviceWork what, uint32_t units) {
  if (const SimExecHooks *hooks = exec_hooks()) hooks->device_work(static_cast<uint32_t>(what), units);
}

ClockPair platform_clock_pair() {
  // On a fiber of a timed launch both are its virtual clock (ticks one ahead, as above): hosts
  // then map the run's ticks to virtual ns one to one (core/tick_clock.h).
  if (uint64_t v; platform_timed_runs() && platform_virtual_clock(&v)) return ClockPair{v, v + 1};
  ClockPair best;
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const uint64_t before = platform_host_ticks();
    const uint64_t ns = platform_now_ns();
    const uint64_t after = platform_host_ticks();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = ClockPair{ns, before + (after - before) / 2};
    }
  }
  return best;
}

void doorbell_wait(Doorbell &b, uint32_t seen) {
  if (on_fiber()) {
    exec_hooks()->park(b, seen);
    return;
  }
  if (spin(b, seen)) return;
  park(b, seen, nullptr);
}

bool doorbell_wait_until(Doorbell &b, uint32_t seen, uint64_t deadline_ns) {
  if (on_fiber()) {  // no timers in the pool: give way to other fibers until rung or late
    for (;;) {
      if (b.seq.load(std::memory_order_acquire) != seen) return true;
      if (platform_now_ns() >= deadline_ns) return false;
      exec_hooks()->yield();
    }
  }
  if (spin(b, seen, deadline_ns)) return true;
  for (;;) {
    if (b.seq.load(std::memory_order_acquire) != seen) return true;
    const uint64_t now = platform_now_ns();
    if (now >= deadline_ns) return false;
    const uint64_t left = deadline_ns - now;
    timespec rel{static_cast<time_t>(left / 1000000000ull), static_cast<long>(left % 1000000000ull)};
    park(b, seen, &rel);
  }
}

bool platform_fiber_yield() {
  if (!on_fiber()) return false;
  exec_hooks()->yield();
  return true;
}

void doorbell_ring(Doorbell &b) {
  b.seq.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t sleepers = b.sleepers.load(std::memory_order_seq_cst);
  if (sleepers == 0) return;
  // Fiber sleepers exist only where the pool bound this program, so the hooks are set then.
  if (sleepers >= kFiberSleeper) {
    if (const SimExecHooks *hooks = exec_hooks()) hooks->unpark_all(b);
  }
  if ((sleepers & (kFiberSleeper - 1)) != 0) futex(&b.seq, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
}

}  // namespace pto
