// tests/cpp/test_sim_timing.cpp — ChipCallConfig::sim_timing: a seeded run in virtual time
// (docs/design/sim_execution.md, "Timing mode"). The makespan it predicts is a function of the seed, the
// program, the cost table (PTO_SIM_KERNEL_COSTS) and the platform's timing profile
// (share/sim_profiles/<family>.json, or the file PTO_SIM_PROFILE names; read by
// src/timing_model/sim_timing_profile.cpp): the same across runs, exact for a chain, smaller on more cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/scoped_env.h"
#include "common/scratch_dir.h"
#include "common/test_kernels.h"
#include "timing_model/sim_timing_profile.h"

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

// The default profile of `family` as the build tree stages it (what a run reads when
// PTO_SIM_PROFILE is unset).
std::string default_profile_path(const std::string &family) {
  return std::string(PTO_TEST_SIM_PROFILES_DIR) + "/" + family + ".json";
}
pto::SimTimingProfile default_profile(const std::string &family = "a2a3") {
  pto::SimTimingProfile p;
  std::string why;
  EXPECT_TRUE(pto::read_sim_timing_profile(default_profile_path(family), &p, &why)) << why;
  return p;
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
  const pto::SimTimingProfile p = default_profile();
  // Each task: the scheduler dispatches it (dispatch_ns until the core starts), the core runs
  // it (the cost), the parked scheduler sees it done (completion_ns) and dispatches the next.
  // The scheduler's own AICPU time: retiring one task and dispatching the next.
  const uint64_t per_task = p.dispatch_ns + kCostNs + p.completion_ns + p.aicpu_completion_ns + p.aicpu_dispatch_ns;
  EXPECT_EQ(static_cast<uint64_t>(s.predicted_makespan_us * 1e3 + 0.5), kTasks * per_task);
  // The trace is in virtual time: kernel starts are per_task apart, the first after a dispatch.
  const std::vector<long long> starts = kernel_starts(w.last_trace_json());
  ASSERT_EQ(starts.size(), static_cast<size_t>(kTasks)) << w.last_trace_json().substr(0, 400);
  EXPECT_EQ(starts[0], static_cast<long long>(p.aicpu_dispatch_ns + p.dispatch_ns)) << "the launch is virtual time 0";
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
  const pto::SimTimingProfile p = default_profile();
  uint64_t work = 0;
  for (int i = 0; i < kTasks; ++i) work += 1000 + 250 * static_cast<uint64_t>(i);
  const uint64_t handoffs = p.dispatch_ns + p.completion_ns + p.aicpu_dispatch_ns + p.aicpu_completion_ns;
  EXPECT_EQ(static_cast<uint64_t>(s.predicted_makespan_us * 1e3 + 0.5), work + kTasks * handoffs);
  const std::vector<long long> starts = kernel_starts(w.last_trace_json());
  ASSERT_EQ(starts.size(), static_cast<size_t>(kTasks));
  for (int i = 1; i < kTasks; ++i)  // the gap after task i-1 is its cost plus the two hand-offs
    EXPECT_EQ(starts[i] - starts[i - 1],
              static_cast<long long>(1000 + 250 * (i - 1) + handoffs))
        << i;
  // An index beyond the task's arguments adds nothing: only the fixed part remains.
  const Costs beyond("0=1000+250*a9");
  EXPECT_EQ(
      static_cast<uint64_t>(w.run(c, pto::ChipStorageTaskArgs(), cfg).predicted_makespan_us * 1e3 + 0.5),
      kTasks * (1000 + handoffs));
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
  const pto::SimTimingProfile p = default_profile();
  EXPECT_EQ(w.run(c, pto::ChipStorageTaskArgs(), cfg).predicted_makespan_us * 1e3,
            5.0 * (p.dispatch_ns + p.completion_ns + p.aicpu_dispatch_ns + p.aicpu_completion_ns));
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

// ---- The timing profile as data (share/sim_profiles/, PTO_SIM_PROFILE).

std::string file_text(const std::string &path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

// `text` with its one occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string &from, const std::string &to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from << " is not unique";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A profile file's text: the default numbers with sources "s", except the constants in `changed`
// (name -> its JSON text; "" leaves the constant out).
std::string profile_with(const std::map<std::string, std::string> &changed,
                         const std::string &family = "a2a3") {
  std::map<std::string, std::string> constants = {{"dispatch_ns", "{\"value\": 1000, \"source\": \"s\"}"},
                                                  {"completion_ns", "{\"value\": 500, \"source\": \"s\"}"},
                                                  {"submit_ns", "{\"value\": 200, \"source\": \"s\"}"},
                                                  {"cycles_per_us", "{\"value\": 1850, \"source\": \"s\"}"}};
  for (const auto &kv : changed) constants[kv.first] = kv.second;
  std::string out = "{\"family\": \"" + family + "\", \"constants\": {";
  const char *sep = "";
  for (const auto &kv : constants) {
    if (kv.second.empty()) continue;
    out += sep + ("\"" + kv.first + "\": " + kv.second);
    sep = ", ";
  }
  return out + "}}";
}

TEST(SimTimingProfile, TheDefaultFilesHoldThePublishedAndFittedNumbers) {
  // docs/design/timing_model.md gives each number's source; these are the published ones.
  for (const char *family : {"a2a3", "a5"}) {
    SCOPED_TRACE(family);
    const pto::SimTimingProfile p = default_profile(family);
    EXPECT_EQ(p.family, family);
    EXPECT_EQ(p.dispatch_ns, 430u);     // AICPU -> AICore ~140 ns + the core's set-up ~290 ns
    EXPECT_EQ(p.completion_ns, 600u);   // AICore -> AICPU through COND, mean ~600 ns
    EXPECT_EQ(p.device_preamble_ns, 9000u);
    EXPECT_EQ(p.gm_GBps, 1600.0);
    EXPECT_EQ(p.mte2_cube_GiBps, 135.0);  // pto-isa's kA2A3ArchConfig rates
    EXPECT_EQ(p.fixp_GiBps, 70.0);
    EXPECT_EQ(p.cycles_per_us, 1850.0);  // a2a3: pto-isa's kMainFrequencyHz; a5: the same, unknown
    // The staged copy is the source tree's file.
    EXPECT_EQ(file_text(default_profile_path(family)),
              file_text(std::string(PTO_TEST_SOURCE_DIR) + "/share/sim_profiles/" + family + ".json"));
  }
}

TEST_F(SimTiming, ACopiedProfileWithAnotherDispatchChangesTheChainsMakespan) {
  constexpr int kTasks = 20;
  constexpr uint64_t kDispatchNs = 3000;
  const Costs costs("0=10000");
  const pto::ChipCallable c = callable("host_build_graph", hbg_orchestration(kTasks, true), "timing_chain");
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  pto::ChipCallConfig cfg = timed(3, 1);
  cfg.enable_profiling = true;
  const pto::SimTimingProfile p = default_profile();
  ASSERT_NE(p.dispatch_ns, kDispatchNs);
  const pto_test::ScratchDir dir("pto_sim_profile");
  const std::string copy = dir.write("mine.json", replaced(file_text(default_profile_path("a2a3")),
                                                           "\"value\": " + std::to_string(p.dispatch_ns),
                                                           "\"value\": " + std::to_string(kDispatchNs)));
  {
    const pto_test::ScopedEnv profile("PTO_SIM_PROFILE", copy.c_str());
    const pto::RunStats s = w.run(c, pto::ChipStorageTaskArgs(), cfg);
    // As in AFixedCostChainTakesNTimesCostPlusTheProfilesHandOffs, with the copy's dispatch.
    const uint64_t aicpu = p.aicpu_dispatch_ns + p.aicpu_completion_ns;
    const uint64_t per_task = kDispatchNs + kCostNs + p.completion_ns + aicpu;
    EXPECT_EQ(static_cast<uint64_t>(s.predicted_makespan_us * 1e3 + 0.5), kTasks * per_task);
    const std::vector<long long> starts = kernel_starts(w.last_trace_json());
    ASSERT_EQ(starts.size(), static_cast<size_t>(kTasks));
    EXPECT_EQ(starts[0], static_cast<long long>(p.aicpu_dispatch_ns + kDispatchNs));
    for (int i = 1; i < kTasks; ++i)
      EXPECT_EQ(starts[i] - starts[i - 1], static_cast<long long>(per_task)) << i;
  }
  // Unset again: the next run reads the default file.
  const pto::RunStats s = w.run(c, pto::ChipStorageTaskArgs(), cfg);
  EXPECT_EQ(static_cast<uint64_t>(s.predicted_makespan_us * 1e3 + 0.5),
            kTasks * (p.dispatch_ns + kCostNs + p.completion_ns + p.aicpu_dispatch_ns + p.aicpu_completion_ns));
}

TEST_F(SimTiming, BadProfilesAreTypedErrorsNamingTheVariableThePathAndTheFault) {
  const pto::ChipCallable c = callable("host_build_graph", hbg_orchestration(4, true), "timing_bad_profile");
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  const Costs costs("0=1000");
  const pto::SimTimingProfile p = default_profile();
  const uint64_t good_ns = 4 * (1000 + p.dispatch_ns + p.completion_ns + p.aicpu_dispatch_ns + p.aicpu_completion_ns);
  const std::string good = file_text(default_profile_path("a2a3"));
  const pto_test::ScratchDir dir("pto_sim_profile");
  struct Case {
    const char *name;
    std::string path;
    std::vector<std::string> named;  // besides the variable and the path
  };
  const Case cases[] = {
      {"missing file", dir.path() + "/absent.json", {"cannot open the file", "No such file"}},
      {"bad JSON", dir.write("truncated.json", good.substr(0, good.size() / 2)), {"not JSON: line"}},
      {"not an object", dir.write("array.json", "[1, 2]"), {"an array, not a profile object"}},
      {"missing constant",
       dir.write("no_submit.json", profile_with({{"submit_ns", ""}})),
       {"constants.submit_ns is missing"}},
      {"negative constant",
       dir.write("negative.json", replaced(good, "\"value\": " + std::to_string(p.dispatch_ns), "\"value\": -5")),
       {"constants.dispatch_ns.value is negative (-5)"}},
      {"fractional ns",
       dir.write("fraction.json", replaced(good, "\"value\": " + std::to_string(p.completion_ns), "\"value\": 500.5")),
       {"constants.completion_ns.value is 500.5, not a whole number of ns"}},
      {"string value",
       dir.write("string.json", profile_with({{"submit_ns", "{\"value\": \"200\", \"source\": \"s\"}"}})),
       {"constants.submit_ns.value is a string, not a number"}},
      {"zero clock",
       dir.write("clock.json", replaced(good, "\"value\": 1850", "\"value\": 0")),
       {"constants.cycles_per_us.value is 0", "positive"}},
      {"no source",
       dir.write("unsourced.json", profile_with({{"dispatch_ns", "{\"value\": 1000}"}})),
       {"constants.dispatch_ns.source is missing", "estimate"}},
      {"empty source",
       dir.write("empty_source.json",
                 profile_with({{"cycles_per_us", "{\"value\": 1850, \"source\": \"\"}"}})),
       {"constants.cycles_per_us.source is empty"}},
      {"unknown constant",
       dir.write("typo.json", replaced(good, "\"submit_ns\"", "\"submitns\"")),
       {"unknown key \"submitns\""}},
      {"another family", default_profile_path("a5"), {"for family \"a5\"", "a2a3sim", "\"a2a3\""}},
  };
  for (const Case &k : cases) {
    SCOPED_TRACE(k.name);
    {
      const pto_test::ScopedEnv profile("PTO_SIM_PROFILE", k.path.c_str());
      std::vector<std::string> named = k.named;
      named.push_back("PTO_SIM_PROFILE=" + k.path + ": ");
      expect_invalid(w, c, timed(1, 1), named);
      // An untimed run does not read the profile.
      EXPECT_EQ(w.run(c, pto::ChipStorageTaskArgs(), pto::ChipCallConfig()).tasks_run, 4u);
    }
    // The worker stays usable: the next timed run takes the default profile.
    EXPECT_EQ(static_cast<uint64_t>(
                  w.run(c, pto::ChipStorageTaskArgs(), timed(1, 1)).predicted_makespan_us * 1e3 + 0.5),
              good_ns);
  }
}

TEST(SimTimingProfile, TheReaderReportsWhereTheJsonBreaks) {
  const pto_test::ScratchDir dir("pto_sim_profile");
  pto::SimTimingProfile p;
  std::string why;
  const auto rejects = [&](const std::string &text, const std::string &fragment) {
    why.clear();
    EXPECT_FALSE(pto::read_sim_timing_profile(dir.write("p.json", text), &p, &why)) << text;
    EXPECT_NE(why.find(fragment), std::string::npos) << text << " -> " << why;
  };
  rejects("{\"family\": \"a2a3\",\n  \"constants\": {]}", "line 2, column 17: expected a key");
  rejects("{\"family\": \"a2a3\", \"family\": \"a5\"}", "\"family\" appears twice");
  rejects("{\"family\": \"a2a3\"} x", "text after the end");
  rejects("{\"family\": \"a\\q\"}", "unknown escape");
  rejects("{\"family\": 01}", "expected ',' or '}'");
  rejects("", "the text ends where a value should be");
  rejects("{\"family\": \"a2a3\"}", "\"constants\" is missing");
  rejects("{\"constants\": {}}", "\"family\" is missing");
  rejects("{\"family\": \"a2a3\", \"clock\": 1}", "unknown key \"clock\"");
  // Escapes and the optional "about" are read; every constant in any order.
  const std::string ok =
      "{\"about\": \"caf\\u00e9 \\ud83d\\ude00\", \"family\": \"a\\u0032a3\", \"constants\": {"
      "\"cycles_per_us\": {\"source\": \"s\", \"value\": 1.5e3}, \"submit_ns\": {\"value\": 0, \"source\": "
      "\"s\"},"
      "\"completion_ns\": {\"value\": 7, \"source\": \"s\"}, \"dispatch_ns\": {\"value\": "
      "18446744073709551615,"
      " \"source\": \"s\"}}}";
  ASSERT_TRUE(pto::read_sim_timing_profile(dir.write("ok.json", ok), &p, &why)) << why;
  EXPECT_EQ(p.family, "a2a3");
  EXPECT_EQ(p.dispatch_ns, UINT64_MAX);
  EXPECT_EQ(p.completion_ns, 7u);
  EXPECT_EQ(p.submit_ns, 0u);
  EXPECT_EQ(p.cycles_per_us, 1500.0);
  rejects(replaced(ok, "18446744073709551615", "18446744073709551616"), "too large");
}

}  // namespace
