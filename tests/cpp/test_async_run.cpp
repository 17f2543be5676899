// tests/cpp/test_async_run.cpp — ChipWorker::start / poll: a run launched without blocking the
// caller, finished by whoever polls it (the L3 scheduler's way of driving many chips).
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "common/test_kernels.h"

namespace {

using Clock = std::chrono::steady_clock;

class AsyncRun : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    w.init("a2a3sim", GetParam());
    w.set_device(0);
  }
  bool tmr() const { return std::string(GetParam()) == "tensormap_and_ringbuffer"; }

  // `count` independent tasks that sleep `ms` each, then (optionally) one that fails, in
  // either runtime.
  pto::ChipCallable callable(int ms, bool then_fail, int count = 1) {
    std::string body = "for (int i = 0; i < " + std::to_string(count) + "; ++i) ";
    std::string src;
    if (tmr()) {
      body += "o.submit_task(5, PTO_CORE_AIV, {pto::Arg::i64(" + std::to_string(ms) + ")});\n";
      if (then_fail) body += "o.submit_task(6, PTO_CORE_AIV, {pto::Arg::i64(0)});\n";
      src = "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n" + body + "}\n";
    } else {
      body += "g.add_task(5, PTO_CORE_AIV, {pto::TaskArg::of_i64(" + std::to_string(ms) + ")});\n";
      if (then_fail) body += "g.add_task(6, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});\n";
      src = "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n(void)args;\n" + body + "}\n";
    }
    const std::string name = std::string(tmr() ? "async_tmr_" : "async_hbg_") + std::to_string(ms) +
                             (then_fail ? "_fail" : "") + (count > 1 ? "_x" + std::to_string(count) : "");
    pto::ChipCallable c(pto::KernelCompiler("a2a3sim").compile_orchestration_source(GetParam(), src, name));
    c.add_kernel(5, PTO_CORE_AIV, pto_test::kernel(pto_test::kSleepKernel, "sleep"));
    c.add_kernel(6, PTO_CORE_AIV, pto_test::kernel(pto_test::kFailKernel, "fail"));
    return c;
  }

  // Polls until the run finishes; fails the test after 10 s instead of hanging.
  pto::RunStats poll_to_end() {
    pto::RunStats s;
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    while (!w.poll(&s)) {
      if (Clock::now() > give_up) {
        ADD_FAILURE() << "the run never finished";
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return s;
  }

  pto::ChipWorker w;
};

TEST_P(AsyncRun, StartReturnsAtOnceAndPollFinishesTheRun) {
  const pto::ChipCallable c = callable(300, false);
  pto::ChipStorageTaskArgs none;
  const auto t0 = Clock::now();
  w.start(c, none);
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(250)) << "start() waited for the kernel";
  EXPECT_TRUE(w.busy());
  pto::RunStats s;
  EXPECT_FALSE(w.poll(&s)) << "a 300 ms kernel cannot have finished yet";
  s = poll_to_end();
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(300));
  EXPECT_FALSE(w.busy());
  EXPECT_EQ(s.tasks_run, 1u);
  EXPECT_GE(s.device_us, 300e3 * 0.9);
}

TEST_P(AsyncRun, StartWhileBusyAndPollWithoutStartAreErrors) {
  EXPECT_THROW(w.poll(), pto::Error);
  const pto::ChipCallable c = callable(100, false);
  pto::ChipStorageTaskArgs none;
  w.start(c, none);
  try {
    w.start(c, none);
    ADD_FAILURE() << "second start() while busy";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("in flight"), std::string::npos) << e.what();
  }
  EXPECT_THROW(w.run(c, none), pto::Error);
  poll_to_end();
  w.run(c, none);  // usable again once the started run was finished
}

TEST_P(AsyncRun, FailingKernelIsThrownByPollAndTheWorkerRunsAgain) {
  pto::ChipStorageTaskArgs none;
  w.start(callable(0, true), none);
  try {
    poll_to_end();
    ADD_FAILURE() << "expected TASK_FAILED";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_TASK_FAILED) << e.what();
    EXPECT_NE(std::string(e.what()).find("failed with status 7"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(w.busy());
  EXPECT_EQ(w.run(callable(0, false), none).tasks_run, 1u);
}

TEST_P(AsyncRun, TimeOutIsReportedByPoll) {
  pto::ChipStorageTaskArgs none;
  pto::ChipCallConfig cfg;
  cfg.timeout_ms = 50;
  w.start(callable(400, false), none, cfg);
  try {
    poll_to_end();
    ADD_FAILURE() << "expected RUN_TIMEOUT";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_RUN_TIMEOUT) << e.what();
    EXPECT_NE(std::string(e.what()).find("time limit of 50 ms"), std::string::npos) << e.what();
  }
  EXPECT_EQ(w.run(callable(0, false), none).tasks_run, 1u);
}

TEST_P(AsyncRun, FinalizeStopsARunNobodyFinished) {
  pto::ChipStorageTaskArgs none;
  w.start(callable(100, false), none);
  const auto t0 = Clock::now();
  w.finalize();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_FALSE(w.busy());
}

TEST_P(AsyncRun, WaitReturnsFalseWhileTheRunIsInFlightAndTrueOnceItEnded) {
  pto::ChipStorageTaskArgs none;
  EXPECT_THROW(w.wait(0), pto::Error);  // nothing started
  w.start(callable(300, false), none);
  EXPECT_FALSE(w.wait(0)) << "a 300 ms kernel cannot have finished yet";
  EXPECT_FALSE(w.wait(10));
  EXPECT_TRUE(w.busy());
  EXPECT_TRUE(w.wait(-1));
  EXPECT_TRUE(w.busy()) << "wait() must leave finishing the run to poll()";
  pto::RunStats s;
  EXPECT_TRUE(w.poll(&s));
  EXPECT_EQ(s.tasks_run, 1u);
}

TEST_P(AsyncRun, WaitEndsAtTheRunsTimeLimitAndPollReportsIt) {
  pto::ChipStorageTaskArgs none;
  pto::ChipCallConfig cfg;
  cfg.timeout_ms = 50;
  w.start(callable(400, false), none, cfg);
  EXPECT_TRUE(w.wait(-1));
  EXPECT_THROW(w.poll(), pto::Error);
}

// 400 tasks of 10 ms on the 2 AIV cores of one cluster: 2 s of work, stopped early.
// A fresh worker opens the orchestration and the kernels on its first run and says how long
// that took (RunStats.load_us); later runs of the same callable open nothing.
TEST_P(AsyncRun, TheFirstRunReportsLoadingProgramsAndLaterRunsDoNot) {
  pto::ChipStorageTaskArgs none;
  const pto::ChipCallable c = callable(0, false, 3);
  const pto::RunStats first = w.run(c, none);
  EXPECT_GT(first.load_us, 0.0);
  EXPECT_LE(first.load_us, first.total_us);
  const pto::RunStats second = w.run(c, none);
  EXPECT_EQ(second.load_us, 0.0);
  EXPECT_EQ(second.tasks_run, 3u);
}

TEST_P(AsyncRun, AbortStopsTheRunBetweenTasksAndTheWorkerRunsAgain) {
  pto::ChipStorageTaskArgs none;
  EXPECT_THROW(w.abort(), pto::Error);  // nothing started
  w.start(callable(10, false, 400), none);
  EXPECT_FALSE(w.wait(100));
  // Timed from the abort, not the start: loading the programs on a busy machine can take a
  // second. At least 1.9 s of the run's 2 s of work are left when abort() is called.
  const auto t0 = Clock::now();
  w.abort();
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(1000)) << "abort() let the run go on";
  EXPECT_FALSE(w.busy());
  EXPECT_THROW(w.poll(), pto::Error);  // the run is gone
  EXPECT_EQ(w.run(callable(0, false), none).tasks_run, 1u);
  EXPECT_EQ(w.run(callable(1, false, 20), none).tasks_run, 20u);
}

// A chain of 400 dependent 10 ms tasks: 4 s of work, each task made ready by its producer's
// completion (the scheduler's release path, not the ready queues the host or orchestrator fill).
// Abort must stop the chain at the task that is running, the same in both runtimes: a runtime
// that still started each successor would run the rest of the chain inside the drain grace.
TEST_P(AsyncRun, AbortStopsADependencyChainAtTheRunningTask) {
  std::string src;
  if (tmr()) {
    src =
        "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n"
        "pto::TensorView t = o.alloc_tensor(PTO_DTYPE_I64, 1);\n"
        "for (int i = 0; i < 400; ++i) o.submit_task(5, PTO_CORE_AIV, {pto::Arg::i64(10), "
        "pto::Arg::inout(t)});\n"
        "}\n";
  } else {
    src =
        "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n(void)args;\n"
        "pto::TaskId prev = pto::kInvalidTask;\n"
        "for (int i = 0; i < 400; ++i) {\n"
        "  const pto::TaskId t = g.add_task(5, PTO_CORE_AIV, {pto::TaskArg::of_i64(10)});\n"
        "  if (prev != pto::kInvalidTask) g.add_dependency(prev, t);\n"
        "  prev = t;\n}\n}\n";
  }
  pto::ChipCallable c(pto::KernelCompiler("a2a3sim").compile_orchestration_source(
      GetParam(), src, std::string(tmr() ? "abort_chain_tmr" : "abort_chain_hbg")));
  c.add_kernel(5, PTO_CORE_AIV, pto_test::kernel(pto_test::kSleepKernel, "sleep"));
  pto::ChipStorageTaskArgs none;
  w.start(c, none);
  EXPECT_FALSE(w.wait(100));
  const auto t0 = Clock::now();
  w.abort();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  EXPECT_LT(ms, 1000) << "abort() let the chain go on for " << ms << " ms";
  EXPECT_FALSE(w.busy());
  EXPECT_EQ(w.run(callable(1, false, 20), none).tasks_run, 20u);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, AsyncRun,
                         ::testing::Values("host_build_graph", "tensormap_and_ringbuffer"),
                         [](const auto &i) { return std::string(i.param); });

TEST(AsyncRunOutputs, OutputsAreCopiedBackWhenPollReturnsTrue) {
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(1);
  const int64_t n = 4096;
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, -1.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 4;
  w.start(pto_test::basic_callable(), args, cfg);
  pto::RunStats s;
  while (!w.poll(&s)) std::this_thread::yield();
  EXPECT_EQ(s.tasks_run, 4u);
  for (float x : f) ASSERT_EQ(x, 42.0f);
}

// Another thread aborts while this one waits in slices (what the Python binding's Ctrl-C does,
// with the worker's lock between calls): the abort is seen and the next run is correct.
TEST(AsyncRunOutputs, AbortFromAnotherThreadBetweenWaitSlices) {
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(2);
  pto::ChipCallable c(pto::KernelCompiler("a2a3sim").compile_orchestration_source(
      "host_build_graph",
      "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n(void)args;\n"
      "for (int i = 0; i < 400; ++i) g.add_task(5, PTO_CORE_AIV, {pto::TaskArg::of_i64(10)});\n}\n",
      "abort_thread_hbg"));
  c.add_kernel(5, PTO_CORE_AIV, pto_test::kernel(pto_test::kSleepKernel, "sleep"));
  pto::ChipStorageTaskArgs none;
  std::mutex mu;
  w.start(c, none);
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard<std::mutex> lock(mu);
    w.abort();
  });
  for (;;) {
    std::lock_guard<std::mutex> lock(mu);
    if (!w.busy() || w.wait(20)) break;
  }
  aborter.join();
  EXPECT_FALSE(w.busy());
  const int64_t n = 1024;
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, -1.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
  w.run(pto_test::basic_callable(), args);
  for (float x : f) ASSERT_EQ(x, 42.0f);
}

}  // namespace
