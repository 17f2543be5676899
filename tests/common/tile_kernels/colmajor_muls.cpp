// tests/common/tile_kernels/colmajor_muls.cpp — TMULS on a column-major [16 x 1] tile, and the
// TPUSH/TPOP consumer's setEntryOffset: two things a chip kernel does that the pinned PTO-ISA's
// CPU simulation refused to compile (include/pto_sim_isa/pto/cpu/TBinSOps.hpp and TPush.hpp
// say why).
//
// args: data (float[16], in and out), factor (float scalar). The 16 values are loaded as a
// [2 x 8] row-major tile, reshaped to the [16 x 1] column-major tile a kernel keeps per-row
// scalars in, multiplied by factor there, reshaped back and stored: data[i] *= factor.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "pto/kernel.h"

using namespace pto;

// A chip kernel sets a consumer's entry offset under the chips' spelling (pto/npu/a2a3/TPush.hpp).
using ProbePipe = TPipe<0, Direction::DIR_C2V, 1024, 2, 2>;
static_assert(sizeof(&ProbePipe::Consumer::setEntryOffset) > 0, "TPipe::Consumer::setEntryOffset");

PTO_KERNEL(args) {
  float *data = pto::tensor<float>(args, 0);
  const float factor = pto::scalar_f32(args, 1);

  using Global = GlobalTensor<float, Shape<1, 1, 1, 2, 8>, Stride<1, 1, 1, 8, 1>>;
  using RowTile = Tile<TileType::Vec, float, 2, 8, BLayout::RowMajor, 2, 8>;
  using ColTile = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1>;
  RowTile row;
  ColTile col;
  TASSIGN(row, 0x0);
  TASSIGN(col, 0x0);
  Global g(data);
  TLOAD(row, g);
  TRESHAPE(col, row);
  TMULS(col, col, factor);
  TRESHAPE(row, col);
  TSTORE(g, row);
}
