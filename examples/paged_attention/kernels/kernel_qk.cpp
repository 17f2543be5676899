// examples/paged_attention/kernels/kernel_qk.cpp — AIC tile kernel: S = Q K^T for a query tile and a block.
//
// Args (descriptor ABI): q (M x D, bfloat16 or float16), k (N x D, the block's keys as stored in
// the cache, same dtype), s (M x N, float32). K^T is never materialised: the block's rows are
// read as the columns of a D x N matrix (a DN global tensor) straight into the Right operand's
// L1 layout (Zn), so the cube multiplies Q by K^T as it would any B.
#include <cstdint>  // pto-inst.hpp uses the fixed-width types without including it
#include <pto/pto-inst.hpp>

using namespace pto;

#include "intrinsic.h"
#include "pa_tiles.h"
#include "pipe_sync.h"

namespace {

template <typename In, int M, int D, int N>
__aicore__ void qk(__gm__ ChipTensor *q, __gm__ ChipTensor *k, __gm__ ChipTensor *s) {
  using GlobalQ = GlobalTensor<In, Shape<1, 1, 1, M, D>, Stride<1, 1, 1, DYNAMIC, 1>>;
  // Element (d, n) of K^T is element (n, d) of the block: unit stride down a column, the block's
  // row stride across columns.
  using GlobalKt = GlobalTensor<In, Shape<1, 1, 1, D, N>, Stride<1, 1, 1, 1, DYNAMIC>, Layout::DN>;
  using GlobalS = GlobalTensor<float, Shape<1, 1, 1, M, N>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using MatQ = Tile<TileType::Mat, In, M, D, BLayout::ColMajor, M, D, SLayout::RowMajor, 512>;
  using MatKt = Tile<TileType::Mat, In, D, N, BLayout::RowMajor, D, N, SLayout::ColMajor, 512>;

  GlobalQ q_gm(pa_view_data<In>(q), {}, Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(q)));
  GlobalKt kt_gm(pa_view_data<In>(k), {}, Stride<1, 1, 1, 1, DYNAMIC>(pa_row_stride(k)));
  GlobalS s_gm(pa_view_data<float>(s), {}, Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(s)));

  MatQ q_l1;
  MatKt kt_l1;
  TASSIGN(q_l1, 0x0);
  TASSIGN(kt_l1, M * D * sizeof(In));
  TileLeft<In, M, D> left;
  TileRight<In, D, N> right;
  TileAcc<float, M, N> acc;
  TASSIGN(left, 0x0);
  TASSIGN(right, 0x0);
  TASSIGN(acc, 0x0);

  // Two events: the Left move can start while the keys are still loading.
  TLOAD(q_l1, q_gm);
  set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  TLOAD(kt_l1, kt_gm);
  set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID1);
  wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  TMOV(left, q_l1);
  wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID1);
  TMOV(right, kt_l1);
  set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
  wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
  TMATMUL(acc, left, right);
  set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  TSTORE(s_gm, acc);
}

template <typename In>
__aicore__ void qk_dispatch(__gm__ ChipTensor *q, __gm__ ChipTensor *k, __gm__ ChipTensor *s) {
  const uint32_t m = pa_rows(q), d = pa_cols(q), n = pa_rows(k);
  if (pa_cols(k) != d || pa_rows(s) != m || pa_cols(s) != n) return;
#define PA_QK_CASE(M, D, N)          \
  if (m == M && d == D && n == N) {  \
    return qk<In, M, D, N>(q, k, s); \
  }
  PA_TILE_SHAPES(PA_QK_CASE)
#undef PA_QK_CASE
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  auto *q = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  auto *k = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  auto *s = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
  if (q->dtype == DataType::BFLOAT16) {
    qk_dispatch<bfloat16_t>(q, k, s);
  } else if (q->dtype == DataType::FLOAT16) {
    qk_dispatch<half>(q, k, s);
  }
  pipe_sync();
}
