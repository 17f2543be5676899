// tests/cpp/core_mpmc_queue.cpp — white-box test of the bounded MPMC ready queue.
//
// Contract: with P producers and C consumers, every pushed value is popped exactly once;
// push fails only when full and pop only when empty; a bulk push (try_push_many) puts all its
// values in, in order, or none.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "core/mpmc_queue.h"

namespace {

TEST(MpmcQueue, FormatPrefillsInOrderAndReportsFullAndEmpty) {
  std::vector<pto::MpmcCell> cells(4);
  const uint64_t init[] = {10, 11};
  pto::MpmcQueue::format(cells.data(), 4, init, 2);
  pto::MpmcQueue q;
  q.attach(cells.data(), 4, 2);
  EXPECT_TRUE(q.try_push(12));
  EXPECT_TRUE(q.try_push(13));
  EXPECT_FALSE(q.try_push(14));
  uint64_t v;
  for (uint64_t want : {10, 11, 12, 13}) {
    ASSERT_TRUE(q.try_pop(&v));
    EXPECT_EQ(v, want);
  }
  EXPECT_FALSE(q.try_pop(&v));
}

TEST(MpmcQueue, PushManyIsAllOrNothingInOrderAndWrapsAround) {
  std::vector<pto::MpmcCell> cells(4);
  pto::MpmcQueue::format(cells.data(), 4, nullptr, 0);
  pto::MpmcQueue q;
  q.attach(cells.data(), 4, 0);
  const uint64_t a[] = {1, 2, 3}, b[] = {4, 5};
  EXPECT_TRUE(q.try_push(0));
  EXPECT_TRUE(q.try_push_many(a, 3));
  EXPECT_FALSE(q.try_push_many(b, 1));  // full
  uint64_t v;
  for (uint64_t want : {0, 1}) {
    ASSERT_TRUE(q.try_pop(&v));
    EXPECT_EQ(v, want);
  }
  EXPECT_FALSE(q.try_push_many(b, 2) && q.try_push_many(b, 1));  // room for two, not three
  for (uint64_t want : {2, 3, 4, 5}) {  // across the wrap
    ASSERT_TRUE(q.try_pop(&v));
    EXPECT_EQ(v, want);
  }
  EXPECT_FALSE(q.try_pop(&v));
  const uint64_t c[] = {6, 7, 8, 9, 10};
  EXPECT_FALSE(q.try_push_many(c, 5));  // more than the capacity: nothing goes in
  EXPECT_FALSE(q.try_pop(&v));
  EXPECT_TRUE(q.try_push_many(c, 0));
}

class MpmcStress : public ::testing::TestWithParam<int> {};

TEST_P(MpmcStress, EveryValuePoppedExactlyOnce) {
  const int threads = GetParam();
  const uint64_t per_producer = 20000, cap = 256;
  std::vector<pto::MpmcCell> cells(cap);
  pto::MpmcQueue::format(cells.data(), cap, nullptr, 0);
  pto::MpmcQueue q;
  q.attach(cells.data(), cap, 0);
  std::vector<std::atomic<int>> seen(per_producer * threads);
  std::atomic<uint64_t> popped{0};
  std::vector<std::thread> ts;
  for (int p = 0; p < threads; ++p) {
    ts.emplace_back([&, p] {
      // Odd producers push in batches of 1..7 (try_push_many), the others one at a time.
      for (uint64_t i = 0; i < per_producer;) {
        uint64_t batch[7];
        const uint64_t n = p % 2 == 0 ? 1 : std::min<uint64_t>(i % 7 + 1, per_producer - i);
        for (uint64_t k = 0; k < n; ++k) batch[k] = p * per_producer + i + k;
        while (!(n == 1 ? q.try_push(batch[0]) : q.try_push_many(batch, n))) std::this_thread::yield();
        i += n;
      }
    });
    ts.emplace_back([&] {
      uint64_t v;
      while (popped.load(std::memory_order_relaxed) < per_producer * threads) {
        if (q.try_pop(&v)) {
          seen[v].fetch_add(1, std::memory_order_relaxed);
          popped.fetch_add(1, std::memory_order_relaxed);
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto &t : ts) t.join();
  for (auto &s : seen) ASSERT_EQ(s.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Threads, MpmcStress, ::testing::Values(1, 2, 4));

}  // namespace
