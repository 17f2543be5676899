// src/platform/sim/fiber_pool.h — the sim's execution model: simulated threads and cores as
// fibers on a pool of OS threads sized to the CPUs (docs/sim_execution.md).
//
// Every simulated AICPU thread and AICore of every device in the process is a fiber
// (Boost.Context, its own stack). A pool of worker threads — as many as the CPUs this process may
// use, PTO_SIM_WORKERS to override — runs them cooperatively: a fiber runs until it waits on a
// doorbell (sim_exec.h routes every device-side wait here), then the worker resumes another.
// A ring makes the waiting fibers runnable; a fiber made runnable by a fiber goes to its worker's
// hand-off slot and runs next (LIFO: the scheduler a core just reported to, the core a scheduler
// just fed), others wait in a shared queue. Idle workers spin briefly, taking work from the
// queue and from busy workers' hand-off slots, then sleep. Kernels run to completion on their
// worker: nothing preempts a fiber, so a monitor thread adds a worker when every worker has
// been held by one fiber for over a millisecond while others wait (a blocking or hung kernel),
// and hands such a worker's hand-off slot to the shared queue.
//
// Designed so a seeded single-worker scheduler and per-fiber virtual clocks fit in later: the
// choice of the next fiber is made in one place (FiberPool::next_for).
#ifndef PTO_PLATFORM_SIM_FIBER_POOL_H
#define PTO_PLATFORM_SIM_FIBER_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "pto_platform/doorbell.h"

namespace pto {

// The fibers of one owner (a device): spawn counts them, wait_empty waits until all returned.
class FiberGroup {
 public:
  // Waits (on an OS thread, not a fiber) until every fiber of the group has returned; the
  // group may be destroyed as soon as it returns (the last fiber's worker is done with it).
  void wait_empty();

 private:
  friend class FiberPool;
  std::mutex mu_;               // guards live_; the last decrement notifies under it
  std::condition_variable cv_;
  uint32_t live_ = 0;
};

// Called each time a fiber is resumed, on the worker thread that resumes it: where the sim keeps
// per-thread state (the log's thread name, the crash report's core) it sets it from `arg`.
using FiberResumeHook = void (*)(void *arg);

class FiberPool {
 public:
  // The process's pool, created on first use (in a child process after fork: a new one).
  static FiberPool &instance();

  // Starts `body` as a fiber of `group`. `name` appears in reports; `on_resume(arg)` (may be
  // null) runs on the worker before each resume.
  void spawn(FiberGroup &group, std::string name, std::function<void()> body, FiberResumeHook on_resume = nullptr,
             void *arg = nullptr);

  // A device starts (acquire) or stops (release, once all its fibers returned) using the pool.
  // Workers run only while some device uses the pool: the first acquire starts them, the last
  // release stops and joins them, so a process without devices has no pool threads (fork from
  // it is safe, as before devices existed).
  void acquire();
  void release();

  // Binds a program's doorbells to the pool (dlsym of pto_sim_bind_exec in `lib`); false if the
  // program does not export it.
  static bool bind_program(void *lib);

  unsigned workers() const;  // OS threads running fibers now (the base count plus any added)
  unsigned base_workers() const;

  struct Impl;  // fiber_pool.cpp

 private:
  FiberPool();
  Impl *impl_;
};

}  // namespace pto
#endif  // PTO_PLATFORM_SIM_FIBER_POOL_H
