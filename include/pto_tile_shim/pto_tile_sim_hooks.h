// include/pto_tile_shim/pto_tile_sim_hooks.h — PTO-ISA CPU-sim hooks compiled into every tile kernel.
//
// KernelCompiler force-includes this header (-include) in every sim tile kernel; cost-model
// twins do not get it. It defines functions only and includes nothing but pto/kernel_stop.h and
// pto/sim_kernel_yield.h (builtin types only), so a kernel sees no header it did not include
// itself.
//
// TPUSH/TPOP cross-core pipes (pto/cpu/TPush.hpp). Before a TPUSH, TPOP or TFREE touches a
// pipe, PTO-ISA looks up the pipe's state shared by the producing and consuming cores: through
// hooks a runtime may provide (cpu_sim::injected_pipe_shared_state_hook, then
// dlsym(RTLD_DEFAULT, "pto_sim_get_pipe_shared_state")), else in a static of the kernel's binary.
// This runtime provides no shared state, and an AIC kernel and its AIV kernels are separate
// binaries, so each side would get a private static: the consumer's TPOP waits on a
// std::condition_variable for a push it can never see, the producer's third TPUSH for room that
// never comes. Either blocks the simulator's OS thread, and every core fiber it runs, for good.
//
// So the lookup is where we stop the kernel. dlsym(RTLD_DEFAULT, ...) called from a kernel that
// was dlopen'd RTLD_LOCAL searches the global scope and then the kernel's own binary (glibc looks
// in the caller's scope), so the definition below is found. Why there and not at compile time:
// from the source we could only guess whether a pipe call is ever executed (one MIX source
// compiled for both sides has both under `if constexpr`); a check in the running kernel sees
// exactly the call that would hang, before it has taken a lock or touched any state. The hook
// throws pto::KernelStop; the core that called the kernel catches it (platform_call_kernel),
// which unwinds the kernel (running its destructors) and leaves the core ready for its next
// task, and fails the task with the status naming TPUSH/TPOP (pto/unsupported_feature.h). An
// implementation of the pipes would register injected_pipe_shared_state_hook, which PTO-ISA asks
// first, and this hook would no longer be reached. Weak, so a kernel may define its own.
#ifndef PTO_TILE_SIM_HOOKS_H
#define PTO_TILE_SIM_HOOKS_H

#include "pto/kernel_stop.h"
#include "pto/sim_kernel_yield.h"  // a kernel's sched_yield lets the other cores run

#ifdef __cplusplus
// Needs C++ exceptions, as PTO-ISA's CPU simulation itself does (it throws; a tile kernel built
// with -fno-exceptions does not compile).
extern "C" __attribute__((weak, visibility("default"), noreturn)) void *pto_sim_get_pipe_shared_state(
    __UINT64_TYPE__ pipe_key, __SIZE_TYPE__ size) {
  (void)pipe_key;
  (void)size;
  throw pto::KernelStop{pto_unsupported_status(PTO_UNSUPPORTED_TPIPE)};
}
#endif  // __cplusplus

#endif  // PTO_TILE_SIM_HOOKS_H
