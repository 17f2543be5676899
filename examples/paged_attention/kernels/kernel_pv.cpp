// examples/paged_attention/kernels/kernel_pv.cpp — AIC tile kernel: O_blk = P V for a query tile and a block.
//
// Args (descriptor ABI): p (M x N, bfloat16 or float16: the softmax numerators softmax_prepare
// rounded to the input type), v (N x D, the block's values as stored in the cache, same dtype),
// o (M x D, float32). Both operands are plain row-major (ND) matrices.
#include <cstdint>  // pto-inst.hpp uses the fixed-width types without including it
#include <pto/pto-inst.hpp>

using namespace pto;

#include "intrinsic.h"
#include "pa_tiles.h"
#include "pipe_sync.h"

namespace {

template <typename In, int M, int D, int N>
__aicore__ void pv(__gm__ ChipTensor *p, __gm__ ChipTensor *v, __gm__ ChipTensor *o) {
  using GlobalP = GlobalTensor<In, Shape<1, 1, 1, M, N>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using GlobalV = GlobalTensor<In, Shape<1, 1, 1, N, D>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using GlobalO = GlobalTensor<float, Shape<1, 1, 1, M, D>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using MatP = Tile<TileType::Mat, In, M, N, BLayout::ColMajor, M, N, SLayout::RowMajor, 512>;
  using MatV = Tile<TileType::Mat, In, N, D, BLayout::ColMajor, N, D, SLayout::RowMajor, 512>;

  GlobalP p_gm(pa_view_data<In>(p), {}, Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(p)));
  GlobalV v_gm(pa_view_data<In>(v), {}, Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(v)));
  GlobalO o_gm(pa_view_data<float>(o), {}, Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(o)));

  MatP p_l1;
  MatV v_l1;
  TASSIGN(p_l1, 0x0);
  TASSIGN(v_l1, M * N * sizeof(In));
  TileLeft<In, M, N> left;
  TileRight<In, N, D> right;
  TileAcc<float, M, D> acc;
  TASSIGN(left, 0x0);
  TASSIGN(right, 0x0);
  TASSIGN(acc, 0x0);

  TLOAD(p_l1, p_gm);
  set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  TLOAD(v_l1, v_gm);
  set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID1);
  wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  TMOV(left, p_l1);
  wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID1);
  TMOV(right, v_l1);
  set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
  wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
  TMATMUL(acc, left, right);
  set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  TSTORE(o_gm, acc);
}

template <typename In>
__aicore__ void pv_dispatch(__gm__ ChipTensor *p, __gm__ ChipTensor *v, __gm__ ChipTensor *o) {
  const uint32_t m = pa_rows(p), n = pa_cols(p), d = pa_cols(v);
  if (pa_rows(v) != n || pa_rows(o) != m || pa_cols(o) != d) return;
#define PA_PV_CASE(M, D, N)          \
  if (m == M && d == D && n == N) {  \
    return pv<In, M, D, N>(p, v, o); \
  }
  PA_TILE_SHAPES(PA_PV_CASE)
#undef PA_PV_CASE
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  auto *p = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  auto *v = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  auto *o = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
  if (p->dtype == DataType::BFLOAT16) {
    pv_dispatch<bfloat16_t>(p, v, o);
  } else if (p->dtype == DataType::FLOAT16) {
    pv_dispatch<half>(p, v, o);
  }
  pipe_sync();
}
