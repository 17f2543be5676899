// tests/cpp/core_region.cpp — white-box tests of strided-view overlap (src/core/region.h).
//
// Contract: regions_overlap never answers false for views that share a byte; it answers
// exactly for disjoint byte ranges, for tiles of one matrix, and for small views.
#include <gtest/gtest.h>

#include <initializer_list>
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

// The bytes a region touches, one by one (brute force).
std::set<int64_t> bytes_of(const pto::Region &r) {
  std::set<int64_t> out;
  int64_t idx[pto::Region::kMaxDims] = {};
  int64_t n = 1;
  for (uint32_t d = 0; d < r.ndim; ++d) n *= r.shape[d];
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = r.base;
    for (uint32_t d = 0; d < r.ndim; ++d) off += idx[d] * r.stride[d];
    for (uint32_t b = 0; b < r.esize; ++b) out.insert(off + b);
    for (uint32_t d = r.ndim; d-- > 0;) {
      if (++idx[d] < r.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// A random view of 1-4 dimensions: extents 0-4 (1 often), strides 0-9 elements in any order
// (broadcasts, gaps, transposed and overlapping elements included).
pto::Region random_region(std::mt19937 &rng, uint32_t *esize_out = nullptr) {
  const uint32_t esize = 1u << (rng() % 3);
  const uint32_t ndim = 1 + rng() % 4;
  int64_t shape[4], strides[4];
  for (uint32_t d = 0; d < ndim; ++d) {
    shape[d] = rng() % 3 == 0 ? 1 : static_cast<int64_t>(rng() % 5);
    strides[d] = static_cast<int64_t>(rng() % 10);
  }
  if (esize_out) *esize_out = esize;
  return pto::make_region(0x1000, static_cast<int64_t>(rng() % 8), esize, ndim, shape, strides);
}

// contiguous must say exactly whether the touched bytes are all of [lo, hi).
TEST(Region, ContiguousIsExactOnRandomViews) {
  std::mt19937 rng(11);
  int dense = 0, sparse = 0;
  for (int trial = 0; trial < 50000; ++trial) {
    const pto::Region r = random_region(rng);
    if (r.empty()) continue;
    const std::set<int64_t> b = bytes_of(r);
    const bool want =
        static_cast<int64_t>(b.size()) == r.hi - r.lo && *b.begin() == r.lo && *b.rbegin() == r.hi - 1;
    ASSERT_EQ(r.contiguous, want) << "trial " << trial;
    (want ? dense : sparse) += 1;
  }
  EXPECT_GT(dense, 1000);
  EXPECT_GT(sparse, 1000);
}

TEST(Region, ContiguousCases) {
  using L = std::initializer_list<int64_t>;
  auto contiguous = [](uint32_t ndim, L shape, L strides) {
    return pto::make_region(0x1000, 0, 4, ndim, shape.begin(), strides.begin()).contiguous;
  };
  EXPECT_TRUE(contiguous(2, {8, 16}, {16, 1}));  // row-major
  EXPECT_TRUE(contiguous(2, {16, 8}, {1, 16}));  // column-major (transposed)
  EXPECT_FALSE(contiguous(3, {1, 4, 16}, {999, 64, 1}));  // rows 64 apart: gaps
  EXPECT_TRUE(contiguous(3, {1, 4, 16}, {999, 16, 1}));   // a leading extent-1 dimension
  EXPECT_TRUE(contiguous(2, {4, 1}, {1, 7}));  // a trailing extent-1 dimension
  EXPECT_TRUE(contiguous(2, {3, 4}, {0, 1}));  // a broadcast row: the same 4 elements
  EXPECT_TRUE(contiguous(2, {2, 2}, {1, 1}));  // overlapping elements, no gap
  // Two elements 3 apart, each repeated: 4 elements' worth of range, 2 touched. (Equal counts
  // made this "contiguous" before the test was exact.)
  EXPECT_FALSE(contiguous(2, {2, 2}, {3, 0}));
  EXPECT_FALSE(contiguous(2, {8, 8}, {16, 1}));  // a tile of a wider matrix
  EXPECT_FALSE(contiguous(1, {4}, {2}));
}

// region_meets_bytes: exact whenever it answers (nested views: tiles, columns), against the bytes.
TEST(Region, MeetsBytesIsExactOnRandomViews) {
  std::mt19937 rng(13);
  int answered = 0;
  for (int trial = 0; trial < 50000; ++trial) {
    const pto::Region s = random_region(rng);
    const int64_t lo = static_cast<int64_t>(rng() % 200), hi = lo + 1 + static_cast<int64_t>(rng() % 20);
    const int got = pto::region_meets_bytes(s, lo, hi);
    if (got < 0) continue;
    ++answered;
    bool want = false;
    for (int64_t b : bytes_of(s)) want |= lo <= b && b < hi;
    ASSERT_EQ(got == 1, want) << "trial " << trial << " [" << lo << ", " << hi << ")";
  }
  EXPECT_GT(answered, 20000);
  // Tiles of a matrix are nested: always answered.
  EXPECT_EQ(pto::region_meets_bytes(tile(0, 0, 8, 8), 8 * 4, 64 * 4), 0);  // rest of row 0
  EXPECT_EQ(pto::region_meets_bytes(tile(0, 0, 8, 8), 8 * 4, 64 * 4 + 1), 1);
}

// A contiguous view against a strided one is exact for any size (no enumeration limit).
TEST(Region, ContiguousAgainstLargeTilesIsExact) {
  const int64_t shape[2] = {100, 100}, strides[2] = {1000, 1};
  const pto::Region t = pto::make_region(0x1000, 0, 4, 2, shape, strides);  // 10,000 elements
  const int64_t n[1] = {800}, one[1] = {1};
  EXPECT_FALSE(pto::regions_overlap(t, pto::make_region(0x1000, 100, 4, 1, n, one)));  // the gap
  EXPECT_TRUE(pto::regions_overlap(t, pto::make_region(0x1000, 99, 4, 1, n, one)));
  EXPECT_TRUE(pto::regions_overlap(pto::make_region(0x1000, 900, 4, 1, n, one), t));  // reaches 1000
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

namespace {

// Any two random views (broadcasts, transposes, overlapping elements): never a false "no
// overlap", and exact when one of them is contiguous and the other nested.
TEST(Region, NeverMissesASharedByteOnAnyRandomViews) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 30000; ++trial) {
    const pto::Region a = random_region(rng), b = random_region(rng);
    const std::set<int64_t> ba = bytes_of(a), bb = bytes_of(b);
    bool shared = false;
    for (int64_t x : ba) shared |= bb.count(x) != 0;
    const bool got = pto::regions_overlap(a, b);
    if (shared) {
      ASSERT_TRUE(got) << "trial " << trial;
    }
    if (a.contiguous && pto::region_meets_bytes(b, a.lo, a.hi) >= 0) {
      ASSERT_EQ(got, shared) << "trial " << trial;
    }
  }
}

}  // namespace
