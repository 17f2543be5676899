// examples/bgemm/kernels/kernel_gemm.cpp — AIC tile kernel: P[i] = A[i] @ B[i] for every tile of a task.
//
// Args (descriptor ABI): A, B (L x T x T, float32 or float16), P (L x T x T, float32). Each of the
// L square tiles goes GM -> L1 (TLOAD into Mat tiles) -> L0A/L0B (TEXTRACT of one K chunk) -> the
// cube (TMATMUL, then TMATMUL_ACC for the next chunks) -> L0C -> GM (TSTORE). K is cut into
// chunks so that one Left and one Right chunk each take at most half of L0A / L0B (64 KiB each
// on a2a3): a 128 x 128 float32 tile needs two chunks of 64, a float16 one fits in one. The tile
// edge T (16, 32, 64 or 128) and the input type pick a compiled instance; anything else leaves P
// untouched, which the example's check reports.
#include <cstdint>  // pto-inst.hpp uses the fixed-width types without including it
#include <pto/pto-inst.hpp>

using namespace pto;

#include "intrinsic.h"
#include "pipe_sync.h"
#include "tensor.h"

namespace {

// First element of a descriptor's view.
template <typename T>
__gm__ T *view_data(__gm__ ChipTensor *t) {
  return reinterpret_cast<__gm__ T *>(static_cast<uintptr_t>(t->buffer.addr)) + t->start_offset;
}

constexpr int kHalfL0Bytes = 32 * 1024;

template <typename In, int T>
struct GemmTile {
  static constexpr int kChunk = (T * T * static_cast<int>(sizeof(In)) <= kHalfL0Bytes)
                                    ? T
                                    : kHalfL0Bytes / (T * static_cast<int>(sizeof(In)));
  static_assert(T % kChunk == 0, "K chunks must cover the tile exactly");

  // One tile in GM: T x T, row stride given at run time (the view may be a window of a wider row).
  using GlobalIn = GlobalTensor<In, Shape<1, 1, 1, T, T>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using GlobalOut = GlobalTensor<float, Shape<1, 1, 1, T, T>, Stride<1, 1, 1, DYNAMIC, 1>>;
  // L1: the whole tile in the cube's fractal (Nz) layout.
  using MatTile = Tile<TileType::Mat, In, T, T, BLayout::ColMajor, T, T, SLayout::RowMajor, 512>;
  using LeftTile = TileLeft<In, T, kChunk>;
  using RightTile = TileRight<In, kChunk, T>;
  using AccTile = TileAcc<float, T, T>;

  static constexpr uint32_t kMatBBase = T * T * sizeof(In);  // B after A in L1

  static __aicore__ void run(__gm__ In *a, int64_t lda, __gm__ In *b, int64_t ldb, __gm__ float *p,
                             int64_t ldp) {
    GlobalIn a_gm(a, {}, Stride<1, 1, 1, DYNAMIC, 1>(lda));
    GlobalIn b_gm(b, {}, Stride<1, 1, 1, DYNAMIC, 1>(ldb));
    GlobalOut p_gm(p, {}, Stride<1, 1, 1, DYNAMIC, 1>(ldp));

    MatTile a_mat, b_mat;
    TASSIGN(a_mat, 0x0);
    TASSIGN(b_mat, kMatBBase);
    LeftTile left;
    RightTile right;
    AccTile acc;
    TASSIGN(left, 0x0);
    TASSIGN(right, 0x0);
    TASSIGN(acc, 0x0);

    TLOAD(a_mat, a_gm);
    TLOAD(b_mat, b_gm);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);

    for (int k = 0; k < T; k += kChunk) {
      if (k > 0) {  // the previous matmul must be done reading L0A/L0B before they are refilled
        set_flag(PIPE_M, PIPE_MTE1, EVENT_ID0);
        wait_flag(PIPE_M, PIPE_MTE1, EVENT_ID0);
      }
      TEXTRACT(left, a_mat, 0, static_cast<uint16_t>(k));
      TEXTRACT(right, b_mat, static_cast<uint16_t>(k), 0);
      set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
      wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
      if (k == 0) {
        TMATMUL(acc, left, right);
      } else {
        TMATMUL_ACC(acc, acc, left, right);
      }
    }

    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(p_gm, acc);
    // The next tile's TLOAD and TMATMUL reuse L1 and L0C: let this store finish first.
    set_flag(PIPE_FIX, PIPE_MTE2, EVENT_ID0);
    wait_flag(PIPE_FIX, PIPE_MTE2, EVENT_ID0);
  }
};

// Tile i of a view: the view's last two dimensions are a tile, the one before them counts tiles
// (leading dimensions of extent 1 are allowed: a slice of a 5-D tensor can be passed as it is).
template <typename T>
__gm__ T *tile_data(__gm__ ChipTensor *t, uint32_t i) {
  return view_data<T>(t) + (t->ndims >= 3 ? uint64_t{i} * t->strides[t->ndims - 3] : 0);
}
inline uint32_t tile_count(__gm__ ChipTensor *t) {
  return t->ndims >= 3 ? t->shapes[t->ndims - 3] : 1;
}
inline int64_t row_stride(__gm__ ChipTensor *t) {
  return t->strides[t->ndims - 2];
}

template <typename In, int T>
__aicore__ void gemm_tiles(__gm__ ChipTensor *a, __gm__ ChipTensor *b, __gm__ ChipTensor *p) {
  for (uint32_t i = 0; i < tile_count(a); ++i) {
    GemmTile<In, T>::run(tile_data<In>(a, i), row_stride(a), tile_data<In>(b, i), row_stride(b),
                         tile_data<float>(p, i), row_stride(p));
  }
}

template <typename In>
__aicore__ void gemm_dispatch(__gm__ ChipTensor *a, __gm__ ChipTensor *b, __gm__ ChipTensor *p) {
  if (a->ndims < 2 || b->ndims < 2 || p->ndims < 2) return;
  if (tile_count(b) != tile_count(a) || tile_count(p) != tile_count(a)) return;
  const uint32_t t = a->shapes[a->ndims - 1];
  for (__gm__ ChipTensor *v : {a, b, p}) {
    if (v->shapes[v->ndims - 2] != t || v->shapes[v->ndims - 1] != t) return;  // tiles are T x T
  }
  switch (t) {
    case 16:
      return gemm_tiles<In, 16>(a, b, p);
    case 32:
      return gemm_tiles<In, 32>(a, b, p);
    case 64:
      return gemm_tiles<In, 64>(a, b, p);
    case 128:
      return gemm_tiles<In, 128>(a, b, p);
    default:
      return;
  }
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  auto *a = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  auto *b = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  auto *p = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
  if (a->dtype == DataType::FLOAT32) {
    gemm_dispatch<float>(a, b, p);
  } else if (a->dtype == DataType::FLOAT16) {
    gemm_dispatch<half>(a, b, p);
  }
  pipe_sync();
}
