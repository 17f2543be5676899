// bench/common/grid_hbg.h — the host_build_graph orchestration of a grid workload (grid.h).
//
// Compiled into the orchestrations (PTO_BENCH_ORCHESTRATION) of chain, stencil_1d and nearest:
// task (s, i) writes cell i of row out_row(s), reads its neighbourhood lo(i)..hi(i) of row
// in_row(s), and depends on the tasks of step s-1 that wrote that neighbourhood.
#ifndef PTO_BENCH_GRID_HBG_H
#define PTO_BENCH_GRID_HBG_H

#include <vector>

#include "cell_tensor.h"
#include "grid.h"
#include "kernel_ids.h"
#include "pto/host_graph.h"

namespace bench {

// Every task of `g`, in step order, with add_dependency from its producers.
inline void add_grid_tasks(pto::GraphBuilder &graph, const pto::Tensor &cells, const GridShape &g,
                           int64_t grain) {
  std::vector<pto::TaskId> prev(static_cast<size_t>(g.width)), cur(prev.size());
  for (int64_t s = 0; s < g.steps; ++s) {
    for (int64_t i = 0; i < g.width; ++i) {
      pto::TaskArg a[3 + kMaxInputs];
      uint32_t n = 0;
      a[n++] = pto::TaskArg::of(cell(cells, g.out_row(s) + i));
      a[n++] = pto::TaskArg::of_i64(static_cast<int64_t>(salt_of(s, i)));
      a[n++] = pto::TaskArg::of_i64(grain);
      for (int64_t j = g.lo(i); j <= g.hi(i); ++j) a[n++] = pto::TaskArg::of(cell(cells, g.in_row(s) + j));
      cur[i] = graph.add_task(kCellKernel, PTO_CORE_AIV, a, n);
      if (s == 0) continue;
      for (int64_t j = g.lo(i); j <= g.hi(i); ++j) graph.add_dependency(prev[j], cur[i]);
    }
    prev.swap(cur);
  }
}

}  // namespace bench
#endif  // PTO_BENCH_GRID_HBG_H
