// bench/spmd/workload.h — SPMD: a chain of `steps` tasks, each `width` blocks of one kernel.
//
// The grid pattern of common/grid.h with radix 1: block i of task s computes point i of step s
// (reads cell i of row s % 2, writes cell i of row (s + 1) % 2), so one SPMD task is a whole
// step, and task s + 1 waits for every block of task s (it reads the row they wrote and writes
// the row they read). A task counts as `width` tasks: ns per task is ns per block, to compare
// with the chain workload of width * steps single-block tasks. `--sync-start` makes every task
// require_sync_start (all its blocks start together; width must fit the run's AIV cores).
// The peers run each step as one parallel loop (oneTBB parallel_for, OpenMP parallel for).
#ifndef PTO_BENCH_SPMD_WORKLOAD_H
#define PTO_BENCH_SPMD_WORKLOAD_H

#include "grid.h"

namespace bench {

inline GridShape spmd_shape(int64_t width, int64_t steps) {
  GridShape g;
  g.width = width;
  g.steps = steps;
  g.radix = 1;
  return g;
}

}  // namespace bench

#ifdef PTO_BENCH_ORCHESTRATION
#include "kernel_ids.h"
#include "pto/orchestration.h"

// One orchestration for both runtimes (host_build_graph runs it on the host before launch).
// Arguments: the cells tensor (two rows); scalars width, steps, grain, sync_start.
PTO_DEVICE_ORCHESTRATION(orch) {
  const pto::TensorView cells = orch.tensor(0);
  const bench::GridShape g = bench::spmd_shape(orch.scalar(0), orch.scalar(1));
  const int64_t grain = orch.scalar(2);
  pto::Launch launch;
  launch.block_num = static_cast<uint32_t>(g.width);
  launch.sync_start = orch.scalar(3) != 0;
  const int64_t width = g.width;
  for (int64_t s = 0; s < g.steps; ++s) {
    const int64_t in_at = g.in_row(s), out_at = g.out_row(s);
    const pto::Arg a[4] = {pto::Arg::out_existing(cells.slice(&out_at, &width)),
                           pto::Arg::in(cells.slice(&in_at, &width)), pto::Arg::i64(s), pto::Arg::i64(grain)};
    orch.submit_task(bench::kBlockKernel, PTO_CORE_AIV, a, 4, nullptr, 0, &launch);
  }
}

#else
#include <cstring>

#include "harness.h"

namespace bench {

// --sync-start (the workload's own option; the rest are harness.h's).
inline bool take_sync_start(int *argc, char **argv) {
  bool found = false;
  int k = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--sync-start") == 0)
      found = true;
    else
      argv[k++] = argv[i];
  }
  *argc = k;
  return found;
}

inline Options spmd_defaults(const char *runtime) {
  Options o;
  o.workload = "spmd";
  o.runtime = runtime;
  o.width = 24;
  o.steps = 1000;
  o.radix = 1;
  return o;
}

inline CellProblem spmd_problem(const Options &o) {
  return grid_problem(spmd_shape(o.width, o.steps));
}

}  // namespace bench
#endif  // PTO_BENCH_ORCHESTRATION
#endif  // PTO_BENCH_SPMD_WORKLOAD_H
