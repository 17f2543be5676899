// bench/spmd/tbb.cpp — spmd on oneTBB: each step one parallel_for over its blocks, steps in order.
#include <tbb/parallel_for.h>

#include "tbb_session.h"
#include "workload.h"

int main(int argc, char **argv) {
  bench::take_sync_start(&argc, argv);  // a parallel_for's iterations start when a thread takes them
  const bench::Options o = bench::parse_options(argc, argv, bench::spmd_defaults("tbb"));
  const bench::GridShape g = bench::spmd_shape(o.width, o.steps);
  bench::TbbSession session(o.threads);
  return bench::measure_cells(o, bench::spmd_problem(o), [&](uint64_t *c, int64_t grain, const bench::Geometry &) {
    session.run([&] {
      for (int64_t s = 0; s < g.steps; ++s)
        tbb::parallel_for(int64_t{0}, g.width, [&](int64_t i) { bench::grid_task(g, c, s, i, grain); });
    });
    return bench::RunInfo{};
  });
}
