// bench/stencil_1d/pto_hbg.cpp — stencil_1d on host_build_graph: add_dependency from (s-1, i-1..i+1).
//
// Two programs in one file: with PTO_BENCH_ORCHESTRATION (KernelCompiler, at run time) the
// orchestration that builds the graph on the host; otherwise the host program measuring it.
#include "kernel_ids.h"
#include "workload.h"

#ifdef PTO_BENCH_ORCHESTRATION
#include "grid_hbg.h"

// Arguments: the cells tensor (two rows); scalars width, steps, grain.
PTO_ORCHESTRATION(graph, args) {
  bench::add_grid_tasks(graph, args.tensor(0), bench::stencil_shape(args.scalar(0), args.scalar(1)),
                        args.scalar(2));
}

#else
#include "pto_harness.h"

int main(int argc, char **argv) {
  return bench::pto_main([&] {
    const bench::Options o = bench::parse_options(argc, argv, bench::stencil_defaults("pto_hbg"));
    const bench::CellProblem p = bench::stencil_problem(o);
    bench::PtoBench pto(o, "host_build_graph", BENCH_SOURCE,
                        {{bench::kCellKernel, "cell_task.cpp", PTO_CORE_AIV}});
    return bench::measure_cells(
        o, p,
        [&](uint64_t *c, int64_t grain, const bench::Geometry &geo) {
          return pto.run(bench::cell_args(c, p.cells, {o.width, o.steps, grain}), geo, p.tasks, 6);
        },
        pto.geometries());
  });
}
#endif
