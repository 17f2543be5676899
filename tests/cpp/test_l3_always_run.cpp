// tests/cpp/test_l3_always_run.cpp — claims about always_run SUB tasks and Event::fail (what L4 builds on).
//
// Contract under test: a SUB task submitted with always_run waits for every predecessor like any
// task, but runs even if one failed or was skipped, and SubContext::upstream_error() carries the
// root cause (the failed task's message, also through a chain of skipped tasks); its own success
// does not poison its dependents. An Event settled with fail() fails its task once the body
// returned and every event is settled, and the task's dependents are skipped. A cancelled run
// still skips always_run tasks. THREAD and PROCESS mode.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "l3_util.h"

namespace {

using l3_test::contains;
using pto::ChipMode;

class L3AlwaysRun : public ::testing::TestWithParam<ChipMode> {};

pto::ChipStorageTaskArgs one(int64_t *p, pto_direction d) {
  pto::ChipStorageTaskArgs a;
  a.add_tensor(p, 8, PTO_DTYPE_I64, {1}, d);
  return a;
}

int64_t *heap_i64(pto::Worker &w) {
  auto *p = static_cast<int64_t *>(w.alloc(8));
  *p = 0;
  return p;
}

TEST_P(L3AlwaysRun, RunsAfterAFailedChipTaskAndSeesTheRootCauseThroughASkippedChain) {
  pto::ChipCallable fail(pto_test::orch(l3_test::kOneTaskOrch, "l3_one_task_orch"));
  fail.add_kernel(0, PTO_CORE_AIV, pto_test::kernel(pto_test::kFailKernel, "fail_kernel"));
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  const int64_t n = 8;
  auto *a = static_cast<int64_t *>(w.alloc(n * 8));
  auto *b = static_cast<int64_t *>(w.alloc(n * 8));
  int64_t *c = heap_i64(w), *d = heap_i64(w);
  std::string seen_direct = "(not run)", seen_chain = "(not run)";
  std::atomic<bool> skipped_ran{false}, after_always_ran{false};
  try {
    w.run(
        [&](pto::HostOrchestrator &o) {
          o.submit_chip(fail, l3_test::io_args(a, b, n, {}), {}, 0, "bad kernel");
          pto::ChipStorageTaskArgs in_b;
          in_b.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
          in_b.add_tensor(c, 8, PTO_DTYPE_I64, {1}, PTO_DIR_OUTPUT);
          // Reads b: always_run, so it runs although 'bad kernel' failed.
          o.submit_sub([&](pto::SubContext &ctx) { seen_direct = ctx.upstream_error(); }, in_b, "sender", {},
                       nullptr, /*always_run=*/true);
          // Reads b too: an ordinary task, skipped; it writes d.
          pto::ChipStorageTaskArgs in_b2;
          in_b2.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
          in_b2.add_tensor(d, 8, PTO_DTYPE_I64, {1}, PTO_DIR_OUTPUT);
          o.submit_sub([&](pto::SubContext &) { skipped_ran = true; }, in_b2, "skipped");
          // Reads d (written by the skipped task): the root cause still reaches it.
          o.submit_sub([&](pto::SubContext &ctx) { seen_chain = ctx.upstream_error(); },
                       one(d, PTO_DIR_INPUT), "chained sender", {}, nullptr, true);
          // Depends on the first always_run task only (reads c): that one succeeded, so it runs.
          o.submit_sub([&](pto::SubContext &) { after_always_ran = true; }, one(c, PTO_DIR_INPUT),
                       "after sender");
        },
        60000);
    FAIL() << "the run must fail";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_TASK_FAILED);
    EXPECT_TRUE(contains(e.what(), "'bad kernel' failed on chip 0")) << e.what();
  }
  EXPECT_TRUE(contains(seen_direct, "'bad kernel' failed on chip 0")) << seen_direct;
  EXPECT_TRUE(contains(seen_chain, "'bad kernel' failed on chip 0")) << seen_chain;
  EXPECT_FALSE(skipped_ran.load());
  EXPECT_TRUE(after_always_ran.load()) << "a successful always_run task poisoned its dependent";
}

TEST_P(L3AlwaysRun, UpstreamErrorIsEmptyWhenEveryPredecessorSucceeded) {
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  int64_t *x = heap_i64(w);
  std::string seen = "(not run)";
  w.run(
      [&](pto::HostOrchestrator &o) {
        o.submit_sub([x](pto::SubContext &) { *x = 5; }, one(x, PTO_DIR_OUTPUT), "producer");
        o.submit_sub([&](pto::SubContext &ctx) { seen = ctx.upstream_error() + "|" + std::to_string(*x); },
                     one(x, PTO_DIR_INPUT), "sender", {}, nullptr, true);
      },
      20000);
  EXPECT_EQ(seen, "|5") << "an always_run task must still wait for its producer";
}

TEST_P(L3AlwaysRun, AFailedEventFailsItsTaskOnceSettledAndSkipsItsDependents) {
  pto::Worker w(l3_test::options(GetParam(), 1, 2));
  int64_t *x = heap_i64(w);
  std::atomic<bool> consumer_ran{false};
  std::thread helper;
  pto::RunHandle h = w.submit([&](pto::HostOrchestrator &o) {
    o.submit_sub(
        [&](pto::SubContext &ctx) {
          pto::Event ok = ctx.defer(), bad = ctx.defer();
          helper = std::thread([ok, bad]() mutable {
            bad.fail("the message from rank 2 said: producer failed");
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            ok.fulfill();
          });
        },
        one(x, PTO_DIR_OUTPUT), "receiver");
    o.submit_sub([&](pto::SubContext &) { consumer_ran = true; }, one(x, PTO_DIR_INPUT), "consumer");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(h.done()) << "the task failed before its last event was settled";
  EXPECT_TRUE(h.wait_done(10000));
  helper.join();  // before any assertion can return
  try {
    h.wait(0);
    ADD_FAILURE() << "the run must fail";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_TASK_FAILED);
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "'receiver' (SUB) failed: the message from rank 2 said: producer failed")) << m;
    EXPECT_TRUE(contains(m, "'consumer'")) << m;
  }
  EXPECT_FALSE(consumer_ran.load());
}

TEST(L3AlwaysRunEvents, AnEventIsSettledOnceFulfillOrFail) {
  pto::Worker w(l3_test::options(ChipMode::kThread, 1, 1));
  pto::Event ev;
  pto::RunHandle h = w.submit([&](pto::HostOrchestrator &o) {
    o.submit_sub([&](pto::SubContext &ctx) { ev = ctx.defer(); }, {}, "deferred");
  });
  while (!contains(h.pending_report(), "external event"))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ev.fulfill();
  try {
    ev.fail("late");
    FAIL() << "fail after fulfill must be refused";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(e.what(), "already fulfilled or failed")) << e.what();
  }
  EXPECT_EQ(h.wait(5000).sub_tasks, 1u);
}

TEST(L3AlwaysRunEvents, ACancelledRunStillSkipsAnAlwaysRunTask) {
  pto::Worker w(l3_test::options(ChipMode::kThread, 1, 1));
  int64_t *x = heap_i64(w);
  pto::Event ev;
  std::atomic<bool> ran{false};
  pto::RunHandle h = w.submit([&](pto::HostOrchestrator &o) {
    o.submit_sub([&](pto::SubContext &ctx) { ev = ctx.defer(); }, one(x, PTO_DIR_OUTPUT), "deferred");
    o.submit_sub([&](pto::SubContext &) { ran = true; }, one(x, PTO_DIR_INPUT), "always", {}, nullptr, true);
  });
  while (!contains(h.pending_report(), "external event"))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  h.cancel();
  EXPECT_THROW(h.wait(5000), pto::Error);
  ev.fulfill();
  EXPECT_FALSE(ran.load());
}

INSTANTIATE_TEST_SUITE_P(Modes, L3AlwaysRun, ::testing::Values(ChipMode::kThread, ChipMode::kProcess),
                         [](const ::testing::TestParamInfo<ChipMode> &i) {
                           return std::string(l3_test::mode_name(i.param));
                         });

}  // namespace
