// bench/spmd/serial.cpp — spmd, serial baseline: every block of every step in order on one thread.
#include "workload.h"

int main(int argc, char **argv) {
  bench::take_sync_start(&argc, argv);  // nothing starts together on one thread
  bench::Options o = bench::parse_options(argc, argv, bench::spmd_defaults("serial"));
  o.threads = 1;
  const bench::CellProblem p = bench::spmd_problem(o);
  return bench::measure_cells(o, p, [&](uint64_t *cells, int64_t grain, const bench::Geometry &) {
    p.serial(cells, grain);
    return bench::RunInfo{};
  });
}
