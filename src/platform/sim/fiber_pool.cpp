// src/platform/sim/fiber_pool.cpp — see fiber_pool.h.
//
// Who touches what:
//  - A fiber runs on one worker at a time. Only that worker resumes it; the fiber only leaves by
//    switching back to the worker with a request (park, yield, done) that the worker carries out
//    on its own stack, after the switch. So a fiber is never made runnable while its stack is
//    still in use: a fiber parks only once it is fully suspended.
//  - Parking lot: 256 buckets by doorbell address, each a spinlock and a list of parked fibers.
//    Park (worker, after the switch): lock; sleepers += kFiberSleeper (seq_cst); re-read seq
//    (seq_cst); still `seen` -> enqueue, else run the fiber again. Ring (doorbell_ring): seq += 1
//    (seq_cst); read sleepers (seq_cst); fiber sleepers -> unpark_all: lock; take the bucket's
//    fibers of this doorbell; sleepers -= their count. The two seq_cst pairs ensure a ring either
//    sees the sleeper or the parker sees the new seq (the futex path's argument, doorbell_sim.cpp).
//  - Run queue: hand-off slot per worker (an atomic pointer: the owner and idle thieves
//    exchange it), plus a shared FIFO under `mu`. After kHandoffStreak hand-offs in a row a
//    worker serves the FIFO first, so fibers that ring each other cannot starve it. `idle` (under `mu`)
//    counts sleeping workers; a push to the FIFO notifies one when there is any.
//  - Sanitizers: every switch is announced to ThreadSanitizer (__tsan_switch_to_fiber) and
//    AddressSanitizer (__sanitizer_start/finish_switch_fiber) so both follow the stacks.
#include "fiber_pool.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <boost/context/detail/fcontext.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pto_platform/clock.h"
#include "sim_exec.h"

#if defined(__SANITIZE_THREAD__)
#define PTO_FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PTO_FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PTO_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PTO_FIBER_ASAN 1
#endif
#endif

#if PTO_FIBER_TSAN
extern "C" {
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_set_fiber_name(void *fiber, const char *name);
}
#endif
#if PTO_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#endif

// Boost.Context's fcontext layer (make/jump), which boost::context::fiber is built on. Used
// directly because fiber's constructor bounces into the new stack and back before the fiber is
// ever resumed, a switch the sanitizers could not be told about; here the first jump into a
// fiber is its start, and every switch is one jump_fcontext, annotated on both sides.
namespace ctx = boost::context;
using ctx::detail::fcontext_t;
using ctx::detail::jump_fcontext;
using ctx::detail::make_fcontext;
using ctx::detail::transfer_t;

namespace pto {
namespace {

struct Worker;

struct Fiber {
  fcontext_t self = nullptr;  // where the suspended fiber goes on (first: its entry)
  fcontext_t back = nullptr;  // while it runs: the worker context it returns to
  ctx::stack_context stack;   // its stack, freed by the worker once it returned
  std::function<void()> body;
  std::string name;
  FiberGroup *group = nullptr;
  FiberResumeHook on_resume = nullptr;
  void *arg = nullptr;
  Worker *worker = nullptr;  // the worker running it; set before each resume

  enum Request : uint8_t { kNone, kPark, kYield, kDone };
  Request request = kNone;
  Doorbell *bell = nullptr;  // kPark: the doorbell and the sequence seen
  uint32_t seen = 0;
  Fiber *next = nullptr;  // parking-lot list
  FiberRole role = FiberRole::kOther;

  // Timing mode (DeterministicExecutor): the fiber's virtual clock and the kernel it runs. Only
  // the executor's thread touches them, or whoever holds its mu while the fiber is not running.
  uint64_t vt = 0;  // ns since the launch began; valid when vt_epoch is the executor's
  uint32_t vt_epoch = 0;
  bool in_kernel = false;     // between platform_kernel_begin and _end
  bool kernel_fixed = false;  // the cost table or a model gives its time: kernel_vt0 + kernel_ns
  uint64_t kernel_vt0 = 0, kernel_ns = 0;
  uint64_t segment_start = 0;  // platform_now_ns() when the kernel last started or went on

  void *tsan = nullptr;
  void *asan_fake = nullptr;
  const void *stack_bottom = nullptr;  // this fiber's stack (for ASan)
  size_t stack_size = 0;
  const void *from_bottom = nullptr;  // the worker stack it was resumed from (for ASan)
  size_t from_size = 0;
};

struct Worker {
  std::thread thread;
  unsigned index = 0;
  std::atomic<Fiber *> handoff{nullptr};  // runs next; idle workers may take it
  Fiber *current = nullptr;               // the worker thread only
  std::atomic<uint64_t> busy_since{0};    // monitor epoch at the current resume; 0 = not running one
  std::atomic<bool> has_clock{false};     // cpu_clock and schedstat_fd are set (by the worker, at its start)
  clockid_t cpu_clock{};                  // this thread's CPU-time clock
  int schedstat_fd = -1;                  // its /proc schedstat (CPU time, run-queue wait), if any
  ~Worker() {
    if (schedstat_fd >= 0) close(schedstat_fd);
  }
  // Monitor only: the CPU time the worker had or waited for (wanted_cpu) and the wall time at
  // the last kWindow ticks of the current hold (held_for: the busy_since value they belong to;
  // samples: how many are valid).
  static constexpr unsigned kWindow = 8;
  uint64_t held_for = 0;
  unsigned samples = 0;
  int64_t cpu_at[kWindow] = {};
  int64_t wall_at[kWindow] = {};
  void *tsan = nullptr;
  void *asan_fake = nullptr;
  void *altstack = nullptr;  // its alternate signal stack (here, not only in worker_main's frame,
                             // which leak checkers cannot see while a fiber runs on the thread)
};

// initial-exec: read at every switch and park; see crash_report_sim.cpp on the model.
__attribute__((tls_model("initial-exec"))) thread_local Worker *t_worker = nullptr;

// Queues f on the DeterministicExecutor::Impl `det` (defined at the end of this file); `ringer`:
// the fiber whose ring made it runnable, null if none (the host, a launch).
void det_push(void *det, Fiber *f, Fiber *ringer);

// Launches running in virtual time now (SimExecHooks::timed_runs).
std::atomic<uint32_t> g_timed_runs{0};

// Reads the thread's worker afresh: never inlined, so no caller keeps a thread-local address
// computed before a fiber switch (after one, the fiber may be on another thread).
__attribute__((noinline)) Worker *this_worker() {
  return t_worker;
}

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

// --- switch annotations -------------------------------------------------------------------

// On the worker, about to resume f.
inline void before_resume(Worker *w, Fiber *f) {
  (void)f;
#if PTO_FIBER_TSAN
  __tsan_switch_to_fiber(f->tsan, 0);
#endif
#if PTO_FIBER_ASAN
  __sanitizer_start_switch_fiber(&w->asan_fake, f->stack_bottom, f->stack_size);
#else
  (void)w;
#endif
}

// On the worker, back from f.
inline void after_resume(Worker *w) {
#if PTO_FIBER_ASAN
  __sanitizer_finish_switch_fiber(w->asan_fake, nullptr, nullptr);
#else
  (void)w;
#endif
}

// On f, about to switch back to its worker; `dying`: f will not run again.
inline void before_suspend(Fiber *f, bool dying) {
#if PTO_FIBER_TSAN
  __tsan_switch_to_fiber(f->worker->tsan, 0);
#endif
#if PTO_FIBER_ASAN
  __sanitizer_start_switch_fiber(dying ? nullptr : &f->asan_fake, f->from_bottom, f->from_size);
#else
  (void)f;
  (void)dying;
#endif
}

// On f, just resumed (or started: `first`).
inline void after_suspend(Fiber *f, bool first) {
#if PTO_FIBER_ASAN
  __sanitizer_finish_switch_fiber(first ? nullptr : f->asan_fake, &f->from_bottom, &f->from_size);
#else
  (void)f;
  (void)first;
#endif
}

}  // namespace

constexpr unsigned kMaxWorkers = 1024;
// Hand-offs a worker runs in a row before it serves the shared queue first (worker_main).
constexpr unsigned kHandoffStreak = 64;

struct FiberPool::Impl {
  unsigned base = 1;
  unsigned max_workers = 64;
  std::mutex mu;                  // guards queue, idle and starting workers
  std::condition_variable cv;     // idle workers sleep here
  std::deque<Fiber *> queue;      // runnable fibers nobody's hand-off slot holds
  std::atomic<size_t> queued{0};  // queue.size(), readable without mu
  unsigned idle = 0;              // workers asleep on cv
  // Workers 0 .. nworkers-1; a slot is written once, before nworkers (release) covers it, and
  // workers are never removed, so readers index it without a lock after an acquire load.
  Worker *workers[kMaxWorkers] = {};
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

  void start_worker();
  void worker_main(Worker *w);
  Fiber *find_work(Worker *w);
  Fiber *steal_handoff(Worker *w);
  uint8_t resume(Worker *w, Fiber *f);  // runs f until it switches back; its request
  void run(Worker *w, Fiber *f);
  bool try_park(Fiber *f);  // false: rung since f looked, it must run again
  void finish_park(Worker *w, Fiber *f);
  void finish(Fiber *f);
  void make_runnable(Fiber *f);
  void make_runnable_from_outside(Fiber *f) {  // not from a worker's fiber: no hand-off
    if (void *det = f->group->det_.load(std::memory_order_acquire)) {
      det_push(det, f, nullptr);
      return;
    }
    push_shared(f);
  }
  void push_shared(Fiber *f);
  void unpark_all(Doorbell &b);
  void monitor_main();
};

namespace {

std::atomic<FiberPool *> g_pool{nullptr};  // the process's pool
std::mutex g_pool_mu;                      // creating it
FiberPool::Impl *g_impl = nullptr;         // g_pool's, for the hooks

// In a child after fork: the parent's workers do not exist here. Forget the pool (its memory is
// leaked on purpose: its mutexes may have been held by threads that are gone); the child makes
// a new one if it simulates devices.
void forget_pool_in_child() {
  g_pool.store(nullptr, std::memory_order_relaxed);
  g_impl = nullptr;
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

// Switches from the running fiber back to its worker, which carries out f->request. The
// worker that resumes it later (maybe another) passes its own context back.
void suspend(Fiber *f) {
  before_suspend(f, false);
  f->back = jump_fcontext(f->back, nullptr).fctx;
  after_suspend(f, false);
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
bool hook_virtual_clock(uint64_t *ns);
void hook_kernel_begin(uint64_t kernel_entry, int64_t *args, uint32_t num_args, KernelPrice *price);
void hook_kernel_end();

const SimExecHooks kHooks = {hook_on_fiber, hook_park,          hook_unpark_all,   hook_yield,
                             &g_timed_runs, hook_virtual_clock, hook_kernel_begin, hook_kernel_end};

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
  g_impl = impl_;
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
  if (n == kMaxWorkers) return;
  auto *w = new Worker;  // until the last user releases the pool
  w->index = n;
  workers[n] = w;
  nworkers.store(n + 1, std::memory_order_release);
  w->thread = std::thread([this, w] { worker_main(w); });
}

void FiberPool::Impl::worker_main(Worker *w) {
  t_worker = w;
  w->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (pthread_getcpuclockid(pthread_self(), &w->cpu_clock) == 0) w->has_clock.store(true, std::memory_order_release);
#if PTO_FIBER_TSAN
  w->tsan = __tsan_get_current_fiber();
#endif
  // A kernel that faults reports on an alternate stack (crash_report_sim.cpp): give each
  // worker one, as each core thread had.
  static constexpr size_t kAltStackBytes = 64 * 1024;
  stack_t ss{};
  ss.ss_sp = w->altstack = malloc(kAltStackBytes);
  ss.ss_size = kAltStackBytes;
  if (ss.ss_sp != nullptr) sigaltstack(&ss, nullptr);
  unsigned streak = 0;  // fibers run in a row from the hand-off slot
  for (;;) {
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
  if (ss.ss_sp != nullptr) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    free(ss.ss_sp);
    w->altstack = nullptr;
  }
  t_worker = nullptr;
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
      if (queued.load(std::memory_order_relaxed) != 0) {
        std::lock_guard<std::mutex> lock(mu);
        if (!queue.empty()) {
          Fiber *f = queue.front();
          queue.pop_front();
          queued.store(queue.size(), std::memory_order_relaxed);
          return f;
        }
      }
      if (Fiber *f = steal_handoff(w)) return f;
      if ((spin & 15) == 15) {
        sched_yield();  // the thread with the work may be queued on this CPU
      } else {
        platform_cpu_relax();
      }
    }
    std::unique_lock<std::mutex> lock(mu);
    ++idle;
    cv.wait(lock, [&] { return !queue.empty() || stopping.load(std::memory_order_relaxed); });
    --idle;
    if (queue.empty()) return nullptr;
    Fiber *f = queue.front();
    queue.pop_front();
    queued.store(queue.size(), std::memory_order_relaxed);
    return f;
  }
}

uint8_t FiberPool::Impl::resume(Worker *w, Fiber *f) {
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

void FiberPool::Impl::run(Worker *w, Fiber *f) {
  switch (resume(w, f)) {
    case Fiber::kPark:
      finish_park(w, f);
      break;
    case Fiber::kYield:
      push_shared(f);
      break;
    default:
      finish(f);
      break;
  }
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
    det_push(det, f, ringer != nullptr ? ringer->current : nullptr);
    return;
  }
  Worker *w = this_worker();
  if (w == nullptr) {
    push_shared(f);
    return;
  }
  if (Fiber *old = w->handoff.exchange(f, std::memory_order_acq_rel)) push_shared(old);
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
  g_impl->unpark_all(b);
}
}  // namespace

void FiberGroup::wait_empty() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return live_ == 0; });
}

// --- seeded runs ------------------------------------------------------------------------------

// One OS thread, one fiber at a time, the next one drawn from the runnable set by a PRNG
// (splitmix64-seeded xorshift64*). Fibers become runnable here from this thread (a fiber's ring)
// or from the host (a launch, under hold()); parks go through the pool's parking lot as on a
// worker, so rings from anywhere find them.
//
// Timing mode: the runnable fiber with the smallest virtual clock runs next (reservoir sampling
// among the ties, one PRNG draw per tie). A fiber's clock only moves while it is off this thread
// — when it is made runnable (to the ringer's clock plus the hand-off's latency), when a kernel
// suspends or ends (by its cost), when it yields (to the earliest other runnable clock) — so
// whatever a fiber does in one resume happens at one instant, and it happens only once no
// runnable fiber is earlier: a discrete-event simulation in which nothing sees an effect before
// its cause. A kernel's end is such a move: the core yields there, and reports the kernel done
// only once its clock is the earliest.
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

  // Timing mode; set by begin() under mu while the group is settled.
  bool timed = false;
  bool counted = false;  // this executor counts in g_timed_runs
  uint32_t epoch = 0;    // fibers whose vt_epoch differs start this launch at 0
  double factor = 1.0;
  double cycles_per_us = 0;  // SimTiming::cycles_per_us
  std::unordered_map<uint64_t, SimKernelCost> kernel_costs;  // by entry
  uint64_t latency[3][3] = {};  // [ringer role][woken role]
  std::atomic<uint64_t> makespan{0};
  uint64_t priced[PTO_PRICE_SOURCE_COUNT] = {};  // kernel invocations of this launch by source

  // The executor that has `g` now, or null.
  static Impl *of(const FiberGroup &g) { return static_cast<Impl *>(g.det_.load(std::memory_order_acquire)); }

  uint64_t &clock(Fiber *f) {
    if (f->vt_epoch != epoch) {
      f->vt_epoch = epoch;
      f->vt = 0;
      f->in_kernel = false;
    }
    return f->vt;
  }
  void reached(uint64_t vt) {
    if (vt > makespan.load(std::memory_order_relaxed)) makespan.store(vt, std::memory_order_release);
  }

  void push(Fiber *f, Fiber *ringer = nullptr) {
    std::lock_guard<std::mutex> lock(mu);
    if (timed && ringer != nullptr && ringer->group == group) {
      uint64_t &vt = clock(f);
      const uint64_t at = clock(ringer) + latency[static_cast<int>(ringer->role)][static_cast<int>(f->role)];
      if (at > vt) {
        vt = at;
        reached(vt);
      }
    }
    runnable.push_back(f);
    if (holds == 0) cv.notify_one();
  }

  // A fiber that yielded waits for the others: its clock moves to the earliest of theirs.
  void push_yielded(Fiber *f) {
    std::lock_guard<std::mutex> lock(mu);
    if (timed && !runnable.empty()) {
      uint64_t earliest = UINT64_MAX;
      for (Fiber *o : runnable) earliest = std::min(earliest, clock(o));
      uint64_t &vt = clock(f);
      if (earliest > vt) vt = earliest;
    }
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
    if (!timed) return static_cast<size_t>(next_random() % runnable.size());
    size_t chosen = 0;
    uint64_t best = UINT64_MAX, ties = 0;
    for (size_t k = 0; k < runnable.size(); ++k) {
      const uint64_t vt = clock(runnable[k]);
      if (vt < best) {
        best = vt;
        chosen = k;
        ties = 1;
      } else if (vt == best && next_random() % ++ties == 0) {
        chosen = k;
      }
    }
    return chosen;
  }

  // A kernel of a timed launch was suspended or returned: its compute since it last went on
  // counts, scaled, unless the cost table fixes its time.
  void account_segment(Fiber *f) {
    if (f->kernel_fixed) return;
    const uint64_t now = platform_now_ns();
    const uint64_t host = now > f->segment_start ? now - f->segment_start : 0;
    f->vt += static_cast<uint64_t>(static_cast<double>(host) * factor + 0.5);
    reached(f->vt);
  }

  // Only one fiber of the launch runs at a time, so the counters need no lock.
  void kernel_begin(Fiber *f, uint64_t entry, int64_t *args, uint32_t num_args, KernelPrice *price) {
    f->in_kernel = true;
    const auto it = kernel_costs.find(entry);
    f->kernel_fixed = it != kernel_costs.end();
    f->kernel_ns = 0;
    *price = KernelPrice{};
    if (f->kernel_fixed && it->second.model_price != nullptr) {
      const SimKernelCost &c = it->second;
      f->kernel_ns = c.model_price(c.model, args, cycles_per_us, price);  // sets source, cycles, pipes
    } else if (f->kernel_fixed) {
      const SimKernelCost &c = it->second;
      f->kernel_ns = c.base_ns;
      if (c.arg >= 0 && static_cast<uint32_t>(c.arg) < num_args && args[c.arg] > 0)
        f->kernel_ns += static_cast<uint64_t>(c.ns_per_unit * static_cast<double>(args[c.arg]) + 0.5);
      price->source = PTO_PRICE_TABLE;
    } else {
      price->source = PTO_PRICE_HOST_TIME;
    }
    ++priced[price->source];
    f->kernel_vt0 = clock(f);
    f->segment_start = platform_now_ns();  // after the model: its time is not the kernel's
  }

  void kernel_end(Fiber *f) {
    if (!f->in_kernel) return;
    f->in_kernel = false;
    if (f->kernel_fixed) {
      f->vt = std::max(f->vt, f->kernel_vt0 + f->kernel_ns);
      reached(f->vt);
    } else {
      account_segment(f);
    }
  }

  void main() {
    t_worker = &worker;
#if PTO_FIBER_TSAN
    worker.tsan = __tsan_get_current_fiber();
#endif
    static constexpr size_t kAltStackBytes = 64 * 1024;  // as a pool worker's (crash reports)
    stack_t ss{};
    ss.ss_sp = worker.altstack = malloc(kAltStackBytes);
    ss.ss_size = kAltStackBytes;
    if (ss.ss_sp != nullptr) sigaltstack(&ss, nullptr);
    FiberPool::Impl &pool = *g_impl;
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
        timed_run = timed;
        if (timed_run) (void)clock(f);
      }
      if (timed_run && f->in_kernel) f->segment_start = platform_now_ns();
      const uint8_t request = pool.resume(&worker, f);
      if (timed_run && f->in_kernel && request != Fiber::kDone) account_segment(f);
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
    if (ss.ss_sp != nullptr) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
      free(ss.ss_sp);
      worker.altstack = nullptr;
    }
    t_worker = nullptr;
  }
};

namespace {
void det_push(void *det, Fiber *f, Fiber *ringer) {
  static_cast<DeterministicExecutor::Impl *>(det)->push(f, ringer);
}

// The running fiber and its timed executor, or false (not on a fiber of a timed launch).
bool timed_fiber(Fiber **f, DeterministicExecutor::Impl **det) {
  Worker *w = this_worker();
  if (w == nullptr || w->current == nullptr) return false;
  DeterministicExecutor::Impl *d = DeterministicExecutor::Impl::of(*w->current->group);
  if (d == nullptr || !d->timed || &d->worker != w) return false;
  *f = w->current;
  *det = d;
  return true;
}

bool hook_virtual_clock(uint64_t *ns) {
  Fiber *f;
  DeterministicExecutor::Impl *d;
  if (!timed_fiber(&f, &d)) return false;
  *ns = d->clock(f);
  return true;
}

void hook_kernel_begin(uint64_t kernel_entry, int64_t *args, uint32_t num_args, KernelPrice *price) {
  Fiber *f;
  DeterministicExecutor::Impl *d;
  if (timed_fiber(&f, &d)) d->kernel_begin(f, kernel_entry, args, num_args, price);
}

void hook_kernel_end() {
  Fiber *f;
  DeterministicExecutor::Impl *d;
  if (!timed_fiber(&f, &d)) return;
  d->kernel_end(f);
  // Let every fiber that is earlier go first: what the core does next (report the kernel done)
  // happens at the kernel's end in virtual time.
  f->request = Fiber::kYield;
  suspend(f);
}

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
  impl_->worker.index = kMaxWorkers;  // not one of the pool's: never stolen from or watched
  (void)FiberPool::instance();        // the hooks and the parking lot it uses
}

DeterministicExecutor::~DeterministicExecutor() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->counted) g_timed_runs.fetch_sub(1, std::memory_order_relaxed);
    impl_->counted = false;
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
    Impl &d = *impl_;
    d.timed = timing != nullptr;
    ++d.epoch;
    d.makespan.store(0, std::memory_order_relaxed);
    for (uint64_t &c : d.priced) c = 0;
    d.kernel_costs.clear();
    if (timing != nullptr) {
      d.factor = timing->kernel_factor;
      d.cycles_per_us = timing->cycles_per_us;
      for (const SimKernelCost &c : timing->kernel_costs) d.kernel_costs[c.entry] = c;
      constexpr int A = static_cast<int>(FiberRole::kAicpu), C = static_cast<int>(FiberRole::kCore);
      for (auto &row : d.latency)
        for (uint64_t &l : row) l = 0;
      d.latency[A][C] = timing->dispatch_ns;
      d.latency[C][A] = timing->completion_ns;
      d.latency[A][A] = timing->submit_ns;
    }
    if (d.timed != d.counted) {
      g_timed_runs.fetch_add(d.timed ? 1 : static_cast<uint32_t>(-1), std::memory_order_relaxed);
      d.counted = d.timed;
    }
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
  if (impl_->counted) g_timed_runs.fetch_sub(1, std::memory_order_relaxed);
  impl_->counted = impl_->timed = false;
  return true;
}

uint64_t DeterministicExecutor::makespan_ns() const {
  return impl_->makespan.load(std::memory_order_acquire);
}

void DeterministicExecutor::priced(uint64_t (&counts)[PTO_PRICE_SOURCE_COUNT]) const {
  std::lock_guard<std::mutex> lock(impl_->mu);  // the launch has ended: this orders the reads
  for (int i = 0; i < PTO_PRICE_SOURCE_COUNT; ++i) counts[i] = impl_->priced[i];
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
