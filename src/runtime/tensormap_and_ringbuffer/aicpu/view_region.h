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

inline Region region_of(const TensorView &v) {
  if (v.ndim != 1) return make_region(v.buffer, v.offset, v.elem_size(), v.ndim, v.shape, v.strides);
  Region r;
  r.buffer = v.buffer;
  r.esize = v.elem_size();
  r.ndim = 1;
  r.base = v.offset * static_cast<int64_t>(r.esize);
  r.shape[0] = v.shape[0];
  r.stride[0] = v.strides[0] * static_cast<int64_t>(r.esize);
  r.lo = r.hi = r.base;
  r.contiguous = true;
  if (v.shape[0] > 0) {
    r.hi = r.base + (v.shape[0] - 1) * r.stride[0] + r.esize;
    r.contiguous = r.hi - r.lo == v.shape[0] * static_cast<int64_t>(r.esize);
  }
  return r;
}

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_VIEW_REGION_H
