// src/platform/sim/fiber_pool.h — the sim's execution model: simulated threads and cores as
// fibers on a pool of OS threads sized to the CPUs (docs/design/sim_execution.md).
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
// A seeded run (DeterministicExecutor) takes one group's fibers off the pool for a while and runs
// them on an OS thread of its own, the next fiber chosen by a seeded PRNG: a reproducible
// schedule. In timing mode (a SimTiming given to begin) each fiber carries a virtual clock and the
// next one is the runnable fiber with the smallest clock (ties: the PRNG), a discrete-event
// simulation of the device (docs/design/sim_execution.md, timing mode).
#ifndef PTO_PLATFORM_SIM_FIBER_POOL_H
#define PTO_PLATFORM_SIM_FIBER_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "pto_platform/device.h"
#include "pto_platform/doorbell.h"

namespace pto {

class DeterministicExecutor;

// The fibers of one owner (a device): spawn counts them, wait_empty waits until all returned.
class FiberGroup {
 public:
  // Waits (on an OS thread, not a fiber) until every fiber of the group has returned; the
  // group may be destroyed as soon as it returns (the last fiber's worker is done with it).
  void wait_empty();

 private:
  friend class FiberPool;
  friend class DeterministicExecutor;

 public:
  using ActiveCount = std::atomic<int32_t>;

 private:
  std::mutex mu_;  // guards live_; the last decrement notifies under it
  std::condition_variable cv_;
  uint32_t live_ = 0;
  // Fibers of the group that are not parked (started and not yet parked, runnable or running):
  // 0 means the group is settled, and only a ring from outside can wake one of its fibers.
  ActiveCount active_{0};
  // Non-null while a DeterministicExecutor has the group: its fibers run there, not on the pool.
  std::atomic<void *> det_{nullptr};
};

// Runs one group's fibers on an OS thread of its own, one at a time, the next one chosen among
// the runnable ones by a PRNG seeded per run: the same seed and the same program give the same
// schedule, whatever the machine's load (docs/design/sim_execution.md, seeded runs). Between begin()
// and end() every fiber of the group that becomes runnable goes to this executor.
class DeterministicExecutor {
 public:
  explicit DeterministicExecutor(FiberGroup &group);
  // Stops its thread; call it once the group is handed back (end) or has no fibers left.
  ~DeterministicExecutor();
  DeterministicExecutor(const DeterministicExecutor &) = delete;
  DeterministicExecutor &operator=(const DeterministicExecutor &) = delete;

  // Waits until the group settles (every fiber parked; at most `settle_ms`), then takes it over
  // with the PRNG seeded by `seed`. False, and nothing changed, if it did not settle in time.
  // `timing` non-null: this launch runs in virtual time (copied; every clock starts at 0).
  bool begin(uint64_t seed, const SimTiming *timing = nullptr, uint32_t settle_ms = 10000);
  // Waits until the group settles again (at most `settle_ms`) and hands it back to the pool;
  // false if it did not settle (it stays here then).
  bool end(uint32_t settle_ms = 10000);
  bool active() const;
  // While held, no fiber is started: a launch makes all its fibers runnable under one hold, so
  // the first pick chooses among all of them, not among those a race let in first.
  void hold();
  void unhold();
  // Timing mode: the largest virtual clock a fiber of the launch begun last reached so far (ns).
  uint64_t makespan_ns() const;
  // How many kernel invocations of the last timed launch each KernelPrice source priced.
  void priced(uint64_t (&counts)[PTO_PRICE_SOURCE_COUNT]) const;

  struct Impl;  // deterministic_executor.cpp

 private:
  Impl *impl_;
};

// Called each time a fiber is resumed, on the worker thread that resumes it: where the sim keeps
// per-thread state (the log's thread name, the crash report's core) it sets it from `arg`.
using FiberResumeHook = void (*)(void *arg);

// What a fiber simulates, for the timing mode's hand-off latencies (SimTiming).
enum class FiberRole : uint8_t { kOther, kAicpu, kCore };

class FiberPool {
 public:
  // The process's pool, created on first use (in a child process after fork: a new one).
  static FiberPool &instance();

  // Starts `body` as a fiber of `group`. `name` appears in reports; `on_resume(arg)` (may be
  // null) runs on the worker before each resume.
  void spawn(FiberGroup &group, std::string name, std::function<void()> body,
             FiberResumeHook on_resume = nullptr, void *arg = nullptr, FiberRole role = FiberRole::kOther);

  // A device starts (acquire) or stops (release, once all its fibers returned) using the pool.
  // Workers run only while some device uses the pool: the first acquire starts them, the last
  // release stops and joins them, so a process without devices has no pool threads (fork from
  // it is safe, as before devices existed).
  void acquire();
  void release();

  // Binds a program's doorbells to the pool (dlsym of pto_sim_bind_exec in `lib`); false if the
  // program does not export it.
  static bool bind_program(void *lib);

  // Called on a fiber: from now on (pinned) only the OS thread running it may resume it, until
  // it calls again with false. For a kernel suspended where code compiled into it may keep
  // addresses of its thread's thread_local variables across the suspension (PTO-ISA's pipe
  // waits, tile_pipes_sim.h): the compiler takes a thread's identity as fixed within a function.
  // Does nothing off the pool (an OS thread per core) or in a seeded run (one thread runs all).
  static void pin_current_fiber(bool pinned);

  unsigned workers() const;  // OS threads running fibers now (the base count plus any added)
  unsigned base_workers() const;

  struct Impl;  // fiber_pool_impl.h

 private:
  FiberPool();
  Impl *impl_;
};

}  // namespace pto
#endif  // PTO_PLATFORM_SIM_FIBER_POOL_H
