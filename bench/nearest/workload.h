// bench/nearest/workload.h — Task Bench's nearest: point i reads the `radix` points around i at s-1.
//
// The grid pattern of common/grid.h with a free radix (Task Bench's neighbourhood
// [i - (radix-1)/2, i + radix/2], clipped), on double-buffered rows.
#ifndef PTO_BENCH_NEAREST_WORKLOAD_H
#define PTO_BENCH_NEAREST_WORKLOAD_H

#include "grid.h"

namespace bench {

inline GridShape nearest_shape(int64_t width, int64_t steps, int64_t radix) {
  GridShape g;
  g.width = width;
  g.steps = steps;
  g.radix = radix;
  return g;
}

}  // namespace bench

#ifndef PTO_BENCH_ORCHESTRATION
#include <cstdio>
#include <cstdlib>

#include "harness.h"

namespace bench {

inline Options nearest_defaults(const char *runtime) {
  Options o;
  o.workload = "nearest";
  o.runtime = runtime;
  o.width = 4;
  o.steps = 250;
  o.radix = 5;
  return o;
}

inline CellProblem nearest_problem(const Options &o) {
  // An odd radix keeps the neighbourhood symmetric: then the readers a write must wait for
  // (write after read on the reused row) are its producers, and the explicit-edge runtimes
  // (TBB, host_build_graph), handed only read-after-write edges, stay correct.
  if (o.radix > kMaxInputs || o.radix % 2 == 0) {
    std::fprintf(stderr, "nearest: radix must be odd and at most %d (got %lld)\n", kMaxInputs,
                 static_cast<long long>(o.radix));
    std::exit(2);
  }
  return grid_problem(nearest_shape(o.width, o.steps, o.radix));
}

}  // namespace bench
#endif  // PTO_BENCH_ORCHESTRATION
#endif  // PTO_BENCH_NEAREST_WORKLOAD_H
