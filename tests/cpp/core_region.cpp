// tests/cpp/core_region.cpp — white-box tests of strided-view overlap (src/core/region.h).
//
// Contract: regions_overlap never answers false for views that share a byte; it answers
// exactly for disjoint byte ranges, for tiles of one matrix, and for small views.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/region.h"

namespace {

pto::Region tile(int64_t r0, int64_t c0, int64_t rows, int64_t cols, int64_t ld = 64, int64_t rstep = 1,
                 int64_t cstep = 1, uint32_t esize = 4) {
  const int64_t shape[2] = {rows, cols}, strides[2] = {ld * rstep, cstep};
  return pto::make_region(0x1000, r0 * ld + c0, esize, 2, shape, strides);
}

TEST(Region, DisjointTilesOfOneMatrixDoNotOverlap) {
  EXPECT_FALSE(pto::regions_overlap(tile(0, 0, 8, 8), tile(0, 8, 8, 8)));  // side by side
  EXPECT_FALSE(pto::regions_overlap(tile(0, 0, 8, 8), tile(8, 0, 8, 8)));  // stacked
  EXPECT_TRUE(pto::regions_overlap(tile(0, 0, 8, 8), tile(7, 7, 8, 8)));   // corner shared
}

TEST(Region, InterleavedColumnsDoNotOverlap) {
  EXPECT_FALSE(pto::regions_overlap(tile(0, 0, 8, 8, 64, 1, 2), tile(0, 1, 8, 8, 64, 1, 2)));
  EXPECT_TRUE(pto::regions_overlap(tile(0, 0, 8, 8, 64, 1, 2), tile(0, 2, 8, 8, 64, 1, 2)));
}

// Same strides, but the first view's rows start mid-row and spill into the next row: its
// row coordinates alone (89..90) do not show that it reaches row 91. (Found by
// core_tensor_map's brute-force test: the coordinate test answered "disjoint" here.)
TEST(Region, RowsThatSpillPastTheRowStrideStillOverlap) {
  const int64_t wshape[2] = {2, 7}, rshape[2] = {6, 6}, strides[2] = {7, 1};
  const pto::Region w = pto::make_region(0x1000, 627, 4, 2, wshape, strides);  // row 89, column 4
  const pto::Region r = pto::make_region(0x1000, 637, 4, 2, rshape, strides);  // row 91, column 0
  EXPECT_TRUE(pto::regions_overlap(w, r));
  EXPECT_TRUE(pto::regions_overlap(r, w));
}

TEST(Region, DifferentBuffersNeverOverlap) {
  const int64_t shape[1] = {16}, strides[1] = {1};
  EXPECT_FALSE(pto::regions_overlap(pto::make_region(0x1000, 0, 4, 1, shape, strides),
                                    pto::make_region(0x2000, 0, 4, 1, shape, strides)));
}

TEST(Region, EmptyViewsNeverOverlap) {
  EXPECT_FALSE(pto::regions_overlap(tile(0, 0, 0, 8), tile(0, 0, 8, 8)));
}

TEST(Region, CoverRequiresAContiguousOuterView) {
  const int64_t shape[1] = {64 * 8}, strides[1] = {1};
  const pto::Region rows = pto::make_region(0x1000, 0, 4, 1, shape, strides);
  EXPECT_TRUE(pto::region_covers(rows, tile(0, 0, 8, 8)));
  EXPECT_FALSE(pto::region_covers(tile(0, 0, 8, 64), tile(0, 0, 9, 8)));
  EXPECT_FALSE(pto::region_covers(tile(0, 0, 8, 8), tile(0, 0, 8, 8, 64, 1, 2)));  // strided outer
}

// Brute force over random strided views of a small buffer: never a false "no overlap".
TEST(Region, NeverMissesASharedByteOnRandomViews) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    auto rnd = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
    auto make = [&](std::set<int64_t> *bytes) {
      const int64_t rstep = rnd(1, 3), cstep = rnd(1, 3), rows = rnd(1, 5), cols = rnd(1, 5);
      const int64_t r0 = rnd(0, 15 - (rows - 1) * rstep), c0 = rnd(0, 15 - (cols - 1) * cstep);
      const pto::Region reg = tile(r0, c0, rows, cols, 16, rstep, cstep);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          for (int b = 0; b < 4; ++b) bytes->insert(((r0 + r * rstep) * 16 + c0 + c * cstep) * 4 + b);
      return reg;
    };
    std::set<int64_t> ba, bb;
    const pto::Region a = make(&ba), b = make(&bb);
    bool shared = false;
    for (int64_t x : ba) shared |= bb.count(x) != 0;
    ASSERT_EQ(pto::regions_overlap(a, b), shared) << "trial " << trial;  // exact for these sizes
  }
}

}  // namespace
