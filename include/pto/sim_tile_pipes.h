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
} pto_sim_tile_pipe_hooks;

#define PTO_SIM_BIND_TILE_PIPES_SYMBOL "pto_sim_bind_tile_pipes"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PTO_SIM_TILE_PIPES_H */
