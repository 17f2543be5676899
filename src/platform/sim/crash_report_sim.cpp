// src/platform/sim/crash_report_sim.cpp — fault report of a simulated core (crash_report_sim.h).
#include "crash_report_sim.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace pto {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction g_previous[NSIG];  // written once at install, before the handlers can run

// Kernel names by entry address: slots are claimed once (entry written last, release) and
// renamed in place; the handler reads them without locks (a torn name is still a string).
constexpr int kMaxKernels = 1024;
constexpr size_t kNameBytes = 96;
struct KernelName {
  std::atomic<uint64_t> entry{0};
  char name[kNameBytes] = {};
};
KernelName g_kernels[kMaxKernels];
std::mutex g_kernels_mu;  // writers only
// Slots [0, g_kernels_used) have been claimed at least once; the rest were never touched, and
// nothing reads them: the table is 26 pages of .bss, and a scan over all of it cost a fresh
// process ~100 us of page faults at its first kernel load.
std::atomic<int> g_kernels_used{0};

// initial-exec: set at every fiber resume; the default model for a dlopen()ed library costs a
// __tls_get_addr call per access (8 bytes of the static TLS surplus glibc keeps for this).
__attribute__((tls_model("initial-exec"))) thread_local const CrashReportCore *t_core = nullptr;

// --- async-signal-safe formatting ---
struct Line {
  char buf[512];
  size_t n = 0;
  void put(const char *s) {
    while (*s && n < sizeof buf - 1) buf[n++] = *s++;
  }
  void num(uint64_t v, int base = 10) {
    char tmp[24];
    int k = 0;
    do {
      tmp[k++] = "0123456789abcdef"[v % static_cast<uint64_t>(base)];
      v /= static_cast<uint64_t>(base);
    } while (v && k < 24);
    if (base == 16) put("0x");
    while (k && n < sizeof buf - 1) buf[n++] = tmp[--k];
  }
};

const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    default:
      return "signal";
  }
}

void on_fault(int sig, siginfo_t *info, void *uctx) {
  const int saved_errno = errno;
  if (const CrashReportCore *ci = t_core) {
    const CoreActivity now = ci->activity ? ci->activity(ci->block, ci->core) : CoreActivity{};
    const uint64_t entry = now.kernel_entry;
    const int64_t task = now.task;
    Line l;
    l.put("pto_runtime: ");
    l.put(signal_name(sig));
    l.put(" in kernel ");
    const char *name = nullptr;
    const int used = g_kernels_used.load(std::memory_order_acquire);
    for (int i = 0; i < used; ++i) {
      const KernelName &k = g_kernels[i];
      if (entry && k.entry.load(std::memory_order_acquire) == entry) {
        name = k.name;
        break;
      }
    }
    if (name) {
      l.put("'");
      l.put(name);
      l.put("'");
    } else {
      l.put("at ");
      l.num(entry, 16);
    }
    l.put(", task ");
    if (task >= 0) {
      l.num(static_cast<uint64_t>(task));
    } else {
      l.put("?");
    }
    l.put(", on core ");
    l.num(ci->core);
    if (ci->kind && *ci->kind) {
      l.put(" (");
      l.put(ci->kind);
      l.put(")");
    }
    if (sig == SIGSEGV || sig == SIGBUS) {
      l.put(", fault address ");
      l.num(reinterpret_cast<uint64_t>(info ? info->si_addr : nullptr), 16);
    }
    l.put(
        "; the process dies of it (Worker(level=3, mode=\"process\") and Worker(level=2, isolate=True) run a "
        "chip in a process of its own)\n");
    ssize_t unused = write(STDERR_FILENO, l.buf, l.n);
    (void)unused;
  }
  errno = saved_errno;
  // Chain: the handler before ours, else the default action.
  const struct sigaction &prev = g_previous[sig];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, info, uctx);
    return;
  }
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
    prev.sa_handler(sig);
    return;
  }
  // Default action: returning re-runs the faulting instruction, which now kills the process
  // with this signal (raise() covers a signal sent by kill()).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (info && info->si_code <= 0) raise(sig);
}

}  // namespace

void crash_report_install() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *off = getenv("PTO_SIM_CRASH_REPORT");
    if (off && strcmp(off, "0") == 0) return;
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : kSignals) sigaction(sig, &sa, &g_previous[sig]);
  });
}

void crash_report_name_kernel(uint64_t entry, const std::string &path) {
  if (!entry) return;
  std::lock_guard<std::mutex> lock(g_kernels_mu);
  KernelName *slot = nullptr;
  const int used = g_kernels_used.load(std::memory_order_relaxed);
  for (int i = 0; i < used; ++i) {
    KernelName &k = g_kernels[i];
    const uint64_t e = k.entry.load(std::memory_order_relaxed);
    if (e == entry) {
      slot = &k;
      break;
    }
    if (e == 0 && !slot) slot = &k;
  }
  if (path.empty()) {  // forget `entry`: nothing to claim a new slot for
    if (slot) slot->entry.store(0, std::memory_order_release);
    return;
  }
  if (!slot && used < kMaxKernels) {
    slot = &g_kernels[used];
    g_kernels_used.store(used + 1, std::memory_order_release);  // before the entry is written
  }
  if (!slot) return;  // table full: the report gives the entry address
  // "<dir>/kernel_add-<hash>-<hash>.so" (KernelCompiler's cache) -> "kernel_add"
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) name.resize(name.size() - 3);
  for (int i = 0; i < 2; ++i) {
    const size_t dash = name.find_last_of('-');
    if (dash == std::string::npos || dash == 0 || name.size() - dash - 1 != 16 ||
        name.find_first_not_of("0123456789abcdef", dash + 1) != std::string::npos)
      break;
    name.resize(dash);
  }
  const size_t n = std::min(name.size(), kNameBytes - 1);
  memcpy(slot->name, name.data(), n);
  slot->name[n] = '\0';
  slot->entry.store(entry, std::memory_order_release);
}

void crash_report_set_current(const CrashReportCore *core) {
  t_core = core;
}

CrashReportThread::CrashReportThread(const CrashReportCore *core) {
  constexpr size_t kStackBytes = 64 * 1024;
  stack_ = std::malloc(kStackBytes);
  if (stack_) {
    stack_t ss{};
    ss.ss_sp = stack_;
    ss.ss_size = kStackBytes;
    if (sigaltstack(&ss, nullptr) != 0) {
      std::free(stack_);
      stack_ = nullptr;
    }
  }
  t_core = core;
}

CrashReportThread::~CrashReportThread() {
  t_core = nullptr;
  if (stack_) {
    stack_t ss{};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    std::free(stack_);
  }
}

}  // namespace pto
