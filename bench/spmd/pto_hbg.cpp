// bench/spmd/pto_hbg.cpp — spmd on host_build_graph (the orchestration is workload.h's).
#include "workload.h"

#ifndef PTO_BENCH_ORCHESTRATION
#include "pto_harness.h"

int main(int argc, char **argv) {
  return bench::pto_main([&] {
    const bool sync_start = bench::take_sync_start(&argc, argv);
    const bench::Options o = bench::parse_options(argc, argv, bench::spmd_defaults("pto_hbg"));
    const bench::CellProblem p = bench::spmd_problem(o);
    bench::PtoBench pto(o, "host_build_graph", BENCH_SOURCE,
                        {{bench::kBlockKernel, "cell_block.cpp", PTO_CORE_AIV}});
    return bench::measure_cells(
        o, p,
        [&](uint64_t *c, int64_t grain, const bench::Geometry &geo) {
          bench::RunInfo info = pto.run(
              bench::cell_args(c, p.cells, {o.width, o.steps, grain, sync_start ? 1 : 0}), geo, o.steps, 4);
          // The runtime counts SPMD tasks; the workload counts their blocks.
          if (info.tasks_run == o.steps) info.tasks_run = p.tasks;
          return info;
        },
        pto.geometries());
  });
}
#endif
