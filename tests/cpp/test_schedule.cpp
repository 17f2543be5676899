// tests/cpp/test_schedule.cpp — the schedule primitives' promises, on both L2 runtimes, checked from the
// trace.
//
// Contract under test (docs/design/architecture.md, "Schedule primitives"):
//   pipeline_depth D, scope S: at no instant does one gate of S have more than D tasks in flight
//     (the trace's [dispatch, complete) intervals), results equal the ungated run's, and a
//     depth of 1 never deadlocks, dependencies or not.
//   task_window_overflow: error fails a program larger than the window (CAPACITY_EXCEEDED naming
//     task_window and its size); evict_completed and stall complete one; host_build_graph
//     refuses evict_completed (NOT_SUPPORTED).
//   dispatch_threshold T with metric `ready`: every task's recorded decision is dispatch_above's
//     policy when its recorded metric is >= T, else dispatch_below's; a program that alternates
//     chains and wide fan-outs crosses T both ways; below T only the pool's first
//     active_cores_below cores run tasks; results are unchanged; without it every task records
//     locality.
//   Bad values are typed errors naming the field and the value.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_kernels.h"
#include "common/trace_json.h"
#include "pto/compile_options.h"
#include "pto/schedule_config.h"

namespace {

// Kernel 0 (AIV): args dst, i, sleep_us, chained. Sleeps, then dst[i] = dst[i - 1] + 1 when
// chained == 1 (so a missing order shows), else i + 1. Either way the result is dst[i] = i + 1.
const char *const kStep = R"(
#include <time.h>
#include "pto/kernel.h"
PTO_KERNEL(args) {
  int32_t *dst = pto::tensor<int32_t>(args, 0);
  const int64_t i = args[1];
  struct timespec ts = {0, static_cast<long>(args[2]) * 1000L};
  nanosleep(&ts, nullptr);
  dst[i] = args[3] == 1 && i > 0 ? dst[i - 1] + 1 : static_cast<int32_t>(i + 1);
}
)";

// Scalars of both orchestrations: tasks, streams, sleep_us, chained, with_target, hold_first_us
// (Program). Task i runs on
// stream i % streams (and target i % streams when with_target); chained 1: task i waits for i - 1
// and i - 3; chained 2 (waves): blocks of 16, a chain of 4 (each waits for the one before, the
// first for the previous block's last 12) then a fan-out of 12 that all wait for the chain's end.
const char *const kHbgOrch = R"(
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, a) {
  const int64_t n = a.scalar(0), streams = a.scalar(1), sleep_us = a.scalar(2), chained = a.scalar(3);
  const bool with_target = a.scalar(4) != 0;
  const int64_t hold = a.scalar(5);
  for (int64_t i = 0; i < n; ++i) {
    g.set_stream(static_cast<uint32_t>(i % streams), with_target ? static_cast<uint32_t>(i % streams) : pto::kNoTarget);
    pto::TaskArg args[4] = {pto::TaskArg::of(a.tensor(0)), pto::TaskArg::of_i64(i),
                            pto::TaskArg::of_i64(hold > 0 && i == 0 ? hold : sleep_us), pto::TaskArg::of_i64(chained)};
    const pto::TaskId t = g.add_task(0, PTO_CORE_AIV, args, 4);
    if (hold > 0 && i >= 1) g.add_dependency(t - static_cast<pto::TaskId>(i), t);
    if (chained == 1 && i >= 1) g.add_dependency(t - 1, t);
    if (chained == 1 && i >= 3) g.add_dependency(t - 3, t);
    const int64_t r = i % 16;
    if (chained == 2 && r == 0 && i >= 16) {
      for (int64_t j = 1; j <= 12; ++j) g.add_dependency(t - static_cast<pto::TaskId>(j), t);
    }
    if (chained == 2 && r >= 1 && r <= 3) g.add_dependency(t - 1, t);
    if (chained == 2 && r >= 4) g.add_dependency(t - static_cast<pto::TaskId>(r - 3), t);
  }
}
)";
const char *const kTmrOrch = R"(
#include "pto/orchestration.h"
using pto::Arg;
PTO_DEVICE_ORCHESTRATION(o) {
  const int64_t n = o.scalar(0), streams = o.scalar(1), sleep_us = o.scalar(2), chained = o.scalar(3);
  const bool with_target = o.scalar(4) != 0;
  const int64_t hold = o.scalar(5);
  pto::TensorView y = o.tensor(0);
  pto::TaskHandle h[512];
  for (int64_t i = 0; i < n && i < 512; ++i) {
    o.set_stream(static_cast<uint32_t>(i % streams), with_target ? static_cast<uint32_t>(i % streams) : pto::kNoTarget);
    pto::Arg args[4] = {Arg::no_dep(y), Arg::i64(i), Arg::i64(hold > 0 && i == 0 ? hold : sleep_us), Arg::i64(chained)};
    pto::TaskHandle after[13];
    uint32_t na = 0;
    if (hold > 0 && i >= 1) after[na++] = h[0];
    if (chained == 1 && i >= 1) after[na++] = h[i - 1];
    if (chained == 1 && i >= 3) after[na++] = h[i - 3];
    const int64_t r = i % 16;
    if (chained == 2 && r == 0 && i >= 16) {
      for (int64_t j = 1; j <= 12; ++j) after[na++] = h[i - j];
    }
    if (chained == 2 && r >= 1 && r <= 3) after[na++] = h[i - 1];
    if (chained == 2 && r >= 4) after[na++] = h[i - (r - 3)];
    h[i] = o.submit_task(0, PTO_CORE_AIV, args, 4, after, na);
  }
}
)";

struct Program {
  int64_t tasks = 40, streams = 2, sleep_us = 2000, chained = 0, with_target = 0;
  // > 0: task 0 sleeps this long and every other task waits for it, so the whole program is
  // submitted before the rest becomes ready at once. Without it a loaded machine can leave the
  // tensormap orchestrator submitting as slowly as the kernels finish (sleeping kernels hold
  // the sim's threads), and a stream never has three tasks ready together.
  int64_t hold_first_us = 0;
};

using pto_test::json_field;

// The most tasks in flight ([dispatch, complete)) at once per key, from the trace's task
// records; key_of names the gate a task belongs to from its record. A completion and a
// dispatch at the same instant count the completion first (the token goes back before it is
// taken again).
template <typename KeyOf>
std::map<std::string, int> max_in_flight(const std::string &trace, KeyOf key_of) {
  std::map<std::string, std::vector<std::pair<long long, int>>> events;
  const size_t tasks = trace.find("\"tasks\": [");
  const size_t edges = trace.find("\"edges\": [");
  for (size_t at = trace.find("{\"id\": ", tasks); at != std::string::npos && at < edges;
       at = trace.find("{\"id\": ", at + 1)) {
    const std::string d = json_field(trace, at, "dispatch"), c = json_field(trace, at, "complete");
    if (d.empty() || c.empty()) continue;
    const std::string key = key_of(trace, at);
    if (key.empty()) continue;
    events[key].emplace_back(std::stoll(d), +1);
    events[key].emplace_back(std::stoll(c), -1);
  }
  std::map<std::string, int> most;
  for (auto &[key, ev] : events) {
    std::sort(ev.begin(), ev.end());  // (-1) before (+1) at equal times
    int now = 0, hi = 0;
    for (const auto &e : ev) hi = std::max(hi, now += e.second);
    most[key] = hi;
  }
  return most;
}

std::string by_stream(const std::string &t, size_t at) {
  return json_field(t, at, "stream");
}
std::string by_target(const std::string &t, size_t at) {
  return json_field(t, at, "target");
}
std::string everything(const std::string &, size_t) {
  return "all";
}

class Schedule : public ::testing::TestWithParam<const char *> {
 protected:
  bool tmr() const { return std::string(GetParam()) == "tensormap_and_ringbuffer"; }

  void SetUp() override {
    w.init("a2a3sim", GetParam());
    w.set_device(3);
    pto::KernelCompiler kc("a2a3sim");
    callable = pto::ChipCallable(kc.compile_orchestration_source(GetParam(), tmr() ? kTmrOrch : kHbgOrch,
                                                                 std::string("sched_") + GetParam()));
    callable.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kStep, "sched_step", PTO_CORE_AIV));
  }

  pto::ChipCallConfig config(uint32_t depth, pto::PipelineScope scope) const {
    pto::ChipCallConfig cfg;
    cfg.block_dim = 4;  // 8 AIV cores: without gates a stream has more than 2 tasks in flight
    cfg.aicpu_thread_num = 3;
    cfg.enable_profiling = true;
    cfg.pipeline_depth = depth;
    cfg.pipeline_scope = static_cast<uint32_t>(scope);
    return cfg;
  }

  // Runs the program; checks dst[i] == i + 1 for every task.
  pto::RunStats run(const Program &p, const pto::ChipCallConfig &cfg) {
    std::vector<int32_t> dst(static_cast<size_t>(p.tasks), -1);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(dst.data(), dst.size() * 4, PTO_DTYPE_I32, {p.tasks}, PTO_DIR_INOUT);
    for (int64_t s : {p.tasks, p.streams, p.sleep_us, p.chained, p.with_target, p.hold_first_us})
      args.add_scalar(s);
    pto::RunStats st = w.run(callable, args, cfg);
    for (int64_t i = 0; i < p.tasks; ++i) EXPECT_EQ(dst[i], i + 1) << "task " << i << " (results changed)";
    return st;
  }

  pto::ChipWorker w;
  pto::ChipCallable callable;
};

TEST_P(Schedule, WithoutGatesAStreamHasMoreThanTwoTasksInFlight) {
  // The control for the next test: the program does exceed two per stream when nothing gates it.
  Program p;
  p.hold_first_us = 20000;
  pto::RunStats st = run(p, config(0, pto::PipelineScope::kGlobal));
  const auto most = max_in_flight(w.last_trace_json(), by_stream);
  int hi = 0;
  for (const auto &kv : most) hi = std::max(hi, kv.second);
  EXPECT_GT(hi, 2);
  EXPECT_EQ(st.pipeline_max_in_flight, 0u);
  EXPECT_EQ(st.pipeline_deferred, 0u);
}

TEST_P(Schedule, PipelineDepthTwoPerStreamNeverHasMoreThanTwoInFlightPerStream) {
  Program p;
  p.hold_first_us = 20000;
  pto::RunStats st = run(p, config(2, pto::PipelineScope::kPerStream));
  const auto most = max_in_flight(w.last_trace_json(), by_stream);
  ASSERT_EQ(most.size(), 2u) << "both streams appear in the trace";
  for (const auto &[stream, n] : most) EXPECT_LE(n, 2) << "stream " << stream;
  EXPECT_EQ(st.pipeline_max_in_flight, 2u);
  EXPECT_GT(st.pipeline_deferred, 0u) << "ready tasks waited for a token";
}

TEST_P(Schedule, PipelineDepthOneGlobalDoesNotDeadlockOnDependentTasks) {
  Program p;
  p.tasks = 60;
  p.sleep_us = 200;
  p.chained = 1;
  run(p, config(1, pto::PipelineScope::kGlobal));
  const auto most = max_in_flight(w.last_trace_json(), everything);
  EXPECT_EQ(most.at("all"), 1);
}

TEST_P(Schedule, PipelineDepthOneGlobalSerialisesIndependentTasks) {
  Program p;
  p.sleep_us = 500;
  pto::RunStats st = run(p, config(1, pto::PipelineScope::kGlobal));
  EXPECT_EQ(max_in_flight(w.last_trace_json(), everything).at("all"), 1);
  EXPECT_EQ(st.pipeline_max_in_flight, 1u);
}

TEST_P(Schedule, PipelineDepthPerPoolBoundsTheVectorPool) {
  // Every task held behind the first, as in the tests above: the released tasks then reach the
  // bound from one scheduler's pass. Without it the three in flight depended on all three
  // schedulers dispatching within the first kernels' 2 ms, which a loaded sanitizer run (two
  // sleeping kernels holding both pool workers) once missed.
  Program p;
  p.hold_first_us = 20000;
  run(p, config(3, pto::PipelineScope::kPerPool));
  const auto most = max_in_flight(w.last_trace_json(),
                                  [](const std::string &t, size_t at) { return json_field(t, at, "shape"); });
  EXPECT_EQ(most.at("\"AIV\""), 3);
}

TEST_P(Schedule, PipelineDepthPerTargetBoundsEachTarget) {
  Program p;
  p.with_target = 1;
  p.streams = 3;
  run(p, config(1, pto::PipelineScope::kPerTarget));
  const auto most = max_in_flight(w.last_trace_json(), by_target);
  ASSERT_EQ(most.size(), 3u);
  for (const auto &[target, n] : most) EXPECT_EQ(n, 1) << "target " << target;
}

TEST_P(Schedule, TasksWithoutATargetAreNotGatedPerTarget) {
  pto::RunStats st = run(Program{}, config(1, pto::PipelineScope::kPerTarget));
  EXPECT_EQ(st.pipeline_deferred, 0u);
  EXPECT_GT(max_in_flight(w.last_trace_json(), everything).at("all"), 1);
}

TEST_P(Schedule, WindowOverflowErrorFailsAProgramLargerThanTheWindow) {
  pto::ChipCallConfig cfg = config(0, pto::PipelineScope::kGlobal);
  cfg.task_window = 16;
  cfg.task_window_overflow = static_cast<uint32_t>(pto::WindowOverflow::kError);
  Program p;
  p.sleep_us = 0;
  p.tasks = 16;  // fits exactly
  pto::RunStats st = run(p, cfg);
  EXPECT_EQ(st.window_overflow, "error");
  p.tasks = 17;
  try {
    std::vector<int32_t> dst(17);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(dst.data(), dst.size() * 4, PTO_DTYPE_I32, {17}, PTO_DIR_INOUT);
    for (int64_t s : {p.tasks, p.streams, p.sleep_us, p.chained, p.with_target, p.hold_first_us})
      args.add_scalar(s);
    w.run(callable, args, cfg);
    ADD_FAILURE() << "a 17-task program ran in a 16-task window with overflow=error";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_CAPACITY_EXCEEDED) << e.what();
    EXPECT_NE(std::string(e.what()).find("task 16 overflows the task window: task_window=16"),
              std::string::npos)
        << e.what();
  }
  run(Program{}, config(0, pto::PipelineScope::kGlobal));  // the worker runs the next graph normally
}

TEST_P(Schedule, WindowOverflowStallCompletesAProgramLargerThanTheWindow) {
  pto::ChipCallConfig cfg = config(0, pto::PipelineScope::kGlobal);
  cfg.task_window = 4;
  Program p;
  p.tasks = 200;
  p.sleep_us = 20;
  p.chained = 1;
  pto::RunStats st = run(p, cfg);
  EXPECT_EQ(st.window_overflow, "stall");
  if (tmr()) {
    EXPECT_EQ(st.window.capacity, 4u);
    EXPECT_LE(st.window.high_water, 4u);
    EXPECT_GT(st.window.stalls, 0u);
  }
}

TEST_P(Schedule, WindowOverflowEvictCompletedCompletesAProgramLargerThanTheWindow) {
  pto::ChipCallConfig cfg = config(0, pto::PipelineScope::kGlobal);
  cfg.task_window = 4;
  cfg.task_window_overflow = static_cast<uint32_t>(pto::WindowOverflow::kEvictCompleted);
  Program p;
  p.tasks = 200;
  p.sleep_us = 20;
  p.chained = 1;
  if (!tmr()) {
    try {
      run(p, cfg);
      ADD_FAILURE() << "host_build_graph accepted evict_completed";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_NOT_SUPPORTED) << e.what();
      EXPECT_NE(std::string(e.what()).find("task_window_overflow=evict_completed"), std::string::npos)
          << e.what();
    }
    return;
  }
  pto::RunStats st = run(p, cfg);
  EXPECT_EQ(st.window_overflow, "evict_completed");
  EXPECT_EQ(st.window.capacity, 4u);
  EXPECT_LE(st.window.high_water, 4u);
  EXPECT_GT(st.window.stalls, 0u);
}

TEST_P(Schedule, SetStreamOutOfRangeIsAnInvalidArgumentNamingTheValue) {
  pto::KernelCompiler kc("a2a3sim");
  const std::string src =
      tmr() ? "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) { o.set_stream(300); }\n"
            : "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, a) { (void)a; g.set_stream(1, 999); }\n";
  pto::ChipCallable c(
      kc.compile_orchestration_source(GetParam(), src, std::string("bad_stream_") + GetParam()));
  try {
    w.run(c, pto::ChipStorageTaskArgs{}, pto::ChipCallConfig{});
    ADD_FAILURE() << "set_stream out of range was accepted";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(
        std::string(e.what()).find(tmr() ? "stream=300 is outside 0..255" : "target=999 is outside 0..255"),
        std::string::npos)
        << e.what();
  }
}

// dispatch_threshold: one task's recorded decision, from the trace.
struct Placed {
  long long dispatch = 0;
  int slot = -1;
  std::string policy;
  long long metric = -1;
};
std::vector<Placed> placed_tasks(const std::string &trace) {
  std::vector<Placed> out;
  const size_t tasks = trace.find("\"tasks\": [");
  const size_t edges = trace.find("\"edges\": [");
  for (size_t at = trace.find("{\"id\": ", tasks); at != std::string::npos && at < edges;
       at = trace.find("{\"id\": ", at + 1)) {
    const std::string d = json_field(trace, at, "dispatch"), cores = json_field(trace, at, "cores");
    if (d.empty() || cores.size() < 3) continue;
    Placed p;
    p.dispatch = std::stoll(d);
    p.slot = std::stoi(cores.substr(1));
    p.policy = json_field(trace, at, "dispatch_policy");
    const std::string m = json_field(trace, at, "dispatch_metric");
    p.metric = m.empty() ? -1 : std::stoll(m);
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(), [](const Placed &a, const Placed &b) { return a.dispatch < b.dispatch; });
  return out;
}

// The AIV cores' slots of the trace's "cores" list, in slot order: a core's index there is its
// index in the vector pool (what active_cores_below counts).
std::vector<int> aiv_slots(const std::string &trace) {
  std::vector<int> out;
  const size_t end = trace.find("\"tasks\": [");
  for (size_t at = trace.find("{\"slot\": "); at != std::string::npos && at < end;
       at = trace.find("{\"slot\": ", at + 1)) {
    if (json_field(trace, at, "type") == "\"AIV\"") out.push_back(std::stoi(json_field(trace, at, "slot")));
  }
  std::sort(out.begin(), out.end());
  return out;
}

pto::ChipCallConfig with_threshold(pto::ChipCallConfig cfg, uint32_t threshold, pto::DispatchPolicy below,
                                   pto::DispatchPolicy above, pto::DispatchScope scope, uint32_t active = 0) {
  cfg.dispatch_metric = static_cast<uint32_t>(pto::DispatchMetric::kReady);
  cfg.dispatch_threshold = threshold;
  cfg.dispatch_below = static_cast<uint32_t>(below);
  cfg.dispatch_above = static_cast<uint32_t>(above);
  cfg.dispatch_scope = static_cast<uint32_t>(scope);
  cfg.active_cores_below = active;
  return cfg;
}

Program waves() {
  Program p;
  p.tasks = 64;
  p.sleep_us = 1000;
  p.chained = 2;
  return p;
}

TEST_P(Schedule, WithoutDispatchThresholdEveryTaskRecordsLocality) {
  pto::RunStats st = run(Program{}, config(0, pto::PipelineScope::kGlobal));
  const std::vector<Placed> tasks = placed_tasks(w.last_trace_json());
  ASSERT_EQ(tasks.size(), 40u);
  for (const Placed &t : tasks) {
    EXPECT_EQ(t.policy, "\"locality\"");
    EXPECT_EQ(t.metric, 0);
  }
  EXPECT_EQ(st.dispatch_locality + st.dispatch_round_robin + st.dispatch_work_stealing, 0u);
  EXPECT_EQ(st.dispatch_switches, 0u);
}

TEST_P(Schedule, DispatchThresholdPicksThePolicyByTheMetricAndSwitchesBothWays) {
  const uint32_t T = 4;
  pto::RunStats st =
      run(waves(), with_threshold(config(0, pto::PipelineScope::kGlobal), T, pto::DispatchPolicy::kLocality,
                                  pto::DispatchPolicy::kWorkStealing, pto::DispatchScope::kGlobal));
  const std::vector<Placed> tasks = placed_tasks(w.last_trace_json());
  ASSERT_EQ(tasks.size(), 64u);
  int up = 0, down = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Placed &t = tasks[i];
    ASSERT_GE(t.metric, 1) << "the metric counts the task being placed";
    EXPECT_EQ(t.policy, t.metric >= T ? "\"work_stealing\"" : "\"locality\"") << "metric " << t.metric;
    if (i > 0) {
      const bool was = tasks[i - 1].metric >= T, is = t.metric >= T;
      up += !was && is;
      down += was && !is;
    }
  }
  EXPECT_GE(up, 1) << "a fan-out takes the metric to the threshold";
  EXPECT_GE(down, 1) << "a chain takes it back below";
  EXPECT_EQ(st.dispatch_locality + st.dispatch_work_stealing, 64u);
  EXPECT_EQ(st.dispatch_round_robin, 0u);
  EXPECT_GT(st.dispatch_locality, 0u);
  EXPECT_GT(st.dispatch_work_stealing, 0u);
  EXPECT_GE(st.dispatch_switches, 2u);
}

TEST_P(Schedule, BelowTheThresholdOnlyThePoolsFirstActiveCoresRunTasks) {
  const uint32_t T = 4, k = 2;
  pto::RunStats st =
      run(waves(), with_threshold(config(0, pto::PipelineScope::kGlobal), T, pto::DispatchPolicy::kRoundRobin,
                                  pto::DispatchPolicy::kLocality, pto::DispatchScope::kPerPool, k));
  const std::string trace = w.last_trace_json();
  const std::vector<int> aiv = aiv_slots(trace);
  ASSERT_EQ(aiv.size(), 8u) << "block_dim 4: 8 AIV cores";
  const std::vector<Placed> tasks = placed_tasks(trace);
  ASSERT_EQ(tasks.size(), 64u);
  int below = 0, outside = 0;
  for (const Placed &t : tasks) {
    const auto rank = std::find(aiv.begin(), aiv.end(), t.slot) - aiv.begin();
    EXPECT_EQ(t.policy, t.metric >= T ? "\"locality\"" : "\"round_robin\"") << "metric " << t.metric;
    if (t.metric < T) {
      ++below;
      EXPECT_LT(rank, k) << "a task placed below the threshold ran on AIV core " << rank << " (slot "
                         << t.slot << ")";
    } else {
      outside += rank >= k;
    }
  }
  EXPECT_GT(below, 0);
  EXPECT_GT(outside, 0) << "above the threshold every core takes work (else the check above proves nothing)";
  EXPECT_EQ(st.dispatch_round_robin + st.dispatch_locality, 64u);
}

INSTANTIATE_TEST_SUITE_P(BothRuntimes, Schedule,
                         ::testing::Values("host_build_graph", "tensormap_and_ringbuffer"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param) == "host_build_graph" ? "hbg" : "tmr";
                         });

TEST(ScheduleConfig, CallConfigFieldsOutOfRangeNameTheFieldAndTheRange) {
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(3);
  const std::vector<std::tuple<const char *, pto::ChipCallConfig>> bad = [] {
    std::vector<std::tuple<const char *, pto::ChipCallConfig>> v;
    pto::ChipCallConfig c;
    c.pipeline_scope = 4;
    v.emplace_back("pipeline_scope=4 is outside 0..3", c);
    c = {};
    c.task_window_overflow = 3;
    v.emplace_back("task_window_overflow=3 is outside 0..2", c);
    c = {};
    c.pipeline_depth = 70000;
    v.emplace_back("pipeline_depth=70000 is outside 0..65535", c);
    c = {};
    c.batch_deps = 257;
    v.emplace_back("batch_deps=257 is outside 0..256", c);
    c = {};
    c.dispatch_metric = 1;
    c.dispatch_below = 3;
    v.emplace_back("dispatch_below=3 is outside 0..2", c);
    c = {};
    c.dispatch_metric = 2;
    v.emplace_back("dispatch_metric=2 is outside 0..1", c);
    c = {};
    c.dispatch_threshold = 8;
    v.emplace_back("dispatch_threshold is set but dispatch_metric=0", c);
    return v;
  }();
  for (const auto &[message, cfg] : bad) {
    try {
      w.run(pto_test::basic_callable(), pto::ChipStorageTaskArgs{}, cfg);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(ScheduleConfig, CompileOptionsLowerIntoTheCallConfigFields) {
  pto::BackendOptions o;
  o.sched.task_window = 64;
  o.sched.window_overflow = pto::WindowOverflow::kEvictCompleted;
  o.sched.pipeline_depth = 2;
  o.sched.pipeline_scope = pto::PipelineScope::kPerStream;
  o.sched.batch_deps = 8;
  const pto::ChipCallConfig c = pto::make_call_config(o);
  EXPECT_EQ(c.batch_deps, 8u);
  EXPECT_EQ(c.task_window, 64u);
  EXPECT_EQ(c.task_window_overflow, 1u);
  EXPECT_EQ(c.pipeline_depth, 2u);
  EXPECT_EQ(c.pipeline_scope, 1u);
  EXPECT_EQ(pto::make_call_config(pto::BackendOptions{}).task_window, pto::ChipCallConfig{}.task_window)
      << "sched.task_window 0 keeps the call config's window";
}

TEST(ScheduleConfig, CompileOptionsOutOfRangeNameTheField) {
  pto::BackendOptions o;
  o.sched.pipeline_depth = 70000;
  try {
    pto::make_call_config(o);
    ADD_FAILURE() << "pipeline_depth 70000 accepted";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("CompileOptions.sched.pipeline_depth=70000 is outside 0..65535"),
              std::string::npos)
        << e.what();
  }
  o = {};
  o.sched.pipeline_scope = static_cast<pto::PipelineScope>(9);
  EXPECT_THROW(pto::make_call_config(o), pto::Error);
  o = {};
  o.sched.batch_deps = pto::kMaxBatchDeps + 1;
  try {
    pto::make_call_config(o);
    ADD_FAILURE() << "batch_deps 257 accepted";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("CompileOptions.sched.batch_deps=257 is outside 0..256"),
              std::string::npos)
        << e.what();
  }
  o = {};
  o.sched.dispatch_metric = pto::DispatchMetric::kReady;
  o.sched.dispatch_above = static_cast<pto::DispatchPolicy>(5);
  try {
    pto::make_call_config(o);
    ADD_FAILURE() << "dispatch_above 5 accepted";
  } catch (const pto::Error &e) {
    EXPECT_NE(std::string(e.what()).find("CompileOptions.sched.dispatch_above=5 is not one of locality (0)"),
              std::string::npos)
        << e.what();
  }
  o = {};
  o.sched.active_cores_below = 2;
  try {
    pto::make_call_config(o);
    ADD_FAILURE() << "active_cores_below without a metric accepted";
  } catch (const pto::Error &e) {
    EXPECT_NE(std::string(e.what()).find("active_cores_below is set but dispatch_metric is none"),
              std::string::npos)
        << e.what();
  }
}

TEST(ScheduleConfig, DispatchThresholdLowersIntoTheCallConfigFields) {
  pto::BackendOptions o;
  o.sched.dispatch_metric = pto::DispatchMetric::kReady;
  o.sched.dispatch_threshold = 7;
  o.sched.dispatch_scope = pto::DispatchScope::kPerPool;
  o.sched.dispatch_below = pto::DispatchPolicy::kRoundRobin;
  o.sched.dispatch_above = pto::DispatchPolicy::kWorkStealing;
  o.sched.active_cores_below = 3;
  const pto::ChipCallConfig c = pto::make_call_config(o);
  EXPECT_EQ(std::make_tuple(c.dispatch_metric, c.dispatch_threshold, c.dispatch_scope, c.dispatch_below,
                            c.dispatch_above, c.active_cores_below),
            std::make_tuple(1u, 7u, 1u, 1u, 2u, 3u));
}

TEST(ScheduleConfig, NamesParseBack) {
  for (uint32_t i = 0; i < pto::kWindowOverflowCount; ++i) {
    pto::WindowOverflow o;
    ASSERT_TRUE(
        pto::parse_window_overflow(pto::window_overflow_name(static_cast<pto::WindowOverflow>(i)), &o));
    EXPECT_EQ(static_cast<uint32_t>(o), i);
  }
  for (uint32_t i = 0; i < pto::kPipelineScopeCount; ++i) {
    pto::PipelineScope s;
    ASSERT_TRUE(pto::parse_pipeline_scope(pto::pipeline_scope_name(static_cast<pto::PipelineScope>(i)), &s));
    EXPECT_EQ(static_cast<uint32_t>(s), i);
  }
  pto::PipelineScope s;
  EXPECT_FALSE(pto::parse_pipeline_scope("per_thread", &s));
  for (uint32_t i = 0; i < pto::kDispatchPolicyCount; ++i) {
    pto::DispatchPolicy p;
    ASSERT_TRUE(
        pto::parse_dispatch_policy(pto::dispatch_policy_name(static_cast<pto::DispatchPolicy>(i)), &p));
    EXPECT_EQ(static_cast<uint32_t>(p), i);
  }
  pto::DispatchMetric m;
  ASSERT_TRUE(pto::parse_dispatch_metric("ready", &m));
  EXPECT_EQ(m, pto::DispatchMetric::kReady);
  pto::DispatchScope d;
  ASSERT_TRUE(pto::parse_dispatch_scope("per_pool", &d));
  EXPECT_FALSE(pto::parse_dispatch_scope("per_stream", &d));
  pto::DispatchPolicy p;
  EXPECT_FALSE(pto::parse_dispatch_policy("random", &p));
}

}  // namespace
