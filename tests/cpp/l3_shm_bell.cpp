// tests/cpp/l3_shm_bell.cpp — ShmBell (src/hierarchical/shm_bell.h): ring_one wakes one parked
// waiter, and a queue whose every push rings one never strands an item (no lost wake-up).
// Every wait is bounded, so a lost wake-up fails the test naming what it waited for.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "hierarchical/shm_bell.h"

namespace {

using pto::l3::ShmBell;
constexpr uint64_t kWaitNs = 20ull * 1000 * 1000 * 1000;  // only a lost wake-up reaches it

// Polls `cond` for up to 10 s; false if it never held.
template <class F>
bool eventually(F cond) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

TEST(ShmBell, RingOneWakesOneOfTwoParkedWaitersAndRingWakesTheOther) {
  ShmBell bell;
  std::atomic<int> woke{0};
  const uint32_t seen = bell.prepare();
  auto waiter = [&] {
    EXPECT_TRUE(bell.wait(seen, kWaitNs, 0, 0)) << "a parked waiter timed out: a lost wake-up";
    woke.fetch_add(1);
  };
  std::thread a(waiter), b(waiter);
  ASSERT_TRUE(eventually([&] { return bell.sleepers.load() == 2; })) << "both waiters never parked";
  bell.ring_one();
  ASSERT_TRUE(eventually([&] { return woke.load() >= 1; })) << "ring_one woke nobody";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(woke.load(), 1) << "ring_one woke both parked waiters";
  EXPECT_EQ(bell.sleepers.load(), 1u);
  bell.ring();
  a.join();
  b.join();
  EXPECT_EQ(woke.load(), 2);
}

// Producers push items and ring_one; consumers take items or park (with the eventcount
// protocol). Every item must be taken while producers are still running, with no consumer
// stuck in a wait while items are queued: a waiter not woken for an item would time out.
TEST(ShmBell, AQueueRungOncePerPushNeverStrandsAnItem) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  constexpr int kItems = 20000;
#else
  constexpr int kItems = 100000;
#endif
  constexpr int kProducers = 2, kConsumers = 3;
  ShmBell bell;
  std::mutex mu;
  std::deque<int> queue;
  std::atomic<int> taken{0}, timeouts{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < kConsumers; ++c)
    threads.emplace_back([&] {
      for (;;) {
        const uint32_t seen = bell.prepare();
        bool got = false;
        {
          std::lock_guard<std::mutex> lk(mu);
          if (!queue.empty()) {
            queue.pop_front();
            got = true;
          }
        }
        if (got) {
          taken.fetch_add(1);
          continue;
        }
        if (stop.load()) return;
        // Parks quickly (little spinning), so most hand-offs go through the futex.
        if (!bell.wait(seen, kWaitNs, 8, 1)) timeouts.fetch_add(1);
      }
    });
  for (int p = 0; p < kProducers; ++p)
    threads.emplace_back([&] {
      for (int i = 0; i < kItems / kProducers; ++i) {
        {
          std::lock_guard<std::mutex> lk(mu);
          queue.push_back(i);
        }
        bell.ring_one();
      }
    });
  ASSERT_TRUE(eventually([&] { return taken.load() == kItems; }))
      << "only " << taken.load() << " of " << kItems << " items were taken: a push's wake-up was lost";
  stop.store(true);
  bell.ring();
  for (auto &t : threads) t.join();
  EXPECT_EQ(timeouts.load(), 0);
}

}  // namespace
