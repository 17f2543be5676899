// examples/paged_attention/kernels/kernel_softmax_prepare.cpp — AIV: one block's softmax numerators.
//
// Args (descriptor ABI): s (M x N, float32: the block's scores), p (M x N, bfloat16 or float16),
// m (M, float32), l (M, float32); scalars: scale (float32 bits), valid (keys of the block that
// belong to the context, 1..N; a scalar rather than a narrower view of s because
// host_build_graph passes only contiguous tensors). Computes, per query row i:
//   m[i] = max_j scale * s[i, j]                  (over the valid keys only)
//   p[i, j] = exp(scale * s[i, j] - m[i])           rounded to p's type, 0 past the valid keys
//   l[i] = sum_j p[i, j]                           summed from the rounded values, so that l
//                                                  matches what the PV matmul multiplies
// The columns past `valid` (a partial last block) are set to -inf (TFILLPAD) before the scale,
// so they drop out of the max and exp turns them into 0.
#include <cstdint>  // pto-inst.hpp uses the fixed-width types without including it
#include <pto/pto-inst.hpp>

using namespace pto;

#include "intrinsic.h"
#include "pa_tiles.h"
#include "pipe_sync.h"

namespace {

template <typename In, int M, int N>
__aicore__ void softmax_prepare(__gm__ ChipTensor *s, __gm__ ChipTensor *p, __gm__ ChipTensor *m,
                                __gm__ ChipTensor *l, float scale, uint32_t valid) {
  using GlobalS = GlobalTensor<float, Shape<1, 1, 1, M, DYNAMIC>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using GlobalP = GlobalTensor<In, Shape<1, 1, 1, M, N>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using GlobalVec = GlobalTensor<float, Shape<1, 1, 1, M, 1>, Stride<1, 1, 1, 1, 1>, Layout::DN>;

  using ScoresValid = Tile<TileType::Vec, float, M, N, BLayout::RowMajor, M, DYNAMIC>;
  using ScoresPadded = Tile<TileType::Vec, float, M, N, BLayout::RowMajor, M, N, SLayout::NoneBox,
                            TileConfig::fractalABSize, PadValue::Min>;
  using Scores = Tile<TileType::Vec, float, M, N, BLayout::RowMajor, M, N>;
  using ProbsIn = Tile<TileType::Vec, In, M, N, BLayout::RowMajor, M, N>;
  using RowVec = Tile<TileType::Vec, float, M, 1, BLayout::ColMajor, M, 1>;  // one value per row

  constexpr uint32_t kScores = M * N * sizeof(float);
  constexpr uint32_t kRowVec = M * sizeof(float);
  ScoresValid s_valid(valid);
  ScoresPadded s_padded;
  Scores s_ub, p_ub, tmp;
  ProbsIn p_in;
  RowVec m_ub, l_ub;
  TASSIGN(s_valid, 0x0);  // the three score tiles are one buffer seen three ways
  TASSIGN(s_padded, 0x0);
  TASSIGN(s_ub, 0x0);
  TASSIGN(p_ub, kScores);
  TASSIGN(tmp, 2 * kScores);
  TASSIGN(m_ub, 3 * kScores);
  TASSIGN(l_ub, 3 * kScores + kRowVec);
  TASSIGN(p_in, 3 * kScores + 2 * kRowVec);

  GlobalS s_gm(pa_view_data<float>(s), Shape<1, 1, 1, M, DYNAMIC>(valid),
               Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(s)));
  GlobalP p_gm(pa_view_data<In>(p), {}, Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(p)));
  GlobalVec m_gm(pa_view_data<float>(m));
  GlobalVec l_gm(pa_view_data<float>(l));

  TLOAD(s_valid, s_gm);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  TFILLPAD_INPLACE(s_padded, s_valid);
  pipe_barrier(PIPE_V);
  TMULS(s_ub, s_ub, scale);
  pipe_barrier(PIPE_V);
  TROWMAX(m_ub, s_ub, tmp);
  pipe_barrier(PIPE_V);
  TROWEXPANDSUB(p_ub, s_ub, m_ub);
  pipe_barrier(PIPE_V);
  TEXP(p_ub, p_ub);
  pipe_barrier(PIPE_V);
  TCVT(p_in, p_ub, RoundMode::CAST_RINT);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);  // p can leave while the sum is computed
  pipe_barrier(PIPE_V);
  TCVT(p_ub, p_in, RoundMode::CAST_RINT);
  pipe_barrier(PIPE_V);
  TROWSUM(l_ub, p_ub, tmp);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);

  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  TSTORE(p_gm, p_in);
  TSTORE(m_gm, m_ub);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
  TSTORE(l_gm, l_ub);
}

template <typename In>
__aicore__ void softmax_prepare_dispatch(__gm__ ChipTensor *s, __gm__ ChipTensor *p, __gm__ ChipTensor *m,
                                         __gm__ ChipTensor *l, float scale, int64_t valid) {
  const uint32_t rows = pa_rows(p), cols = pa_cols(p);
  if (valid < 1 || valid > cols || pa_rows(s) != rows || pa_cols(s) != cols) return;
#define PA_SF_CASE(M, D, N)                                                            \
  if (rows == M && cols == N) {                                                        \
    return softmax_prepare<In, M, N>(s, p, m, l, scale, static_cast<uint32_t>(valid)); \
  }
  PA_TILE_SHAPES(PA_SF_CASE)
#undef PA_SF_CASE
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  auto *s = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  auto *p = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  auto *m = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
  auto *l = reinterpret_cast<__gm__ ChipTensor *>(args[3]);
  const float scale = pa_scalar_f32(args[4]);
  const int64_t valid = args[5];
  if (p->dtype == DataType::BFLOAT16) {
    softmax_prepare_dispatch<bfloat16_t>(s, p, m, l, scale, valid);
  } else if (p->dtype == DataType::FLOAT16) {
    softmax_prepare_dispatch<half>(s, p, m, l, scale, valid);
  }
  pipe_sync();
}
