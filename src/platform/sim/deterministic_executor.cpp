// src/platform/sim/deterministic_executor.cpp — seeded runs: one group's fibers on one OS thread,
// one at a time, the next one drawn by a PRNG (fiber_pool.h, DeterministicExecutor).
//
// The PRNG is splitmix64-seeded xorshift64*. Fibers become runnable here from this thread (a
// fiber's ring) or from the host (a launch, under hold()); parks go through the pool's parking
// lot as on a worker, so rings from anywhere find them. In timing mode the runnable fiber with
// the smallest virtual clock runs next, the PRNG only breaking ties (virtual_time.h); a kernel's
// end yields, so the core reports the kernel done only once its clock is the earliest.
#include <sched.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "fiber.h"
#include "fiber_pool.h"
#include "fiber_pool_impl.h"
#include "pto_platform/clock.h"
#include "virtual_time.h"

namespace pto {

using fibers::Fiber;
using fibers::Worker;

struct DeterministicExecutor::Impl {
  FiberGroup *group = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Fiber *> runnable;  // guarded by mu, in the order they became runnable
  unsigned holds = 0;             // guarded by mu
  bool stopping = false;          // guarded by mu
  uint64_t rng = 0;               // this executor's thread only (begin sets it while settled)
  Worker worker;                  // what this thread is to the hooks while a fiber runs on it
  std::thread thread;
  fibers::VirtualTime time;  // on() from begin (under mu, the group settled) to end
  bool counted = false;      // this executor counts in g_timed_runs (guarded by mu)

  // The executor that has `g` now, or null.
  static Impl *of(const FiberGroup &g) { return static_cast<Impl *>(g.det_.load(std::memory_order_acquire)); }

  void push(Fiber *f, Fiber *ringer = nullptr) {
    std::lock_guard<std::mutex> lock(mu);
    if (time.on() && ringer != nullptr && ringer->group == group) time.rung(f, ringer);
    runnable.push_back(f);
    if (holds == 0) cv.notify_one();
  }

  void push_yielded(Fiber *f) {
    std::lock_guard<std::mutex> lock(mu);
    // A fiber that yields to wait (polling) waits for the others; one that yields after its
    // clock moved on by work (a kernel's end, AICPU work) keeps its clock: it only lets the
    // earlier fibers go first.
    if (time.on() && !f->keeps_clock) time.yielded(f, runnable);
    f->keeps_clock = false;
    runnable.push_back(f);
    if (holds == 0) cv.notify_one();
  }

  uint64_t next_random() {
    uint64_t x = rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng = x;
    return x * 0x2545F4914F6CDD1Dull;
  }

  // The index of the next fiber to run (mu held, runnable not empty).
  size_t pick() {
    if (!time.on()) return static_cast<size_t>(next_random() % runnable.size());
    return time.earliest(runnable, [this] { return next_random(); });
  }

  // Counts this executor in or out of the launches in virtual time (mu held).
  void count_timed(bool timed) {
    if (timed == counted) return;
    fibers::g_timed_runs.fetch_add(timed ? 1 : static_cast<uint32_t>(-1), std::memory_order_relaxed);
    counted = timed;
  }

  void main() {
    const fibers::WorkerThreadScope scope(&worker);
    FiberPool::Impl &pool = *fibers::g_impl;
    for (;;) {
      Fiber *f;
      bool timed_run;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stopping || (holds == 0 && !runnable.empty()); });
        if (runnable.empty() || holds != 0) break;  // stopping
        const size_t i = pick();
        f = runnable[i];
        runnable[i] = runnable.back();
        runnable.pop_back();
        timed_run = time.on();
        if (timed_run) (void)time.clock(f);
      }
      if (timed_run) time.resuming(f);
      const uint8_t request = pool.resume(&worker, f);
      if (timed_run) time.suspended(f, request == Fiber::kDone);
      switch (request) {
        case Fiber::kPark:
          if (!pool.try_park(f)) push(f);
          break;
        case Fiber::kYield:
          push_yielded(f);
          break;
        default:
          pool.finish(f);
          break;
      }
    }
  }
};

namespace fibers {

void det_push(void *det, Fiber *f, Fiber *ringer) {
  static_cast<DeterministicExecutor::Impl *>(det)->push(f, ringer);
}

namespace {
// The running fiber and its timed executor, or false (not on a fiber of a timed launch).
bool timed_fiber(Fiber **f, DeterministicExecutor::Impl **det) {
  Worker *w = this_worker();
  if (w == nullptr || w->current == nullptr) return false;
  DeterministicExecutor::Impl *d = DeterministicExecutor::Impl::of(*w->current->group);
  if (d == nullptr || !d->time.on() || &d->worker != w) return false;
  *f = w->current;
  *det = d;
  return true;
}

// f's clock moved on by work: every fiber that is earlier goes first, and f keeps its clock (a
// yield to wait would move it to theirs, push_yielded).
void yield_after_work(Fiber *f) {
  f->keeps_clock = true;
  f->request = Fiber::kYield;
  suspend(f);
}
}  // namespace

bool hook_virtual_clock(uint64_t *ns) {
  Fiber *f;
  DeterministicExecutor::Impl *d;
  if (!timed_fiber(&f, &d)) return false;
  *ns = d->time.clock(f);
  return true;
}

void hook_kernel_begin(uint64_t kernel_entry, int64_t *args, uint32_t num_args, KernelPrice *price) {
  Fiber *f;
  DeterministicExecutor::Impl *d;
  if (timed_fiber(&f, &d)) d->time.kernel_begin(f, kernel_entry, args, num_args, price);
}

void hook_kernel_end() {
  Fiber *f;
  DeterministicExecutor::Impl *d;
  if (!timed_fiber(&f, &d)) return;
  d->time.kernel_end(f);
  // What the core does next (report the kernel done) happens at the kernel's end.
  yield_after_work(f);
}

void hook_device_work(uint32_t what, uint32_t units) {
  Fiber *f;
  DeterministicExecutor::Impl *d;
  if (!timed_fiber(&f, &d)) return;
  // What the thread does next happens once the work is done (unless it was free).
  if (d->time.device_work(f, what, units)) yield_after_work(f);
}

}  // namespace fibers

namespace {
// Waits until no fiber of `group` runs or waits to run; false after `settle_ms`.
bool settle(const FiberGroup::ActiveCount &active, uint32_t settle_ms) {
  const uint64_t deadline = platform_now_ns() + uint64_t{settle_ms} * 1000000;
  for (unsigned spin = 0; active.load(std::memory_order_acquire) != 0; ++spin) {
    if (platform_now_ns() > deadline) return false;
    if (spin < 64) {
      platform_cpu_relax();
    } else {
      sched_yield();
    }
  }
  return true;
}
}  // namespace

DeterministicExecutor::DeterministicExecutor(FiberGroup &group) : impl_(new Impl) {
  impl_->group = &group;
  impl_->worker.index = fibers::kMaxWorkers;  // not one of the pool's: never stolen from or watched
  (void)FiberPool::instance();                // the hooks and the parking lot it uses
}

DeterministicExecutor::~DeterministicExecutor() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->count_timed(false);
    impl_->stopping = true;
    impl_->holds = 0;
    impl_->cv.notify_all();
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  delete impl_;
}

bool DeterministicExecutor::begin(uint64_t seed, const SimTiming *timing, uint32_t settle_ms) {
  FiberGroup &g = *impl_->group;
  if (!settle(g.active_, settle_ms)) return false;
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;  // splitmix64: nearby seeds, unrelated streams
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  impl_->rng = z != 0 ? z : 1;  // read by the thread after it takes the next push's lock
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->runnable.clear();  // settled: nothing is runnable
    impl_->time.begin(timing);
    impl_->count_timed(impl_->time.on());
  }
  g.det_.store(impl_, std::memory_order_release);
  if (!impl_->thread.joinable()) impl_->thread = std::thread([impl = impl_] { impl->main(); });
  return true;
}

bool DeterministicExecutor::end(uint32_t settle_ms) {
  FiberGroup &g = *impl_->group;
  if (g.det_.load(std::memory_order_relaxed) == nullptr) return true;
  if (!settle(g.active_, settle_ms)) return false;
  g.det_.store(nullptr, std::memory_order_release);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->count_timed(false);
  impl_->time.end();
  return true;
}

uint64_t DeterministicExecutor::makespan_ns() const {
  return impl_->time.makespan();
}

void DeterministicExecutor::priced(uint64_t (&counts)[PTO_PRICE_SOURCE_COUNT]) const {
  std::lock_guard<std::mutex> lock(impl_->mu);  // the launch has ended: this orders the reads
  impl_->time.priced(counts);
}

bool DeterministicExecutor::active() const {
  return impl_->group->det_.load(std::memory_order_relaxed) != nullptr;
}

void DeterministicExecutor::hold() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ++impl_->holds;
}

void DeterministicExecutor::unhold() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (--impl_->holds == 0) impl_->cv.notify_one();
}

}  // namespace pto
