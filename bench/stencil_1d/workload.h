// bench/stencil_1d/workload.h — Task Bench's stencil_1d: point i of step s reads i-1, i, i+1 of step s-1.
//
// The grid pattern of common/grid.h with radix 3 (double-buffered rows, so writes also wait
// for the previous step's readers).
#ifndef PTO_BENCH_STENCIL_1D_WORKLOAD_H
#define PTO_BENCH_STENCIL_1D_WORKLOAD_H

#include "grid.h"

namespace bench {

inline GridShape stencil_shape(int64_t width, int64_t steps) {
  GridShape g;
  g.width = width;
  g.steps = steps;
  g.radix = 3;
  return g;
}

}  // namespace bench

#ifndef PTO_BENCH_ORCHESTRATION
#include "harness.h"

namespace bench {

inline Options stencil_defaults(const char *runtime) {
  Options o;
  o.workload = "stencil_1d";
  o.runtime = runtime;
  o.width = 4;
  o.steps = 250;
  o.radix = 3;
  return o;
}

inline CellProblem stencil_problem(const Options &o) {
  return grid_problem(stencil_shape(o.width, o.steps));
}

}  // namespace bench
#endif  // PTO_BENCH_ORCHESTRATION
#endif  // PTO_BENCH_STENCIL_1D_WORKLOAD_H
