// examples/bgemm/kernels/kernel_add.cpp — AIV tile kernel: C[i] += P[i] for every tile of a task.
//
// Args (descriptor ABI): C (L x T x T float32, read and written), P (L x T x T float32). Each tile
// goes GM -> UB (TLOAD), is added in place on the vector unit (TADD) and goes back (TSTORE). Two
// T x T float32 tiles take 128 KiB of UB at T = 128, inside a2a3's 192 KiB. The tile edge T
// (16, 32, 64 or 128) picks a compiled instance; anything else leaves C untouched.
#include <cstdint>  // pto-inst.hpp uses the fixed-width types without including it
#include <pto/pto-inst.hpp>

using namespace pto;

#include "intrinsic.h"
#include "pipe_sync.h"
#include "tensor.h"

namespace {

template <typename T>
__gm__ T *view_data(__gm__ ChipTensor *t) {
  return reinterpret_cast<__gm__ T *>(static_cast<uintptr_t>(t->buffer.addr)) + t->start_offset;
}

template <int T>
struct AddTile {
  using Global = GlobalTensor<float, Shape<1, 1, 1, T, T>, Stride<1, 1, 1, DYNAMIC, 1>>;
  using VecTile = Tile<TileType::Vec, float, T, T, BLayout::RowMajor, T, T>;

  static __aicore__ void run(__gm__ float *c, int64_t ldc, __gm__ float *p, int64_t ldp) {
    Global c_gm(c, {}, Stride<1, 1, 1, DYNAMIC, 1>(ldc));
    Global p_gm(p, {}, Stride<1, 1, 1, DYNAMIC, 1>(ldp));
    VecTile c_ub, p_ub;
    TASSIGN(c_ub, 0x0);
    TASSIGN(p_ub, T * T * sizeof(float));

    TLOAD(c_ub, c_gm);
    TLOAD(p_ub, p_gm);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TADD(c_ub, c_ub, p_ub);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(c_gm, c_ub);
    // The next tile's TLOAD overwrites the UB this store reads.
    set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
    wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
  }
};

// Tile i of a view: the view's last two dimensions are a tile, the one before them counts tiles
// (leading dimensions of extent 1 are allowed: a slice of a 4-D tensor can be passed as it is).
__gm__ float *tile_data(__gm__ ChipTensor *t, uint32_t i) {
  return view_data<float>(t) + (t->ndims >= 3 ? uint64_t{i} * t->strides[t->ndims - 3] : 0);
}
inline uint32_t tile_count(__gm__ ChipTensor *t) {
  return t->ndims >= 3 ? t->shapes[t->ndims - 3] : 1;
}
inline int64_t row_stride(__gm__ ChipTensor *t) {
  return t->strides[t->ndims - 2];
}

template <int T>
__aicore__ void add_tiles(__gm__ ChipTensor *c, __gm__ ChipTensor *p) {
  for (uint32_t i = 0; i < tile_count(c); ++i) {
    AddTile<T>::run(tile_data(c, i), row_stride(c), tile_data(p, i), row_stride(p));
  }
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  auto *c = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  auto *p = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  const uint32_t t = c->ndims >= 2 ? c->shapes[c->ndims - 1] : 0;
  bool square = c->ndims >= 2 && p->ndims >= 2;
  for (__gm__ ChipTensor *v : {c, p}) {
    square = square && v->shapes[v->ndims - 2] == t && v->shapes[v->ndims - 1] == t;
  }
  if (!square || tile_count(p) != tile_count(c)) {
    pipe_sync();
    return;
  }
  switch (t) {
    case 16:
      add_tiles<16>(c, p);
      break;
    case 32:
      add_tiles<32>(c, p);
      break;
    case 64:
      add_tiles<64>(c, p);
      break;
    case 128:
      add_tiles<128>(c, p);
      break;
    default:
      break;
  }
  pipe_sync();
}
