// src/runtime/tensormap_and_ringbuffer/aicpu/view_region.h — the Region (core/region.h) a tensor view
// touches.
//
// make_region for a view, with the one-dimensional case inline: most views are one dimension
// (a cell, a row, a flattened tile), and the out-of-line call was a tenth of a submit. Computes
// the same fields as make_region (tests/cpp/tmr_view_region.cpp checks it).
#ifndef PTO_TMR_VIEW_REGION_H
#define PTO_TMR_VIEW_REGION_H

#include "core/region.h"
#include "pto/orchestration.h"

namespace pto {
namespace tmr {

// pto_dtype_size as a table: the switch cost ~14 instructions, paid several times per tensor
// argument on the submit path (tests/cpp/tmr_view_region.cpp compares the two for every dtype).
inline uint32_t elem_bytes(pto_dtype t) {
  static constexpr uint8_t kBytes[PTO_DTYPE_COUNT] = {0, 4, 2, 2, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1};
  return static_cast<uint32_t>(t) < static_cast<uint32_t>(PTO_DTYPE_COUNT) ? kBytes[t] : 0;
}

// What a kernel receives for a tensor argument: the device address of its first element
// (TensorView::addr, with the table).
inline int64_t call_arg(const TensorView &v) {
  return static_cast<int64_t>(v.buffer + static_cast<uint64_t>(v.offset) * elem_bytes(v.dtype));
}

// One object returned on every path, so it is built in the caller's (no copy of ~180 bytes).
inline Region region_of(const TensorView &v) {
  Region r;
  if (v.ndim != 1) {
    fill_region(&r, v.buffer, v.offset, elem_bytes(v.dtype), v.ndim, v.shape, v.strides);
    return r;
  }
  r.buffer = v.buffer;
  r.esize = elem_bytes(v.dtype);
  r.ndim = 1;
  r.base = wrapping_mul(v.offset, r.esize);  // wraps only for an empty view (core/region.h)
  r.shape[0] = v.shape[0];
  r.stride[0] = wrapping_mul(v.strides[0], r.esize);
  r.lo = r.hi = r.base;
  r.contiguous = true;
  if (v.shape[0] > 0) {
    r.hi = r.base + (v.shape[0] - 1) * r.stride[0] + r.esize;
    // touches_every_byte for one dimension: one element, a broadcast (stride 0) or dense.
    r.contiguous = v.shape[0] == 1 || v.strides[0] <= 1;
  }
  return r;
}

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_VIEW_REGION_H
