// bench/common/cell_tensor.h — one cell of a workload's cells tensor as a tensor of its own
// (the host_build_graph orchestrations name each task's cells this way).
#ifndef PTO_BENCH_CELL_TENSOR_H
#define PTO_BENCH_CELL_TENSOR_H

#include <stdint.h>

#include "pto/host_graph.h"

namespace bench {

// Cell k of `cells` as a one-element tensor.
inline pto::Tensor cell(const pto::Tensor &cells, int64_t k) {
  pto::Tensor t = cells;
  t.addr += static_cast<uint64_t>(k) * sizeof(uint64_t);
  t.nbytes = sizeof(uint64_t);
  t.nelems = 1;
  t.shape[0] = 1;
  return t;
}

}  // namespace bench
#endif  // PTO_BENCH_CELL_TENSOR_H
