// src/platform/sim/fiber_pool.cpp — the pool: worker threads that run the sim's fibers, the
// parking lot their doorbells park them in, and the monitor that adds workers (fiber_pool.h).
//
// The fiber records and the switch are fiber.h; the pool's state and who touches which part of
// it, fiber_pool_impl.h. Seeded runs take a group's fibers off the pool
// (deterministic_executor.cpp); their timing mode is virtual_time.cpp.
// Over 600 lines because the workers, the parking lot and the monitor share Impl's private
// state (fiber_pool_impl.h) and its invariants; the monitor (monitor_main, wanted_cpu: when to
// add a worker) reads that state only, and is what would move to a file of its own first.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "fiber.h"
#include "fiber_pool.h"
#include "fiber_pool_impl.h"
#include "pto_platform/clock.h"
#include "sim_exec.h"

namespace pto {
namespace fibers {

__attribute__((tls_model("initial-exec"))) thread_local Worker *t_worker = nullptr;
std::atomic<uint32_t> g_timed_runs{0};
FiberPool::Impl *g_impl = nullptr;

__attribute__((noinline)) Worker *this_worker() {
  return t_worker;
}

}  // namespace fibers

// This file is the pool's half of the fiber machinery: its records and switch by their names.
using namespace fibers;  // NOLINT(google-build-using-namespace)

namespace {

unsigned env_unsigned(const char *name, unsigned fallback) {
  const char *s = getenv(name);
  if (s == nullptr || *s == '\0') return fallback;
  char *end = nullptr;
  const unsigned long v = strtoul(s, &end, 10);
  if (end == s || *end != '\0' || v == 0 || v > 1024) {
    fprintf(stderr, "pto_runtime: %s=%s is not a count in 1..1024; using %u\n", name, s, fallback);
    return fallback;
  }
  return static_cast<unsigned>(v);
}

// The CPUs this process may use: its affinity mask, capped by a cgroup v2 CPU quota.
unsigned usable_cpus() {
  unsigned n = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
  if (n == 0) n = 1;
  if (FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r")) {
    char quota[32] = {};
    unsigned long period = 0;
    if (fscanf(f, "%31s %lu", quota, &period) == 2 && strcmp(quota, "max") != 0 && period > 0) {
      const unsigned long q = strtoul(quota, nullptr, 10);
      const unsigned cap = static_cast<unsigned>((q + period - 1) / period);
      if (cap > 0 && cap < n) n = cap;
    }
    fclose(f);
  }
  return n;
}

size_t fiber_stack_bytes() {
  // Kernels run on their core's fiber stack: as much as a thread's default (pages are only
  // touched when used), PTO_SIM_FIBER_STACK_KB to change it.
  static const size_t bytes = static_cast<size_t>(env_unsigned("PTO_SIM_FIBER_STACK_KB", 8192)) * 1024;
  return bytes;
}

}  // namespace

// Hand-offs a worker runs in a row before it serves the shared queue first (worker_main).
constexpr unsigned kHandoffStreak = 64;

namespace {

std::atomic<FiberPool *> g_pool{nullptr};  // the process's pool
std::mutex g_pool_mu;                      // creating it

// In a child after fork: the parent's workers do not exist here. Forget the pool (its memory is
// leaked on purpose: its mutexes may have been held by threads that are gone); the child makes
// a new one if it simulates devices.
void forget_pool_in_child() {
  g_pool.store(nullptr, std::memory_order_relaxed);
  fibers::g_impl = nullptr;
  new (&g_pool_mu) std::mutex();
}

// The hooks handed to every program's doorbells.
bool hook_on_fiber() {
  const Worker *w = this_worker();
  return w != nullptr && w->current != nullptr;
}

// The running fiber; only called on one (the hooks check on_fiber first).
Fiber *current_fiber() {
  Worker *w = this_worker();
  Fiber *f = w != nullptr ? w->current : nullptr;
  if (f == nullptr) {
    fprintf(stderr, "pto_runtime: a fiber wait was called off the fiber pool\n");
    abort();
  }
  return f;
}

// Where every fiber starts: the first resume jumps here with the Fiber as data.
[[noreturn]] void fiber_entry(transfer_t t) noexcept {
  auto *f = static_cast<Fiber *>(t.data);
  f->back = t.fctx;
  after_suspend(f, true);
  try {
    f->body();
  } catch (const std::exception &e) {
    fprintf(stderr, "pto_runtime: fiber '%s' ended by an exception: %s\n", f->name.c_str(), e.what());
    abort();
  } catch (...) {
    fprintf(stderr, "pto_runtime: fiber '%s' ended by an exception\n", f->name.c_str());
    abort();
  }
  f->request = Fiber::kDone;
  before_suspend(f, true);
  jump_fcontext(f->back, nullptr);  // the worker frees this stack; it is never resumed
  abort();
}

void hook_park(Doorbell &b, uint32_t seen) {
  Fiber *f = current_fiber();
  f->request = Fiber::kPark;
  f->bell = &b;
  f->seen = seen;
  suspend(f);
}

void hook_yield() {
  Fiber *f = current_fiber();
  f->request = Fiber::kYield;
  suspend(f);
}

void hook_unpark_all(Doorbell &b);

const SimExecHooks kHooks = {hook_on_fiber,
                             hook_park,
                             hook_unpark_all,
                             hook_yield,
                             &fibers::g_timed_runs,
                             fibers::hook_virtual_clock,
                             fibers::hook_kernel_begin,
                             fibers::hook_kernel_end,
                             fibers::hook_device_work};

}  // namespace

FiberPool &FiberPool::instance() {
  if (FiberPool *p = g_pool.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (FiberPool *p = g_pool.load(std::memory_order_relaxed)) return *p;
  static bool atfork = false;
  if (!atfork) {
    pthread_atfork(nullptr, nullptr, forget_pool_in_child);
    atfork = true;
  }
  auto *p = new FiberPool();  // never destroyed: workers may still be asleep at exit
  g_pool.store(p, std::memory_order_release);
  return *p;
}

FiberPool::FiberPool() : impl_(new Impl) {
  fibers::g_impl = impl_;
  impl_->base = env_unsigned("PTO_SIM_WORKERS", usable_cpus());
  impl_->max_workers = std::max(impl_->base, env_unsigned("PTO_SIM_MAX_WORKERS", 64));
  pto_sim_bind_exec(&kHooks);  // the host program's own doorbells (it links this file)
}

void FiberPool::acquire() {
  std::lock_guard<std::mutex> users(impl_->users_mu);
  if (impl_->users++ != 0) return;
  impl_->stopping.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (unsigned i = 0; i < impl_->base; ++i) impl_->start_worker();
  }
  impl_->monitor = std::thread([impl = impl_] { impl->monitor_main(); });
}

void FiberPool::release() {
  std::lock_guard<std::mutex> users(impl_->users_mu);
  if (--impl_->users != 0) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping.store(true, std::memory_order_relaxed);
    impl_->cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(impl_->monitor_mu);
    impl_->monitor_cv.notify_all();
  }
  impl_->monitor.join();
  const unsigned n = impl_->nworkers.load(std::memory_order_acquire);
  for (unsigned i = 0; i < n; ++i) impl_->workers[i]->thread.join();
  for (unsigned i = 0; i < n; ++i) {
    delete impl_->workers[i];
    impl_->workers[i] = nullptr;
  }
  impl_->nworkers.store(0, std::memory_order_release);
}

unsigned FiberPool::workers() const {
  return impl_->nworkers.load(std::memory_order_relaxed);
}

unsigned FiberPool::base_workers() const {
  return impl_->base;
}

bool FiberPool::bind_program(void *lib) {
  auto bind = reinterpret_cast<void (*)(const SimExecHooks *)>(dlsym(lib, PTO_SIM_BIND_EXEC_SYMBOL));
  if (bind == nullptr) return false;
  bind(&kHooks);
  return true;
}

void FiberPool::spawn(FiberGroup &group, std::string name, std::function<void()> body,
                      FiberResumeHook on_resume, void *arg, FiberRole role) {
  auto *f = new Fiber;
  f->role = role;
  f->body = std::move(body);
  f->name = std::move(name);
  f->group = &group;
  f->on_resume = on_resume;
  f->arg = arg;
#if PTO_FIBER_TSAN
  f->tsan = __tsan_create_fiber(0);
  __tsan_set_fiber_name(f->tsan, f->name.c_str());
#endif
  f->stack = ctx::protected_fixedsize_stack(fiber_stack_bytes()).allocate();
  f->stack_bottom = static_cast<char *>(f->stack.sp) - f->stack.size;
  f->stack_size = f->stack.size;
#if PTO_FIBER_ASAN
  // The mapping may reuse the addresses of a stack that was unmapped with the redzones of its
  // last frames still poisoned (a fiber never returns from its entry frame): clear them, or the
  // new fiber's first large local reads as an overflow into a stale frame.
  __asan_unpoison_memory_region(f->stack_bottom, f->stack_size);
  // A suspended fiber's stack is live memory LeakSanitizer does not know of: what only it
  // points to (a parked scheduler's objects; all of an abandoned device's) would read as leaked.
  __lsan_register_root_region(f->stack_bottom, f->stack_size);
#endif
  f->self = make_fcontext(f->stack.sp, f->stack.size, fiber_entry);
  {
    std::lock_guard<std::mutex> lock(group.mu_);
    ++group.live_;
  }
  group.active_.fetch_add(1, std::memory_order_relaxed);
  if (impl_->live.fetch_add(1, std::memory_order_relaxed) == 0) {
    std::lock_guard<std::mutex> lock(impl_->monitor_mu);
    impl_->monitor_cv.notify_one();
  }
  impl_->make_runnable_from_outside(f);
}

void FiberPool::Impl::start_worker() {  // mu held
  const unsigned n = nworkers.load(std::memory_order_relaxed);
  if (n == fibers::kMaxWorkers) return;
  auto *w = new Worker;  // until the last user releases the pool
  w->index = n;
  workers[n] = w;
  nworkers.store(n + 1, std::memory_order_release);
  w->thread = std::thread([this, w] { worker_main(w); });
}

void FiberPool::Impl::worker_main(Worker *w) {
  const fibers::WorkerThreadScope scope(w);
  w->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (pthread_getcpuclockid(pthread_self(), &w->cpu_clock) == 0)
    w->has_clock.store(true, std::memory_order_release);
  unsigned streak = 0;  // fibers run in a row from the hand-off slot
  for (;;) {
    if (Fiber *pinned = pop_pinned(w)) {
      // A pinned fiber that yields (a kernel polling a signal in a TWAIT, which pins itself,
      // tile_pipes_sim.cpp) is queued on this worker again, and pinned fibers go first: without
      // a turn for the others here, two such waiters on a 2-worker pool would run only each
      // other and never the kernel that would end their wait.
      if (run(w, pinned)) {
        if (Fiber *other = take_other(w)) run(w, other);
      }
      continue;
    }
    Fiber *f = w->handoff.exchange(nullptr, std::memory_order_acquire);
    if (f != nullptr && ++streak > kHandoffStreak && queued.load(std::memory_order_relaxed) != 0) {
      // Fibers that keep ringing each other (schedulers passing work around) would otherwise
      // keep the queued ones, kernels among them, off this worker for as long as they go on.
      push_shared(f);
      f = nullptr;
    }
    if (f == nullptr) {
      streak = 0;
      f = find_work(w);
    }
    if (f == nullptr) break;  // stopping
    run(w, f);
  }
}

Fiber *FiberPool::Impl::steal_handoff(Worker *self) {
  const unsigned n = nworkers.load(std::memory_order_acquire);
  for (unsigned k = 1; k < n; ++k) {
    Worker *other = workers[(self->index + k) % n];
    if (other->handoff.load(std::memory_order_relaxed) == nullptr) continue;
    if (Fiber *f = other->handoff.exchange(nullptr, std::memory_order_acquire)) return f;
  }
  return nullptr;
}

// Where an idle worker finds its next fiber: the shared queue, a busy worker's hand-off slot;
// after spinning ~20 us without finding one it sleeps until a push to the queue. Null: the
// pool is stopping (no fiber is left then).
Fiber *FiberPool::Impl::find_work(Worker *w) {
  for (;;) {
    for (int spin = 0; spin < 256; ++spin) {
      if (stopping.load(std::memory_order_relaxed)) return nullptr;
      if (Fiber *f = pop_pinned(w)) return f;
      if (Fiber *f = pop_queue()) return f;
      if (Fiber *f = steal_handoff(w)) return f;
      if ((spin & 15) == 15) {
        sched_yield();  // the thread with the work may be queued on this CPU
      } else {
        platform_cpu_relax();
      }
    }
    std::unique_lock<std::mutex> lock(mu);
    ++idle;
    cv.wait(lock, [&] {
      return !queue.empty() || stopping.load(std::memory_order_relaxed) ||
             w->npinned.load(std::memory_order_acquire) != 0;
    });
    --idle;
    if (w->npinned.load(std::memory_order_relaxed) != 0) {
      lock.unlock();
      if (Fiber *f = pop_pinned(w)) return f;
      continue;
    }
    return pop_queue_locked();
  }
}

bool FiberPool::Impl::run(Worker *w, Fiber *f) {
  switch (resume(w, f)) {
    case Fiber::kPark:
      finish_park(w, f);
      return false;
    case Fiber::kYield:
      push_shared(f);
      return true;
    default:
      finish(f);
      return false;
  }
}

Fiber *FiberPool::Impl::take_other(Worker *w) {
  if (Fiber *f = w->handoff.exchange(nullptr, std::memory_order_acquire)) return f;
  if (Fiber *f = pop_queue()) return f;
  return steal_handoff(w);
}

Fiber *FiberPool::Impl::pop_queue() {
  if (queued.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  return pop_queue_locked();
}

Fiber *FiberPool::Impl::pop_queue_locked() {
  if (queue.empty()) return nullptr;
  Fiber *f = queue.front();
  queue.pop_front();
  queued.store(queue.size(), std::memory_order_relaxed);
  return f;
}

bool FiberPool::Impl::try_park(Fiber *f) {
  Doorbell &b = *f->bell;
  Bucket &bk = bucket_of(&b);
  std::lock_guard<BucketLock> lock(bk.mu);
  b.sleepers.fetch_add(kFiberSleeper, std::memory_order_seq_cst);
  if (b.seq.load(std::memory_order_seq_cst) == f->seen) {
    f->next = bk.head;
    bk.head = f;
    f->group->active_.fetch_sub(1, std::memory_order_release);  // under the bucket lock: see unpark_all
    return true;
  }
  b.sleepers.fetch_sub(kFiberSleeper, std::memory_order_relaxed);
  return false;
}

void FiberPool::Impl::finish_park(Worker *w, Fiber *f) {
  if (try_park(f)) return;
  if (f->home != nullptr) {  // never in a hand-off slot: another worker could take it
    push_pinned(f);
    return;
  }
  // Rung in the meantime: it goes on at once, before anything this worker was handed.
  if (Fiber *old = w->handoff.exchange(f, std::memory_order_acq_rel)) push_shared(old);
}

void FiberPool::Impl::finish(Fiber *f) {
  // The fiber returned and switched away for good: its stack and record go now.
#if PTO_FIBER_ASAN
  __lsan_unregister_root_region(f->stack_bottom, f->stack_size);
  __asan_unpoison_memory_region(f->stack_bottom, f->stack_size);  // see spawn
#endif
  ctx::protected_fixedsize_stack(f->stack.size).deallocate(f->stack);
#if PTO_FIBER_TSAN
  __tsan_destroy_fiber(f->tsan);
#endif
  FiberGroup *group = f->group;
  delete f;
  live.fetch_sub(1, std::memory_order_relaxed);
  group->active_.fetch_sub(1, std::memory_order_release);
  // Under the group's mutex: its owner may destroy the group once wait_empty returns, which it
  // cannot before this unlock.
  std::lock_guard<std::mutex> lock(group->mu_);
  if (--group->live_ == 0) group->cv_.notify_all();
}

void FiberPool::Impl::push_shared(Fiber *f) {
  if (f->home != nullptr) {
    push_pinned(f);
    return;
  }
  std::lock_guard<std::mutex> lock(mu);
  queue.push_back(f);
  queued.store(queue.size(), std::memory_order_relaxed);
  if (idle != 0) cv.notify_one();
}

// A fiber made runnable by code on a worker (a fiber's ring) runs next on that worker; what
// its hand-off slot held moves to the shared queue. From any other thread: the shared queue.
// A fiber whose group a DeterministicExecutor has goes there instead.
void FiberPool::Impl::make_runnable(Fiber *f) {
  if (void *det = f->group->det_.load(std::memory_order_acquire)) {
    const Worker *ringer = this_worker();
    fibers::det_push(det, f, ringer != nullptr ? ringer->current : nullptr);
    return;
  }
  Worker *w = this_worker();
  if (w == nullptr || f->home != nullptr) {
    push_shared(f);
    return;
  }
  if (Fiber *old = w->handoff.exchange(f, std::memory_order_acq_rel)) push_shared(old);
}

void FiberPool::Impl::push_pinned(Fiber *f) {
  Worker *home = f->home;
  {
    std::lock_guard<std::mutex> lock(home->pinned_mu);
    home->pinned.push_back(f);
    home->npinned.fetch_add(1, std::memory_order_release);
  }
  std::lock_guard<std::mutex> lock(mu);
  if (idle != 0) cv.notify_all();  // the home worker may be among the sleepers
}

Fiber *FiberPool::Impl::pop_pinned(Worker *w) {
  if (w->npinned.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(w->pinned_mu);
  if (w->pinned.empty()) return nullptr;
  Fiber *f = w->pinned.front();
  w->pinned.pop_front();
  w->npinned.fetch_sub(1, std::memory_order_relaxed);
  return f;
}

void FiberPool::pin_current_fiber(bool pinned) {
  Worker *w = this_worker();
  Fiber *f = w != nullptr ? w->current : nullptr;
  if (f == nullptr) return;  // an OS thread of its own (PTO_SIM_EXEC=threads): nothing moves it
  // A seeded run resumes every fiber on its one thread: nothing to pin there either.
  f->home = pinned && f->group->det_.load(std::memory_order_acquire) == nullptr ? w : nullptr;
}

void FiberPool::Impl::unpark_all(Doorbell &b) {
  Bucket &bk = bucket_of(&b);
  Fiber *woken = nullptr;
  {
    std::lock_guard<BucketLock> lock(bk.mu);
    uint32_t n = 0;
    for (Fiber **pp = &bk.head; *pp != nullptr;) {
      Fiber *f = *pp;
      if (f->bell == &b) {
        *pp = f->next;
        f->next = woken;
        woken = f;
        ++n;
        // Active again before the lock is let go: a group never looks settled while one of its
        // fibers is between the parking lot and a run queue.
        f->group->active_.fetch_add(1, std::memory_order_relaxed);
      } else {
        pp = &f->next;
      }
    }
    if (n != 0) b.sleepers.fetch_sub(n * kFiberSleeper, std::memory_order_relaxed);
  }
  while (woken != nullptr) {
    Fiber *f = woken;
    woken = f->next;
    make_runnable(f);
  }
}

// Every millisecond while fibers live: a worker held by one fiber for over a tick gives its
// hand-off slot to the shared queue (someone else can run it). A held worker is unavailable to
// the other fibers when it is blocked in the OS — under a quarter of the wall time running or
// waiting to run over the last few ticks: a kernel that sleeps or waits, not one that a loaded
// machine starves of CPU — or held for over kStuckTicks (a
// kernel that hangs or computes for seconds). When fewer than the base count of workers are
// available and fibers wait, one more worker starts (up to PTO_SIM_MAX_WORKERS). Kernels that
// compute for less than kStuckTicks add none. The CPU-time clock of another thread advances
// at the kernel's scheduler tick (~4 ms), not continuously, hence the window of several ticks.
namespace {
// The CPU time worker w had plus the time it waited, runnable, for a CPU (ns): a worker that
// the machine's load starves is not blocked, and adding workers would only starve it more.
// From schedstat where the kernel has it, else the thread's CPU-time clock alone.
bool wanted_cpu(const Worker *w, int64_t *ns) {
  if (w->schedstat_fd >= 0) {
    char text[96];
    const ssize_t got = pread(w->schedstat_fd, text, sizeof text - 1, 0);
    if (got > 0) {
      text[got] = '\0';
      char *end = nullptr;
      const long long run = strtoll(text, &end, 10);
      const long long wait = strtoll(end, nullptr, 10);
      *ns = run + wait;
      return true;
    }
  }
  timespec cpu;
  if (clock_gettime(w->cpu_clock, &cpu) != 0) return false;
  *ns = static_cast<int64_t>(cpu.tv_sec) * 1000000000 + cpu.tv_nsec;
  return true;
}
}  // namespace

void FiberPool::Impl::monitor_main() {
  constexpr unsigned kMinSamples = 6;     // ticks of a hold before its CPU share is judged
  constexpr uint64_t kStuckTicks = 1000;  // ~1 s
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(monitor_mu);
      monitor_cv.wait(lock, [&] {
        return live.load(std::memory_order_relaxed) != 0 || stopping.load(std::memory_order_relaxed);
      });
      if (stopping.load(std::memory_order_relaxed)) return;
    }
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
    const uint64_t now = epoch.fetch_add(1, std::memory_order_relaxed) + 1;
    const auto wall_ns = static_cast<int64_t>(platform_now_ns());
    unsigned unavailable = 0, n;
    {
      std::lock_guard<std::mutex> lock(mu);
      n = nworkers.load(std::memory_order_relaxed);
      for (unsigned i = 0; i < n; ++i) {
        Worker *w = workers[i];
        const uint64_t since = w->busy_since.load(std::memory_order_relaxed);
        if (since == 0 || since != w->held_for) {  // idle, or a new hold: start its window afresh
          w->held_for = since;
          w->samples = 0;
        }
        if (since == 0) continue;
        int64_t wanted;
        if (w->has_clock.load(std::memory_order_acquire) && wanted_cpu(w, &wanted)) {
          const unsigned k = w->samples % Worker::kWindow;
          w->cpu_at[k] = wanted;
          w->wall_at[k] = wall_ns;
          ++w->samples;
        }
        if (now - since < 2) continue;
        bool blocked = now - since > kStuckTicks;
        if (!blocked && w->samples >= kMinSamples) {
          const unsigned newest = (w->samples - 1) % Worker::kWindow;
          const unsigned oldest = w->samples >= Worker::kWindow ? w->samples % Worker::kWindow : 0;
          const int64_t cpu_used = w->cpu_at[newest] - w->cpu_at[oldest];
          const int64_t wall = w->wall_at[newest] - w->wall_at[oldest];
          blocked = wall > 0 && cpu_used * 4 < wall;
        }
        if (blocked) ++unavailable;
        if (Fiber *f = w->handoff.exchange(nullptr, std::memory_order_acq_rel)) {
          queue.push_back(f);
          queued.store(queue.size(), std::memory_order_relaxed);
          if (idle != 0) cv.notify_one();
        }
      }
      if (n - unavailable < base && !queue.empty() && n < max_workers) start_worker();
    }
  }
}

namespace {
// Only fibers park in the lot, and only a pool runs fibers, so g_impl is set whenever a fiber
// sleeper exists.
void hook_unpark_all(Doorbell &b) {
  fibers::g_impl->unpark_all(b);
}
}  // namespace

void FiberGroup::wait_empty() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return live_ == 0; });
}

}  // namespace pto
