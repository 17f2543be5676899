// tests/cpp/test_seeded_runs.cpp — ChipCallConfig::sim_seed: a seeded run's schedule (which task
// ran on which core, in which order, dispatched by which scheduler) is a function of the seed and
// the program only: equal across runs and across processes, different for different seeds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_kernels.h"
#include "common/trace_json.h"

namespace {

const char *const kEmptyKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) { (void)args; }
)";

struct Case {
  const char *runtime;
  const char *orchestration;  // 64 tasks of kernel 0 on AIV cores
};

const Case kCases[] = {
    {"host_build_graph",  // eight chains of eight, interleaved
     "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n  (void)args;\n  int t[64];\n"
     "  for (int i = 0; i < 64; ++i) {\n    t[i] = g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(i)});\n"
     "    if (i >= 8) g.add_dependency(t[i - 8], t[i]);\n  }\n}\n"},
    {"tensormap_and_ringbuffer",  // independent tasks
     "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n"
     "  for (int i = 0; i < 64; ++i) o.submit_task(0, PTO_CORE_AIV, {pto::Arg::i64(i)});\n}\n"},
};

bool threads_model() {
  const char *s = std::getenv("PTO_SIM_EXEC");
  return s != nullptr && std::string(s) == "threads";
}

pto::ChipCallable callable(const Case &c) {
  pto::KernelCompiler kc("a2a3sim");
  pto::ChipCallable out(
      kc.compile_orchestration_source(c.runtime, c.orchestration, std::string("seeded_") + c.runtime));
  out.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kEmptyKernel, "seeded_empty", PTO_CORE_AIV));
  return out;
}

pto::ChipCallConfig config(int64_t seed) {
  pto::ChipCallConfig cfg;
  cfg.block_dim = 24;
  cfg.aicpu_thread_num = 4;
  cfg.enable_profiling = true;
  cfg.sim_seed = seed;
  return cfg;
}

using pto_test::json_field;

// The run's schedule from its trace: "task@[cores]/scheduler" in start order.
std::string schedule_of(const std::string &trace_json) {
  std::vector<std::tuple<long long, std::string>> by_start;
  for (size_t at = trace_json.find("{\"id\": "); at != std::string::npos;
       at = trace_json.find("{\"id\": ", at + 1)) {
    const std::string start = json_field(trace_json, at, "start");
    if (start.empty() || start == "null") continue;
    by_start.emplace_back(std::stoll(start), json_field(trace_json, at, "id") + "@" +
                                                 json_field(trace_json, at, "cores") + "/" +
                                                 json_field(trace_json, at, "thread"));
  }
  std::stable_sort(by_start.begin(), by_start.end());
  std::string out;
  for (const auto &e : by_start) out += std::get<1>(e) + " ";
  return out;
}

std::string seeded_schedule(pto::ChipWorker &w, const pto::ChipCallable &c, int64_t seed) {
  pto::ChipStorageTaskArgs none;
  const pto::RunStats stats = w.run(c, none, config(seed));
  EXPECT_EQ(stats.tasks_run, 64u);
  const std::string s = schedule_of(w.last_trace_json());
  EXPECT_EQ(std::count(s.begin(), s.end(), '@'), 64)
      << "trace not parsed: " << w.last_trace_json().substr(0, 400);
  return s;
}

class SeededRuns : public ::testing::TestWithParam<Case> {};

TEST_P(SeededRuns, SameSeedSameScheduleInThisProcessAndAnotherOneDifferentSeedsDiffer) {
  const Case &tc = GetParam();
  const pto::ChipCallable c = callable(tc);
  pto::ChipWorker w;
  w.init("a2a3sim", tc.runtime);
  w.set_device(0);
  if (threads_model()) {
    pto::ChipStorageTaskArgs none;
    try {
      w.run(c, none, config(7));
      FAIL() << "a seeded run in the thread-per-core model must be refused";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_NOT_SUPPORTED) << e.what();
      EXPECT_NE(std::string(e.what()).find("sim_seed=7"), std::string::npos) << e.what();
    }
    return;
  }
  const std::string a = seeded_schedule(w, c, 7);
  (void)w.run(c, pto::ChipStorageTaskArgs(), config(-1));  // an unseeded run in between
  const std::string b = seeded_schedule(w, c, 7);
  EXPECT_EQ(a, b) << "seed 7 gave two schedules in one process";

  // Another process: this test binary again, running only the child test below.
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  const std::string cmd = "PTO_SEEDED_CHILD_RUNTIME=" + std::string(tc.runtime) + " '" + self +
                          "' --gtest_filter=SeededRunsChild.PrintsTheScheduleOfSeed7 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  const size_t at = out.find("SCHEDULE ");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_EQ(out.substr(at + 9, out.find('\n', at) - at - 9), a)
      << "seed 7 gave another schedule in another process";

  int differ = 0;
  for (int64_t seed = 1; seed <= 5; ++seed) differ += seeded_schedule(w, c, seed) != a;
  EXPECT_GE(differ, 4) << "seeds 1..5 should schedule 64 tasks on 48 AIV cores differently from seed 7";
}

TEST(SeededRunsChild, PrintsTheScheduleOfSeed7) {
  const char *runtime = std::getenv("PTO_SEEDED_CHILD_RUNTIME");
  if (runtime == nullptr) GTEST_SKIP() << "run by SeededRuns in a child process";
  const Case &tc = std::string(runtime) == kCases[0].runtime ? kCases[0] : kCases[1];
  pto::ChipWorker w;
  w.init("a2a3sim", tc.runtime);
  w.set_device(0);
  std::printf("SCHEDULE %s\n", seeded_schedule(w, callable(tc), 7).c_str());
}

TEST(SeededRunsEnv, AMalformedPtoSimSeedIsNamed) {
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  setenv("PTO_SIM_SEED", "12x", 1);
  try {
    w.run(callable(kCases[0]), pto::ChipStorageTaskArgs(), pto::ChipCallConfig());
    ADD_FAILURE() << "PTO_SIM_SEED=12x must be refused";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find("PTO_SIM_SEED=12x"), std::string::npos) << e.what();
  }
  unsetenv("PTO_SIM_SEED");
  EXPECT_EQ(w.run(callable(kCases[0]), pto::ChipStorageTaskArgs(), pto::ChipCallConfig()).tasks_run, 64u);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, SeededRuns, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return std::string(i.param.runtime[0] == 'h' ? "hbg" : "tmr");
                         });

}  // namespace
