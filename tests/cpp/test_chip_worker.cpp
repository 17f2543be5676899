// tests/cpp/test_chip_worker.cpp — the public C++ flow: compile, init, set_device, run, finalize.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/test_kernels.h"

namespace {

std::vector<float> run_basic(pto::ChipWorker &w, const pto::ChipCallable &c, const pto::ChipCallConfig &cfg,
                             int64_t n = 16384) {
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, -1.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
  pto::RunStats s = w.run(c, args, cfg);
  EXPECT_EQ(s.tasks_run, 4u);
  EXPECT_EQ(s.aiv_tasks, 4u);
  return f;
}

bool all_equal(const std::vector<float> &v, float x) {
  for (float e : v)
    if (e != x) return false;
  return true;
}

class BasicExample : public ::testing::TestWithParam<std::tuple<const char *, int, int>> {};

TEST_P(BasicExample, ComputesFortyTwoEverywhere) {
  const auto [platform, block_dim, threads] = GetParam();
  pto::ChipCallable c = pto_test::basic_callable(platform);
  pto::ChipWorker w;
  w.init(platform, "host_build_graph");
  w.set_device(0);
  pto::ChipCallConfig cfg;
  cfg.block_dim = block_dim;
  cfg.aicpu_thread_num = threads;
  EXPECT_TRUE(all_equal(run_basic(w, c, cfg), 42.0f));
  EXPECT_TRUE(all_equal(run_basic(w, c, cfg), 42.0f)) << "second run on the same device threads";
  w.finalize();
}

INSTANTIATE_TEST_SUITE_P(Platforms, BasicExample,
                         ::testing::Values(std::make_tuple("a2a3sim", 1, 1),
                                           std::make_tuple("a2a3sim", 24, 4), std::make_tuple("a5sim", 1, 1),
                                           std::make_tuple("a5sim", 36, 5)),
                         [](const auto &i) {
                           return std::string(std::get<0>(i.param)) + "_blockdim" +
                                  std::to_string(std::get<1>(i.param)) + "_threads" +
                                  std::to_string(std::get<2>(i.param));
                         });

TEST(ChipWorker, ManyRunsReuseTheSameContext) {
  pto::ChipCallable c = pto_test::basic_callable();
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(3);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 4;
  cfg.aicpu_thread_num = 2;
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(all_equal(run_basic(w, c, cfg, 64), 42.0f)) << "run " << i;
}

TEST(ChipWorker, FourFullGeometryContextsRunConcurrently) {
  pto::ChipCallable c = pto_test::basic_callable();
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int d = 0; d < 4; ++d) {
    ts.emplace_back([&, d] {
      pto::ChipWorker w;
      w.init("a2a3sim", "host_build_graph");
      w.set_device(d);
      pto::ChipCallConfig cfg;
      cfg.block_dim = 24;
      cfg.aicpu_thread_num = 4;
      bool good = true;
      for (int i = 0; i < 5; ++i) good = good && all_equal(run_basic(w, c, cfg, 1024), 42.0f);
      if (good) ok.fetch_add(1);
    });
  }
  for (auto &t : ts) t.join();
  EXPECT_EQ(ok.load(), 4);
}

TEST(ChipWorker, EmptyGraphRunsAndReturns) {
  pto::ChipCallable c(pto_test::orch(
      "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, a) { (void)g; (void)a; }\n", "empty_orch"));
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  pto::ChipStorageTaskArgs args;
  EXPECT_EQ(w.run(c, args).tasks_run, 0u);
}

// prewarm: one more warm-up run with the caller's configuration (the reference's
// Worker.init(prewarm_config=...): ring_task_window 64 on tensormap). Checked as a run's is; the
// worker runs on after it and after a refused one.
TEST(ChipWorker, PrewarmRunsWithTheCallersConfigAndIsCheckedAsARunIs) {
  for (const char *runtime : {"tensormap_and_ringbuffer", "host_build_graph"}) {
    SCOPED_TRACE(runtime);
    const bool tmr = std::string(runtime) == "tensormap_and_ringbuffer";
    // 200 tasks of a kernel that sleeps 0 ms: more than the 64-slot task window holds.
    const std::string src =
        tmr ? "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n"
              "  for (int i = 0; i < 200; ++i) o.submit_task(5, PTO_CORE_AIV, {pto::Arg::i64(0)});\n}\n"
            : "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n  (void)args;\n"
              "  for (int i = 0; i < 200; ++i) g.add_task(5, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});\n}\n";
    pto::ChipCallable c(pto::KernelCompiler("a2a3sim").compile_orchestration_source(
        runtime, src, tmr ? "prewarm_tmr" : "prewarm_hbg"));
    c.add_kernel(5, PTO_CORE_AIV, pto_test::kernel(pto_test::kSleepKernel, "sleep"));
    pto::ChipWorker w;
    w.init("a2a3sim", runtime);
    try {
      w.prewarm(pto::ChipCallConfig{});
      ADD_FAILURE() << "prewarm before set_device worked";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_NOT_INITIALIZED) << e.what();
      EXPECT_NE(std::string(e.what()).find("ChipWorker.prewarm before set_device()"), std::string::npos)
          << e.what();
    }
    w.set_device(0);
    pto::ChipCallConfig cfg;
    cfg.block_dim = 3;
    cfg.aicpu_thread_num = 2;
    cfg.task_window = 64;
    w.prewarm(cfg);
    w.prewarm(cfg);  // again: nothing is left over from the first
    pto::ChipStorageTaskArgs args;
    EXPECT_EQ(w.run(c, args, cfg).tasks_run, 200u);
    pto::ChipCallConfig bad = cfg;
    bad.block_dim = 25;  // a2a3 has 24 clusters
    try {
      w.prewarm(bad);
      ADD_FAILURE() << "prewarm with block_dim 25 worked";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_GEOMETRY_EXCEEDED) << e.what();
      EXPECT_NE(std::string(e.what()).find("prewarm failed"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("block_dim"), std::string::npos) << e.what();
    }
    EXPECT_EQ(w.run(c, args, cfg).tasks_run, 200u);
  }
}

TEST(ChipWorker, FinalizeTwiceIsHarmlessAndEveryCallAfterFinalizeSaysItIsFinalized) {
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  w.finalize();
  w.finalize();
  EXPECT_FALSE(w.initialized());
  pto::ChipStorageTaskArgs args;
  const std::pair<const char *, std::function<void()>> calls[] = {
      {"run", [&] { w.run(pto_test::basic_callable(), args); }},
      {"start", [&] { w.start(pto_test::basic_callable(), args); }},
      {"poll", [&] { w.poll(); }},
      {"init", [&] { w.init("a2a3sim", "host_build_graph"); }},
      {"set_device", [&] { w.set_device(0); }},
      {"prewarm", [&] { w.prewarm(pto::ChipCallConfig{}); }},
      {"platform_info", [&] { w.platform_info(); }},
      {"last_trace", [&] { w.last_trace_json(); }},
  };
  for (const auto &c : calls) {
    try {
      c.second();
      ADD_FAILURE() << c.first << " worked after finalize()";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_NOT_INITIALIZED) << e.what();
      EXPECT_EQ(std::string(e.what()), std::string("ChipWorker.") + c.first +
                                           ": the worker is finalized (finalize() was called); create a new "
                                           "ChipWorker");
    }
  }
  pto::ChipWorker fresh;  // the basic example still runs in this process
  fresh.init("a2a3sim", "host_build_graph");
  fresh.set_device(0);
  EXPECT_TRUE(all_equal(run_basic(fresh, pto_test::basic_callable(), pto::ChipCallConfig{}), 42.0f));
}

}  // namespace

namespace {

// The always-collected counters agree with the graph: every kernel is counted on exactly one
// core, busy time fits in the effective time, and only the clusters the run used are listed.
TEST(RunCounters, CoreCountsAddUpToTheGraphAndBusyFitsTheEffectiveTime) {
  pto::ChipCallable c = pto_test::basic_callable();
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(5);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 3;
  cfg.aicpu_thread_num = 2;
  const int64_t n = 1 << 18;
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, 0.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
  const pto::RunStats s = w.run(c, args, cfg);
  ASSERT_EQ(s.cores.size(), 9u);
  uint64_t kernels = 0;
  double busiest = 0;
  for (const auto &core : s.cores) {
    EXPECT_LT(core.cluster, 3u);
    EXPECT_EQ(core.type, core.slot < 24 ? PTO_CORE_AIC : PTO_CORE_AIV);
    EXPECT_GE(core.busy_fraction, 0.0);
    EXPECT_LE(core.busy_us, s.effective_us * 1.0001);
    if (core.tasks == 0) {
      EXPECT_EQ(core.busy_us, 0.0);
    }
    kernels += core.tasks;
    busiest = std::max(busiest, core.busy_us);
  }
  EXPECT_EQ(kernels, s.tasks_run);
  EXPECT_GT(busiest, 0.0);
  EXPECT_GT(s.effective_us, 0.0);
  EXPECT_LE(s.effective_us, s.device_us);
  EXPECT_NE(s.table().find("effective"), std::string::npos);
}

}  // namespace

namespace {

// Device code stamps events with the platform's tick counter; the host converts them. Two
// tasks that sleep 30 ms each, in a chain: the converted times must be host nanoseconds — the
// kernels' spans at least the sleep, the whole inside the device time the host measured with
// its own clock (a wrong tick rate breaks one side or the other).
class DeviceClock : public ::testing::TestWithParam<const char *> {};

TEST_P(DeviceClock, TraceAndCountersAreInHostNanoseconds) {
  const bool tmr = std::string(GetParam()) == "tensormap_and_ringbuffer";
  const std::string src = tmr ? "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n"
                                "  o.submit_task(5, PTO_CORE_AIV, {pto::Arg::i64(30)});\n"
                                "  o.submit_task(5, PTO_CORE_AIV, {pto::Arg::i64(30)});\n}\n"
                              : "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n  (void)args;\n"
                                "  const auto a = g.add_task(5, PTO_CORE_AIV, {pto::TaskArg::of_i64(30)});\n"
                                "  const auto b = g.add_task(5, PTO_CORE_AIV, {pto::TaskArg::of_i64(30)});\n"
                                "  g.add_dependency(a, b);\n}\n";
  pto::ChipCallable c(pto::KernelCompiler("a2a3sim").compile_orchestration_source(
      GetParam(), src, tmr ? "clock_tmr" : "clock_hbg"));
  c.add_kernel(5, PTO_CORE_AIV, pto_test::kernel(pto_test::kSleepKernel, "sleep"));
  pto::ChipWorker w;
  w.init("a2a3sim", GetParam());
  w.set_device(0);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 1;
  cfg.aicpu_thread_num = tmr ? 2 : 1;
  cfg.enable_profiling = true;
  pto::ChipStorageTaskArgs none;
  const pto::RunStats s = w.run(c, none, cfg);
  ASSERT_EQ(s.tasks_run, 2u);
  double busy = 0;
  for (const auto &core : s.cores) busy += core.busy_us;
  EXPECT_GE(busy, 60e3 * 0.999);
  // Busy time is summed over cores; tmr's two tasks have no dependency and may run at once.
  EXPECT_LE(busy, s.effective_us * (tmr ? 2 : 1) * 1.0001);
  EXPECT_GE(s.effective_us, 30e3 * 0.999);  // tmr's two tasks may overlap: no dependency
  EXPECT_LE(s.effective_us, s.device_us * 1.001);

  // Every task's kernel span in the trace: >= 30 ms, and within [launch, launch + device time].
  const std::string j = w.last_trace_json();
  size_t pos = 0;
  int tasks = 0;
  while ((pos = j.find("\"start\": ", pos)) != std::string::npos) {
    const double start = std::stod(j.substr(pos + 9));
    const size_t e = j.find("\"end\": ", pos);
    ASSERT_NE(e, std::string::npos);
    const double end = std::stod(j.substr(e + 7));
    EXPECT_GE(end - start, 30e6 * 0.999) << j;
    EXPECT_GT(start, 0.0);
    EXPECT_LE(end, s.device_us * 1e3 * 1.001) << j;
    ++tasks;
    pos = e;
  }
  EXPECT_EQ(tasks, 2);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, DeviceClock,
                         ::testing::Values("host_build_graph", "tensormap_and_ringbuffer"));

}  // namespace
