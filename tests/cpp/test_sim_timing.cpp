// tests/cpp/test_sim_timing.cpp — ChipCallConfig::sim_timing: a seeded run in virtual time
// (docs/sim_execution.md, "Timing mode"). The makespan it predicts is a function of the seed, the
// program, the cost table (PTO_SIM_KERNEL_COSTS) and the platform's timing profile
// (src/host/sim_timing_profile.h): the same across runs, exact for a chain, smaller on more cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/test_kernels.h"
#include "host/sim_timing_profile.h"

namespace {

const char *const kEmptyKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) { (void)args; }
)";

constexpr uint64_t kCostNs = 10000;  // what PTO_SIM_KERNEL_COSTS gives kernel 0

bool threads_model() {
  const char *s = std::getenv("PTO_SIM_EXEC");
  return s != nullptr && std::string(s) == "threads";
}

// host_build_graph: `n` tasks of kernel 0 on AIV cores, each after the previous one when `chain`.
std::string hbg_orchestration(int n, bool chain) {
  return "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n  (void)args;\n  int prev = -1;\n"
         "  for (int i = 0; i < " +
         std::to_string(n) +
         "; ++i) {\n    const int t = g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(i)});\n" +
         (chain ? "    if (prev >= 0) g.add_dependency(prev, t);\n" : "") + "    prev = t;\n  }\n}\n";
}

// tensormap_and_ringbuffer: 32 independent tasks of kernel 0.
const char *const kTmrOrchestration =
    "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n"
    "  for (int i = 0; i < 32; ++i) o.submit_task(0, PTO_CORE_AIV, {pto::Arg::i64(i)});\n}\n";

pto::ChipCallable callable(const char *runtime, const std::string &orchestration, const std::string &name) {
  pto::KernelCompiler kc("a2a3sim");
  pto::ChipCallable out(kc.compile_orchestration_source(runtime, orchestration, name));
  out.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kEmptyKernel, "timing_empty", PTO_CORE_AIV));
  return out;
}

pto::ChipCallConfig timed(int64_t seed, int block_dim, int threads = 1) {
  pto::ChipCallConfig cfg;
  cfg.block_dim = block_dim;
  cfg.aicpu_thread_num = threads;
  cfg.sim_seed = seed;
  cfg.sim_timing = true;
  return cfg;
}

// Sets PTO_SIM_KERNEL_COSTS for one scope.
struct Costs {
  explicit Costs(const char *table) { setenv("PTO_SIM_KERNEL_COSTS", table, 1); }
  ~Costs() { unsetenv("PTO_SIM_KERNEL_COSTS"); }
};

// The "start" values of the trace's task records, ascending.
std::vector<long long> kernel_starts(const std::string &json) {
  std::vector<long long> out;
  for (size_t at = json.find("\"start\": "); at != std::string::npos; at = json.find("\"start\": ", at + 1)) {
    const std::string v = json.substr(at + 9, json.find_first_of(",}", at + 9) - at - 9);
    if (v != "null") out.push_back(std::stoll(v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

class SimTiming : public ::testing::Test {
 protected:
  void SetUp() override {
    if (threads_model()) GTEST_SKIP() << "timing mode needs seeded runs (the fiber model)";
  }
};

TEST_F(SimTiming, SameSeedAndCostsGiveTheSameMakespanInBothRuntimes) {
  const Costs costs("0=10000");
  struct Case {
    const char *runtime;
    std::string orchestration;
    int threads;
  };
  const Case cases[] = {{"host_build_graph", hbg_orchestration(48, false), 2},
                        {"tensormap_and_ringbuffer", kTmrOrchestration, 3}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.runtime);
    const pto::ChipCallable callable_ =
        callable(c.runtime, c.orchestration, std::string("timing_same_") + c.runtime);
    pto::ChipWorker w;
    w.init("a2a3sim", c.runtime);
    w.set_device(0);
    pto::ChipCallConfig cfg = timed(11, 4, c.threads);
    cfg.enable_profiling = true;
    const pto::RunStats a = w.run(callable_, pto::ChipStorageTaskArgs(), cfg);
    const std::string trace_a = w.last_trace_json();
    (void)w.run(callable_, pto::ChipStorageTaskArgs(), pto::ChipCallConfig());  // an untimed run between
    const pto::RunStats b = w.run(callable_, pto::ChipStorageTaskArgs(), cfg);
    EXPECT_GT(a.predicted_makespan_us, 0.0);
    EXPECT_EQ(a.predicted_makespan_us, b.predicted_makespan_us);
    EXPECT_EQ(kernel_starts(trace_a), kernel_starts(w.last_trace_json()))
        << "the same seed and costs drew two virtual schedules";
    // Every kernel is costed: the busy time of the cores is exactly the work, in virtual time.
    double busy = 0;
    for (const auto &core : a.cores) busy += core.busy_us;
    EXPECT_DOUBLE_EQ(busy, static_cast<double>(a.tasks_run) * kCostNs / 1e3);
  }
}

TEST_F(SimTiming, AFixedCostChainTakesNTimesCostPlusTheProfilesHandOffs) {
  constexpr int kTasks = 20;
  const Costs costs("0=10000");
  const pto::ChipCallable c = callable("host_build_graph", hbg_orchestration(kTasks, true), "timing_chain");
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  pto::ChipCallConfig cfg = timed(3, 1);
  cfg.enable_profiling = true;
  const pto::RunStats s = w.run(c, pto::ChipStorageTaskArgs(), cfg);
  ASSERT_EQ(s.tasks_run, static_cast<uint64_t>(kTasks));
  const pto::SimTimingProfile &p = *pto::sim_timing_profile("a2a3sim");
  // Each task: the scheduler dispatches it (dispatch_ns until the core starts), the core runs
  // it (the cost), the parked scheduler sees it done (completion_ns) and dispatches the next.
  const uint64_t per_task = p.dispatch_ns + kCostNs + p.completion_ns;
  EXPECT_EQ(static_cast<uint64_t>(s.predicted_makespan_us * 1e3 + 0.5), kTasks * per_task);
  // The trace is in virtual time: kernel starts are per_task apart, the first after a dispatch.
  const std::vector<long long> starts = kernel_starts(w.last_trace_json());
  ASSERT_EQ(starts.size(), static_cast<size_t>(kTasks)) << w.last_trace_json().substr(0, 400);
  EXPECT_EQ(starts[0], static_cast<long long>(p.dispatch_ns)) << "the launch is virtual time 0";
  for (int i = 1; i < kTasks; ++i)
    EXPECT_EQ(starts[i] - starts[i - 1], static_cast<long long>(per_task)) << i;
  // One core did all the work: its predicted utilisation is the cost's share of the makespan.
  double util = 0;
  for (const auto &core : s.cores) util = std::max(util, core.predicted_utilisation);
  EXPECT_NEAR(util, static_cast<double>(kCostNs) / per_task, 1e-9);
}

TEST_F(SimTiming, ACostMayGrowWithOneOfTheTasksArguments) {
  // Task i of the chain gets i as argument 0: "1000+250*a0" makes it cost 1000 + 250 i ns.
  constexpr int kTasks = 6;
  const Costs costs("0=1000+250*a0");
  const pto::ChipCallable c = callable("host_build_graph", hbg_orchestration(kTasks, true), "timing_arg");
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  pto::ChipCallConfig cfg = timed(4, 1);
  cfg.enable_profiling = true;
  const pto::RunStats s = w.run(c, pto::ChipStorageTaskArgs(), cfg);
  const pto::SimTimingProfile &p = *pto::sim_timing_profile("a2a3sim");
  uint64_t work = 0;
  for (int i = 0; i < kTasks; ++i) work += 1000 + 250 * static_cast<uint64_t>(i);
  EXPECT_EQ(static_cast<uint64_t>(s.predicted_makespan_us * 1e3 + 0.5),
            work + kTasks * (p.dispatch_ns + p.completion_ns));
  const std::vector<long long> starts = kernel_starts(w.last_trace_json());
  ASSERT_EQ(starts.size(), static_cast<size_t>(kTasks));
  for (int i = 1; i < kTasks; ++i)  // the gap after task i-1 is its cost plus the two hand-offs
    EXPECT_EQ(starts[i] - starts[i - 1],
              static_cast<long long>(1000 + 250 * (i - 1) + p.dispatch_ns + p.completion_ns))
        << i;
  // An index beyond the task's arguments adds nothing: only the fixed part remains.
  const Costs beyond("0=1000+250*a9");
  EXPECT_EQ(
      static_cast<uint64_t>(w.run(c, pto::ChipStorageTaskArgs(), cfg).predicted_makespan_us * 1e3 + 0.5),
      kTasks * (1000 + p.dispatch_ns + p.completion_ns));
}

TEST_F(SimTiming, IndependentTasksFinishSoonerOnMoreCores) {
  const Costs costs("0=10000");
  const pto::ChipCallable c = callable("host_build_graph", hbg_orchestration(32, false), "timing_wide");
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  const double two_cores = w.run(c, pto::ChipStorageTaskArgs(), timed(5, 1)).predicted_makespan_us;
  const double sixteen_cores = w.run(c, pto::ChipStorageTaskArgs(), timed(5, 8)).predicted_makespan_us;
  // 32 tasks of 10 us: at least 16 rounds on 2 AIV cores, at least 2 on 16.
  EXPECT_GE(two_cores, 16 * kCostNs / 1e3);
  EXPECT_GE(sixteen_cores, 2 * kCostNs / 1e3);
  EXPECT_LT(sixteen_cores * 4, two_cores) << "2 cores: " << two_cores << " us, 16 cores: " << sixteen_cores;
}

TEST_F(SimTiming, UncostedKernelsTakeTheirHostTimeScaled) {
  // No cost table: the empty kernel's measured host time (a few hundred ns at most... or more on
  // a loaded host) times the factor; 0 % makes every kernel free, so only the hand-offs remain.
  const pto::ChipCallable c = callable("host_build_graph", hbg_orchestration(5, true), "timing_free");
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  pto::ChipCallConfig cfg = timed(1, 1);
  cfg.sim_kernel_time_pct = 0;
  const pto::SimTimingProfile &p = *pto::sim_timing_profile("a2a3sim");
  EXPECT_EQ(w.run(c, pto::ChipStorageTaskArgs(), cfg).predicted_makespan_us * 1e3,
            5.0 * (p.dispatch_ns + p.completion_ns));
}

void expect_invalid(pto::ChipWorker &w, const pto::ChipCallable &c, const pto::ChipCallConfig &cfg,
                    const std::vector<std::string> &named) {
  try {
    w.run(c, pto::ChipStorageTaskArgs(), cfg);
    ADD_FAILURE() << "the run must be refused";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
    for (const std::string &n : named)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST_F(SimTiming, InvalidSettingsAreTypedErrorsNamingTheField) {
  const pto::ChipCallable c = callable("host_build_graph", hbg_orchestration(4, true), "timing_bad");
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  expect_invalid(w, c, timed(-1, 1), {"sim_timing", "sim_seed"});
  pto::ChipCallConfig negative = timed(1, 1);
  negative.sim_kernel_time_pct = -50;
  expect_invalid(w, c, negative, {"sim_kernel_time_pct=-50"});
  setenv("PTO_SIM_TIMING", "yes", 1);
  expect_invalid(w, c, pto::ChipCallConfig(), {"PTO_SIM_TIMING=yes"});
  setenv("PTO_SIM_TIMING", "1", 1);
  expect_invalid(w, c, pto::ChipCallConfig(), {"PTO_SIM_TIMING=1", "sim_seed"});
  unsetenv("PTO_SIM_TIMING");
  {
    const Costs costs("0=-5");
    expect_invalid(w, c, timed(1, 1), {"PTO_SIM_KERNEL_COSTS", "'0=-5'"});
  }
  for (const char *bad : {"0=5+", "0=+5", "0=2*a", "0=a1", "0=2*a1+5", "0=-2*a1", "0=1.5", "0=1e3*a1"}) {
    const Costs costs(bad);
    expect_invalid(w, c, timed(1, 1), {"PTO_SIM_KERNEL_COSTS", std::string("'") + bad + "'"});
  }
  {
    const Costs costs("0=100,7=100");
    expect_invalid(w, c, timed(1, 1), {"PTO_SIM_KERNEL_COSTS", "func_id 7"});
  }
  // The worker is still usable, and PTO_SIM_TIMING=1 with a seed turns the mode on.
  setenv("PTO_SIM_TIMING", "1", 1);
  pto::ChipCallConfig seeded;
  seeded.sim_seed = 2;
  const pto::RunStats s = w.run(c, pto::ChipStorageTaskArgs(), seeded);
  unsetenv("PTO_SIM_TIMING");
  EXPECT_EQ(s.tasks_run, 4u);
  EXPECT_GT(s.predicted_makespan_us, 0.0);
  EXPECT_EQ(w.run(c, pto::ChipStorageTaskArgs(), pto::ChipCallConfig()).predicted_makespan_us, 0.0);
}

}  // namespace
