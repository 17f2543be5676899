// src/platform/sim/tile_pipes_sim.cpp — PTO-ISA's TPUSH/TPOP pipes on the sim's cores (tile_pipes_sim.h).
#include "tile_pipes_sim.h"

#include <dlfcn.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "fiber_pool.h"
#include "pto/kernel_stop.h"
#include "pto/mix_sync.h"
#include "pto/sim_tile_pipes.h"
#include "pto_platform/clock.h"
#include "pto_platform/doorbell.h"

namespace pto {

__attribute__((tls_model("initial-exec"))) thread_local SimCoreSlot *t_sim_core_slot = nullptr;

namespace {

void *hook_state(uint64_t key, size_t size) {
  SimCoreSlot *s = t_sim_core_slot;
  return s != nullptr ? s->pipes->state(s->cluster, key, size) : nullptr;
}

unsigned hook_subblock() {
  const SimCoreSlot *s = t_sim_core_slot;
  return s != nullptr ? s->subblock : 0u;
}

// PTO-ISA holds the pipe's mutex through a std::unique_lock, which must still own it when the
// wait returns: only the mutex itself is released and taken again.
void release(void *lock) {
  static_cast<std::unique_lock<std::mutex> *>(lock)->mutex()->unlock();
}
void reacquire(void *lock) {
  static_cast<std::unique_lock<std::mutex> *>(lock)->mutex()->lock();
}

void hook_wait(void *cv, void *lock) {
  SimCoreSlot *s = t_sim_core_slot;
  if (s == nullptr) throw KernelStop{pto_unsupported_status(PTO_UNSUPPORTED_TPIPE)};  // not a core
  // The pipe, for the status: PTO-ISA's key is FlagID:8 | direction:8 | slots:8 | local slots:8 |
  // slot bytes:32. Its direction tells a pusher from a popper (DIR_C2V = 1: the cube pushes;
  // DIR_V2C = 2: the vector cores do).
  uint64_t key = 0;
  const bool known = s->pipes->key_of(s->cluster, cv, &key);
  const uint32_t flag = known ? static_cast<uint32_t>(key >> 56) : 255u;
  const uint32_t dir = known ? static_cast<uint32_t>(key >> 48) & 3u : 3u;
  const KernelWaitRole role = dir == 1   ? (s->aic ? kWaitPush : kWaitPop)
                              : dir == 2 ? (s->aic ? kWaitPop : kWaitPush)
                                         : kWaitPipe;
  const KernelWaits *w = s->waits;
  // Not a MIX part: no other part could ever end the wait.
  if (w == nullptr)
    throw KernelStop{pto_mix_status(PTO_MIX_TPIPE_NOT_MIX, s->aic ? 0 : 1 + s->subblock, flag)};
  // PTO-ISA's code around this wait may keep the addresses of this OS thread's thread_locals (its
  // tile memory among them): the fiber must go on where it stopped.
  FiberPool::pin_current_fiber(true);
  const int32_t status = w->wait(w->self, role, flag, release, reacquire, lock);
  FiberPool::pin_current_fiber(false);
  if (status != 0) throw KernelStop{status};  // the unique_lock, still owning, unlocks as it unwinds
}

void hook_notify(void *cv) {
  (void)cv;
  const SimCoreSlot *s = t_sim_core_slot;
  if (s != nullptr && s->waits != nullptr) s->waits->changed(s->waits->self);
}

void *hook_core_memory(size_t size, size_t align, void (*destroy)(void *)) {
  SimCoreSlot *s = t_sim_core_slot;
  if (s == nullptr || align > 64) return nullptr;
  if (s->memory == nullptr) {
    s->memory = std::aligned_alloc(64, (size + 63) / 64 * 64);
    if (s->memory == nullptr) return nullptr;
    std::memset(s->memory, 0, size);
    s->memory_size = size;
  }
  if (s->memory_size != size) return nullptr;
  s->destroy_memory = destroy;
  return s->memory;
}

// How long a TWAIT only yields between two looks; after that it also sleeps its OS thread on the
// signal's futex, at most kSignalSleepNs per look: a wait this long is on something slower than
// the other cores of this chip (another chip, another process, the host), and a pool of yielding
// waiters would take every CPU from it. TNOTIFY wakes the sleepers of its signal at once
// (include/pto_sim_isa/pto/cpu/comm/TNotify.hpp); the time-out bounds how late a signal set
// without TNOTIFY is seen, and how long the fibers queued behind a pinned waiter wait.
constexpr unsigned long long kSignalSpinPolls = 64;
constexpr long kSignalSleepNs = 50000;

int32_t hook_remote(const pto_sim_remote_access *access);
bool remote_progress();

void hook_signal_wait(const void *signal, int value, int cmp, int want, unsigned long long polls) {
  SimCoreSlot *s = t_sim_core_slot;
  if (signal == nullptr) {  // the wait is over (TWAIT's last call after it had paused)
    if (s != nullptr) s->wait_signal.store(nullptr, std::memory_order_relaxed);
    return;
  }
  if (s == nullptr) {  // not on a core of a device: nothing can stop this wait
    sched_yield();
    return;
  }
  if (polls == 0 || s->wait_signal.load(std::memory_order_relaxed) != signal) {
    s->wait_cmp.store(cmp, std::memory_order_relaxed);
    s->wait_want.store(want, std::memory_order_relaxed);
    s->wait_since_ns.store(platform_now_ns(), std::memory_order_relaxed);
    s->wait_signal.store(signal, std::memory_order_relaxed);
  }
  s->wait_value.store(value, std::memory_order_relaxed);
  if (s->stop_waits != nullptr && s->stop_waits->load(std::memory_order_acquire)) {
    s->wait_signal.store(nullptr, std::memory_order_relaxed);
    throw KernelStop{pto_comm_wait_stopped_status()};
  }
  // A peer on another host sets signals through MPI, whose atomics this process applies only
  // when it calls MPI: the waiter does, as a plain MPI program polling its flag would. While the
  // process has such a window open, a long wait yields its OS thread instead of sleeping on the
  // futex: MPI's update wakes no futex, and the waiter itself must keep calling MPI (the round
  // trip in bench/comm/l4_roundtrip.py took 1.5x plain MPI's with the sleeps, 1.2-1.3x without).
  const bool remote = remote_progress();
  // PTO-ISA's code around the wait may keep addresses of this OS thread's thread_locals.
  FiberPool::pin_current_fiber(true);
  if (!platform_fiber_yield()) sched_yield();
  if (polls >= kSignalSpinPolls && remote) {
    sched_yield();
  } else if (polls >= kSignalSpinPolls) {
    // Sleeps only while the signal still holds `value` (a notify in between returns at once).
    const timespec pause{0, kSignalSleepNs};
    syscall(SYS_futex, const_cast<void *>(signal), FUTEX_WAIT, value, &pause, nullptr, 0);
  }
  FiberPool::pin_current_fiber(false);
}

// Who serves windows of chips on other hosts (pto_sim_bind_remote_windows): a getter of the
// chip worker that loaded this program, returning the process's L4 server if it has one.
std::atomic<pto_sim_remote_server> g_remote_server{nullptr};

// The process's server, or null.
pto_sim_remote_fn remote_server() {
  const pto_sim_remote_server server = g_remote_server.load(std::memory_order_acquire);
  return server != nullptr ? server() : nullptr;
}

int32_t hook_remote(const pto_sim_remote_access *access) {
  const pto_sim_remote_fn fn = remote_server();
  return fn != nullptr ? fn(access) : pto_unsupported_status(PTO_UNSUPPORTED_REMOTE_WINDOW);
}

// Lets the L4 worker's MPI apply what peers on other hosts sent (PTO_SIM_REMOTE_PROGRESS); true
// if the process has a window of a domain across hosts open.
bool remote_progress() {
  const pto_sim_remote_fn fn = remote_server();
  if (fn == nullptr) return false;  // no L4 domain in this process: nothing to apply
  const pto_sim_remote_access progress = {PTO_SIM_REMOTE_PROGRESS, 0, 0, nullptr, 0, 0};
  return fn(&progress) > 0;
}

const pto_sim_tile_pipe_hooks kHooks = {hook_state,       hook_subblock,    hook_wait,  hook_notify,
                                        hook_core_memory, hook_signal_wait, hook_remote};

const char *const kCmpNames[] = {"==", "!=", ">", ">=", "<", "<="};

}  // namespace

void *TilePipes::state(uint32_t cluster, uint64_t key, size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find({cluster, key});
  if (it != states_.end()) return it->second.size >= size ? it->second.mem : nullptr;
  // PTO-ISA's SharedStateStorage (pto/cpu/TPush.hpp): an atomic flag, then the SharedState (a
  // mutex, a condition variable, the ring's cursors and slots), which the first caller builds
  // with placement new unless the flag says it is built (PSTATE_INITIALIZED, 2). Every member of
  // a new SharedState is zero (glibc's mutex and condition variable initialisers are all zero
  // bytes), so the state is built here, zeroed and flagged, before any kernel can see it: this
  // function's lock orders that for every core, where a kernel's own placement new would be
  // ordered only by the flag's atomics inside uninstrumented kernel code, which ThreadSanitizer
  // cannot see (it then reports the kernels' first pipe lock as a race on the new mutex).
  void *mem = std::aligned_alloc(64, (size + 63) / 64 * 64);
  if (mem == nullptr) return nullptr;
  std::memset(mem, 0, size);
  constexpr uint32_t kPipeStateBuilt = 2;  // cpu_pipe::PSTATE_INITIALIZED
  static_cast<std::atomic<uint32_t> *>(mem)->store(kPipeStateBuilt, std::memory_order_relaxed);
  states_.emplace(std::make_pair(cluster, key), State{mem, size});
  return mem;
}

bool TilePipes::key_of(uint32_t cluster, const void *addr, uint64_t *key) {
  const auto *a = static_cast<const char *>(addr);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = states_.lower_bound({cluster, 0}); it != states_.end() && it->first.first == cluster; ++it) {
    const auto *mem = static_cast<const char *>(it->second.mem);
    if (a >= mem && a < mem + it->second.size) {
      *key = it->first.second;
      return true;
    }
  }
  return false;
}

void TilePipes::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  // PTO-ISA never destroys a SharedState (its mutex and condition variable hold no resources
  // on Linux); neither do we.
  for (auto &kv : states_) std::free(kv.second.mem);
  states_.clear();
}

void release_core_memory(SimCoreSlot &slot) {
  if (slot.memory == nullptr) return;
  if (slot.destroy_memory != nullptr) slot.destroy_memory(slot.memory);
  std::free(slot.memory);
  slot.memory = nullptr;
  slot.destroy_memory = nullptr;
}

std::string signal_waits_report(const SimCoreSlot *slots, uint32_t n, uint64_t now_ns) {
  std::string out;
  for (uint32_t c = 0; c < n; ++c) {
    const SimCoreSlot &s = slots[c];
    const void *signal = s.wait_signal.load(std::memory_order_relaxed);
    if (signal == nullptr) continue;
    const int32_t cmp = s.wait_cmp.load(std::memory_order_relaxed);
    const uint64_t since = s.wait_since_ns.load(std::memory_order_relaxed);
    char line[256];
    snprintf(line, sizeof line,
             "core %u (%s, cluster %u): TWAIT on the signal at %p, which holds %d, for %s %d since %.3f s\n",
             c, s.aic ? "AIC" : "AIV", s.cluster, signal, s.wait_value.load(std::memory_order_relaxed),
             cmp >= 0 && cmp < 6 ? kCmpNames[cmp] : "?", s.wait_want.load(std::memory_order_relaxed),
             now_ns > since ? static_cast<double>(now_ns - since) / 1e9 : 0.0);
    out += line;
  }
  return out;
}

void sim_core_set_kernel_waits(const KernelWaits *waits) {
  if (SimCoreSlot *s = t_sim_core_slot) s->waits = waits;
}

void bind_tile_pipes(void *lib) {
  using Bind = void (*)(const pto_sim_tile_pipe_hooks *);
  if (auto bind = reinterpret_cast<Bind>(dlsym(lib, PTO_SIM_BIND_TILE_PIPES_SYMBOL))) bind(&kHooks);
}

void bind_remote_window_server(pto_sim_remote_server server) {
  g_remote_server.store(server, std::memory_order_release);
}

}  // namespace pto
