// src/platform/sim/fiber.h — a simulated thread or core as a fiber, the thread that runs it, the switch.
//
// Private to the fiber pool (fiber_pool.cpp), the seeded executor (deterministic_executor.cpp)
// and the timing model (virtual_time.cpp). A fiber runs on one worker at a time; only that
// worker resumes it, and the fiber only leaves by switching back with a request (park, yield,
// done) that the worker carries out on its own stack, after the switch. Every switch is
// announced to ThreadSanitizer (__tsan_switch_to_fiber) and AddressSanitizer
// (__sanitizer_start/finish_switch_fiber) so both follow the stacks.
#ifndef PTO_PLATFORM_SIM_FIBER_H
#define PTO_PLATFORM_SIM_FIBER_H

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <boost/context/detail/fcontext.hpp>
#include <boost/context/stack_context.hpp>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "fiber_pool.h"

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

namespace pto {
namespace fibers {

// Boost.Context's fcontext layer (make/jump), which boost::context::fiber is built on. Used
// directly because fiber's constructor bounces into the new stack and back before the fiber is
// ever resumed, a switch the sanitizers could not be told about; here the first jump into a
// fiber is its start, and every switch is one jump_fcontext, annotated on both sides.
namespace ctx = boost::context;
using ctx::detail::fcontext_t;
using ctx::detail::jump_fcontext;
using ctx::detail::make_fcontext;
using ctx::detail::transfer_t;

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
  // Non-null: only this worker may resume it (FiberPool::pin_current_fiber); it then never sits
  // in a hand-off slot, which idle workers steal from, but in home->pinned.
  Worker *home = nullptr;

  enum Request : uint8_t { kNone, kPark, kYield, kDone };
  Request request = kNone;
  Doorbell *bell = nullptr;  // kPark: the doorbell and the sequence seen
  uint32_t seen = 0;
  Fiber *next = nullptr;  // parking-lot list
  FiberRole role = FiberRole::kOther;

  // Timing mode (VirtualTime): the fiber's virtual clock and the kernel it runs. Only the
  // executor's thread touches them, or whoever holds its mu while the fiber is not running.
  uint64_t vt = 0;  // ns since the launch began; valid when vt_epoch is the executor's
  uint32_t vt_epoch = 0;
  bool in_kernel = false;     // between platform_kernel_begin and _end
  bool kernel_fixed = false;  // the cost table or a model gives its time: kernel_vt0 + kernel_ns
  uint64_t kernel_vt0 = 0, kernel_ns = 0;
  uint64_t segment_start = 0;  // platform_now_ns() when the kernel last started or went on
  bool keeps_clock = false;    // its next yield is not a wait: its clock stays (VirtualTime)

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
  // Fibers pinned to this worker, runnable (Fiber::home); served before anything else.
  std::mutex pinned_mu;
  std::deque<Fiber *> pinned;             // pinned_mu
  std::atomic<uint32_t> npinned{0};       // pinned.size(), readable without pinned_mu
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
  void *altstack = nullptr;  // its alternate signal stack (here, not only in a local of the
                             // thread's, which leak checkers cannot see while a fiber runs on it)
};

// initial-exec: read at every switch and park; see crash_report_sim.cpp on the model.
extern __attribute__((tls_model("initial-exec"))) thread_local Worker *t_worker;

// Reads the thread's worker afresh: never inlined, so no caller keeps a thread-local address
// computed before a fiber switch (after one, the fiber may be on another thread).
__attribute__((noinline)) Worker *this_worker();

// For the life of a thread that resumes fibers (a pool worker, a seeded executor's thread): it
// is `w` to the hooks, and a kernel that faults reports on an alternate stack of its own
// (crash_report_sim.cpp), as each core thread had.
class WorkerThreadScope {
 public:
  explicit WorkerThreadScope(Worker *w) : w_(w) {
    t_worker = w;
#if PTO_FIBER_TSAN
    w->tsan = __tsan_get_current_fiber();
#endif
    stack_t ss{};
    ss.ss_sp = w->altstack = malloc(kAltStackBytes);
    ss.ss_size = kAltStackBytes;
    if (ss.ss_sp != nullptr) sigaltstack(&ss, nullptr);
  }
  ~WorkerThreadScope() {
    if (w_->altstack != nullptr) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
      free(w_->altstack);
      w_->altstack = nullptr;
    }
    t_worker = nullptr;
  }
  WorkerThreadScope(const WorkerThreadScope &) = delete;
  WorkerThreadScope &operator=(const WorkerThreadScope &) = delete;

 private:
  static constexpr size_t kAltStackBytes = 64 * 1024;
  Worker *w_;
};

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

// Switches from the running fiber back to its worker, which carries out f->request. The
// worker that resumes it later (maybe another) passes its own context back.
inline void suspend(Fiber *f) {
  before_suspend(f, false);
  f->back = jump_fcontext(f->back, nullptr).fctx;
  after_suspend(f, false);
}

}  // namespace fibers
}  // namespace pto
#endif  // PTO_PLATFORM_SIM_FIBER_H
