/* include/pto/sim_kernel_yield.h — on the sim, a kernel's sched_yield() lets the other cores run.
 *
 * The sim runs every core as a fiber on a pool of OS threads as many as the CPUs, and nothing
 * preempts a fiber (docs/design/sim_execution.md). A kernel that spins until another core writes
 * something, or until a time has passed, and yields only its OS thread between two polls keeps
 * its worker all along: with 2 CPUs at most two such kernels run at once, and kernels that wait
 * for each other never finish. The reference's kernels spell that pause std::this_thread::yield()
 * on the CPU simulation (under PTO_CPUSTUB_HPP), which is sched_yield().
 *
 * So KernelCompiler force-includes this header in every binary it builds for the sim (kernels
 * and orchestrations; tile kernels through pto_tile_sim_hooks.h) and links them with
 * -Wl,--wrap=sched_yield: every call of sched_yield in the binary comes to __wrap_sched_yield
 * below. After loading the binary, the sim hands it its yield through pto_sim_bind_kernel_yield
 * (sim_device.cpp): on a fiber of the pool it suspends the fiber and every other runnable one
 * goes first; on an OS thread it is sched_yield. Until then, and in a binary used on its own,
 * __wrap_sched_yield is sched_yield. Weak, so several translation units may include it.
 *
 * This header includes nothing (builtin types only): it is force-included into kernels, which
 * must not see headers they did not include themselves. */
#ifndef PTO_SIM_KERNEL_YIELD_H
#define PTO_SIM_KERNEL_YIELD_H

#ifdef __cplusplus
extern "C" {
#endif

/* The C library's sched_yield, by the name --wrap gives it. */
int __real_sched_yield(void);

/* The sim's yield, or null before the sim bound this binary. Hidden: each binary its own. */
__attribute__((weak, visibility("hidden"))) int (*pto_sim_kernel_yield_fn)(void) = 0;

/* Called by the sim, through dlsym on this binary, right after loading it. */
__attribute__((weak, visibility("default"))) void pto_sim_bind_kernel_yield(int (*yield_fn)(void)) {
  __atomic_store_n(&pto_sim_kernel_yield_fn, yield_fn, __ATOMIC_RELEASE);
}

__attribute__((weak, visibility("hidden"))) int __wrap_sched_yield(void) {
  int (*yield_fn)(void) = __atomic_load_n(&pto_sim_kernel_yield_fn, __ATOMIC_ACQUIRE);
  return yield_fn != 0 ? yield_fn() : __real_sched_yield();
}

#ifdef __cplusplus
}
#endif

#endif /* PTO_SIM_KERNEL_YIELD_H */
