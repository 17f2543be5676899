// tests/cpp/platform_doorbell.cpp — stress test of the sim Doorbell eventcount (pto_platform/doorbell.h,
// src/platform/sim/doorbell_sim.cpp) on OS threads, no fibers: no wake-up is ever lost.
//
// Each round, N producers each increment a counter and ring; C consumers wait, with the
// eventcount protocol (seen = prepare; if (!condition) wait_until(seen, deadline)), for the
// counter to reach N * round, then acknowledge on a second bell the producers wait on. Only the
// last ring of a round makes the consumers' condition true, so a lost wake-up leaves a consumer
// asleep: its bounded wait times out and the test fails naming the round, instead of hanging.
// One test forces every wait onto the futex path (PTO_SIM_SPIN=0, PTO_SIM_YIELD=0, read once per
// process: ctest runs each test in its own process), one keeps the default spin/yield budgets.
// Meant to run under ThreadSanitizer too (tsan preset).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pto_platform/doorbell.h"

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kRounds = 8000;
#else
constexpr int kRounds = 40000;
#endif
constexpr uint64_t kWaitNs = 20ull * 1000 * 1000 * 1000;  // per wait: generous, only a lost wake-up hits it

struct Shared {
  pto::Doorbell work;  // rung by producers after each increment
  pto::Doorbell acks;  // rung by consumers after each acknowledgement
  std::atomic<uint64_t> counter{0};
  std::atomic<uint64_t> acked{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string failure;

  void fail(const std::string &what) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (failure.empty()) failure = what;
    }
    failed.store(true, std::memory_order_seq_cst);
    pto::doorbell_ring(work);  // let every other thread see it and leave
    pto::doorbell_ring(acks);
  }
};

// The eventcount protocol: true once ready() holds, false on a time-out or another thread's failure.
template <typename Ready>
bool await(Shared &s, pto::Doorbell &b, Ready ready, uint64_t *wakeups) {
  const uint64_t deadline = pto::platform_now_ns() + kWaitNs;
  for (;;) {
    const uint32_t seen = pto::doorbell_prepare(b);
    if (ready()) return true;
    if (s.failed.load(std::memory_order_seq_cst)) return false;
    if (!pto::doorbell_wait_until(b, seen, deadline)) return ready();  // timed out: last look
    ++*wakeups;
  }
}

void stress(int producers, int consumers, int rounds) {
  Shared s;
  std::vector<std::thread> threads;
  std::vector<uint64_t> wakeups(static_cast<size_t>(producers + consumers), 0);
  const uint64_t n = static_cast<uint64_t>(producers), c = static_cast<uint64_t>(consumers);
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (uint64_t r = 1; r <= static_cast<uint64_t>(rounds) && !s.failed.load(); ++r) {
        s.counter.fetch_add(1, std::memory_order_release);
        pto::doorbell_ring(s.work);
        // The next round starts once every consumer saw this one.
        if (!await(
                s, s.acks, [&] { return s.acked.load(std::memory_order_acquire) >= c * r; },
                &wakeups[static_cast<size_t>(p)])) {
          if (!s.failed.load())
            s.fail("producer " + std::to_string(p) + " waited " + std::to_string(kWaitNs / 1000000000ull) +
                   " s for round " + std::to_string(r) + "'s acknowledgements: acked " +
                   std::to_string(s.acked.load()) + " of " + std::to_string(c * r) + " (lost wake-up)");
          return;
        }
      }
    });
  }
  for (int k = 0; k < consumers; ++k) {
    threads.emplace_back([&, k] {
      for (uint64_t r = 1; r <= static_cast<uint64_t>(rounds) && !s.failed.load(); ++r) {
        if (!await(
                s, s.work, [&] { return s.counter.load(std::memory_order_acquire) >= n * r; },
                &wakeups[static_cast<size_t>(producers + k)])) {
          if (!s.failed.load())
            s.fail("consumer " + std::to_string(k) + " waited " + std::to_string(kWaitNs / 1000000000ull) +
                   " s in round " + std::to_string(r) + " for the counter to reach " + std::to_string(n * r) +
                   ": it is " + std::to_string(s.counter.load()) + ", bell sequence " +
                   std::to_string(s.work.seq.load()) + " (lost wake-up)");
          return;
        }
        s.acked.fetch_add(1, std::memory_order_release);
        pto::doorbell_ring(s.acks);
      }
    });
  }
  for (std::thread &t : threads) t.join();
  ASSERT_FALSE(s.failed.load()) << s.failure;
  EXPECT_EQ(s.counter.load(), n * static_cast<uint64_t>(rounds));
  EXPECT_EQ(s.acked.load(), c * static_cast<uint64_t>(rounds));
  EXPECT_EQ(s.work.sleepers.load(), 0u);  // every parked waiter left
  EXPECT_EQ(s.acks.sleepers.load(), 0u);
  uint64_t total = 0;
  for (uint64_t w : wakeups) total += w;
  EXPECT_GT(total, 0u) << "nobody ever waited: the test did not exercise the bell";
}

TEST(Doorbell, NoLostWakeUpWhenEveryWaitParks) {
  setenv("PTO_SIM_SPIN", "0", 1);  // straight to the futex: the path where wake-ups can be lost
  setenv("PTO_SIM_YIELD", "0", 1);
  stress(3, 3, kRounds);
}

TEST(Doorbell, NoLostWakeUpWithDefaultSpinning) {
  stress(2, 4, kRounds);
}

TEST(Doorbell, ARingBetweenPrepareAndWaitReturnsAtOnce) {
  pto::Doorbell b;
  const uint32_t seen = pto::doorbell_prepare(b);
  pto::doorbell_ring(b);
  pto::doorbell_wait(b, seen);  // would park forever had the ring been lost
  EXPECT_NE(pto::doorbell_prepare(b), seen);
  EXPECT_EQ(b.sleepers.load(), 0u);
}

TEST(Doorbell, WaitUntilTimesOutWithoutARing) {
  pto::Doorbell b;
  const uint32_t seen = pto::doorbell_prepare(b);
  EXPECT_FALSE(pto::doorbell_wait_until(b, seen, pto::platform_now_ns() + 2 * 1000 * 1000));
  EXPECT_EQ(b.sleepers.load(), 0u);
}

}  // namespace
