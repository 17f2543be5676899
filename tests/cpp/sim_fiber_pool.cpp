// tests/cpp/sim_fiber_pool.cpp — white-box tests of the sim's fiber pool (src/platform/sim/fiber_pool.h)
// and of doorbells on fibers: parking, ringing from fibers and from OS threads, hand-off, yield,
// groups, and the monitor that replaces a worker held by a blocking fiber.
//
// The pool is created once per process with PTO_SIM_WORKERS=1 (set below, before any test):
// one worker is where a lost wake-up or a fiber that never yields would hang. ctest runs each
// test in a process of its own.
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fiber_pool.h"
#include "pto_platform/doorbell.h"

namespace {

const bool kOneWorker = [] {
  setenv("PTO_SIM_WORKERS", "1", 0);  // a value set from outside wins
  return true;
}();

// Uses the pool for the test's life (workers run only while some user holds it).
struct PoolUser {
  PoolUser() { pto::FiberPool::instance().acquire(); }
  ~PoolUser() { pto::FiberPool::instance().release(); }
};

// The eventcount wait loop device code uses: wait until `ready()` holds.
template <typename Ready>
void wait_for(pto::Doorbell &b, Ready ready) {
  for (;;) {
    const uint32_t seen = pto::doorbell_prepare(b);
    if (ready()) return;
    pto::doorbell_wait(b, seen);
  }
}

TEST(FiberPool, TwoFibersPingPongThroughTwoDoorbells) {
  PoolUser user;
  pto::FiberGroup group;
  pto::Doorbell ping, pong;
  std::atomic<int> ball{0};  // even: ping's turn, odd: pong's
  constexpr int kRounds = 20000;
  auto player = [&](int parity, pto::Doorbell &mine, pto::Doorbell &theirs) {
    for (int i = 0; i < kRounds; ++i) {
      wait_for(mine, [&] { return ball.load(std::memory_order_acquire) % 2 == parity; });
      ball.fetch_add(1, std::memory_order_acq_rel);
      pto::doorbell_ring(theirs);
    }
  };
  pto::FiberPool &pool = pto::FiberPool::instance();
  pool.spawn(group, "ping", [&] { player(0, ping, pong); });
  pool.spawn(group, "pong", [&] { player(1, pong, ping); });
  group.wait_empty();
  EXPECT_EQ(ball.load(), 2 * kRounds);
}

TEST(FiberPool, FibersThatKeepRingingEachOtherDoNotStarveAQueuedOne) {
  // Two fibers hand the worker to each other forever (each ring makes the other run next on
  // this worker); a fiber spawned meanwhile waits in the shared queue. It must still run.
  PoolUser user;
  pto::FiberGroup group;
  pto::Doorbell ping, pong;
  std::atomic<int> ball{0};
  std::atomic<bool> stop{false};
  auto player = [&](int parity, pto::Doorbell &mine, pto::Doorbell &theirs) {
    for (;;) {
      wait_for(mine, [&] { return stop.load() || ball.load(std::memory_order_acquire) % 2 == parity; });
      if (stop.load()) break;
      ball.fetch_add(1, std::memory_order_acq_rel);
      pto::doorbell_ring(theirs);
    }
    pto::doorbell_ring(theirs);
  };
  pto::FiberPool &pool = pto::FiberPool::instance();
  pool.spawn(group, "ping", [&] { player(0, ping, pong); });
  pool.spawn(group, "pong", [&] { player(1, pong, ping); });
  while (ball.load() < 1000) std::this_thread::yield();
  std::atomic<bool> ran{false};
  pool.spawn(group, "queued", [&] { ran.store(true); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ran.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(ran.load()) << "the queued fiber did not run within 10 s";
  stop.store(true);
  pto::doorbell_ring(ping);
  pto::doorbell_ring(pong);
  group.wait_empty();
}

TEST(FiberPool, ManyFibersParkedOnOneDoorbellAllWakeOnOneRingFromAnOsThread) {
  PoolUser user;
  pto::FiberGroup group;
  pto::Doorbell bell;
  std::atomic<bool> go{false};
  std::atomic<int> parked{0}, done{0};
  constexpr int kFibers = 500;
  for (int i = 0; i < kFibers; ++i) {
    pto::FiberPool::instance().spawn(group, "waiter", [&] {
      parked.fetch_add(1);
      wait_for(bell, [&] { return go.load(std::memory_order_acquire); });
      done.fetch_add(1);
    });
  }
  while (parked.load() != kFibers) std::this_thread::yield();
  EXPECT_EQ(done.load(), 0);
  go.store(true, std::memory_order_release);
  pto::doorbell_ring(bell);  // this thread is not a worker: the fibers go through the shared queue
  group.wait_empty();
  EXPECT_EQ(done.load(), kFibers);
  EXPECT_EQ(bell.sleepers.load(), 0u) << "every fiber sleeper was taken off the doorbell";
}

TEST(FiberPool, AFiberRungBeforeItParkedIsNotLost) {
  // The ring lands between the fiber's prepare and its wait, the eventcount's racy window.
  PoolUser user;
  pto::FiberGroup group;
  pto::Doorbell bell;
  std::atomic<int> flag{0};
  for (int round = 0; round < 200; ++round) {
    flag.store(0);
    pto::FiberPool::instance().spawn(group, "late", [&] {
      const uint32_t seen = pto::doorbell_prepare(bell);
      flag.store(1, std::memory_order_release);  // the ringer now rings ...
      while (flag.load(std::memory_order_acquire) != 2) std::this_thread::yield();
      pto::doorbell_wait(bell, seen);  // ... before this wait: it must return at once
    });
    while (flag.load(std::memory_order_acquire) != 1) std::this_thread::yield();
    pto::doorbell_ring(bell);
    flag.store(2, std::memory_order_release);
    group.wait_empty();
  }
}

TEST(FiberPool, YieldingFibersTakeTurnsOnOneWorker) {
  PoolUser user;
  pto::FiberGroup group;
  pto::Doorbell never;  // doorbell_wait_until on a fiber yields until its deadline
  std::atomic<int> turns{0};
  for (int i = 0; i < 4; ++i) {
    pto::FiberPool::instance().spawn(group, "yielder", [&] {
      const uint64_t deadline = pto::platform_now_ns() + 20 * 1000 * 1000;
      const uint32_t seen = pto::doorbell_prepare(never);
      EXPECT_FALSE(pto::doorbell_wait_until(never, seen, deadline));
      turns.fetch_add(1);
    });
  }
  group.wait_empty();
  EXPECT_EQ(turns.load(), 4);
}

TEST(FiberPool, AFiberBlockedInTheOsGetsItsWorkerReplacedSoOthersRun) {
  // One worker. The first fiber blocks its thread in nanosleep until the second fiber has run:
  // without the monitor adding a worker this never finishes.
  PoolUser user;
  pto::FiberGroup group;
  std::atomic<bool> second_ran{false};
  pto::FiberPool &pool = pto::FiberPool::instance();
  ASSERT_EQ(pool.base_workers(), 1u) << "PTO_SIM_WORKERS was overridden from outside";
  pool.spawn(group, "blocker", [&] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!second_ran.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < give_up) {
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
  });
  pool.spawn(group, "second", [&] { second_ran.store(true, std::memory_order_release); });
  group.wait_empty();
  EXPECT_TRUE(second_ran.load()) << "the blocked worker was not replaced within 30 s";
  EXPECT_GT(pool.workers(), pool.base_workers());
}

TEST(FiberPool, APinnedFiberGoesOnOnlyOnItsOwnWorkerEvenWhenAnotherIsIdle) {
  // One worker at first. `pinned` pins itself and parks; `blocker` then holds that worker in the
  // OS for 300 ms. Meanwhile this thread rings `pinned` and starts `other`: the monitor adds a
  // second worker for them, which runs `other` and must leave `pinned` alone, so `pinned` goes
  // on only after `blocker`, on its first thread.
  PoolUser user;
  pto::FiberGroup group;
  pto::Doorbell bell;
  std::atomic<bool> parked{false}, blocking{false}, rung{false}, resumed{false}, other_ran{false};
  std::atomic<bool> resumed_while_blocked{false};
  std::atomic<pthread_t> first{}, after{}, other_thread{};
  pto::FiberPool &pool = pto::FiberPool::instance();
  ASSERT_EQ(pool.base_workers(), 1u) << "PTO_SIM_WORKERS was overridden from outside";
  pool.spawn(group, "pinned", [&] {
    first = pthread_self();
    pto::FiberPool::pin_current_fiber(true);
    parked.store(true, std::memory_order_release);  // about to: a ring before the park is not lost
    wait_for(bell, [&] { return rung.load(std::memory_order_acquire); });
    after = pthread_self();
    resumed.store(true, std::memory_order_release);
    pto::FiberPool::pin_current_fiber(false);
  });
  pool.spawn(group, "blocker", [&] {
    while (!parked.load(std::memory_order_acquire)) sched_yield();
    blocking.store(true, std::memory_order_release);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < until) {
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
    resumed_while_blocked.store(resumed.load(std::memory_order_acquire));
  });
  while (!blocking.load(std::memory_order_acquire)) std::this_thread::yield();
  rung.store(true, std::memory_order_release);
  pto::doorbell_ring(bell);
  pool.spawn(group, "other", [&] {
    other_thread = pthread_self();
    other_ran.store(true, std::memory_order_release);
  });
  group.wait_empty();
  ASSERT_TRUE(other_ran.load());
  EXPECT_FALSE(pthread_equal(other_thread.load(), first.load())) << "`other` ran on a second worker";
  EXPECT_FALSE(resumed_while_blocked.load()) << "the pinned fiber went on on the second worker";
  EXPECT_TRUE(pthread_equal(after.load(), first.load())) << "the pinned fiber moved to another worker";
}

TEST(FiberPool, TheLastReleaseStopsTheWorkersAndTheNextAcquireRestartsThem) {
  pto::FiberPool &pool = pto::FiberPool::instance();
  for (int round = 0; round < 3; ++round) {
    PoolUser user;
    EXPECT_EQ(pool.workers(), pool.base_workers());
    pto::FiberGroup group;
    std::atomic<int> ran{0};
    pool.spawn(group, "one", [&] { ran.fetch_add(1); });
    group.wait_empty();
    EXPECT_EQ(ran.load(), 1);
  }
  EXPECT_EQ(pool.workers(), 0u);
}

}  // namespace
