// bench/nearest/pto_hbg.cpp — nearest on host_build_graph: add_dependency from the neighbourhood at s-1.
//
// Two programs in one file: with PTO_BENCH_ORCHESTRATION (KernelCompiler, at run time) the
// orchestration that builds the graph on the host; otherwise the host program measuring it.
#include "kernel_ids.h"
#include "workload.h"

#ifdef PTO_BENCH_ORCHESTRATION
#include "grid_hbg.h"

// Arguments: the cells tensor (two rows); scalars width, steps, radix, grain.
PTO_ORCHESTRATION(graph, args) {
  bench::add_grid_tasks(graph, args.tensor(0),
                        bench::nearest_shape(args.scalar(0), args.scalar(1), args.scalar(2)), args.scalar(3));
}

#else
#include "pto_harness.h"

int main(int argc, char **argv) {
  return bench::pto_main([&] {
    const bench::Options o = bench::parse_options(argc, argv, bench::nearest_defaults("pto_hbg"));
    const bench::CellProblem p = bench::nearest_problem(o);
    bench::PtoBench pto(o, "host_build_graph", BENCH_SOURCE,
                        {{bench::kCellKernel, "cell_task.cpp", PTO_CORE_AIV}});
    return bench::measure_cells(
        o, p,
        [&](uint64_t *c, int64_t grain, const bench::Geometry &geo) {
          return pto.run(bench::cell_args(c, p.cells, {o.width, o.steps, o.radix, grain}), geo, p.tasks,
                         static_cast<uint32_t>(3 + o.radix));
        },
        pto.geometries());
  });
}
#endif
