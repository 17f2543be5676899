// tests/cpp/core_tensor_map.cpp — white-box tests of the graph core's TensorMap
// (src/core/graph/tensor_map.h), driven directly: no device, no worker.
//
// The contract (tensor_map.h): access() returns every other live task whose recorded access to
// an overlapping region conflicts (writers for a read; writers and readers for a write), then
// records the access; a contiguous write drops the entries it covers; entries of tasks below
// live_from are never returned and reclaim() frees them; with a full pool the look-up still
// happens and access/insert return false until room is made. Built with PTO_DEBUG_CHECKS, so
// every reclaim() that frees something also walks the pool's invariants (check_invariants).
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "common/test_regions.h"
#include "core/check.h"
#include "core/graph/tensor_map.h"
#include "core/trace.h"

namespace {

using pto::Region;
using pto::graph::EdgeKind;
using pto::graph::TensorMap;

// A result list over test-owned storage, large enough for any map of these tests (access()
// requires room for used() more).
template <typename T>
struct List {
  explicit List(uint32_t cap = 4096) : buf(cap), list(buf.data(), cap) {}
  std::vector<T> sorted() const {
    std::vector<T> v(list.begin(), list.end());
    std::sort(v.begin(), v.end());
    return v;
  }
  void clear() { list.clear(); }
  bool empty() const { return list.empty(); }
  std::vector<T> buf;
  pto::graph::FixedList<T> list;
};
using Ids = List<int64_t>;
using Kinds = List<EdgeKind>;

using pto_test::flat;
using pto_test::kBuf;
using pto_test::kOther;
using pto_test::tile;

// The producers one access reports, sorted and deduplicated (as the orchestrator does).
struct Map {
  explicit Map(uint32_t cap) : m(cap) {}
  std::vector<int64_t> access(const Region &r, bool write, int64_t task, int64_t live_from = 0) {
    Ids ids;
    EXPECT_TRUE(m.access(r, write, task, live_from, &ids.list)) << "pool full";
    std::vector<int64_t> out = ids.sorted();
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  std::vector<int64_t> read(const Region &r, int64_t task, int64_t live_from = 0) {
    return access(r, false, task, live_from);
  }
  std::vector<int64_t> write(const Region &r, int64_t task, int64_t live_from = 0) {
    return access(r, true, task, live_from);
  }
  TensorMap m;
};

using V = std::vector<int64_t>;

TEST(TensorMap, TilesOfOneMatrixOverlapOnlyWhereTheyShareElements) {
  Map m(64);
  EXPECT_EQ(m.write(tile(0, 0, 16, 16), 0), V{});
  EXPECT_EQ(m.write(tile(0, 16, 16, 16), 1), V{});         // side by side: byte ranges interleave
  EXPECT_EQ(m.write(tile(16, 0, 16, 16), 2), V{});         // stacked below tile 0
  EXPECT_EQ(m.read(tile(15, 15, 2, 2), 3), (V{0, 1, 2}));  // a 2x2 tile on the corner of three
  EXPECT_EQ(m.read(tile(8, 8, 4, 4), 4), V{0});
  EXPECT_EQ(m.read(tile(4, 16, 4, 48), 5), V{1});               // a row band right of tile 0
  EXPECT_EQ(m.read(tile(32, 0, 32, 64), 6), V{});               // below all of them
  EXPECT_EQ(m.read(tile(0, 0, 16, 16, 1, 1, kOther), 7), V{});  // same offsets, other buffer
}

TEST(TensorMap, SameStartDifferentStrides) {
  Map m(64);
  EXPECT_EQ(m.write(tile(0, 0, 8, 8, 2, 1), 0), V{});  // even rows 0..14, columns 0..7
  EXPECT_EQ(m.read(tile(0, 0, 8, 8, 1, 2), 1), V{0});  // rows 0..7, even columns: share (0,0)...
  EXPECT_EQ(m.read(tile(1, 0, 8, 8, 2, 1), 2), V{});   // odd rows: interleave, never touch
  EXPECT_EQ(m.read(tile(1, 0, 4, 8, 4, 1), 3), V{});   // every 4th row from row 1
  EXPECT_EQ(m.read(tile(2, 0, 4, 8, 4, 1), 4), V{0});  // every 4th row from row 2: all even
  EXPECT_EQ(m.read(tile(0, 8, 8, 8, 2, 1), 5), V{});   // same rows, next columns
  EXPECT_EQ(m.read(flat(14 * 64 + 7, 1), 6), V{0});    // the writer's last element
  EXPECT_EQ(m.read(flat(14 * 64 + 8, 64), 7), V{});    // just past it, contiguous
}

TEST(TensorMap, InterleavedColumnsAndRowsDoNotTouch) {
  Map m(64);
  EXPECT_EQ(m.write(tile(0, 0, 64, 32, 1, 2), 0), V{});  // even columns of the whole matrix
  EXPECT_EQ(m.write(tile(0, 1, 64, 32, 1, 2), 1), V{});  // odd columns: no WAW with task 0
  EXPECT_EQ(m.read(tile(0, 3, 64, 16, 1, 4), 2), V{1});
  EXPECT_EQ(m.read(tile(0, 2, 64, 16, 1, 4), 3), V{0});
  EXPECT_EQ(m.write(tile(0, 0, 64, 64), 4), (V{0, 1, 2, 3}));  // WAW + WAR over everything
}

TEST(TensorMap, ReadsDoNotConflictAndKindsAreReported) {
  TensorMap m(16);
  Ids out;
  Kinds kinds;
  ASSERT_TRUE(m.access(flat(0, 32), false, 0, 0, &out.list, &kinds.list));  // read
  ASSERT_TRUE(m.access(flat(0, 32), false, 1, 0, &out.list, &kinds.list));  // read after read: no edge
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(m.access(flat(16, 32), true, 2, 0, &out.list, &kinds.list));  // WAR on both readers
  ASSERT_TRUE(
      m.access(flat(0, 8), true, 3, 0, &out.list, &kinds.list));  // WAW? no: disjoint from 2; WAR 0, 1
  ASSERT_TRUE(m.access(flat(20, 1), false, 4, 0, &out.list, &kinds.list));  // RAW on 2
  std::vector<EdgeKind> want = {
      {0, pto::kEdgeWar}, {1, pto::kEdgeWar}, {0, pto::kEdgeWar}, {1, pto::kEdgeWar}, {2, pto::kEdgeRaw}};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(kinds.sorted(), want);
  out.clear();
  kinds.clear();
  ASSERT_TRUE(m.access(flat(0, 64), true, 5, 0, &out.list, &kinds.list));
  const std::vector<EdgeKind> last = {
      {0, pto::kEdgeWar}, {1, pto::kEdgeWar}, {2, pto::kEdgeWaw}, {3, pto::kEdgeWaw}, {4, pto::kEdgeWar}};
  EXPECT_EQ(kinds.sorted(), last);
}

TEST(TensorMap, ATasksOwnEarlierAccessIsNotAProducerAndIsNotFiledTwice) {
  Map m(16);
  EXPECT_EQ(m.write(flat(0, 16), 0), V{});
  EXPECT_EQ(m.m.used(), 1u);
  EXPECT_EQ(m.read(flat(0, 16), 0), V{});   // same task: no self edge
  EXPECT_EQ(m.write(flat(0, 16), 0), V{});  // the very same access again: not re-filed
  EXPECT_EQ(m.m.used(), 2u);                // the write and the read
  EXPECT_EQ(m.read(flat(4, 1), 1), V{0});
}

TEST(TensorMap, RetiredProducersAreNeverReturnedAndReclaimFreesThem) {
  Map m(64);
  for (int64_t t = 0; t < 8; ++t) EXPECT_EQ(m.write(flat(t * 16, 16), t), V{});
  EXPECT_EQ(m.m.used(), 8u);
  EXPECT_EQ(m.read(flat(0, 128), 8, /*live_from=*/5), (V{5, 6, 7}));  // 0..4 retired
  // The access first freed the retired entries; what is left: 5, 6, 7 and reader 8.
  EXPECT_EQ(m.m.used(), 4u);
  EXPECT_EQ(m.m.reclaim(9), 4u);  // everyone retired
  EXPECT_EQ(m.m.used(), 0u);
  EXPECT_EQ(m.read(flat(0, 128), 9, 9), V{});
  m.m.check_invariants();
}

TEST(TensorMap, AContiguousWriteSupersedesTheEntriesItCovers) {
  Map m(64);
  EXPECT_EQ(m.write(tile(0, 0, 4, 64), 0), V{});  // rows 0..3, contiguous
  EXPECT_EQ(m.read(tile(1, 0, 1, 64), 1), V{0});  // row 1
  EXPECT_EQ(m.m.used(), 2u);
  EXPECT_EQ(m.write(flat(0, 8 * 64), 2), (V{0, 1}));  // rows 0..7 cover both: they are dropped
  EXPECT_EQ(m.m.used(), 1u);
  // Task 0 and 1 are still live (live_from 0), but task 2 now stands for them.
  EXPECT_EQ(m.read(tile(2, 5, 1, 1), 3), V{2});
  EXPECT_EQ(m.write(flat(0, 1), 4), V{2});  // element (0,0): WAW on 2; reader 3 read (2,5)
  EXPECT_EQ(m.write(tile(2, 5, 1, 1), 5), (V{2, 3}));
}

TEST(TensorMap, AStridedOrPartialWriteSupersedesNothing) {
  Map m(64);
  EXPECT_EQ(m.write(tile(0, 0, 2, 64), 0), V{});          // rows 0..1
  EXPECT_EQ(m.write(tile(0, 0, 64, 64, 1, 1), 1), V{0});  // whole matrix: covers task 0
  EXPECT_EQ(m.m.used(), 1u);
  EXPECT_EQ(m.write(tile(0, 0, 2, 64), 2), V{1});  // rows 0..1 do not cover task 1
  EXPECT_EQ(m.m.used(), 2u);
  EXPECT_EQ(m.write(tile(0, 0, 4, 32, 1, 2), 3), (V{1, 2}));  // strided: covers nothing
  EXPECT_EQ(m.m.used(), 3u);
  EXPECT_EQ(m.read(flat(0, 1), 4), (V{1, 2, 3}));
}

TEST(TensorMap, InsertRecordsWithoutLookUpOrDropping) {
  TensorMap m(16);
  ASSERT_TRUE(m.insert(flat(0, 64), true, 0, 0));
  ASSERT_TRUE(m.insert(flat(0, 64), true, 1, 0));  // manual scope: no edge, no supersede
  ASSERT_TRUE(m.insert(flat(0, 64), true, 1, 0));  // the same access again: not re-filed
  EXPECT_EQ(m.used(), 2u);
  Ids out;
  ASSERT_TRUE(m.access(flat(8, 1), false, 2, 0, &out.list));
  EXPECT_EQ(out.sorted(), (V{0, 1}));
}

TEST(TensorMap, AFullPoolStillLooksUpAndRefusesToRecord) {
  TensorMap m(4);
  EXPECT_EQ(m.capacity(), 4u);
  for (int64_t t = 0; t < 4; ++t) ASSERT_TRUE(m.insert(flat(t * 16, 16), true, t, 0));
  EXPECT_EQ(m.used(), 4u);
  EXPECT_FALSE(m.insert(flat(100, 4), false, 4, 0));
  Ids out;
  EXPECT_FALSE(m.access(flat(8, 16), false, 4, 0, &out.list));  // the look-up is done all the same
  EXPECT_EQ(out.sorted(), (V{0, 1}));
  EXPECT_FALSE(m.add(flat(8, 16), false, 4));
  EXPECT_EQ(m.used(), 4u);
  EXPECT_TRUE(m.access(Region{}, true, 4, 0, &out.list));  // an empty region needs no entry
  // What the orchestrator does next: reclaim once a producer retired, then add.
  EXPECT_EQ(m.reclaim(0), 0u);
  EXPECT_EQ(m.reclaim(1), 1u);
  EXPECT_TRUE(m.add(flat(8, 16), false, 4));
  EXPECT_EQ(m.used(), 4u);
  out.clear();
  EXPECT_FALSE(m.access(flat(8, 1), true, 5, 1, &out.list));  // full again; WAR on reader 4 only
  EXPECT_EQ(out.sorted(), V{4});
  m.check_invariants();
  // A write that covers entries frees them during its own walk, and so finds room.
  out.clear();
  EXPECT_TRUE(m.access(flat(0, 64), true, 5, 1, &out.list));
  EXPECT_EQ(out.sorted(), (V{1, 2, 3, 4}));
  EXPECT_EQ(m.used(), 1u);
  m.check_invariants();
}

// The result list must hold a look-up's worst case (used() more ids): a list that could
// overflow is refused up front, not filled short.
TEST(TensorMapDeathTest, AResultListWithoutRoomForUsedIsRefused) {
  TensorMap m(8);
  for (int64_t t = 0; t < 3; ++t) ASSERT_TRUE(m.insert(flat(t * 16, 16), true, t, 0));
  int64_t storage[2];
  pto::graph::IdList small(storage, 2);
  EXPECT_DEATH(m.access(flat(0, 64), false, 3, 0, &small), "no room for used\\(\\) more producers");
}

// A view spanning far more granules than kMaxProbes over a buffer written in 64-byte pieces:
// the look-up scans the pool instead of probing, and must still find every piece.
TEST(TensorMap, AHugeViewOverSmallPiecesFindsEveryOne) {
  Map m(1024);
  for (int64_t t = 0; t < 300; ++t) EXPECT_EQ(m.write(flat(t * 16, 16), t), V{});  // 64 B each
  V all(300);
  for (int64_t t = 0; t < 300; ++t) all[static_cast<size_t>(t)] = t;
  EXPECT_EQ(m.read(flat(0, 300 * 16), 300), all);
  const int64_t shape[1] = {150}, strides[1] = {32};  // the first element of every other piece
  EXPECT_EQ(m.read(pto::make_region(kBuf, 0, 4, 1, shape, strides), 301).size(), 150u);
  EXPECT_EQ(m.write(flat(0, 300 * 16), 302).size(), 302u);  // all writers and both readers
  // Entries the pool scan found and the write covers are dropped as a chain walk drops them:
  // a later reader of any piece waits for the covering write alone.
  EXPECT_EQ(m.read(flat(17, 1), 303), V{302});
  m.m.check_invariants();
}

// ---- randomized, against a brute-force reference ----------------------------------------------

constexpr int64_t kBufBytes = 4096;
// Which bytes of the buffer a view touches. A bitset, so the reference's overlap test is a few
// word-wide ANDs (bit by bit, it was 45 s of each brute-force test under ASan).
using Bytes = std::bitset<kBufBytes>;

struct RefEntry {
  Region r;
  Bytes bytes;
  int64_t task;
  bool write;
};

Bytes touched(const Region &r) {
  Bytes b;
  int64_t idx[Region::kMaxDims] = {};
  int64_t n = 1;
  for (uint32_t d = 0; d < r.ndim; ++d) n *= r.shape[d];
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = r.base;
    for (uint32_t d = 0; d < r.ndim; ++d) off += idx[d] * r.stride[d];
    for (uint32_t e = 0; e < r.esize; ++e) b.set(static_cast<size_t>(off + e));
    for (uint32_t d = r.ndim; d-- > 0;) {
      if (++idx[d] < r.shape[d]) break;
      idx[d] = 0;
    }
  }
  return b;
}

bool share_a_byte(const Bytes &a, const Bytes &b) {
  return (a & b).any();
}

// A random view of 1-3 dimensions inside a 4 KiB buffer: dense, gapped, matrix strides, and (with
// `any_strides`) broadcasts (stride 0), extent-1 dimensions with any stride and dimensions in
// any order (transposed), whose elements may repeat. `contiguous` is exact for all of them
// (core/region.h), so the map must be too.
Region random_view(std::mt19937 &rng, uint64_t buf, Bytes *bytes, bool any_strides = false) {
  auto rnd = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % (hi - lo + 1)); };
  for (;;) {
    const uint32_t esize = rng() % 4 == 0 ? 2 : 4;
    const int64_t elems = kBufBytes / esize;
    const uint32_t ndim = static_cast<uint32_t>(rnd(1, 3));
    int64_t shape[3], strides[3];
    int64_t span = 1;  // elements from the first to the last, plus one
    for (uint32_t d = ndim; d-- > 0;) {
      shape[d] = rnd(1, 8);
      const int kind = static_cast<int>(rng() % 4);
      // dense inside, a gap, or a fixed matrix stride (tiles of a 32-wide matrix)
      strides[d] = kind == 0 ? span : kind == 1 ? span + rnd(1, 8) : kind == 2 ? rnd(1, 4) : 32 * rnd(1, 2);
      if (any_strides && rng() % 4 == 0) strides[d] = rng() % 2 ? 0 : rnd(0, 40);  // broadcast or any
      if (any_strides && rng() % 4 == 0) shape[d] = 1;
      span += (shape[d] - 1) * strides[d];
    }
    if (any_strides && ndim > 1 && rng() % 3 == 0) {  // transposed: the dimensions in another order
      std::swap(shape[0], shape[ndim - 1]);
      std::swap(strides[0], strides[ndim - 1]);
    }
    if (span > elems) continue;
    const int64_t offset = rnd(0, elems - span);
    const Region r = pto::make_region(buf, offset, esize, ndim, shape, strides);
    *bytes = touched(r);
    const int64_t count = static_cast<int64_t>(bytes->count());
    int64_t n = 1;
    for (uint32_t d = 0; d < ndim; ++d) n *= shape[d];
    if (!any_strides && count != n * esize) continue;  // an element touched twice
    return r;
  }
}

void matches_brute_force(uint32_t seed, bool any_strides) {
  std::mt19937 rng(seed);
  const uint64_t bufs[2] = {0x100000, 0x200000};
  for (int round = 0; round < 40; ++round) {
    const uint32_t cap = 8 + rng() % 56;  // small pools: full often
    TensorMap m(cap);
    std::vector<RefEntry> ref;
    int64_t live_from = 0;
    int fulls = 0;
    for (int64_t task = 0; task < 400; ++task) {
      if (rng() % 3 == 0) live_from += static_cast<int64_t>(rng() % 4);  // some tasks retire
      if (live_from > task) live_from = task;
      ref.erase(std::remove_if(ref.begin(), ref.end(), [&](const RefEntry &e) { return e.task < live_from; }),
                ref.end());
      const int accesses = 1 + static_cast<int>(rng() % 3);
      for (int a = 0; a < accesses; ++a) {
        const uint64_t buf = bufs[rng() % 2];
        Bytes bytes;
        const Region r = random_view(rng, buf, &bytes, any_strides);
        const bool write = rng() % 2 == 0;
        // The reference: every live entry of another task that conflicts and shares a byte.
        std::set<int64_t> want;
        std::vector<RefEntry> kept;
        for (const RefEntry &e : ref) {
          const bool hit =
              e.r.buffer == buf && e.task != task && (write || e.write) && share_a_byte(e.bytes, bytes);
          if (hit) want.insert(e.task);
          if (hit && write && r.contiguous && r.lo <= e.r.lo && e.r.hi <= r.hi) continue;  // superseded
          kept.push_back(e);
        }
        ref = std::move(kept);
        bool dup = false;
        for (const RefEntry &e : ref)
          dup |= e.task == task && e.write == write && e.r.buffer == buf && e.r.lo == r.lo &&
                 e.r.hi == r.hi && e.r.contiguous && r.contiguous;
        if (!dup) ref.push_back(RefEntry{r, bytes, task, write});

        Ids out;
        bool recorded = m.access(r, write, task, live_from, &out.list);
        std::set<int64_t> got(out.list.begin(), out.list.end());
        ASSERT_EQ(got, want) << "round " << round << " task " << task << " access " << a
                             << (write ? " write" : " read") << " [" << r.lo << ", " << r.hi << ")";
        if (!recorded) {  // as the orchestrator: reclaim, else retire the oldest live task, then add
          ++fulls;
          while (m.reclaim(live_from) == 0) {
            ++live_from;
            ASSERT_LE(live_from, task) << "pool of " << cap << " full of task " << task << "'s own entries";
            ref.erase(
                std::remove_if(ref.begin(), ref.end(), [&](const RefEntry &e) { return e.task < live_from; }),
                ref.end());
          }
          ASSERT_TRUE(m.add(r, write, task));
        }
      }
      if (task % 50 == 49) {
        m.reclaim(live_from);
        m.check_invariants();
        ASSERT_EQ(m.used(), ref.size()) << "round " << round << " task " << task;
      }
    }
    EXPECT_GT(fulls, 0) << "round " << round << ": the pool never filled";
  }
}

TEST(TensorMap, MatchesBruteForceOnRandomStridedViews) {
  matches_brute_force(20261124, false);
}

// Broadcasts, extent-1 dimensions and transposed views: more of them are contiguous now that the
// test is exact, and a contiguous entry keeps no shape (region_meets_bytes decides against it).
TEST(TensorMap, MatchesBruteForceOnBroadcastAndTransposedViews) {
  matches_brute_force(977, true);
}

// Entries that keep no copy of their region: a contiguous one (its bytes) and a one-dimensional
// strided one (a column: stride and element size in its filter) are compared with strided and
// contiguous views exactly; a column with a stride of 4 GiB or more has no filter and is copied.
TEST(TensorMap, EntriesWithoutACopyOfTheirRegionAreComparedExactly) {
  Map m(64);
  EXPECT_EQ(m.write(flat(64 + 8, 8), 0), V{});  // row 1, columns 8..15: contiguous
  const int64_t col_shape[1] = {64}, col_stride[1] = {64};
  const Region column3 = pto::make_region(kBuf, 3, 4, 1, col_shape, col_stride);
  EXPECT_FALSE(column3.contiguous);
  EXPECT_EQ(m.write(column3, 1), V{});                 // column 3: one strided dimension
  EXPECT_EQ(m.read(tile(0, 0, 2, 8), 2), V{1});        // rows 0..1, columns 0..7: the column only
  EXPECT_EQ(m.read(tile(0, 8, 4, 4), 3), V{0});        // the contiguous write's row, not the column
  EXPECT_EQ(m.read(tile(2, 4, 8, 8), 4), V{});         // between them, strided
  EXPECT_EQ(m.read(flat(2 * 64 + 4, 64), 5), V{1});    // row 2 from column 4 to row 3's column 3
  EXPECT_EQ(m.read(flat(2 * 64 + 4, 63), 6), V{});     // ... one short of it
  EXPECT_EQ(m.read(tile(0, 2, 64, 1, 1, 1), 7), V{});  // column 2
  EXPECT_EQ(m.read(tile(5, 3, 1, 1), 8), V{1});
  // A 1-D view whose elements are 4 GiB apart (a made-up huge buffer): no filter, copied whole.
  const int64_t far_shape[1] = {2}, far_stride[1] = {int64_t{1} << 31};
  const Region far = pto::make_region(kOther, 0, 4, 1, far_shape, far_stride);
  EXPECT_EQ(m.write(far, 9), V{});
  const int64_t one[1] = {1}, unit[1] = {1};
  EXPECT_EQ(m.read(pto::make_region(kOther, int64_t{1} << 31, 4, 1, one, unit), 10), V{9});
  EXPECT_EQ(m.read(pto::make_region(kOther, 1, 4, 1, one, unit), 11), V{});
  m.m.check_invariants();
}

TEST(TensorMapDeathTest, ABrokenCheckNamesItselfAndAborts) {
  EXPECT_DEATH(PTO_CHECK(1 + 1 == 3, "arithmetic is off"), "check failed: 1 \\+ 1 == 3: arithmetic is off");
#if PTO_DCHECK_IS_ON
  EXPECT_DEATH(PTO_DCHECK(false, "debug check"), "debug check");
#endif
}

}  // namespace
