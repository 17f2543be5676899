// bench/fanout_fanin/pto_hbg.cpp — fan-out/fan-in on host_build_graph: source -> middles -> sink -> source.
//
// Two programs in one file: with PTO_BENCH_ORCHESTRATION (KernelCompiler, at run time) the
// orchestration that builds the graph on the host; otherwise the host program measuring it.
#include "kernel_ids.h"
#include "workload.h"

#ifdef PTO_BENCH_ORCHESTRATION
#include "cell_tensor.h"

using bench::cell;

// Arguments: the cells tensor (acc, root, mids); scalars width, steps, grain.
PTO_ORCHESTRATION(graph, args) {
  using bench::kAcc;
  using bench::kMid;
  using bench::kRoot;
  using pto::TaskArg;
  const pto::Tensor c = args.tensor(0);
  const int64_t width = args.scalar(0), steps = args.scalar(1), grain = args.scalar(2);
  pto::TaskId sink = pto::kInvalidTask;
  pto::TaskId mids[bench::kMaxInputs];
  for (int64_t s = 0; s < steps; ++s) {
    const TaskArg src[4] = {TaskArg::of(cell(c, kRoot)),
                            TaskArg::of_i64(static_cast<int64_t>(bench::salt_of(s, 0))),
                            TaskArg::of_i64(grain), TaskArg::of(cell(c, kAcc))};
    const pto::TaskId source = graph.add_task(bench::kCellKernel, PTO_CORE_AIV, src);
    if (sink != pto::kInvalidTask) graph.add_dependency(sink, source);
    for (int64_t j = 0; j < width; ++j) {
      const TaskArg mid[4] = {TaskArg::of(cell(c, kMid + j)),
                              TaskArg::of_i64(static_cast<int64_t>(bench::salt_of(s, 1 + j))),
                              TaskArg::of_i64(grain), TaskArg::of(cell(c, kRoot))};
      mids[j] = graph.add_task(bench::kCellKernel, PTO_CORE_AIV, mid);
      graph.add_dependency(source, mids[j]);
    }
    TaskArg snk[3 + bench::kMaxInputs];
    uint32_t n = 0;
    snk[n++] = TaskArg::of(cell(c, kAcc));
    snk[n++] = TaskArg::of_i64(static_cast<int64_t>(bench::salt_of(s, 1 + width)));
    snk[n++] = TaskArg::of_i64(grain);
    for (int64_t j = 0; j < width; ++j) snk[n++] = TaskArg::of(cell(c, kMid + j));
    sink = graph.add_task(bench::kCellKernel, PTO_CORE_AIV, snk, n);
    for (int64_t j = 0; j < width; ++j) graph.add_dependency(mids[j], sink);
  }
}

#else
#include "pto_harness.h"

int main(int argc, char **argv) {
  return bench::pto_main([&] {
    const bench::Options o = bench::parse_options(argc, argv, bench::fanout_fanin_defaults("pto_hbg"));
    const bench::CellProblem p = bench::fanout_fanin_problem(o);
    bench::PtoBench pto(o, "host_build_graph", BENCH_SOURCE,
                        {{bench::kCellKernel, "cell_task.cpp", PTO_CORE_AIV}});
    return bench::measure_cells(
        o, p,
        [&](uint64_t *c, int64_t grain, const bench::Geometry &geo) {
          return pto.run(bench::cell_args(c, p.cells, {o.width, o.steps, grain}), geo, p.tasks,
                         static_cast<uint32_t>(3 + o.width));
        },
        pto.geometries());
  });
}
#endif
