// bench/chain/workload.h — the dependent chain: task s reads cell s % 2 and writes cell (s + 1) % 2.
//
// Width 1 of the grid pattern (common/grid.h): `steps` tasks, each waiting for the previous
// one. Measures the latency of one dependency: completion, release, dispatch.
#ifndef PTO_BENCH_CHAIN_WORKLOAD_H
#define PTO_BENCH_CHAIN_WORKLOAD_H

#include "grid.h"

namespace bench {

inline GridShape chain_shape(int64_t steps) {
  GridShape g;
  g.width = 1;
  g.steps = steps;
  g.radix = 1;
  return g;
}

}  // namespace bench

#ifndef PTO_BENCH_ORCHESTRATION
#include "harness.h"

namespace bench {

inline Options chain_defaults(const char *runtime) {
  Options o;
  o.workload = "chain";
  o.runtime = runtime;
  o.width = 1;
  o.steps = 1000;
  return o;
}

inline CellProblem chain_problem(const Options &o) {
  return grid_problem(chain_shape(o.steps));
}

}  // namespace bench
#endif  // PTO_BENCH_ORCHESTRATION
#endif  // PTO_BENCH_CHAIN_WORKLOAD_H
