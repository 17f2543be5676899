// bench/spmd/omp.cpp — spmd on OpenMP: each step one `parallel for` over its blocks (one team).
//
// Built with libgomp (omp_gomp) and LLVM libomp (omp_llvm).
#include <omp.h>

#include "workload.h"

#ifndef BENCH_OMP_NAME
#define BENCH_OMP_NAME "omp"
#endif

int main(int argc, char **argv) {
  bench::take_sync_start(&argc, argv);
  const bench::Options o = bench::parse_options(argc, argv, bench::spmd_defaults(BENCH_OMP_NAME));
  const bench::GridShape g = bench::spmd_shape(o.width, o.steps);
  return bench::measure_cells(o, bench::spmd_problem(o), [&](uint64_t *c, int64_t grain, const bench::Geometry &) {
    const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    for (int64_t s = 0; s < g.steps; ++s) {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < g.width; ++i) bench::grid_task(g, c, s, i, grain);
    }
    return bench::RunInfo{};
  });
}
