// bench/common/grid.h — Task Bench's nearest-neighbour pattern on a double-buffered row of cells.
//
// `width` cells per step, two rows (ping-pong): the task of point i at step s reads row s % 2
// at the points of its neighbourhood and writes row (s + 1) % 2 at point i. The
// neighbourhood of i is [i - (radix - 1) / 2, i + radix / 2] clipped to [0, width), as in
// Task Bench. Reusing rows makes every runtime honour write-after-read too (a write at step
// s + 1 must wait for the step-s readers of the same cell); for a symmetric neighbourhood
// those readers are exactly the step's producers, so no edge is added by it.
// The shape is header-only and free of host code (the PTO orchestrations include it); the
// task and the serial reference are host-only.
#ifndef PTO_BENCH_GRID_H
#define PTO_BENCH_GRID_H

#include <stdint.h>

#include "task_body.h"

namespace bench {

struct GridShape {
  int64_t width = 1;
  int64_t steps = 1;
  int64_t radix = 3;

  int64_t tasks() const { return width * steps; }
  int64_t cells() const { return 2 * width; }
  // First cell of the row step s reads, and of the row it writes.
  int64_t in_row(int64_t s) const { return (s % 2) * width; }
  int64_t out_row(int64_t s) const { return ((s + 1) % 2) * width; }
  int64_t lo(int64_t i) const {
    const int64_t v = i - (radix - 1) / 2;
    return v < 0 ? 0 : v;
  }
  int64_t hi(int64_t i) const {  // inclusive
    const int64_t v = i + radix / 2;
    return v >= width ? width - 1 : v;
  }
  // The row holding the final values.
  int64_t final_row() const { return (steps % 2) * width; }
};

}  // namespace bench

#ifndef PTO_BENCH_ORCHESTRATION
#include "harness.h"
#include "host_kernels.h"

namespace bench {

// Initial state: row 0 holds initial_cell(i), row 1 zeros.
inline void grid_reset(const GridShape &g, uint64_t *cells) {
  for (int64_t i = 0; i < g.width; ++i) {
    cells[i] = initial_cell(i);
    cells[g.width + i] = 0;
  }
}

// The task of point i at step s, on cells laid out as above.
inline void grid_task(const GridShape &g, uint64_t *cells, int64_t s, int64_t i, int64_t grain) {
  const uint64_t *in[kMaxInputs];
  int n = 0;
  for (int64_t j = g.lo(i); j <= g.hi(i); ++j) in[n++] = &cells[g.in_row(s) + j];
  cells[g.out_row(s) + i] = cell_task_host(salt_of(s, i), grain, in, n);
}

// The serial reference: every task in step order.
inline void grid_serial(const GridShape &g, uint64_t *cells, int64_t grain) {
  for (int64_t s = 0; s < g.steps; ++s)
    for (int64_t i = 0; i < g.width; ++i) grid_task(g, cells, s, i, grain);
}

inline uint64_t grid_checksum(const GridShape &g, const uint64_t *cells) {
  return checksum(cells + g.final_row(), g.width);
}

// The harness's view of a grid workload (chain, stencil_1d, nearest, spmd): its size, its
// initial state, the serial reference and the checksum of the final row.
inline CellProblem grid_problem(const GridShape &g) {
  CellProblem p;
  p.tasks = g.tasks();
  p.cells = g.cells();
  p.reset = [g](uint64_t *c) { grid_reset(g, c); };
  p.serial = [g](uint64_t *c, int64_t grain) { grid_serial(g, c, grain); };
  p.checksum = [g](const uint64_t *c) { return grid_checksum(g, c); };
  return p;
}

}  // namespace bench
#endif  // PTO_BENCH_ORCHESTRATION
#endif  // PTO_BENCH_GRID_H
