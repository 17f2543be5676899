// examples/paged_attention/kernels/kernel_online_update.cpp — AIV: fold one block into the running softmax.
//
// Args (descriptor ABI): m_blk, l_blk (M, float32: this block's row max and row sum), o_blk
// (M x D, float32: P V of this block), m, l (M, float32: running max and sum, read and written),
// o (M x D, float32: running unnormalised output, read and written), out (M x D float32 window of
// the result); scalars: is_first, is_last (0 or 1). The online-softmax recurrence:
//   first block:  m = m_blk, l = l_blk, o = o_blk
//   later blocks: m' = max(m, m_blk), a = exp(m - m'), b = exp(m_blk - m'),
//                 l = a l + b l_blk,  o = a o + b o_blk,  m = m'
//   last block:   out = o / l (row-wise); the running state is not written back, nobody reads it.
// Per-row values travel as contiguous (1 x M) row tiles, on which the element-wise instructions
// work; the row-broadcast instructions want a column (M x 1), which TRESHAPE gives without a copy.
#include <cstdint>  // pto-inst.hpp uses the fixed-width types without including it
#include <pto/pto-inst.hpp>

using namespace pto;

#include "intrinsic.h"
#include "pa_tiles.h"
#include "pipe_sync.h"

namespace {

template <int M, int D>
struct OnlineUpdate {
  using GlobalRow = GlobalTensor<float, Shape<1, 1, 1, 1, M>, Stride<1, 1, 1, M, 1>>;
  using GlobalMat = GlobalTensor<float, Shape<1, 1, 1, M, D>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using Mat = Tile<TileType::Vec, float, M, D, BLayout::RowMajor, M, D>;
  using Row = Tile<TileType::Vec, float, 1, M, BLayout::RowMajor, 1, M>;
  using Col = Tile<TileType::Vec, float, M, 1, BLayout::ColMajor, M, 1>;

  static constexpr uint32_t kMat = M * D * sizeof(float);
  static constexpr uint32_t kRow = M * sizeof(float);
  // UB: two M x D tiles, then the row vectors one after another.
  enum RowSlot : uint32_t { kMBlk, kLBlk, kM, kL, kMNew, kAlpha, kBeta, kLNew, kTmp };
  static constexpr uint32_t row_addr(RowSlot r) { return 2 * kMat + r * kRow; }

  static GlobalMat mat(__gm__ ChipTensor *t) {
    return GlobalMat(pa_view_data<float>(t), {}, Stride<1, 1, 1, DYNAMIC, 1>(pa_row_stride(t)));
  }
  static GlobalRow row(__gm__ ChipTensor *t) { return GlobalRow(pa_view_data<float>(t)); }

  // out = o / l, row by row.
  static __aicore__ void normalize_and_store(Mat &o, Row &l, __gm__ ChipTensor *out) {
    Col l_col;
    TRESHAPE(l_col, l);
    TROWEXPANDDIV(o, o, l_col);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    GlobalMat out_gm = mat(out);
    TSTORE(out_gm, o);
  }

  static __aicore__ void run(__gm__ ChipTensor *m_blk, __gm__ ChipTensor *l_blk, __gm__ ChipTensor *o_blk,
                             __gm__ ChipTensor *m, __gm__ ChipTensor *l, __gm__ ChipTensor *o,
                             __gm__ ChipTensor *out, bool first, bool last) {
    Mat o_blk_ub, o_ub;
    Row m_blk_ub, l_blk_ub, m_ub, l_ub;
    TASSIGN(o_blk_ub, 0x0);
    TASSIGN(o_ub, kMat);
    TASSIGN(m_blk_ub, row_addr(kMBlk));
    TASSIGN(l_blk_ub, row_addr(kLBlk));
    TASSIGN(m_ub, row_addr(kM));
    TASSIGN(l_ub, row_addr(kL));
    GlobalMat o_blk_gm = mat(o_blk), o_gm = mat(o);
    GlobalRow m_blk_gm = row(m_blk), l_blk_gm = row(l_blk), m_gm = row(m), l_gm = row(l);

    TLOAD(o_blk_ub, o_blk_gm);
    TLOAD(l_blk_ub, l_blk_gm);
    if (first) {
      if (last) {  // a single block: its own sum normalises it
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        normalize_and_store(o_blk_ub, l_blk_ub, out);
        return;
      }
      TLOAD(m_blk_ub, m_blk_gm);
      set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
      wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
      TSTORE(m_gm, m_blk_ub);
      TSTORE(l_gm, l_blk_ub);
      TSTORE(o_gm, o_blk_ub);
      return;
    }

    TLOAD(m_blk_ub, m_blk_gm);
    TLOAD(o_ub, o_gm);
    TLOAD(m_ub, m_gm);
    TLOAD(l_ub, l_gm);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);

    Row m_new, alpha, beta, l_new, tmp;
    TASSIGN(m_new, row_addr(kMNew));
    TASSIGN(alpha, row_addr(kAlpha));
    TASSIGN(beta, row_addr(kBeta));
    TASSIGN(l_new, row_addr(kLNew));
    TASSIGN(tmp, row_addr(kTmp));
    TMAX(m_new, m_ub, m_blk_ub);
    pipe_barrier(PIPE_V);
    TSUB(alpha, m_ub, m_new);
    TSUB(beta, m_blk_ub, m_new);
    pipe_barrier(PIPE_V);
    TEXP(alpha, alpha);
    TEXP(beta, beta);
    pipe_barrier(PIPE_V);
    TMUL(tmp, alpha, l_ub);
    TMUL(l_new, beta, l_blk_ub);
    pipe_barrier(PIPE_V);
    TADD(l_new, tmp, l_new);

    Col alpha_col, beta_col;
    TRESHAPE(alpha_col, alpha);
    TRESHAPE(beta_col, beta);
    TROWEXPANDMUL(o_ub, o_ub, alpha_col);
    TROWEXPANDMUL(o_blk_ub, o_blk_ub, beta_col);
    pipe_barrier(PIPE_V);
    TADD(o_ub, o_ub, o_blk_ub);
    pipe_barrier(PIPE_V);

    if (last) {
      normalize_and_store(o_ub, l_new, out);
      return;
    }
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(m_gm, m_new);
    TSTORE(l_gm, l_new);
    TSTORE(o_gm, o_ub);
  }
};

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  auto *m_blk = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  auto *l_blk = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  auto *o_blk = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
  auto *m = reinterpret_cast<__gm__ ChipTensor *>(args[3]);
  auto *l = reinterpret_cast<__gm__ ChipTensor *>(args[4]);
  auto *o = reinterpret_cast<__gm__ ChipTensor *>(args[5]);
  auto *out = reinterpret_cast<__gm__ ChipTensor *>(args[6]);
  const bool first = args[7] != 0, last = args[8] != 0;
  const uint32_t rows = pa_rows(o_blk), cols = pa_cols(o_blk);
  for (__gm__ ChipTensor *v : {o, out}) {
    if (pa_rows(v) != rows || pa_cols(v) != cols) {
      pipe_sync();
      return;
    }
  }
  // Only (M, D) matter here; the block size N does not reach this kernel.
#define PA_UP_CASE(M, D, N)                                                  \
  if (rows == M && cols == D) {                                              \
    OnlineUpdate<M, D>::run(m_blk, l_blk, o_blk, m, l, o, out, first, last); \
    pipe_sync();                                                             \
    return;                                                                  \
  }
  PA_TILE_SHAPES(PA_UP_CASE)
#undef PA_UP_CASE
  pipe_sync();
}
