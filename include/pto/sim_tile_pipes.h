/* include/pto/sim_tile_pipes.h — how a tile kernel's PTO-ISA pipes reach the sim (types only).
 *
 * PTO-ISA's CPU simulation of TPUSH/TPOP/TFREE (pto/cpu/TPush.hpp) keeps each pipe's ring in a
 * SharedState it asks for through pto_sim_get_pipe_shared_state, learns the AIV lane from
 * pto_sim_get_subblock_id, and waits on a std::condition_variable in it. Every sim tile kernel
 * carries those two functions and wrappers of condition_variable's wait and notify calls
 * (include/pto_tile_shim/pto_tile_sim_hooks.h, linked with -Wl,--wrap); they forward to the
 * table below, which the sim hands the kernel right after loading it (pto_sim_bind_tile_pipes).
 * With it, a pipe's state is its cluster's, and a wait suspends the core (the fiber), never the
 * OS thread, and fails the task when no other part of its MIX task can end it
 * (docs/design/mix_sync.md, "PTO-ISA's pipes").
 *
 * PTO-ISA's CPU simulation keeps a core's tile memory (UB, L1, L0A/B/C: pto/cpu/NPUMemoryModel.hpp)
 * in a thread_local object, one per OS thread. The sim runs many cores on one OS thread, one
 * kernel after the other, which is the same as long as a kernel never stops half-way. A kernel
 * waiting on a pipe does: while it is suspended, other cores' kernels run on its OS thread and
 * would use the same memory. So the thread's object moves to the core's place (core_memory)
 * while the kernel waits and back when it goes on, on the same OS thread: the sim resumes it
 * there, since PTO-ISA's code may keep the thread_local's address across the wait. This header includes
 * nothing: the hooks header that includes it is force-included into kernels. */
#ifndef PTO_SIM_TILE_PIPES_H
#define PTO_SIM_TILE_PIPES_H

#ifdef __cplusplus
extern "C" {
#endif

/* Windows of chips on other hosts (docs/design/comm_domains.md, "Across hosts"). A kernel sees
 * such a window at an address no load can reach: bits 63..62 are 01, which no x86-64 or AArch64
 * user address has, so a plain load or store of one faults. PTO-ISA's comm instructions on the
 * sim (include/pto_sim_isa/pto/cpu/comm/) test for it and hand the access to the table's
 * `remote`, which the host's L4 worker serves with MPI one-sided operations. */
#define PTO_SIM_REMOTE_TAG 0x4000000000000000ull
#define PTO_SIM_IS_REMOTE(addr) ((((__UINT64_TYPE__)(addr)) >> 62) == 1u)

enum pto_sim_remote_op {
  PTO_SIM_REMOTE_PUT = 1,        /* nbytes from local to remote */
  PTO_SIM_REMOTE_GET = 2,        /* nbytes from remote to local */
  PTO_SIM_REMOTE_ADD = 3,        /* remote[i] += local[i], elements of `dtype` (TPUT AtomicAdd) */
  PTO_SIM_REMOTE_NOTIFY_ADD = 4, /* the int32 at remote += value, atomically */
  PTO_SIM_REMOTE_NOTIFY_SET = 5, /* the int32 at remote = value, atomically */
  PTO_SIM_REMOTE_LOAD32 = 6,     /* *(int32 *)local = the int32 at remote, atomically */
  PTO_SIM_REMOTE_FLUSH = 7,      /* the puts and gets before are complete at both ends */
  PTO_SIM_REMOTE_PROGRESS = 8    /* a TWAIT looked at a signal in vain: let the transport apply
                                  * what peers sent (only `op` is set; the sim calls it itself);
                                  * returns 1 while a window is open, else 0 */
};
/* Element kinds of PTO_SIM_REMOTE_ADD. */
enum pto_sim_remote_dtype {
  PTO_SIM_REMOTE_F32 = 1,
  PTO_SIM_REMOTE_F64,
  PTO_SIM_REMOTE_I8,
  PTO_SIM_REMOTE_I16,
  PTO_SIM_REMOTE_I32,
  PTO_SIM_REMOTE_I64,
  PTO_SIM_REMOTE_U8,
  PTO_SIM_REMOTE_U16,
  PTO_SIM_REMOTE_U32,
  PTO_SIM_REMOTE_U64
};
typedef struct pto_sim_remote_access {
  int op;                 /* pto_sim_remote_op */
  int dtype;              /* PTO_SIM_REMOTE_ADD: pto_sim_remote_dtype; else 0 */
  __UINT64_TYPE__ remote; /* the remote address (PTO_SIM_IS_REMOTE); FLUSH: any of the domain's */
  void *local;
  __UINT64_TYPE__ nbytes;
  __INT32_TYPE__ value; /* NOTIFY_ADD, NOTIFY_SET */
} pto_sim_remote_access;

/* Who serves `remote`: the sim's host program (src/platform/sim/tile_pipes_sim.cpp) exports
 * pto_sim_bind_remote_windows, and the chip worker that loads it binds a getter
 * (src/worker/remote_windows.h) that returns the L4 worker's server (src/l4/comm_domain_l4.cpp)
 * or null: nobody, and a remote access stops its kernel as not supported. */
typedef __INT32_TYPE__ (*pto_sim_remote_fn)(const pto_sim_remote_access *access);
typedef pto_sim_remote_fn (*pto_sim_remote_server)(void);
#define PTO_SIM_BIND_REMOTE_WINDOWS_SYMBOL "pto_sim_bind_remote_windows"

typedef struct pto_sim_tile_pipe_hooks {
  /* The SharedState storage of pipe `pipe_key` (PTO-ISA's key: FlagID, direction, slot count,
   * local slot count, slot size) in the calling core's cluster: `size` zeroed bytes on first
   * use, then the same until the device's next run. Null when the caller is not a core. */
  void *(*state)(__UINT64_TYPE__ pipe_key, __SIZE_TYPE__ size);
  /* The calling core's lane among its cluster's AIV cores (0 on an AIC core). */
  unsigned (*subblock)(void);
  /* condition_variable::wait(lock) on `cv` (a pipe's, in state above): returns when the caller
   * should check its condition again, or stops the kernel (pto::KernelStop) when the wait can
   * never end. `lock` is the caller's std::unique_lock<std::mutex>, held on entry and return. */
  void (*wait)(void *cv, void *lock);
  /* Before condition_variable::notify_one/notify_all on `cv`: the kernel changed a pipe. */
  void (*notify)(void *cv);
  /* The calling core's place for PTO-ISA's tile memory while its kernel waits: `size` bytes
   * aligned to `align`, zeroed on first use, then the same for the core's life; `destroy` ends
   * the object it then holds when the device shuts down. Null when the caller is not a core (or
   * asks for another size than before). */
  void *(*core_memory)(__SIZE_TYPE__ size, __SIZE_TYPE__ align, void (*destroy)(void *object));
  /* A TWAIT (include/pto_sim_isa/pto/cpu/comm/TWait.hpp) found `signal` = `value`, not yet
   * `cmp` (PTO-ISA's WaitCmp: EQ NE GT GE LT LE = 0..5) `want`, on its look number `polls`:
   * suspends the calling core a while (every other runnable core goes first) and returns for it
   * to look again, or stops the kernel (pto::KernelStop) once the device stops its run. Called
   * with the kernel's tile memory moved out (core_memory). */
  void (*signal_wait)(const void *signal, int value, int cmp, int want, unsigned long long polls);
  /* A comm instruction's access to a window of a chip on another host (an address of an L4
   * communication domain, PTO_SIM_IS_REMOTE): 0, or the status to stop the kernel with. */
  __INT32_TYPE__ (*remote)(const struct pto_sim_remote_access *access);
} pto_sim_tile_pipe_hooks;

#define PTO_SIM_BIND_TILE_PIPES_SYMBOL "pto_sim_bind_tile_pipes"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PTO_SIM_TILE_PIPES_H */
