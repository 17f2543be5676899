// tests/cpp/core_graph.cpp — white-box tests of the shared graph core's pieces on their own.
//
// Contract under test (src/core/graph/):
//  - ReadyQueueSet: each pool is its own FIFO; an unattached pool is empty and refuses pushes;
//    try_pop_any takes from the lowest non-empty pool of its mask and says which; with many
//    pushers and poppers (try_pop and try_pop_any mixed) every task is taken exactly once.
//  - fanin_release: of the threads finishing a consumer's producers at once, exactly one sees
//    the count reach zero, and it sees the poison any of them stored.
//  - Flat fan-out: the writer packs successor lists back to back, refuses what does not fit,
//    and for_each visits exactly a task's range, in order.
//  - Task timing slots: a slot keeps its tasks' earliest dispatch and latest finish, in any
//    order of the stamps, and touches no other slot; the tag of an untagged launch is 0; the
//    launch check refuses a slot outside 0..15 naming it and the range.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/graph/ready_queue_set.h"
#include "core/graph/task_record.h"
#include "core/launch_check.h"
#include "core/run_counters.h"

namespace {

using pto::graph::FanoutRange;
using pto::graph::pool_bit;
using pto::graph::ReadyQueueSet;
using pto::graph::TaskRecord;

// A set with the given pools attached, `cap` cells each.
struct Queues {
  std::unique_ptr<pto::MpmcCell[]> cells[pto::graph::kPoolCount];
  ReadyQueueSet set;
  Queues(uint32_t pools, uint64_t cap) {
    for (uint32_t p = 0; p < pto::graph::kPoolCount; ++p) {
      if (!(pools & pool_bit(p))) continue;
      cells[p].reset(new pto::MpmcCell[cap]);
      pto::MpmcQueue::format(cells[p].get(), cap, nullptr, 0);
      set.attach(p, cells[p].get(), cap, 0);
    }
  }
};

constexpr uint32_t kAllPools = pool_bit(pto::graph::kPoolCube) | pool_bit(pto::graph::kPoolVector) |
                               pool_bit(pto::graph::kPoolMix) | pool_bit(pto::graph::kPoolAny);

TEST(ReadyQueueSet, EachPoolIsItsOwnFifo) {
  Queues q(kAllPools, 8);
  for (uint64_t t = 0; t < 4; ++t) {
    ASSERT_TRUE(q.set.push(pto::graph::kPoolCube, 100 + t));
    ASSERT_TRUE(q.set.push(pto::graph::kPoolVector, 200 + t));
  }
  uint64_t v;
  for (uint64_t t = 0; t < 4; ++t) {
    ASSERT_TRUE(q.set.try_pop(pto::graph::kPoolVector, &v));
    EXPECT_EQ(v, 200 + t);
  }
  EXPECT_FALSE(q.set.try_pop(pto::graph::kPoolVector, &v));
  EXPECT_TRUE(q.set.probably_empty(pool_bit(pto::graph::kPoolVector)));
  EXPECT_FALSE(q.set.probably_empty(pool_bit(pto::graph::kPoolCube)));
  EXPECT_FALSE(q.set.try_pop(pto::graph::kPoolMix, &v));
  ASSERT_TRUE(q.set.try_pop(pto::graph::kPoolCube, &v));
  EXPECT_EQ(v, 100u);
}

TEST(ReadyQueueSet, UnattachedPoolIsEmptyAndRefusesPushes) {
  Queues q(pool_bit(pto::graph::kPoolCube) | pool_bit(pto::graph::kPoolVector), 4);
  EXPECT_EQ(q.set.attached(), pool_bit(pto::graph::kPoolCube) | pool_bit(pto::graph::kPoolVector));
  EXPECT_FALSE(q.set.push(pto::graph::kPoolMix, 1));
  EXPECT_FALSE(q.set.push(pto::graph::kPoolAny, 1));
  EXPECT_FALSE(q.set.push(pto::graph::kPoolCount, 1)) << "not a pool";
  uint64_t v;
  EXPECT_FALSE(q.set.try_pop(pto::graph::kPoolAny, &v));
  EXPECT_FALSE(q.set.try_pop_any(kAllPools, &v));
  EXPECT_TRUE(q.set.probably_empty(kAllPools));
}

TEST(ReadyQueueSet, PushFailsOnlyWhenThePoolIsFull) {
  Queues q(pool_bit(pto::graph::kPoolVector), 4);
  for (uint64_t t = 0; t < 4; ++t) EXPECT_TRUE(q.set.push(pto::graph::kPoolVector, t));
  EXPECT_FALSE(q.set.push(pto::graph::kPoolVector, 4));
  uint64_t v;
  ASSERT_TRUE(q.set.try_pop(pto::graph::kPoolVector, &v));
  EXPECT_TRUE(q.set.push(pto::graph::kPoolVector, 4));
}

TEST(ReadyQueueSet, TryPopAnyTakesTheLowestNonEmptyPoolOfItsMaskFirst) {
  Queues q(kAllPools, 8);
  ASSERT_TRUE(q.set.push(pto::graph::kPoolAny, 30));
  ASSERT_TRUE(q.set.push(pto::graph::kPoolVector, 10));
  ASSERT_TRUE(q.set.push(pto::graph::kPoolVector, 11));
  ASSERT_TRUE(q.set.push(pto::graph::kPoolCube, 0));
  const uint32_t vector_core = pool_bit(pto::graph::kPoolVector) | pool_bit(pto::graph::kPoolAny);
  uint64_t v;
  uint32_t from = 99;
  // An AIV core: its own pool first, then it steals from `any`; never the cube pool.
  ASSERT_TRUE(q.set.try_pop_any(vector_core, &v, &from));
  EXPECT_EQ(v, 10u);
  EXPECT_EQ(from, pto::graph::kPoolVector);
  ASSERT_TRUE(q.set.try_pop_any(vector_core, &v, &from));
  EXPECT_EQ(v, 11u);
  ASSERT_TRUE(q.set.try_pop_any(vector_core, &v, &from));
  EXPECT_EQ(v, 30u);
  EXPECT_EQ(from, pto::graph::kPoolAny);
  EXPECT_FALSE(q.set.try_pop_any(vector_core, &v, &from));
  EXPECT_FALSE(q.set.probably_empty(kAllPools)) << "the cube task is still there";
  ASSERT_TRUE(q.set.try_pop_any(kAllPools, &v, nullptr));
  EXPECT_EQ(v, 0u);
  EXPECT_FALSE(q.set.try_pop_any(0, &v)) << "an empty mask takes nothing";
}

// P pushers spread tasks over the cube, vector and any pools; half the poppers take with
// try_pop of one pool, half with try_pop_any over all of them. Every task once, none lost.
class ReadyQueueSetStress : public ::testing::TestWithParam<int> {};

TEST_P(ReadyQueueSetStress, EveryTaskIsTakenExactlyOnceByPopAndPopAny) {
  const int threads = GetParam();
  const uint64_t per_pusher = 20000;
  const uint64_t total = per_pusher * static_cast<uint64_t>(threads);
  const uint32_t pools[3] = {pto::graph::kPoolCube, pto::graph::kPoolVector, pto::graph::kPoolAny};
  Queues q(kAllPools, 256);
  std::vector<std::atomic<int>> seen(total);
  std::atomic<uint64_t> taken{0};
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<std::thread> ts;
  for (int p = 0; p < threads; ++p) {
    ts.emplace_back([&, p] {
      for (uint64_t i = 0; i < per_pusher; ++i) {
        const uint64_t id = static_cast<uint64_t>(p) * per_pusher + i;
        while (!q.set.push(pools[id % 3], id)) std::this_thread::yield();
      }
    });
    ts.emplace_back([&, p] {
      uint64_t v;
      while (taken.load(std::memory_order_relaxed) < total && std::chrono::steady_clock::now() < give_up) {
        const bool got = p % 2 ? q.set.try_pop_any(kAllPools, &v)
                               : q.set.try_pop(pools[p % 3], &v) || q.set.try_pop_any(kAllPools, &v);
        if (got) {
          seen[v].fetch_add(1, std::memory_order_relaxed);
          taken.fetch_add(1, std::memory_order_relaxed);
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto &t : ts) t.join();
  ASSERT_EQ(taken.load(), total);
  for (uint64_t i = 0; i < total; ++i) ASSERT_EQ(seen[i].load(), 1) << "task " << i;
  EXPECT_TRUE(q.set.probably_empty(kAllPools));
}

INSTANTIATE_TEST_SUITE_P(Threads, ReadyQueueSetStress, ::testing::Values(1, 2, 4));

TaskRecord *new_record(int32_t fanin) {
  auto *t = new TaskRecord();
  t->fanin_remaining.store(fanin, std::memory_order_relaxed);
  t->poisoned.store(0, std::memory_order_relaxed);
  return t;
}

TEST(FaninRelease, OnlyTheLastProducerMakesTheConsumerReady) {
  std::unique_ptr<TaskRecord> c(new_record(3));
  EXPECT_FALSE(pto::graph::fanin_release(*c, false));
  EXPECT_FALSE(pto::graph::fanin_release(*c, false));
  EXPECT_TRUE(pto::graph::fanin_release(*c, false));
  EXPECT_EQ(c->poisoned.load(), 0u);
  std::unique_ptr<TaskRecord> d(new_record(2));
  EXPECT_FALSE(pto::graph::fanin_release(*d, true));
  EXPECT_EQ(d->poisoned.load(), 1u) << "a failed producer poisons its consumer";
  EXPECT_TRUE(pto::graph::fanin_release(*d, false));
  EXPECT_EQ(d->poisoned.load(), 1u) << "a later good producer does not clear it";
}

// `threads` producers of each of many consumers finish at once. Exactly one of them makes each
// consumer ready, and when one producer of a consumer failed, the thread that made it ready
// sees the poison (the acq_rel decrement publishes it).
class FaninStress : public ::testing::TestWithParam<int> {};

TEST_P(FaninStress, ExactlyOneReleaserPerConsumerAndItSeesThePoison) {
  const int threads = GetParam();
  const int consumers = 5000;
  std::vector<std::unique_ptr<TaskRecord>> recs;
  for (int i = 0; i < consumers; ++i) recs.emplace_back(new_record(threads));
  std::vector<std::atomic<int>> readied(consumers);
  std::atomic<int> missed_poison{0};
  std::atomic<int> go{0};
  std::vector<std::thread> ts;
  for (int p = 0; p < threads; ++p) {
    ts.emplace_back([&, p] {
      while (go.load(std::memory_order_acquire) == 0) std::this_thread::yield();
      for (int i = 0; i < consumers; ++i) {
        const bool poison = i % 7 == 0 && p == i % threads;  // one failed producer of every 7th
        if (pto::graph::fanin_release(*recs[i], poison)) {
          readied[i].fetch_add(1, std::memory_order_relaxed);
          if (i % 7 == 0 && recs[i]->poisoned.load(std::memory_order_relaxed) == 0)
            missed_poison.fetch_add(1);
        }
      }
    });
  }
  go.store(1, std::memory_order_release);
  for (auto &t : ts) t.join();
  for (int i = 0; i < consumers; ++i) {
    ASSERT_EQ(readied[i].load(), 1) << "consumer " << i;
    ASSERT_EQ(recs[i]->fanin_remaining.load(), 0);
  }
  EXPECT_EQ(missed_poison.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Threads, FaninStress, ::testing::Values(1, 2, 4, 8));

TEST(FlatFanout, WriterPacksListsBackToBackAndForEachVisitsExactlyARange) {
  std::vector<uint32_t> edges(6, 0xdead);
  pto::graph::FlatFanoutWriter w(edges.data(), 5);
  const uint32_t a[] = {4, 2}, b[] = {7}, c[] = {1, 3};
  FanoutRange ra{}, rb{}, rc{}, rnone{};
  ASSERT_TRUE(w.append(a, 2, &ra));
  ASSERT_TRUE(w.append(nullptr, 0, &rnone));
  ASSERT_TRUE(w.append(b, 1, &rb));
  ASSERT_TRUE(w.append(c, 2, &rc));
  EXPECT_EQ(w.used(), 5u);
  EXPECT_EQ(ra.begin, 0u);
  EXPECT_EQ(rb.begin, 2u);
  EXPECT_EQ(rc.begin, 3u);
  EXPECT_EQ(rnone.count, 0u);
  EXPECT_EQ(edges[5], 0xdeadu) << "nothing written past the capacity";
  const pto::graph::FlatFanout f(edges.data());
  const auto visit = [&](FanoutRange r) {
    std::vector<uint32_t> out;
    f.for_each(r, [&](uint32_t s) { out.push_back(s); });
    return out;
  };
  EXPECT_EQ(visit(ra), (std::vector<uint32_t>{4, 2}));
  EXPECT_EQ(visit(rb), (std::vector<uint32_t>{7}));
  EXPECT_EQ(visit(rc), (std::vector<uint32_t>{1, 3}));
  EXPECT_TRUE(visit(rnone).empty());
}

TEST(FlatFanout, WriterRefusesAListThatDoesNotFitAndWritesNothing) {
  std::vector<uint32_t> edges(3, 0xdead);
  pto::graph::FlatFanoutWriter w(edges.data(), 3);
  const uint32_t a[] = {1, 2}, b[] = {3, 4};
  FanoutRange r{};
  ASSERT_TRUE(w.append(a, 2, &r));
  EXPECT_FALSE(w.append(b, 2, &r));
  EXPECT_EQ(w.used(), 2u);
  EXPECT_EQ(edges[2], 0xdeadu);
  EXPECT_EQ(r.begin, 0u) << "the range of a refused list is not touched";
}

TEST(TaskTimingSlots, ASlotKeepsItsEarliestDispatchAndLatestFinishAndNoOtherSlotMoves) {
  pto::TaskTimingSlots s;
  const uint8_t tag = pto::graph::timing_tag_of(5);
  ASSERT_EQ(tag, 6);
  EXPECT_EQ(pto::graph::timing_tag_of(-1), 0);  // untagged: the zeroed record's value
  for (uint64_t d : {300u, 100u, 200u}) s.dispatched(tag, d);
  for (uint64_t f : {400u, 900u, 500u}) s.finished(tag, f);
  uint64_t ticks = 0;
  ASSERT_TRUE(s.first_dispatch(5, &ticks));
  EXPECT_EQ(ticks, 100u);
  ASSERT_TRUE(s.last_finish(5, &ticks));
  EXPECT_EQ(ticks, 900u);
  for (uint32_t k = 0; k < PTO_TASK_TIMING_SLOTS; ++k) {
    if (k == 5) continue;
    EXPECT_FALSE(s.first_dispatch(k, &ticks)) << k;
    EXPECT_FALSE(s.last_finish(k, &ticks)) << k;
  }
  // A timed run's virtual clock starts at tick 0: a stamp there is a stamp, not "none".
  pto::TaskTimingSlots at_zero;
  at_zero.dispatched(tag, 0);
  at_zero.finished(tag, 0);
  ASSERT_TRUE(at_zero.first_dispatch(5, &ticks));
  EXPECT_EQ(ticks, 0u);
  ASSERT_TRUE(at_zero.last_finish(5, &ticks));
  EXPECT_EQ(ticks, 0u);
}

TEST(TaskTimingSlots, TheLaunchCheckRefusesASlotOutside0To15NamingIt) {
  const pto::LaunchPlaces places{PTO_CORE_AIV, pto::ClusterLayout{2, 1, 2}, 2};
  pto_status code = PTO_OK;
  for (int32_t slot : {-1, 0, 15}) {
    pto::Launch l;
    l.timing_slot = slot;
    EXPECT_EQ(pto::launch_fault("task 0", l, true, false, places, &code), "") << slot;
  }
  for (int32_t slot : {16, -2}) {
    pto::Launch l;
    l.timing_slot = slot;
    EXPECT_EQ(pto::launch_fault("task 0", l, true, false, places, &code),
              "task 0: task timing slot " + std::to_string(slot) + " (0 .. 15 are allowed; -1: untagged)");
    EXPECT_EQ(code, PTO_INVALID_ARGUMENT);
  }
}

}  // namespace
