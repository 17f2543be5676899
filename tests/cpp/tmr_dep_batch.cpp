// tests/cpp/tmr_dep_batch.cpp — white-box tests of batch_deps' batch map
// (src/runtime/tensormap_and_ringbuffer/aicpu/dep_batch.h), driven directly: no device, no worker.
//
// The contract (dep_batch.h): scan() says whether an earlier write of the batch covers the access
// (then the orchestrator skips the TensorMap look-up, and scan reports the conflicting tasks of
// the batch: a read conflicts with writers, a write with writers and readers); otherwise it
// reports the conflicts with the deferred accesses only (the TensorMap holds the filed ones).
// A contiguous write drops the entries it covers; flush() files the deferred accesses that
// survived, in task order, and empties the batch. What that must add up to: every pair of
// conflicting accesses ends up ordered (the later task reaches the earlier one through the
// dependency edges) — checked on random programs against a look-up over all earlier accesses.
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <random>
#include <utility>
#include <vector>

#include "common/test_regions.h"
#include "dep_batch.h"

namespace {

using pto::Region;
using pto::tmr::DepBatch;

using pto_test::flat;
using pto_test::kBuf;
using pto_test::kOther;
using pto_test::tile;

using Kinds = pto::graph::EdgeKindList;

struct Scan {
  std::vector<int64_t> producers;
  bool covered;
};
Scan scan(DepBatch &b, const Region &r, bool write, int64_t task) {
  Scan s;
  s.covered = b.scan(r, write, task, &s.producers, static_cast<Kinds *>(nullptr));
  std::sort(s.producers.begin(), s.producers.end());
  return s;
}

struct Filed {
  int64_t lo, hi, task;
  bool write;
  bool operator==(const Filed &o) const {
    return lo == o.lo && hi == o.hi && task == o.task && write == o.write;
  }
};
std::vector<Filed> flush(DepBatch &b) {
  std::vector<Filed> out;
  EXPECT_TRUE(b.flush([&](const Region &r, bool write, int64_t task) {
    out.push_back(Filed{r.lo, r.hi, task, write});
    return true;
  }));
  return out;
}

TEST(DepBatch, ReadAfterAnEarlierWriteOfTheSameViewFindsItAndSkipsTheTensorMap) {
  DepBatch b(16);
  EXPECT_FALSE(scan(b, flat(0, 16), true, 0).covered);
  ASSERT_TRUE(b.add(flat(0, 16), true, 0, true));
  const Scan s = scan(b, flat(0, 16), false, 1);  // the same view: covered
  EXPECT_EQ(s.producers, std::vector<int64_t>{0});
  EXPECT_TRUE(s.covered);
  const Scan t = scan(b, flat(4, 8), false, 1);  // other bytes: the TensorMap must be asked
  EXPECT_TRUE(t.producers.empty()) << "task 0's write is filed: the TensorMap reports it";
  EXPECT_FALSE(t.covered);
}

TEST(DepBatch, ReadsDoNotOrderReadsAndOtherBuffersAreApart) {
  DepBatch b(16);
  ASSERT_TRUE(b.add(flat(0, 16), false, 0, false));  // deferred: only the batch knows it
  EXPECT_TRUE(scan(b, flat(0, 16), false, 1).producers.empty());
  EXPECT_FALSE(scan(b, flat(0, 16), false, 1).covered) << "a read stands for no older writer";
  EXPECT_TRUE(scan(b, flat(0, 16, kOther), true, 1).producers.empty());
  EXPECT_EQ(scan(b, flat(8, 1), true, 1).producers, std::vector<int64_t>{0}) << "write after read";
}

TEST(DepBatch, ATaskDoesNotDependOnItselfNorIsCoveredByItsOwnWrite) {
  DepBatch b(16);
  ASSERT_TRUE(b.add(flat(0, 16), true, 3, true));
  const Scan s = scan(b, flat(0, 16), false, 3);
  EXPECT_TRUE(s.producers.empty());
  EXPECT_FALSE(s.covered);
}

TEST(DepBatch, ACoveringWriteDropsEntriesAndDeferredOnesAreNeverFiled) {
  DepBatch b(16);
  ASSERT_TRUE(b.add(flat(0, 16), true, 0, true));  // looked up and filed by the TensorMap walk
  Scan s = scan(b, flat(0, 16), false, 1);
  ASSERT_TRUE(s.covered);
  ASSERT_TRUE(b.add(flat(0, 16), false, 1, false));  // deferred
  s = scan(b, flat(0, 16), true, 2);                 // the accumulate pattern: INOUT again
  EXPECT_EQ(s.producers, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(s.covered);
  ASSERT_TRUE(b.add(flat(0, 16), true, 2, false));
  EXPECT_EQ(b.unfiled(), 1u) << "task 1's read: covered by task 2's write before any flush";
  EXPECT_EQ(b.deferred(), 1u);
  // A later reader finds only the covering write; a reader of other bytes is left to the
  // TensorMap, plus the deferred write it overlaps.
  EXPECT_EQ(scan(b, flat(0, 16), false, 3).producers, std::vector<int64_t>{2});
  const Scan part = scan(b, flat(4, 4), false, 3);
  EXPECT_FALSE(part.covered) << "only a write of the very same bytes is found";
  EXPECT_EQ(part.producers, std::vector<int64_t>{2});
  const std::vector<Filed> filed = flush(b);
  EXPECT_EQ(filed, (std::vector<Filed>{{0, 64, 2, true}}));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(flush(b).empty());
}

TEST(DepBatch, FlushFilesSurvivorsInTaskOrderWithTheirRegions) {
  DepBatch b(16);
  ASSERT_TRUE(b.add(tile(0, 0, 4, 4, 2, 2), true, 5, false));
  ASSERT_TRUE(b.add(flat(100, 4), false, 6, true));  // filed by the TensorMap already: skipped
  ASSERT_TRUE(b.add(flat(200, 4), false, 7, false));
  std::vector<std::pair<int64_t, bool>> got;
  ASSERT_TRUE(b.flush([&](const Region &r, bool write, int64_t task) {
    got.emplace_back(task, write);
    if (task == 5) {  // a strided access keeps its geometry
      EXPECT_FALSE(r.contiguous);
      EXPECT_EQ(r.stride[0], 64 * 2 * 4);
      EXPECT_EQ(r.shape[1], 4);
    }
    return true;
  }));
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, bool>>{{5, true}, {7, false}}));
}

TEST(DepBatch, AStoppedFlushResumesWhereItStopped) {
  DepBatch b(4);
  for (int64_t t = 0; t < 3; ++t) ASSERT_TRUE(b.add(flat(16 * t, 4), true, t, false));
  int calls = 0;
  EXPECT_FALSE(b.flush([&](const Region &, bool, int64_t task) { return ++calls, task != 1; }));
  EXPECT_FALSE(b.empty());
  std::vector<int64_t> rest;
  ASSERT_TRUE(b.flush([&](const Region &, bool, int64_t task) { return rest.push_back(task), true; }));
  EXPECT_EQ(rest, (std::vector<int64_t>{1, 2}));
}

TEST(DepBatch, StridedTilesCoverOnlyTheSameGeometryAndDisjointOnesDoNotConflict) {
  DepBatch b(16);
  ASSERT_TRUE(b.add(tile(0, 0, 8, 8, 2, 1), true, 0, false));               // even rows, deferred
  EXPECT_TRUE(scan(b, tile(0, 0, 8, 8, 2, 1), false, 1).covered);           // the same tile
  EXPECT_TRUE(scan(b, tile(1, 0, 8, 8, 2, 1), true, 1).producers.empty());  // odd rows: apart
  const Scan s = scan(b, tile(0, 0, 4, 8, 2, 1), false, 1);                 // a part of it
  EXPECT_EQ(s.producers, std::vector<int64_t>{0});
  EXPECT_FALSE(s.covered) << "only an identical view counts as covered";
  EXPECT_FALSE(scan(b, flat(0, 1), false, 1).covered);
  // The same byte range, contiguous (bytes between the even rows too): not covered.
  EXPECT_FALSE(scan(b, flat(0, 14 * 64 + 8), false, 1).covered);
}

TEST(DepBatch, AFullBatchRefusesAnAdd) {
  DepBatch b(2);
  ASSERT_TRUE(b.add(flat(0, 1), true, 0, true));
  ASSERT_TRUE(b.add(flat(1, 1), true, 1, true));
  EXPECT_FALSE(b.add(flat(2, 1), true, 2, true));
  flush(b);
  EXPECT_TRUE(b.add(flat(2, 1), true, 2, true));
}

// The orchestrator's use of the batch (record_batched / flush_batch) against a global map that
// keeps every filed access and looks up all conflicting ones (no covering, no retirement):
// every conflicting pair of accesses must end up ordered through the edges found.
struct Access {
  Region r;
  bool write;
  int64_t task;
};
bool conflict(const Access &a, const Access &b) {
  return a.task != b.task && (a.write || b.write) && a.r.buffer == b.r.buffer &&
         pto::regions_overlap(a.r, b.r);
}

TEST(DepBatch, RandomProgramsOrderEveryConflictingPairAsTheTensorMapAloneWould) {
  constexpr int kTasks = 256;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&rng](int lo, int hi) {
      return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1));
    };
    // A few views reused often (identical and nested) plus random ones.
    std::vector<Region> pool = {flat(0, 64),
                                flat(0, 16),
                                flat(16, 16),
                                flat(8, 16),
                                tile(0, 0, 4, 4),
                                tile(0, 0, 4, 4, 2, 2),
                                tile(1, 1, 4, 4, 2, 2),
                                flat(0, 64, kOther)};
    const uint32_t batch_size = static_cast<uint32_t>(pick(1, 8));
    DepBatch b(batch_size * 4);
    std::vector<Access> global;  // filed accesses
    std::vector<Access> all;     // every access ever made (the reference)
    std::vector<std::vector<int64_t>> deps(kTasks);
    uint32_t in_batch = 0;
    uint64_t skipped = 0;
    auto do_flush = [&] {
      b.flush([&](const Region &r, bool w, int64_t t) { return global.push_back({r, w, t}), true; });
      in_batch = 0;
    };
    for (int64_t t = 0; t < kTasks; ++t) {
      if (pick(0, 9) == 0) do_flush();  // a kernel or stream change
      const int n = pick(1, 3);
      for (int i = 0; i < n; ++i) {
        const Region r = pick(0, 2) == 0
                             ? tile(pick(0, 7), pick(0, 7), pick(1, 4), pick(1, 4), pick(1, 2), pick(1, 2))
                             : pool[static_cast<size_t>(pick(0, static_cast<int>(pool.size()) - 1))];
        const bool write = pick(0, 1) == 1;
        const Access a{r, write, t};
        const bool covered = b.scan(r, write, t, &deps[t], static_cast<Kinds *>(nullptr));
        if (covered) {
          ++skipped;
        } else {
          for (const Access &g : global)
            if (conflict(a, g)) deps[t].push_back(g.task);
          global.push_back(a);
        }
        ASSERT_TRUE(b.add(r, write, t, !covered));
        all.push_back(a);
      }
      if (++in_batch == batch_size) do_flush();
    }
    // reach[t]: every task t waits for, directly or not.
    std::vector<std::bitset<kTasks>> reach(kTasks);
    for (int64_t t = 0; t < kTasks; ++t) {
      for (int64_t p : deps[t]) {
        ASSERT_LT(p, t) << "an edge must point backwards";
        reach[t].set(static_cast<size_t>(p));
        reach[t] |= reach[p];
      }
    }
    for (size_t j = 0; j < all.size(); ++j) {
      for (size_t i = 0; i < j; ++i) {
        if (!conflict(all[i], all[j])) continue;
        ASSERT_TRUE(reach[all[j].task].test(static_cast<size_t>(all[i].task)))
            << "seed " << seed << ": task " << all[j].task << " is not ordered after task " << all[i].task
            << " (batch " << batch_size << ")";
      }
    }
    if (batch_size > 1) {
      EXPECT_GT(skipped, 0u) << "seed " << seed << ": the batch never saved a look-up";
    }
  }
}

}  // namespace
