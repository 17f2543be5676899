// tests/common/tile_kernels/gemm_128.cpp — 128x128x128 float GEMM on one AIC core with PTO-ISA TMATMUL.
//
// args: a, b (float[128*128], inputs), c (float[128*128], output). K is taken in two steps of
// 64: L1 (Mat) tiles are loaded from global memory, moved to L0 (Left/Right), multiplied into
// the accumulator (TMATMUL, then TMATMUL_ACC), and the accumulator is stored.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "pipe_sync.h"
#include "pto/kernel.h"

using namespace pto;

namespace {

constexpr int kM = 128, kK = 128, kN = 128, kKStep = 64;
using GlobalA = GlobalTensor<float, Shape<1, 1, 1, kM, kKStep>, Stride<kM * kK, kM * kK, kM * kK, kK, 1>>;
using GlobalB = GlobalTensor<float, Shape<1, 1, 1, kKStep, kN>, Stride<kK * kN, kK * kN, kK * kN, kN, 1>>;
using GlobalC = GlobalTensor<float, Shape<1, 1, 1, kM, kN>, Stride<kM * kN, kM * kN, kM * kN, kN, 1>>;
using MatA = Tile<TileType::Mat, float, kM, kKStep, BLayout::ColMajor, kM, kKStep, SLayout::RowMajor, 512>;
using MatB = Tile<TileType::Mat, float, kKStep, kN, BLayout::ColMajor, kKStep, kN, SLayout::RowMajor, 512>;
using LeftA = TileLeft<float, kM, kKStep, kM, kKStep>;
using RightB = TileRight<float, kKStep, kN, kKStep, kN>;
using AccC = TileAcc<float, kM, kN, kM, kN>;

}  // namespace

PTO_KERNEL(args) {
  float *a = pto::tensor<float>(args, 0);
  float *b = pto::tensor<float>(args, 1);
  float *c = pto::tensor<float>(args, 2);
  MatA mat_a;
  MatB mat_b;
  LeftA left;
  RightB right;
  AccC acc;
  TASSIGN(mat_a, 0x0);
  TASSIGN(mat_b, 0x20000);
  TASSIGN(left, 0x0);
  TASSIGN(right, 0x0);
  TASSIGN(acc, 0x0);
  for (int k = 0; k < kK; k += kKStep) {
    GlobalA ga(a + k);
    GlobalB gb(b + k * kN);
    TLOAD(mat_a, ga);
    TLOAD(mat_b, gb);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(left, mat_a);
    TMOV(right, mat_b);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    if (k == 0) {
      TMATMUL(acc, left, right);
    } else {
      TMATMUL_ACC(acc, acc, left, right);
    }
    // The next step's loads overwrite the L1 tiles this step's moves read.
    set_flag(PIPE_M, PIPE_MTE2, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_MTE2, EVENT_ID0);
  }
  set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  GlobalC gc(c);
  TSTORE(gc, acc);
  pipe_sync();
}
