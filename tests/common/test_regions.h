// tests/common/test_regions.h — regions of one 64 x 64 float matrix, for white-box tests of the
// structures that decide overlap (TensorMap, the batch_deps map).
#ifndef PTO_TESTS_TEST_REGIONS_H
#define PTO_TESTS_TEST_REGIONS_H

#include <cstdint>

#include "core/region.h"

namespace pto_test {

constexpr uint64_t kBuf = 0x10000;    // a 64 x 64 float matrix, row stride 64 elements
constexpr uint64_t kOther = 0x80000;  // another buffer

// Rows [r0, r0 + rows) x cols [c0, c0 + cols) of the matrix, every rstep-th row / cstep-th column.
inline pto::Region tile(int64_t r0, int64_t c0, int64_t rows, int64_t cols, int64_t rstep = 1,
                        int64_t cstep = 1, uint64_t buf = kBuf) {
  const int64_t shape[2] = {rows, cols}, strides[2] = {64 * rstep, cstep};
  return pto::make_region(buf, r0 * 64 + c0, 4, 2, shape, strides);
}

// n consecutive floats from element elem_offset.
inline pto::Region flat(int64_t elem_offset, int64_t n, uint64_t buf = kBuf) {
  const int64_t shape[1] = {n}, strides[1] = {1};
  return pto::make_region(buf, elem_offset, 4, 1, shape, strides);
}

}  // namespace pto_test
#endif  // PTO_TESTS_TEST_REGIONS_H
