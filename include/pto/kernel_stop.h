/* include/pto/kernel_stop.h — how a sim hook stops a kernel: pto::KernelStop and the statuses it carries.
 *
 * Some PTO-ISA instructions compile for the sim but cannot work in every place a kernel may
 * run: their CPU implementation would wait for a peer nothing connects, so the kernel would
 * block its core for good (a hung run, then a worker that cannot run anything). For those, tile
 * kernels carry hooks (include/pto_tile_shim/pto_tile_sim_hooks.h) that PTO-ISA calls before it
 * would wait: a hook throws pto::KernelStop with a task status, the core's platform_call_kernel
 * catches it, and the task fails with that status. With one of the statuses below the host
 * reports the run as NOT_SUPPORTED naming the feature, the task and its kernel
 * (include/pto/unsupported_feature.h); with a MIX status (pto/mix_sync.h: a pipe wait no part
 * can end) as a failed task. Either way the worker stays usable.
 *
 * Statuses: -(0x4E53 << 16 | feature). Kernels must not pass codes of that form to pto::fail.
 * This header includes nothing (builtin types only): it is force-included into every tile
 * kernel, which must not see headers it did not include itself. */
#ifndef PTO_KERNEL_STOP_H
#define PTO_KERNEL_STOP_H

enum pto_unsupported_feature {
  /* PTO-ISA's cross-core pipes (TPUSH / TPOP / TFREE on a TPipe, pto/cpu/TPush.hpp) in a
   * binary the sim did not bind to a core (pto_tile_sim_hooks.h). */
  PTO_UNSUPPORTED_TPIPE = 1,
  /* A comm instruction on a window of a chip on another host (include/pto/sim_tile_pipes.h,
   * PTO_SIM_IS_REMOTE) where nothing serves such windows: no L4 worker in the process (a chip
   * process, or a kernel given such an address outside an L4 run). */
  PTO_UNSUPPORTED_REMOTE_WINDOW = 2,
};
#define PTO_UNSUPPORTED_STATUS_TAG 0x4E53

static inline __INT32_TYPE__ pto_unsupported_status(unsigned feature) {
  return -(__INT32_TYPE__)(((unsigned)PTO_UNSUPPORTED_STATUS_TAG << 16) | (feature & 0xFFFFu));
}

/* A TWAIT (PTO-ISA's comm instructions, include/pto_sim_isa/pto/cpu/comm/TWait.hpp) stopped
 * because its device stopped the run (time-out, cancel, a failed peer): the run's own error
 * says why, and the report names the signal. */
#define PTO_COMM_WAIT_STATUS_TAG 0x4357
static inline __INT32_TYPE__ pto_comm_wait_stopped_status(void) {
  return -(__INT32_TYPE__)((unsigned)PTO_COMM_WAIT_STATUS_TAG << 16);
}

/* An access to a window of a chip on another host failed: `why` is one of the reasons below.
 * The L4 worker's log (stderr) has the details: the address, the domain and the MPI error. */
#define PTO_COMM_REMOTE_STATUS_TAG 0x4352
enum pto_comm_remote_failure {
  PTO_COMM_REMOTE_NO_DOMAIN = 1, /* the address is in no live domain of this worker */
  PTO_COMM_REMOTE_OUT_OF_WINDOW, /* the access runs past the end of the rank's window */
  PTO_COMM_REMOTE_BAD_TYPE,      /* an atomic add of an element type MPI cannot add */
  PTO_COMM_REMOTE_MPI_ERROR      /* the MPI call failed */
};
static inline __INT32_TYPE__ pto_comm_remote_status(unsigned why) {
  return -(__INT32_TYPE__)(((unsigned)PTO_COMM_REMOTE_STATUS_TAG << 16) | (why & 0xFFFFu));
}

#ifdef __cplusplus
namespace pto {
/* Thrown by a sim hook compiled into a kernel to stop it; caught by the core that called the
 * kernel (platform_call_kernel), which fails the task with `status`. Kernels built by another
 * compiler than the runtime agree on it: the C++ runtime matches a caught type by its mangled
 * name. */
struct KernelStop {
  __INT32_TYPE__ status;
};
}  // namespace pto
#endif /* __cplusplus */

#endif /* PTO_KERNEL_STOP_H */
