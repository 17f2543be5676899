// examples/paged_attention/kernels/pa_tiles.h — what the four paged-attention tile kernels share.
//
// Every kernel works on one (query tile, KV block) pair of fixed shape: M query heads (rows), head
// dimension D, block size N. The shapes are template parameters (tiles are sized at compile time),
// so each kernel is compiled for the list below and picks the instance from its descriptors at run
// time; a shape outside the list leaves the outputs untouched (main.py only offers listed shapes).
#ifndef EXAMPLES_PAGED_ATTENTION_TILES_H
#define EXAMPLES_PAGED_ATTENTION_TILES_H

#include <cstdint>

#include "tensor.h"

// X(M, D, N): q_tile (query heads per task), head_dim, block_size.
#define PA_TILE_SHAPES(X) \
  X(16, 16, 16)           \
  X(16, 128, 128)         \
  X(64, 128, 64)

// First element of a descriptor's view.
template <typename T>
inline __gm__ T *pa_view_data(__gm__ ChipTensor *t) {
  return reinterpret_cast<__gm__ T *>(static_cast<uintptr_t>(t->buffer.addr)) + t->start_offset;
}

// A matrix argument is its view's last two dimensions (leading dimensions of extent 1 are allowed,
// so a slice of a 3-D tensor can be passed as it is).
inline uint32_t pa_rows(__gm__ ChipTensor *t) {
  return t->ndims >= 2 ? t->shapes[t->ndims - 2] : 1;
}
inline uint32_t pa_cols(__gm__ ChipTensor *t) {
  return t->shapes[t->ndims - 1];
}
inline int64_t pa_row_stride(__gm__ ChipTensor *t) {
  return t->ndims >= 2 ? t->strides[t->ndims - 2] : t->shapes[0];
}

// A float scalar argument: its float32 bits in the low half of the 64-bit slot.
inline float pa_scalar_f32(int64_t slot) {
  const uint32_t bits = static_cast<uint32_t>(slot);
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

#endif  // EXAMPLES_PAGED_ATTENTION_TILES_H
