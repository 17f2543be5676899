// tests/cpp/tmr_view_region.cpp — white-box test of the tensormap orchestrator's inline region_of
// (src/runtime/tensormap_and_ringbuffer/aicpu/view_region.h): the region a TensorMap look-up uses
// for a one-dimensional view must be the one core/region.h's make_region computes.
#include <gtest/gtest.h>

#include <random>

#include "core/region.h"
#include "view_region.h"

namespace {

using pto::Region;

constexpr uint64_t kBuf = 0x10000;

// The orchestrator's inline region_of builds a one-dimensional view's region itself: the same
// fields make_region computes, for empty views, broadcasts (stride 0) and gaps.
TEST(ViewRegion, OneDimensionalViewEqualsMakeRegion) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    pto::TensorView v;
    v.buffer = kBuf;
    v.dtype = rng() % 2 ? PTO_DTYPE_F32 : PTO_DTYPE_U8;
    v.ndim = 1;
    v.offset = rng() % 100;
    v.shape[0] = rng() % 5 == 0 ? 0 : 1 + rng() % 40;
    v.strides[0] = rng() % 4;  // 0 and 1 (bytes: 0 and esize) are contiguous
    const Region a = pto::tmr::region_of(v);
    const Region b = pto::make_region(v.buffer, v.offset, v.elem_size(), 1, v.shape, v.strides);
    ASSERT_EQ(a.buffer, b.buffer);
    ASSERT_EQ(a.base, b.base);
    ASSERT_EQ(a.lo, b.lo) << i;
    ASSERT_EQ(a.hi, b.hi) << i;
    ASSERT_EQ(a.esize, b.esize);
    ASSERT_EQ(a.ndim, b.ndim);
    ASSERT_EQ(a.shape[0], b.shape[0]);
    ASSERT_EQ(a.stride[0], b.stride[0]);
    ASSERT_EQ(a.contiguous, b.contiguous) << i;
  }
}

// The table the submit path uses for element sizes is pto_dtype_size, and call_arg is addr().
TEST(ViewRegion, ElementSizeTableAndCallArgumentMatchTheApi) {
  for (int t = 0; t <= 15; ++t) {  // every value the enum can hold, past PTO_DTYPE_COUNT too
    const auto dtype = static_cast<pto_dtype>(t);
    ASSERT_EQ(pto::tmr::elem_bytes(dtype), pto_dtype_size(dtype)) << "dtype " << t;
    pto::TensorView v;
    v.buffer = kBuf;
    v.dtype = dtype;
    v.offset = 37;
    ASSERT_EQ(static_cast<uint64_t>(pto::tmr::call_arg(v)), v.addr()) << "dtype " << t;
  }
}

}  // namespace
