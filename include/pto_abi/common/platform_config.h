// include/pto_abi/common/platform_config.h — the reference implementation's chip parameters,
// for kernels and orchestrations that include them (its sync-start early-dispatch tests).
//
// The counts come from the platform the KernelCompiler compiles for (PTO_CHIP_* defines, from
// the geometry table src/core/geometry.h); the system counter frequency is the chip's. Only
// what a program may read is here: the reference's profiling buffer sizes and time-outs are
// its runtime's, not ours.
#ifndef PTO_ABI_COMMON_PLATFORM_CONFIG_H
#define PTO_ABI_COMMON_PLATFORM_CONFIG_H

#include <stdint.h>

#if !defined(PTO_CHIP_CLUSTERS) || !defined(PTO_CHIP_AIC_PER_CLUSTER) || !defined(PTO_CHIP_AIV_PER_CLUSTER)
#error "common/platform_config.h: compile with pto::KernelCompiler, which defines the PTO_CHIP_* parameters"
#endif

constexpr int PLATFORM_MAX_BLOCKDIM = PTO_CHIP_CLUSTERS;
constexpr int PLATFORM_AIC_CORES_PER_BLOCKDIM = PTO_CHIP_AIC_PER_CLUSTER;
constexpr int PLATFORM_AIV_CORES_PER_BLOCKDIM = PTO_CHIP_AIV_PER_CLUSTER;
constexpr int PLATFORM_CORES_PER_BLOCKDIM = PLATFORM_AIC_CORES_PER_BLOCKDIM + PLATFORM_AIV_CORES_PER_BLOCKDIM;
constexpr int PLATFORM_MAX_AICPU_THREADS = PTO_CHIP_MAX_AICPU_THREADS;
constexpr int PLATFORM_MAX_AIC_PER_THREAD = PLATFORM_MAX_BLOCKDIM * PLATFORM_AIC_CORES_PER_BLOCKDIM;
constexpr int PLATFORM_MAX_AIV_PER_THREAD = PLATFORM_MAX_BLOCKDIM * PLATFORM_AIV_CORES_PER_BLOCKDIM;
constexpr int PLATFORM_MAX_CORES_PER_THREAD = PLATFORM_MAX_AIC_PER_THREAD + PLATFORM_MAX_AIV_PER_THREAD;
constexpr int PLATFORM_MAX_CORES = PLATFORM_MAX_BLOCKDIM * PLATFORM_CORES_PER_BLOCKDIM;

// Ticks a second of the chip's system counter (get_sys_cnt): 50 MHz on a2a3, 1 GHz on a5.
#if defined(PTO_CHIP_ARCH_A5)
constexpr uint64_t PLATFORM_PROF_SYS_CNT_FREQ = 1000000000;
#else
constexpr uint64_t PLATFORM_PROF_SYS_CNT_FREQ = 50000000;
#endif

#endif  // PTO_ABI_COMMON_PLATFORM_CONFIG_H
