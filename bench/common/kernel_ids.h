// bench/common/kernel_ids.h — the func_ids the PTO benchmark binaries register their kernels under.
#ifndef PTO_BENCH_KERNEL_IDS_H
#define PTO_BENCH_KERNEL_IDS_H

#include <stdint.h>

namespace bench {

constexpr uint32_t kCellKernel = 0;  // kernels/cell_task.cpp, AIV
constexpr uint32_t kGemmKernel = 1;  // kernels/gemm_tile.cpp, AIC
constexpr uint32_t kBlockKernel = 2;  // kernels/cell_block.cpp, AIV, descriptor ABI (SPMD blocks)

}  // namespace bench
#endif  // PTO_BENCH_KERNEL_IDS_H
