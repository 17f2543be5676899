// src/platform/sim/fiber_pool_impl.h — the fiber pool's state: run queues, parking lot, workers.
//
// Private to fiber_pool.cpp, which runs it, and deterministic_executor.cpp, which resumes,
// parks and retires its own fibers through it. Who touches what:
//  - Parking lot: 256 buckets by doorbell address, each a spinlock and a list of parked fibers.
//    Park (worker, after the switch): lock; sleepers += kFiberSleeper (seq_cst); re-read seq
//    (seq_cst); still `seen` -> enqueue, else run the fiber again. Ring (doorbell_ring): seq += 1
//    (seq_cst); read sleepers (seq_cst); fiber sleepers -> unpark_all: lock; take the bucket's
//    fibers of this doorbell; sleepers -= their count. The two seq_cst pairs ensure a ring either
//    sees the sleeper or the parker sees the new seq (the futex path's argument, doorbell_sim.cpp).
//  - Run queue: hand-off slot per worker (an atomic pointer: the owner and idle thieves
//    exchange it), plus a shared FIFO under `mu`. After kHandoffStreak hand-offs in a row a
//    worker serves the FIFO first, so fibers that ring each other cannot starve it. `idle` (under
//    `mu`) counts sleeping workers; a push to the FIFO notifies one when there is any.
//  - Pinned fibers (Fiber::home, FiberPool::pin_current_fiber): runnable ones wait in their home
//    worker's own queue (Worker::pinned), which it serves first; a push wakes every sleeping
//    worker (under `mu`, so a worker checking its queue before it sleeps sees it or is woken).
#ifndef PTO_PLATFORM_SIM_FIBER_POOL_IMPL_H
#define PTO_PLATFORM_SIM_FIBER_POOL_IMPL_H

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "fiber.h"
#include "fiber_pool.h"
#include "pto_platform/clock.h"

namespace pto {
namespace fibers {

constexpr unsigned kMaxWorkers = 1024;

// Launches running in virtual time now (SimExecHooks::timed_runs); the seeded executors count
// themselves in and out.
extern std::atomic<uint32_t> g_timed_runs;

// Queues f on the DeterministicExecutor::Impl `det` (deterministic_executor.cpp); `ringer`: the
// fiber whose ring made it runnable, null if none (the host, a launch).
void det_push(void *det, Fiber *f, Fiber *ringer);

// The timing hooks (deterministic_executor.cpp): no-ops off a fiber of a timed launch.
bool hook_virtual_clock(uint64_t *ns);
void hook_kernel_begin(uint64_t kernel_entry, int64_t *args, uint32_t num_args, KernelPrice *price);
void hook_kernel_end();
void hook_device_work(uint32_t what, uint32_t units);

}  // namespace fibers

struct FiberPool::Impl {
  using Fiber = fibers::Fiber;
  using Worker = fibers::Worker;

  unsigned base = 1;
  unsigned max_workers = 64;
  std::mutex mu;                  // guards queue, idle and starting workers
  std::condition_variable cv;     // idle workers sleep here
  std::deque<Fiber *> queue;      // runnable fibers nobody's hand-off slot holds
  std::atomic<size_t> queued{0};  // queue.size(), readable without mu
  unsigned idle = 0;              // workers asleep on cv
  // Workers 0 .. nworkers-1; a slot is written once, before nworkers (release) covers it, and
  // workers are never removed, so readers index it without a lock after an acquire load.
  Worker *workers[fibers::kMaxWorkers] = {};
  std::atomic<unsigned> nworkers{0};
  std::atomic<uint64_t> epoch{1};     // monitor ticks (1 ms)
  std::atomic<uint32_t> live{0};      // fibers alive, all groups
  std::atomic<bool> stopping{false};  // the last user left: workers and monitor return
  std::mutex monitor_mu;
  std::condition_variable monitor_cv;  // the monitor sleeps here while no fiber lives
  std::thread monitor;
  std::mutex users_mu;  // guards users and starting/stopping the threads
  unsigned users = 0;

  // A bucket's lock is held for a handful of instructions (file or take a fiber), by workers
  // and ringing host threads: a test-and-test-and-set lock that yields if the holder was
  // descheduled, about a quarter of an uncontended std::mutex's cost, on every park and ring.
  struct BucketLock {
    std::atomic<bool> held{false};
    void lock() {
      for (int spin = 0; held.exchange(true, std::memory_order_acquire); ++spin) {
        while (held.load(std::memory_order_relaxed)) {
          if (++spin % 64 == 0) {
            sched_yield();
          } else {
            platform_cpu_relax();
          }
        }
      }
    }
    void unlock() { held.store(false, std::memory_order_release); }
  };
  struct Bucket {
    BucketLock mu;
    Fiber *head = nullptr;
  };
  Bucket buckets[256];

  Bucket &bucket_of(const void *p) {
    const uint64_t h = (reinterpret_cast<uintptr_t>(p) >> 3) * 0x9E3779B97F4A7C15ull;
    return buckets[h >> 56];
  }

  // Also used by the seeded executor.
  uint8_t resume(Worker *w, Fiber *f);  // runs f until it switches back; its request
  bool try_park(Fiber *f);              // false: rung since f looked, it must run again
  void finish(Fiber *f);

  // The pool's own (fiber_pool.cpp, their only caller). Inline, so the compiler may fold them
  // into the worker loop and the ring path as it did while their signatures named types of
  // that file alone (internal linkage): a worker's spin and hand-off run these per fiber.
  void start_worker();
  inline void worker_main(Worker *w);
  inline Fiber *find_work(Worker *w);
  inline Fiber *steal_handoff(Worker *w);
  // Runs f until it switches back; true if it yielded (it is queued again).
  inline bool run(Worker *w, Fiber *f);
  // A fiber another worker could run, without waiting: the hand-off slots, the shared queue.
  inline Fiber *take_other(Worker *w);
  // The shared queue's first fiber, or null (pop_queue_locked: mu held).
  inline Fiber *pop_queue();
  inline Fiber *pop_queue_locked();
  inline void finish_park(Worker *w, Fiber *f);
  inline void make_runnable(Fiber *f);
  void make_runnable_from_outside(Fiber *f) {  // not from a worker's fiber: no hand-off
    if (void *det = f->group->det_.load(std::memory_order_acquire)) {
      fibers::det_push(det, f, nullptr);
      return;
    }
    push_shared(f);
  }
  void push_shared(Fiber *f);
  void push_pinned(Fiber *f);           // to f->home's queue, waking it if it sleeps
  inline Fiber *pop_pinned(Worker *w);  // w's next pinned fiber, or null
  void unpark_all(Doorbell &b);
  void monitor_main();
};

// Defined here, not in fiber_pool.cpp: it is on every task's path, from the pool's workers
// and from the seeded executor, and inlines into both.
inline uint8_t FiberPool::Impl::resume(Worker *w, Fiber *f) {
  w->current = f;
  f->worker = w;
  f->request = Fiber::kNone;
  w->busy_since.store(epoch.load(std::memory_order_relaxed), std::memory_order_relaxed);
  if (f->on_resume != nullptr) f->on_resume(f->arg);
  before_resume(w, f);
  f->self = jump_fcontext(f->self, f).fctx;
  after_resume(w);
  w->busy_since.store(0, std::memory_order_relaxed);
  w->current = nullptr;
  if (f->request == Fiber::kNone) {
    fprintf(stderr, "pto_runtime: fiber '%s' switched back without a request\n", f->name.c_str());
    abort();
  }
  return f->request;
}

namespace fibers {
// The process's pool's state, for the hooks and the seeded executors (set by the pool's
// constructor, cleared in a child after fork).
extern FiberPool::Impl *g_impl;
}  // namespace fibers

}  // namespace pto
#endif  // PTO_PLATFORM_SIM_FIBER_POOL_IMPL_H
