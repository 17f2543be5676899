// tests/cpp/test_mix_sync.cpp — cross-core sync inside a MIX task (pto/mix_sync.h): event flags and
// tile pipes between the AIC part and the two AIV parts, their back-pressure, and deadlocks
// reported as TASK_FAILED naming the task, part and flag or pipe instead of hanging; on both
// runtimes.
//
// Every wait here must suspend the waiting core: ctest also runs this suite with
// PTO_SIM_WORKERS=1 (one pool worker for all cores: a wait that spun would hold it and stall
// the part it waits for until the pool's monitor adds a worker, a second later), and CI runs
// it with PTO_SIM_EXEC=threads.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/scoped_env.h"
#include "common/test_kernels.h"
#include "common/trace_json.h"

namespace {

constexpr int kTile = 256;  // floats per tile: 1 KiB

// AIC -> AIV pipeline. args: in, out, tiles, tile elements. The AIC part transforms tile i and
// pushes it to pipe i % 2; AIV part k pops pipe k - 1 (tiles k - 1, k + 1, ...) and finishes it.
const char *const kPipeline = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const float *in = pto::tensor<float>(args, 0);
  float *out = pto::tensor<float>(args, 1);
  const int64_t tiles = args[2], te = args[3];
  float tile[1024];
  const uint32_t part = pto::mix_part(args);
  if (part == 0) {
    for (int64_t i = 0; i < tiles; ++i) {
      for (int64_t j = 0; j < te; ++j) tile[j] = in[i * te + j] * 2.0f + 1.0f;
      if (!pto::pipe_push(args, static_cast<uint32_t>(i % 2), tile, static_cast<uint32_t>(te * 4))) return;
    }
    return;
  }
  for (int64_t i = part - 1; i < tiles; i += 2) {
    if (!pto::pipe_pop(args, part - 1, tile, static_cast<uint32_t>(te * 4))) return;
    for (int64_t j = 0; j < te; ++j) out[i * te + j] = tile[j] * tile[j] - static_cast<float>(j);
  }
}
)";

// Two-way exchange. args: a, b, out, rounds, tile elements. Each round AIV part k pushes its
// tile of `a` (k = 1) or `b` (k = 2) to the AIC part (pipes 0 and 1), which adds them and sends
// the sum back (pipes 2 and 3); part k writes sum * k.
const char *const kExchange = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const float *a = pto::tensor<float>(args, 0), *b = pto::tensor<float>(args, 1);
  float *out = pto::tensor<float>(args, 2);
  const int64_t rounds = args[3], te = args[4];
  const uint32_t bytes = static_cast<uint32_t>(te * 4), part = pto::mix_part(args);
  float x[1024], y[1024];
  for (int64_t r = 0; r < rounds; ++r) {
    if (part == 0) {
      if (!pto::pipe_pop(args, 0, x, bytes) || !pto::pipe_pop(args, 1, y, bytes)) return;
      for (int64_t j = 0; j < te; ++j) x[j] += y[j];
      if (!pto::pipe_push(args, 2, x, bytes) || !pto::pipe_push(args, 3, x, bytes)) return;
    } else {
      const float *src = (part == 1 ? a : b) + r * te;
      for (int64_t j = 0; j < te; ++j) x[j] = src[j];
      if (!pto::pipe_push(args, part - 1, x, bytes) || !pto::pipe_pop(args, part + 1, x, bytes)) return;
      float *dst = out + ((part - 1) * rounds + r) * te;
      for (int64_t j = 0; j < te; ++j) dst[j] = x[j] * static_cast<float>(part);
    }
  }
}
)";

// The barrier of test_tmr's kMixBarrier, with flags instead of a spinning shared counter.
// args: a, b, n. Part p fills its third of `a` with p + 1, all meet, then each copies the next
// part's third of `a` into its third of `b` (which needs the others' writes to be visible).
const char *const kFlagBarrier = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  int32_t *a = pto::tensor<int32_t>(args, 0), *b = pto::tensor<int32_t>(args, 1);
  const int64_t n = args[2], third = n / 3, part = pto::mix_part(args);
  for (int64_t i = part * third; i < (part + 1) * third; ++i) a[i] = static_cast<int32_t>(part + 1);
  if (part == 0) {  // arrivals on flag 0, departures on flag 1
    if (!pto::sync_wait(args, 0) || !pto::sync_wait(args, 0)) return;
    if (!pto::sync_set(args, 1) || !pto::sync_set(args, 1)) return;
  } else {
    if (!pto::sync_set(args, 0) || !pto::sync_wait(args, 1)) return;
  }
  const int64_t next = (part + 1) % 3;
  for (int64_t i = 0; i < third; ++i) b[part * third + i] = a[next * third + i];
}
)";

// Deadlocks and misuse. args: out, mode.
//   0: part 1 waits on flag 5, which nobody sets (the others return)
//   1: every part waits on a flag nobody sets (all live parts wait)
//   2: part 2 pops pipe 3 twice; its pusher, part 0, pushes one tile and returns
//   3: part 0 pushes more tiles to pipe 1 than it holds; part 1 pops one and returns
//   4: part 1 uses flag 16
// Part 0 writes 1 to out[0] when it gets through, so an unexpected pass shows.
const char *const kDeadlock = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  int32_t *out = pto::tensor<int32_t>(args, 0);
  const int64_t mode = args[1];
  const uint32_t part = pto::mix_part(args);
  int32_t tile[4] = {1, 2, 3, 4};
  switch (mode) {
    case 0:
      if (part == 1) pto::sync_wait(args, 5);
      break;
    case 1:
      pto::sync_wait(args, 10 + part);
      break;
    case 2:
      if (part == 0 && !pto::pipe_push(args, 3, tile, sizeof tile)) return;
      if (part == 2 && pto::pipe_pop(args, 3, tile, sizeof tile)) pto::pipe_pop(args, 3, tile, sizeof tile);
      break;
    case 3:
      if (part == 0) {
        for (int i = 0; i < 8; ++i)
          if (!pto::pipe_push(args, 1, tile, sizeof tile)) return;
        out[0] = 1;
      } else if (part == 1) {
        pto::pipe_pop(args, 1, tile, sizeof tile);
      }
      break;
    case 4:
      if (part == 1) pto::sync_set(args, 16);
      break;
  }
}
)";

class MixSync : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    w.init("a2a3sim", GetParam());
    w.set_device(0);
  }

  // A callable running `body` (a device orchestration's body) with kernel 0 = `kernel` as MIX.
  static pto::ChipCallable callable(const std::string &body, const char *kernel, const std::string &name,
                                    pto_core_type kernel_type = PTO_CORE_MIX) {
    pto::KernelCompiler kc("a2a3sim");
    pto::ChipCallable c(kc.compile_orchestration_source(
        GetParam(),
        "#include \"pto/orchestration.h\"\nusing pto::Arg;\nPTO_DEVICE_ORCHESTRATION(o) {\n" + body + "\n}\n",
        name + "_orch"));
    c.add_kernel(0, kernel_type, kc.compile_incore_source(kernel, name, kernel_type));
    return c;
  }

  pto::ChipWorker w;
};

// Catches the run's pto::Error; returns its message and checks its code and the time it took.
template <typename Fn>
std::string run_error(Fn fn, pto_status code) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    fn();
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    // Reported, not hung: far below the run's 20 s time limit the tests set.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    return e.what();
  }
  ADD_FAILURE() << "expected " << pto_status_name(code);
  return "";
}

void expect_has(const std::string &msg, const std::vector<std::string> &fragments) {
  for (const auto &f : fragments)
    EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
}

TEST_P(MixSync, AicFeedsBothAivPartsThroughBoundedPipes) {
  // 6 MIX tasks on 3 clusters, each over its own 37 tiles: clusters run several at once and
  // each cluster's sync block is reused (reset) for a second task.
  const int tasks = 6, tiles = 37, n = tasks * tiles * kTile;
  auto c = callable(
      "pto::TensorView in = o.tensor(0), out = o.tensor(1);\n"
      "for (int64_t t = 0; t < " +
          std::to_string(tasks) + "; ++t) {\n" + "  const int64_t s[1] = {t * " +
          std::to_string(tiles * kTile) + "}, e[1] = {" + std::to_string(tiles * kTile) +
          "};\n"
          "  o.submit_task(0, PTO_CORE_MIX, {Arg::in(in.slice(s, e)), Arg::out(out.slice(s, e)), Arg::i64(" +
          std::to_string(tiles) + "), Arg::i64(" + std::to_string(kTile) + ")});\n}",
      kPipeline, "mix_pipeline");
  std::vector<float> in(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
  pto::ChipStorageTaskArgs args;
  args.add_tensor(in.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(out.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 3;
  cfg.aicpu_thread_num = 3;
  const pto::RunStats s = w.run(c, args, cfg);
  EXPECT_EQ(s.mix_tasks, static_cast<uint64_t>(tasks));
  for (int i = 0; i < n; ++i) {
    const float t = in[i] * 2.0f + 1.0f;
    ASSERT_EQ(out[i], t * t - static_cast<float>(i % kTile)) << "element " << i;
  }
}

TEST_P(MixSync, AivToAicToAivExchange) {
  const int rounds = 9, te = 128;
  auto c = callable(
      "o.submit_task(0, PTO_CORE_MIX, {Arg::in(o.tensor(0)), Arg::in(o.tensor(1)), Arg::out(o.tensor(2)), "
      "Arg::i64(" +
          std::to_string(rounds) + "), Arg::i64(" + std::to_string(te) + ")});",
      kExchange, "mix_exchange");
  std::vector<float> a(rounds * te), b(rounds * te), out(2 * rounds * te, -1.0f);
  for (int i = 0; i < rounds * te; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(3 * i + 1);
  }
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), a.size() * 4, PTO_DTYPE_F32, {static_cast<int64_t>(a.size())}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), b.size() * 4, PTO_DTYPE_F32, {static_cast<int64_t>(b.size())}, PTO_DIR_INPUT);
  args.add_tensor(out.data(), out.size() * 4, PTO_DTYPE_F32, {static_cast<int64_t>(out.size())},
                  PTO_DIR_OUTPUT);
  w.run(c, args, pto::ChipCallConfig{});
  for (int k = 1; k <= 2; ++k) {
    for (int i = 0; i < rounds * te; ++i)
      ASSERT_EQ(out[(k - 1) * rounds * te + i], (a[i] + b[i]) * static_cast<float>(k))
          << "part " << k << " " << i;
  }
}

TEST_P(MixSync, FlagBarrierMakesEveryPartsWritesVisible) {
  const int n = 3 * 200, tasks = 5;
  std::string body = "pto::TensorView a = o.tensor(0), b = o.tensor(1);\n";
  for (int t = 0; t < tasks; ++t)  // the same buffers: each task after the previous one
    body += "o.submit_task(0, PTO_CORE_MIX, {Arg::inout(a), Arg::out(b), Arg::i64(" + std::to_string(n) +
            ")});\n";
  auto c = callable(body, kFlagBarrier, "mix_flag_barrier");
  for (auto [block_dim, threads] : {std::pair<int, int>{1, 1}, {2, 3}}) {
    std::vector<int32_t> a(n, 0), b(n, -1);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(a.data(), n * 4, PTO_DTYPE_I32, {n}, PTO_DIR_INOUT);
    args.add_tensor(b.data(), n * 4, PTO_DTYPE_I32, {n}, PTO_DIR_OUTPUT);
    pto::ChipCallConfig cfg;
    cfg.block_dim = block_dim;
    cfg.aicpu_thread_num = threads;
    EXPECT_EQ(w.run(c, args, cfg).mix_tasks, static_cast<uint64_t>(tasks));
    for (int i = 0; i < n; ++i) ASSERT_EQ(b[i], 1 + ((i / 200) + 1) % 3) << "element " << i;
  }
}

struct DeadlockCase {
  int mode;
  std::vector<std::string> fragments;
};

TEST_P(MixSync, DeadlocksFailTheTaskNamingPartAndFlagOrPipe) {
  // Task 1 deadlocks; task 0 before it succeeds, task 2 reads its output and is not run.
  auto c = callable(
      "pto::TensorView x = o.tensor(0);\n"
      "o.submit_task(0, PTO_CORE_MIX, {Arg::inout(x), Arg::i64(-1)});\n"
      "o.submit_task(0, PTO_CORE_MIX, {Arg::inout(x), Arg::i64(o.scalar(0))});\n"
      "o.submit_task(0, PTO_CORE_MIX, {Arg::inout(x), Arg::i64(-1)});",
      kDeadlock, "mix_deadlock");
  const std::vector<DeadlockCase> cases = {
      {0,
       {"task 1 (kernel 0", "failed", "part 1 (AIV) waits on flag 5", "MIX sync deadlock",
        "1 dependent task(s) were not run"}},
      {1, {"task 1 (kernel 0", "failed", "MIX sync deadlock: part 0 (AIC) waits on flag 10"}},
      {2, {"task 1 (kernel 0", "failed", "part 2 (AIV) pops from pipe 3, which is empty"}},
      {3, {"task 1 (kernel 0", "failed", "part 0 (AIC) pushes to pipe 1, which is full"}},
      {4, {"task 1 (kernel 0", "failed", "part 1 (AIV) used MIX sync flag 16", "flags are 0..15"}},
  };
  for (const DeadlockCase &dc : cases) {
    SCOPED_TRACE("mode " + std::to_string(dc.mode));
    std::vector<int32_t> x(4, 0);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(x.data(), 16, PTO_DTYPE_I32, {4}, PTO_DIR_INOUT);
    args.add_scalar(dc.mode);
    pto::ChipCallConfig cfg;
    cfg.timeout_ms = 20000;
    const std::string msg = run_error([&] { w.run(c, args, cfg); }, PTO_TASK_FAILED);
    expect_has(msg, dc.fragments);
    EXPECT_EQ(x[0], 0) << "part 0 got past a wait that should have failed";
  }
  // The worker runs the next graph normally.
  std::vector<int32_t> x(4, 0);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(x.data(), 16, PTO_DTYPE_I32, {4}, PTO_DIR_INOUT);
  args.add_scalar(-1);
  EXPECT_EQ(w.run(c, args, pto::ChipCallConfig{}).mix_tasks, 3u);
}

// A kernel that syncs although its task is not a MIX task (host_build_graph: also in a graph of
// its own API).
const char *const kNotMix = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) { pto::sync_set(args, 3); }
)";

TEST_P(MixSync, SyncOutsideAMixTaskFailsTheTask) {
  auto c = callable("o.submit_task(0, PTO_CORE_AIV, {Arg::i64(0)});", kNotMix, "not_mix", PTO_CORE_AIV);
  pto::ChipStorageTaskArgs args;
  expect_has(run_error([&] { w.run(c, args, pto::ChipCallConfig{}); }, PTO_TASK_FAILED),
             {"task 0 (kernel 0", "failed", "not a MIX task", "flag or pipe 3"});
  if (std::string(GetParam()) != "host_build_graph") return;

  pto::ChipCallable hc(
      pto_test::orch("#include \"pto/host_graph.h\"\n"
                     "PTO_ORCHESTRATION(g, a) { (void)a; g.add_task(0, PTO_CORE_AIC, "
                     "{pto::TaskArg::of_i64(0)}); }\n",
                     "hbg_not_mix"));
  hc.add_kernel(0, PTO_CORE_AIC, pto_test::kernel(kNotMix, "not_mix_hbg", PTO_CORE_AIC));
  expect_has(run_error([&] { w.run(hc, args, pto::ChipCallConfig{}); }, PTO_TASK_FAILED),
             {"task 0 (kernel 0, AIC) failed", "not a MIX task"});
}

TEST_P(MixSync, ATimedProfiledMixTaskTracesOneCostForItsThreeParts) {
  if (const char *exec = std::getenv("PTO_SIM_EXEC"); exec != nullptr && std::string(exec) == "threads") {
    GTEST_SKIP() << "timing mode needs seeded runs (the fiber model)";
  }
  // Every part takes the table's 3000 ns, the parts run at once: one task of 3000 ns, priced
  // by the table (core_pool.h merges the parts' prices into the task's).
  const pto_test::ScopedEnv costs("PTO_SIM_KERNEL_COSTS", "0=3000");
  auto c = callable(
      "for (int i = 0; i < 4; ++i) o.submit_task(0, PTO_CORE_MIX, {Arg::inout(o.tensor(0)), Arg::i64(9)});",
      kDeadlock, "mix_timed");  // mode 9: no sync, every part returns
  int32_t out[4] = {};
  pto::ChipStorageTaskArgs args;
  args.add_tensor(out, sizeof out, PTO_DTYPE_I32, {4}, PTO_DIR_OUTPUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 2;
  cfg.aicpu_thread_num = 3;
  cfg.sim_seed = 3;
  cfg.sim_timing = 1;
  cfg.enable_profiling = 1;
  const pto::RunStats s = w.run(c, args, cfg);
  EXPECT_EQ(s.mix_tasks, 4u);
  EXPECT_EQ(s.priced_table, 12u);  // 4 tasks x 3 parts
  const auto tasks = pto_test::traced_tasks(w.last_trace_json());
  ASSERT_EQ(tasks.size(), 4u);
  for (const auto &[id, t] : tasks) {
    EXPECT_EQ(t.cost_source, "table") << "task " << id;
    EXPECT_EQ(t.end - t.start, 3000u) << "task " << id;
  }
}

INSTANTIATE_TEST_SUITE_P(BothRuntimes, MixSync,
                         ::testing::Values("tensormap_and_ringbuffer", "host_build_graph"),
                         [](const auto &p) { return std::string(p.param)[0] == 't' ? "tmr" : "hbg"; });

}  // namespace
