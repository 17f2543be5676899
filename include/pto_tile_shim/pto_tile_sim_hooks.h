// include/pto_tile_shim/pto_tile_sim_hooks.h — PTO-ISA CPU-sim hooks compiled into every tile kernel.
//
// KernelCompiler force-includes this header (-include) in every sim tile kernel; cost-model
// twins do not get it. It defines functions only and includes nothing but pto/kernel_stop.h,
// pto/sim_kernel_yield.h and pto/sim_tile_pipes.h (builtin types only), so a kernel sees no
// header it did not include itself.
//
// TPUSH/TPOP/TFREE, PTO-ISA's cross-core pipes (pto/cpu/TPush.hpp). Before an instruction
// touches a pipe, PTO-ISA looks up the pipe's state shared by the producing and consuming cores
// (through cpu_sim::injected_pipe_shared_state_hook, then dlsym(RTLD_DEFAULT,
// "pto_sim_get_pipe_shared_state"), else a static of the kernel's binary), and it waits on a
// std::condition_variable in that state. An AIC kernel and its AIV kernels are separate
// binaries, and the sim runs every core as a fiber on a few OS threads: a private static and a
// condition variable that blocks the OS thread would both hang the run.
//
// So the lookup and the waits come here. dlsym(RTLD_DEFAULT, ...) called from a kernel that was
// dlopen'd RTLD_LOCAL searches the global scope and then the kernel's own binary (glibc looks in
// the caller's scope), so the definitions below are found. They forward to the sim's table
// (pto/sim_tile_pipes.h), bound right after the kernel is loaded: the state is the cluster's,
// and the kernel is linked with -Wl,--wrap for condition_variable's wait, notify_one and
// notify_all, so a wait suspends the core's fiber and fails the task (pto::KernelStop, caught by
// the core's platform_call_kernel) when no other part of its MIX task can end it.
//
// A binary the sim has not bound (used on its own) keeps the C++ library's condition variable,
// and its first pipe call stops the kernel: there is no peer to connect it to. Weak, so a
// kernel may define its own.
#ifndef PTO_TILE_SIM_HOOKS_H
#define PTO_TILE_SIM_HOOKS_H

#include "pto/kernel_stop.h"
#include "pto/sim_kernel_yield.h"  // a kernel's sched_yield lets the other cores run
#include "pto/sim_tile_pipes.h"

#ifdef __cplusplus
// PTO-ISA's per-thread tile memory (pto/cpu/NPUMemoryModel.hpp), which a waiting kernel takes
// with it (pto/sim_tile_pipes.h). Named before PTO-ISA declares it: the swap below is a template,
// instantiated at the end of the kernel's translation unit, where the class is complete if the
// kernel included it; a kernel without it has no tile memory to carry.
namespace pto {
class NPUMemoryModel;
}  // namespace pto

namespace pto_sim_hooks_detail {
template <class T, unsigned long = sizeof(T)>
constexpr bool complete(int) {
  return true;
}
template <class T>
constexpr bool complete(long) {
  return false;
}
template <class M>
void destroy(void *object) {
  static_cast<M *>(object)->~M();
}
// Exchanges this OS thread's tile memory with the calling core's place for it. The object moves
// byte by byte: its members are std::vectors and sizes, whose heap blocks stay where they are;
// a zeroed object is a default-constructed one (empty vectors, not yet initialised). The kernel
// goes on on the OS thread it stopped on (the sim pins it for the wait), so both swaps meet the
// same thread's object.
template <class M = pto::NPUMemoryModel>
void swap_tile_memory(const pto_sim_tile_pipe_hooks *hooks) {
  if constexpr (complete<M>(0)) {
    auto *saved = static_cast<unsigned char *>(hooks->core_memory(sizeof(M), alignof(M), &destroy<M>));
    if (saved == nullptr) return;
    auto *live = reinterpret_cast<unsigned char *>(&M::Instance());
    for (unsigned long i = 0; i < sizeof(M); ++i) {
      const unsigned char b = live[i];
      live[i] = saved[i];
      saved[i] = b;
    }
  }
}
// For the length of a pipe wait: out on entry, back on exit (after a resume, or when the wait
// stops the kernel before suspending).
struct TileMemoryAway {
  const pto_sim_tile_pipe_hooks *hooks;
  explicit TileMemoryAway(const pto_sim_tile_pipe_hooks *h) : hooks(h) { swap_tile_memory(hooks); }
  ~TileMemoryAway() { swap_tile_memory(hooks); }
  TileMemoryAway(const TileMemoryAway &) = delete;
  TileMemoryAway &operator=(const TileMemoryAway &) = delete;
};
}  // namespace pto_sim_hooks_detail

// Needs C++ exceptions, as PTO-ISA's CPU simulation itself does (it throws; a tile kernel built
// with -fno-exceptions does not compile).
extern "C" {

// The sim's table, or null before the sim bound this binary. Hidden: each binary its own.
__attribute__((weak, visibility("hidden"))) const pto_sim_tile_pipe_hooks *pto_sim_tile_pipes = 0;

__attribute__((weak, visibility("default"))) void pto_sim_bind_tile_pipes(
    const pto_sim_tile_pipe_hooks *hooks) {
  __atomic_store_n(&pto_sim_tile_pipes, hooks, __ATOMIC_RELEASE);
}

__attribute__((weak, visibility("default"))) void *pto_sim_get_pipe_shared_state(__UINT64_TYPE__ pipe_key,
                                                                                 __SIZE_TYPE__ size) {
  const pto_sim_tile_pipe_hooks *hooks = __atomic_load_n(&pto_sim_tile_pipes, __ATOMIC_ACQUIRE);
  void *state = hooks != 0 ? hooks->state(pipe_key, size) : 0;
  if (state == 0) throw pto::KernelStop{pto_unsupported_status(PTO_UNSUPPORTED_TPIPE)};
  return state;
}

// The calling core's lane among its cluster's AIV cores (0 on an AIC core, and in a binary the sim
// has not bound): how the CPU simulation's pipes tell a slot's two consumers, or producers, apart
// (include/pto_sim_isa/pto/cpu/TPush.hpp points PTO-ISA's cpu_pipe helpers here).
__attribute__((weak, visibility("hidden"))) unsigned pto_sim_pipe_lane(void) {
  const pto_sim_tile_pipe_hooks *hooks = __atomic_load_n(&pto_sim_tile_pipes, __ATOMIC_ACQUIRE);
  return hooks != 0 ? hooks->subblock() : 0u;
}

// What PTO-ISA's get_subblockid() returns: the core's sub-block id register, as the chip reads it
// under the reference runtime's dispatch. On a2a3 that dispatch never programs the register, and
// it reads 0 on both AIV lanes of every cluster (hw-native-sys/simpler at 6ebaf7715,
// docs/aicore-kernel-programming.md section 3, its issue 900). So on the chip, and here, a kernel
// that splits work by get_subblockid() has both lanes do lane 0's share, and PTO-ISA's pipes add
// no lane offset of their own to a slot's address (TPush_gm, popTileFromGMFiFo): an a2a3 kernel
// adds it itself (setEntryOffset from get_sub_block_id(args)), as the reference suite's
// spmd_paged_attention does. On a5 the register reads the lane.
__attribute__((weak, visibility("default"))) unsigned pto_sim_get_subblock_id(void) {
#if defined(PTO_CHIP_ARCH_A2A3)
  return 0u;
#else
  return pto_sim_pipe_lane();
#endif
}

// Between two looks of a TWAIT at its signals (include/pto_sim_isa/pto/cpu/comm/TWait.hpp).
// Unbound (a binary used on its own), an OS-thread yield: nothing can stop the wait there.
__attribute__((weak, visibility("hidden"))) void pto_sim_signal_pause(const void *signal, int value, int cmp,
                                                                      int want, unsigned long long polls) {
  const pto_sim_tile_pipe_hooks *hooks = __atomic_load_n(&pto_sim_tile_pipes, __ATOMIC_ACQUIRE);
  if (hooks != 0 && hooks->signal_wait != 0) {
    const pto_sim_hooks_detail::TileMemoryAway away(hooks);
    hooks->signal_wait(signal, value, cmp, want, polls);
  } else {
    __real_sched_yield();
  }
}

// A comm instruction's access to a window of a chip on another host (PTO_SIM_IS_REMOTE, the
// sim's comm instructions in include/pto_sim_isa/pto/cpu/comm/): served by the host's L4 worker
// through the sim's table, or the kernel stops (NOT_SUPPORTED when nothing serves it).
__attribute__((weak, visibility("hidden"))) void pto_sim_remote(int op, int dtype, __UINT64_TYPE__ remote,
                                                                void *local, __UINT64_TYPE__ nbytes,
                                                                __INT32_TYPE__ value) {
  const pto_sim_tile_pipe_hooks *hooks = __atomic_load_n(&pto_sim_tile_pipes, __ATOMIC_ACQUIRE);
  if (hooks == 0 || hooks->remote == 0)
    throw pto::KernelStop{pto_unsupported_status(PTO_UNSUPPORTED_REMOTE_WINDOW)};
  const pto_sim_remote_access access = {op, dtype, remote, local, nbytes, value};
  const __INT32_TYPE__ status = hooks->remote(&access);
  if (status != 0) throw pto::KernelStop{status};
}

// std::condition_variable::wait(std::unique_lock<std::mutex>&), notify_one() and notify_all(),
// by their mangled names: --wrap sends the binary's calls here and names the library's __real_.
void __real__ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE(void *cv, void *lock);
void __real__ZNSt18condition_variable10notify_oneEv(void *cv);
void __real__ZNSt18condition_variable10notify_allEv(void *cv);

__attribute__((weak, visibility("hidden"))) void
__wrap__ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE(void *cv, void *lock) {
  const pto_sim_tile_pipe_hooks *hooks = __atomic_load_n(&pto_sim_tile_pipes, __ATOMIC_ACQUIRE);
  if (hooks != 0) {
    const pto_sim_hooks_detail::TileMemoryAway away(hooks);
    hooks->wait(cv, lock);
  } else {
    __real__ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE(cv, lock);
  }
}

__attribute__((weak, visibility("hidden"))) void __wrap__ZNSt18condition_variable10notify_oneEv(void *cv) {
  const pto_sim_tile_pipe_hooks *hooks = __atomic_load_n(&pto_sim_tile_pipes, __ATOMIC_ACQUIRE);
  if (hooks != 0) hooks->notify(cv);
  __real__ZNSt18condition_variable10notify_oneEv(cv);
}

__attribute__((weak, visibility("hidden"))) void __wrap__ZNSt18condition_variable10notify_allEv(void *cv) {
  const pto_sim_tile_pipe_hooks *hooks = __atomic_load_n(&pto_sim_tile_pipes, __ATOMIC_ACQUIRE);
  if (hooks != 0) hooks->notify(cv);
  __real__ZNSt18condition_variable10notify_allEv(cv);
}

}  // extern "C"
#endif  // __cplusplus

#endif  // PTO_TILE_SIM_HOOKS_H
