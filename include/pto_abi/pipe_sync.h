/* include/pto_abi/pipe_sync.h — pipe_sync(): wait for a tile kernel's last stores to finish.
 *
 * A tile kernel's final TSTORE leaves through its core's output pipe (MTE3 on an AIV core, FIX
 * on an AIC core); pipe_sync() makes the scalar pipe wait for it, so global memory holds the
 * results when the kernel returns. On the CPU simulation the flags are no-ops and stores are
 * synchronous, but kernels call it to stay correct on hardware. Include it after
 * <pto/pto-inst.hpp> and `using namespace pto;` (it uses set_flag, wait_flag and the PIPE_*
 * and EVENT_ID* names from PTO-ISA). KernelCompiler defines __DAV_VEC__ for AIV kernels and
 * __DAV_CUBE__ for AIC kernels, as the Ascend kernel compiler does. */
#ifndef PTO_ABI_PIPE_SYNC_H
#define PTO_ABI_PIPE_SYNC_H

#ifndef __aicore__
#define __aicore__
#endif

#if defined(__DAV_VEC__)
static __aicore__ inline void pipe_sync() {
  set_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
  wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
}
#elif defined(__DAV_CUBE__)
static __aicore__ inline void pipe_sync() {
  set_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
  wait_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
}
#else
#error "pipe_sync.h: compile the kernel for a core type (KernelCompiler defines __DAV_VEC__ or __DAV_CUBE__)"
#endif

#endif /* PTO_ABI_PIPE_SYNC_H */
