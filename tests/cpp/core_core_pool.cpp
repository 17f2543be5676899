// tests/cpp/core_core_pool.cpp — white-box test of CorePool's dispatch policy, cores played by hand.
//
// Contract: idle cores are served first; while kernels are short (moving average below
// pipeline_ticks) a running core is also handed up to kDepth - 1 more tasks, which collect
// reports in dispatch order; long kernels, pipeline_ticks 0 or a MIX part in flight stop the
// queueing; under the short-task cap only the warm core works, with its queue full.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/core_pool.h"

namespace {

using pto::CorePool;
using pto::Handshake;

constexpr uint32_t kClusters = 2;  // slots 0, 1: AIC; 2..5: AIV
constexpr uint32_t kDepth = CorePool::kDepth;

struct Fixture {
  std::unique_ptr<Handshake[]> slots{new Handshake[3 * kClusters]};
  pto::Doorbell bell;
  std::unique_ptr<pto::MpmcCell[]> cells[3];
  pto::graph::ReadyQueueSet queues;  // cube, vector, mix
  pto::DispatchPayload payload{0, 0};
  CorePool pool;
  uint64_t clock = 1000;

  Fixture(uint64_t short_ticks, uint64_t pipeline_ticks) {
    for (uint32_t s = 0; s < 3 * kClusters; ++s)
      slots[s].core_type = s < kClusters ? PTO_CORE_AIC : PTO_CORE_AIV;
    for (int q = 0; q < 3; ++q) {
      cells[q].reset(new pto::MpmcCell[64]);
      pto::MpmcQueue::format(cells[q].get(), 64, nullptr, 0);
      queues.attach(q, cells[q].get(), 64, 0);
    }
    pool.init(slots.get(), pto::ClusterLayout{kClusters, 1, 2}, kClusters, 0, 1, &bell, false, false,
              short_ticks, pipeline_ticks);
  }
  void push(int q, uint64_t first, uint64_t n) {
    for (uint64_t t = first; t < first + n; ++t) ASSERT_TRUE(queues.push(q, t));
  }
  // One feed pass; returns the tasks dispatched, in order, with their cores' slots.
  std::vector<std::pair<int64_t, uint32_t>> feed() {
    std::vector<std::pair<int64_t, uint32_t>> out;
    pool.feed(
        queues,
        [&](int64_t t, uint32_t core) {
          pool.dispatch(core, t, &payload);
          out.emplace_back(t, pool.slot(core));
          return true;
        },
        [&](int64_t t, uint32_t cluster) {
          const pto::DispatchPayload *parts[3] = {&payload, &payload, &payload};
          pool.dispatch_mix(cluster, t, parts);
          out.emplace_back(t, pool.cluster_aic_slot(cluster));
          return true;
        });
    return out;
  }
  // Payloads dispatched to `slot` since the last mark().
  uint32_t dispatched(uint32_t slot) const { return slots[slot].dispatch.seq.load() - marks[slot]; }
  void mark() {
    for (uint32_t s = 0; s < 3 * kClusters; ++s) marks[s] = slots[s].dispatch.seq.load();
  }
  uint32_t marks[3 * kClusters] = {};
  // The core at `slot` finishes its next payload after `ticks`.
  void finish_one(uint32_t slot, uint64_t ticks) {
    Handshake &hs = slots[slot];
    const uint32_t s = hs.done_seq.load() + 1;
    ASSERT_LE(s, hs.dispatch.seq.load()) << "slot " << slot << " has nothing left to finish";
    hs.report[s % kDepth].kernel_start = clock;
    clock += ticks;
    hs.report[s % kDepth].kernel_end = clock;
    hs.done_seq.store(s, std::memory_order_release);
  }
  std::vector<int64_t> collect() {
    std::vector<int64_t> done;
    pool.collect([&](int64_t t, const pto::CoreTiming &) { done.push_back(t); });
    return done;
  }
};

// Every fixture below that wants queueing first times one short kernel (nothing is queued
// before the pool has seen one).
void time_one_kernel(Fixture &f) {
  f.push(PTO_CORE_AIV, 1000, 1);
  const auto d = f.feed();
  ASSERT_EQ(d.size(), 1u);
  f.finish_one(d[0].second, 10);
  ASSERT_EQ(f.collect().size(), 1u);
  f.mark();
}

// Idle cores are found by their bits from the warm core (the last to report) on, wrapping
// around; what no idle core takes stays queued.
TEST(CorePool, IdleCoresAreServedFromTheWarmCoreOnWrappingAround) {
  Fixture f(0, 0);
  f.pool.dispatch(4, 100, &f.payload);  // core 4 is cluster 1's first AIV core (slot 4)
  f.finish_one(4, 10);
  EXPECT_EQ(f.collect(), std::vector<int64_t>{100});
  f.push(PTO_CORE_AIV, 0, 5);
  const auto got = f.feed();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], std::make_pair(int64_t{0}, 4u));  // the warm core first
  EXPECT_EQ(got[1], std::make_pair(int64_t{1}, 5u));
  EXPECT_EQ(got[2], std::make_pair(int64_t{2}, 2u));  // then from the first core on
  EXPECT_EQ(got[3], std::make_pair(int64_t{3}, 3u));
  uint64_t t = 0;
  ASSERT_TRUE(f.queues.try_pop(PTO_CORE_AIV, &t));
  EXPECT_EQ(t, 4u);
  // A core that reports becomes idle again and takes the next task.
  f.push(PTO_CORE_AIV, 5, 1);
  f.finish_one(3, 10);
  EXPECT_EQ(f.collect(), std::vector<int64_t>{3});
  EXPECT_EQ(f.feed(), (std::vector<std::pair<int64_t, uint32_t>>{{5, 3u}}));
}

TEST(CorePool, NoQueueingBeforeAKernelWasTimed) {
  Fixture f(0, 1000);
  f.push(PTO_CORE_AIV, 0, 20);
  EXPECT_EQ(f.feed().size(), 4u) << "one per AIV core: a long first kernel must not hold a second";
  EXPECT_TRUE(f.pool.needs_help(f.queues));
}

TEST(CorePool, IdleCoresFirstThenRunningOnesGetTheNextTasksWhileKernelsAreShort) {
  Fixture f(0, 1000);
  time_one_kernel(f);
  f.push(PTO_CORE_AIV, 0, 20);
  const auto d = f.feed();
  ASSERT_EQ(d.size(), 4u * kDepth) << "4 AIV cores, kDepth places each";
  for (uint32_t k = 0; k < 4; ++k) EXPECT_GE(d[k].second, kClusters) << "an AIV core";
  for (uint32_t k = 0; k < 4; ++k)
    for (uint32_t j = 0; j < k; ++j) EXPECT_NE(d[k].second, d[j].second) << "the first four go to idle cores";
  for (uint32_t s = kClusters; s < 3 * kClusters; ++s) EXPECT_EQ(f.dispatched(s), kDepth);
  for (uint32_t s = 0; s < kClusters; ++s) EXPECT_EQ(f.dispatched(s), 0u) << "no AIV task on an AIC core";
  EXPECT_EQ(f.pool.busy(), 4u * kDepth);
  EXPECT_TRUE(f.pool.needs_help(f.queues)) << "4 tasks left and no place for them";

  // One core finishes everything it holds: reported in the order it was handed them.
  const uint32_t slot = d[0].second;
  std::vector<int64_t> want;
  for (const auto &[t, s] : d)
    if (s == slot) want.push_back(t);
  for (uint32_t k = 0; k < kDepth; ++k) f.finish_one(slot, 10);
  EXPECT_EQ(f.collect(), want);
  EXPECT_EQ(f.pool.busy(), 3u * kDepth);
  EXPECT_EQ(f.feed().size(), 4u) << "the four left fill the core that became idle";
}

TEST(CorePool, NoQueueingWhenTurnedOff) {
  Fixture f(0, 0);
  f.push(PTO_CORE_AIV, 0, 20);
  EXPECT_EQ(f.feed().size(), 4u);
  EXPECT_TRUE(f.pool.needs_help(f.queues));
}

TEST(CorePool, LongKernelsStopTheQueueing) {
  Fixture f(0, 1000);
  time_one_kernel(f);
  f.push(PTO_CORE_AIV, 0, 40);
  ASSERT_EQ(f.feed().size(), 4u * kDepth);
  for (uint32_t s = kClusters; s < 3 * kClusters; ++s) {
    for (uint32_t k = 0; k < kDepth; ++k) f.finish_one(s, 100000);
  }
  EXPECT_EQ(f.collect().size(), 4u * kDepth);
  EXPECT_EQ(f.feed().size(), 4u) << "kernels average far above pipeline_ticks: one task per core";
  EXPECT_FALSE(f.pool.core_for(PTO_CORE_AIV) >= 0) << "no idle AIV core and no queueing";
}

TEST(CorePool, UnderTheShortTaskCapOnlyTheWarmCoreWorksWithItsQueueFull) {
  Fixture f(1000, 1000);
  time_one_kernel(f);
  f.push(PTO_CORE_AIV, 0, 20);
  const auto d = f.feed();
  ASSERT_EQ(d.size(), kDepth);
  for (const auto &[t, s] : d) EXPECT_EQ(s, d[0].second);
  EXPECT_TRUE(f.pool.needs_help(f.queues)) << "the rest is for peers";
}

TEST(CorePool, NothingIsQueuedBehindAMixTask) {
  Fixture f(0, 1000);
  time_one_kernel(f);
  f.push(PTO_CORE_MIX, 100, 1);
  f.push(PTO_CORE_AIV, 0, 20);
  const auto d = f.feed();
  // Cluster 0 takes the MIX task; only cluster 1's two AIV cores take single tasks.
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].first, 100);
  EXPECT_EQ(d.size(), 1u + 2u * kDepth);
  for (uint32_t s : {0u, kClusters + 0u, kClusters + 1u}) EXPECT_EQ(f.dispatched(s), 1u) << "slot " << s;
  for (uint32_t k = 0; k < 3; ++k) f.finish_one(k == 0 ? 0 : kClusters + k - 1, 10);
  EXPECT_EQ(f.collect(), std::vector<int64_t>{100})
      << "the MIX task reported once, when its three parts are done";
}

}  // namespace

// Regression: a task the feed walk takes for one idle core may fill others too (an SPMD task's
// blocks go to every place core_for finds, queued up to kDepth while kernels are short). The
// walk then reaches such a core, no longer idle and maybe full: it must skip it. It used to hand
// it one more task, whose dispatch overwrote a place the core had not run yet (the core ran one
// block twice and another never; tests/cpp/test_launch_model.cpp failed now and then).
TEST(CorePool, TheFeedWalkSkipsACoreThatATakeForAnEarlierOneFilled) {
  Fixture f(0, 1000);
  time_one_kernel(f);
  f.push(PTO_CORE_AIV, 1, 2);  // the first fills every AIV core; the second must wait
  std::vector<std::pair<int64_t, uint32_t>> out;
  f.pool.feed(
      f.queues,
      [&](int64_t t, uint32_t core) {
        f.pool.dispatch(core, t, &f.payload);
        out.emplace_back(t, f.pool.slot(core));
        for (int32_t more; (more = f.pool.core_for(PTO_CORE_AIV)) >= 0;) {  // as start_each_block
          f.pool.dispatch(static_cast<uint32_t>(more), t, &f.payload);
          out.emplace_back(t, f.pool.slot(static_cast<uint32_t>(more)));
        }
        return true;
      },
      [](int64_t, uint32_t) { return false; });
  ASSERT_EQ(out.size(), 4u * kDepth) << "task 1 in every place of the four AIV cores";
  for (const auto &d : out) EXPECT_EQ(d.first, 1);
  for (uint32_t slot = 2; slot < 6; ++slot) EXPECT_EQ(f.dispatched(slot), kDepth) << "slot " << slot;
  uint64_t left;
  EXPECT_TRUE(f.queues.try_pop(PTO_CORE_AIV, &left));
  EXPECT_EQ(left, 2u);
}
