// tests/cpp/test_mix_tasks.cpp — MIX tasks (one task on a whole cluster: part 0 on its AIC core,
// parts 1 and 2 on its AIV cores) on both runtimes.
//
// Contract under test: a MIX task's parts run at the same time, each knowing its part and lane
// and running its own kernel (a part without one idles); the task's consumers start only after
// every part has finished, so results equal running the tasks one by one; a part whose kernel is
// registered for the other core type, or a submit_mixed with fewer than two kernels, is an
// INVALID_ARGUMENT naming the task, after which the worker runs the next program. SPMD and
// sync-start MIX launches: test_launch_model.cpp; sync between parts: test_mix_sync.cpp;
// replayed graphs: test_graph_replay.cpp.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "common/expect_error.h"
#include "common/test_kernels.h"

namespace {

// Kernel 0 (AIV): copy. args: src, dst, n.
const char *const kCopy = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const int32_t *src = pto::tensor<int32_t>(args, 0);
  int32_t *dst = pto::tensor<int32_t>(args, 1);
  for (int64_t i = 0; i < args[2]; ++i) dst[i] = src[i];
}
)";
// Kernel 1 (AIV): fill, pto_test::kFillI32 (args: dst, n, value).
// Kernel 3 (MIX): all three parts meet at a barrier (so they must run at the same time), then
// part p sleeps p ms (a consumer that does not wait for the last part reads its old third) and
// writes p + 1 + round into its third of the tensor. args: out, n, arrivals counter.
const char *const kMixBarrier = R"(
#include <atomic>
#include <time.h>
#include "pto/kernel.h"
PTO_KERNEL(args) {
  int32_t *out = pto::tensor<int32_t>(args, 0);
  auto *arrived = reinterpret_cast<std::atomic<int32_t> *>(pto::tensor<int32_t>(args, 2));
  const int64_t n = args[1], part = pto::mix_part(args);
  if (!pto::is_mix(args)) { pto::fail(args, 90); return; }
  const int32_t round = arrived->fetch_add(1) / 3;
  for (int spins = 0; arrived->load() < 3 * (round + 1); ++spins) {
    if (spins > 200000) { pto::fail(args, 91); return; }  // ~2 s: the parts did not run together
    struct timespec ts = {0, 10000};
    nanosleep(&ts, nullptr);
  }
  struct timespec ts = {0, static_cast<long>(part) * 1000000L};
  nanosleep(&ts, nullptr);
  for (int64_t i = part * n / 3; i < (part + 1) * n / 3; ++i) out[i] = static_cast<int32_t>(part + 1 + round);
}
)";

class MixTasks : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    w.init("a2a3sim", GetParam());
    w.set_device(3);
  }

  // A PTO_DEVICE_ORCHESTRATION of `body` with kernels 0 (copy), 1 (fill), 3 (MIX barrier).
  pto::ChipCallable callable(const std::string &body, const std::string &name) {
    pto::KernelCompiler kc("a2a3sim");
    pto::ChipCallable c(kc.compile_orchestration_source(
        GetParam(),
        "#include \"pto/orchestration.h\"\nusing pto::Arg;\nPTO_DEVICE_ORCHESTRATION(o) {\n" + body + "\n}\n",
        name));
    c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kCopy, "mix_tasks_copy", PTO_CORE_AIV));
    c.add_kernel(1, PTO_CORE_AIV,
                 kc.compile_incore_source(pto_test::kFillI32, "mix_tasks_fill", PTO_CORE_AIV));
    c.add_kernel(3, PTO_CORE_MIX, kc.compile_incore_source(kMixBarrier, "mix_tasks_barrier", PTO_CORE_MIX));
    return c;
  }

  // The program of RunOnAWholeClusterAtOnceAndTheirConsumersWaitForEveryPart, or one round of it
  // (a program the worker runs after an error).
  pto::RunStats run_rounds(const pto::ChipCallable &c, int block_dim, int threads, int rounds) {
    std::vector<int32_t> x(60, 0), y(60, -1), cnt(1, 0);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(x.data(), 60 * 4, PTO_DTYPE_I32, {60}, PTO_DIR_INOUT);
    args.add_tensor(y.data(), 60 * 4, PTO_DTYPE_I32, {60}, PTO_DIR_INOUT);
    args.add_tensor(cnt.data(), 4, PTO_DTYPE_I32, {1}, PTO_DIR_INOUT);
    args.add_scalar(rounds);
    pto::ChipCallConfig cfg;
    cfg.block_dim = block_dim;
    cfg.aicpu_thread_num = threads;
    const pto::RunStats s = w.run(c, args, cfg);
    EXPECT_EQ(cnt[0], 3 * rounds);  // three parts per MIX task
    // The last round's copy: part p's third of x, written in round rounds - 1.
    for (int i = 0; i < 60; ++i)
      EXPECT_EQ(y[i], i / 20 + rounds) << "element " << i << ", block_dim " << block_dim;
    return s;
  }

  static constexpr const char *kRounds =
      "pto::TensorView x = o.tensor(0), y = o.tensor(1), cnt = o.tensor(2);\n"
      "for (int64_t r = 0; r < o.scalar(0); ++r) {\n"
      "  o.submit_task(1, PTO_CORE_AIV, {Arg::out(y), Arg::i64(60), Arg::i64(r)});\n"
      "  o.submit_task(3, PTO_CORE_MIX, {Arg::out(x), Arg::i64(60), Arg::inout(cnt)});\n"
      "  o.submit_task(0, PTO_CORE_AIV, {Arg::in(x), Arg::out(y), Arg::i64(60)});\n"
      "}";

  pto::ChipWorker w;
};

// Each round: fill y, a MIX task writes x (part p its third, the later parts later), copy x to
// y. The copy reads every part's third, the next round's fill waits for the copy, and the MIX
// task's barrier fails the run if its parts do not run at once.
TEST_P(MixTasks, RunOnAWholeClusterAtOnceAndTheirConsumersWaitForEveryPart) {
  const pto::ChipCallable c = callable(kRounds, "mix_tasks_rounds");
  for (auto [block_dim, threads] : {std::pair<int, int>{1, 1}, {2, 3}, {24, 4}}) {
    SCOPED_TRACE("block_dim " + std::to_string(block_dim) + ", threads " + std::to_string(threads));
    const pto::RunStats s = run_rounds(c, block_dim, threads, 8);
    EXPECT_EQ(s.mix_tasks, 8u);
    EXPECT_EQ(s.aiv_tasks, 16u);
    EXPECT_EQ(s.tasks_run, 24u);
  }
}

// MixedKernels with several ids (Orchestrator::submit_mixed): each core of the cluster runs its
// own kernel, registered for its own core type; an unset core idles. Part and lane as the
// kernel sees them: part 0 on the AIC core (lane 0), parts 1 and 2 on the AIV cores (lanes 0, 1).
const char *const kPartKernel = R"(
#include "tensor.h"
#include "intrinsic.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *d = reinterpret_cast<const ChipTensor *>(args[0]);
  int64_t *out = reinterpret_cast<int64_t *>(d->buffer.addr) + d->start_offset;
  const uint32_t part = pto::mix_part(args);
  out[part] = KERNEL_TAG + 10 * get_sub_block_id(args) + args[1] + (pto::is_mix(args) ? 0 : 1000);
}
)";
const char *const kMixedOrch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &all = args.tensor(0).ref();   // int64[9]: three tasks' three parts
  uint32_t three[1] = {3}, first[1] = {0}, second[1] = {3}, third[1] = {6};
  ChipTensor x = all.view(three, first), y = all.view(three, second), z = all.view(three, third);
  MixedKernels full;
  full.aic_kernel_id = 0;
  full.aiv0_kernel_id = 1;
  full.aiv1_kernel_id = 1;
  CoreTaskArgs t;
  t.add_inout(x);
  t.add_scalar(int64_t{5});
  rt_submit_task(full, t);
  MixedKernels half;                // AIC and the first AIV core; the second idles
  half.aic_kernel_id = 0;
  half.aiv0_kernel_id = 1;
  CoreTaskArgs u;
  u.add_inout(y);
  u.add_scalar(int64_t{7});
  rt_submit_task(half, u);
  MixedKernels vector_pair;         // both AIV cores; the AIC core idles
  vector_pair.aiv0_kernel_id = 1;
  vector_pair.aiv1_kernel_id = 1;
  CoreTaskArgs v;
  v.add_inout(z);
  v.add_scalar(int64_t{9});
  rt_submit_task(vector_pair, v);
}
)";

TEST_P(MixTasks, MixedKernelsRunOneKernelPerCoreOfTheClusterAndUnsetCoresIdle) {
  for (const char *platform : {"a2a3sim", "a5sim"}) {
    SCOPED_TRACE(platform);
    pto::KernelCompiler kc(platform);
    pto::ChipCallable c(kc.compile_orchestration_source(GetParam(), kMixedOrch, "mix_tasks_mixed"));
    c.add_kernel(0, PTO_CORE_AIC,
                 kc.compile_incore_source(std::string("#define KERNEL_TAG 100\n") + kPartKernel,
                                          "mix_part_aic", PTO_CORE_AIC));
    c.add_kernel(1, PTO_CORE_AIV,
                 kc.compile_incore_source(std::string("#define KERNEL_TAG 200\n") + kPartKernel,
                                          "mix_part_aiv", PTO_CORE_AIV));
    pto::ChipWorker pw;
    pw.init(platform, GetParam());
    pw.set_device(4);
    std::vector<int64_t> out(9, -1);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(out.data(), out.size() * 8, PTO_DTYPE_I64, {9}, PTO_DIR_INOUT);
    pto::ChipCallConfig cfg;
    cfg.block_dim = 2;
    cfg.aicpu_thread_num = 3;
    const pto::RunStats s = pw.run(c, args, cfg);
    EXPECT_EQ(s.mix_tasks, 3u);
    const std::vector<int64_t> want = {105, 205, 215, 107, 207, -1, -1, 209, 219};
    EXPECT_EQ(out, want) << "AIC, AIV lane 0, AIV lane 1 of each task; an idle core writes nothing";
  }
}

TEST_P(MixTasks, APartOnTheWrongCoreTypeOrTooFewKernelsAreTypedErrorsAndTheWorkerGoesOn) {
  struct Case {
    const char *name, *body;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      // Kernel 1 (AIV) as the AIC part; kernel 3 (MIX) as an AIV part.
      {"aiv_kernel_as_aic",
       "const int32_t f[3] = {1, 1, -1};\n"
       "const pto::Arg a[3] = {Arg::out(o.tensor(1)), Arg::i64(60), Arg::i64(1)};\n"
       "o.submit_mixed(f, a, 3);",
       {"task 0 (kernel 1) asks for a AIC core but the kernel was registered for AIV"}},
      {"mix_kernel_as_aiv",
       "const int32_t f[3] = {-1, 1, 3};\n"
       "const pto::Arg a[3] = {Arg::out(o.tensor(1)), Arg::i64(60), Arg::i64(1)};\n"
       "o.submit_mixed(f, a, 3);",
       {"task 0 (kernel 3) asks for a AIV core but the kernel was registered for MIX"}},
      {"one_kernel",
       "const int32_t f[3] = {-1, 1, -1};\n"
       "const pto::Arg a[3] = {Arg::out(o.tensor(1)), Arg::i64(60), Arg::i64(1)};\n"
       "o.submit_mixed(f, a, 3);",
       {"task 0: submit_mixed needs kernels for at least two cores of the cluster (aic -1, aiv0 1, aiv1 "
        "-1)"}},
      {"aiv_kernel_as_mix",
       "o.submit_task(1, PTO_CORE_MIX, {Arg::out(o.tensor(1)), Arg::i64(60), Arg::i64(1)});",
       {"task 0 (kernel 1) asks for a MIX core but the kernel was registered for AIV"}},
  };
  const pto::ChipCallable good = callable(kRounds, "mix_tasks_rounds");
  for (const Case &k : cases) {
    SCOPED_TRACE(k.name);
    const pto::ChipCallable bad = callable(k.body, std::string("mix_tasks_bad_") + k.name);
    pto_test::expect_error([&] { run_rounds(bad, 2, 3, 0); }, PTO_INVALID_ARGUMENT, k.fragments);
    run_rounds(good, 2, 3, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(BothRuntimes, MixTasks,
                         ::testing::Values("tensormap_and_ringbuffer", "host_build_graph"),
                         [](const auto &p) { return std::string(p.param)[0] == 't' ? "tmr" : "hbg"; });

// host_build_graph's own graph API (pto/host_graph.h): a MIX task added with add_task runs on a
// whole cluster like a device orchestration's, its consumer after every part.
TEST(HostBuiltGraph, AddTaskOfAMixKernelRunsOnAWholeCluster) {
  pto::ChipCallable c(pto_test::orch(
      "#include \"pto/host_graph.h\"\n"
      "PTO_ORCHESTRATION(g, a) {\n"
      "  const pto::Tensor &x = a.tensor(0), &y = a.tensor(1), &cnt = a.tensor(2);\n"
      "  pto::TaskId prev = pto::kInvalidTask;\n"
      "  for (int64_t r = 0; r < 4; ++r) {\n"
      "    pto::TaskId m = g.add_task(3, PTO_CORE_MIX, {pto::TaskArg::of(x), pto::TaskArg::of_i64(60), "
      "pto::TaskArg::of(cnt)});\n"
      "    if (prev != pto::kInvalidTask) g.add_dependency(prev, m);\n"
      "    prev = g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of(x), pto::TaskArg::of(y), "
      "pto::TaskArg::of_i64(60)});\n"
      "    g.add_dependency(m, prev);\n"
      "  }\n"
      "}\n",
      "hbg_add_task_mix"));
  c.add_kernel(0, PTO_CORE_AIV, pto_test::kernel(kCopy, "mix_tasks_copy", PTO_CORE_AIV));
  c.add_kernel(3, PTO_CORE_MIX, pto_test::kernel(kMixBarrier, "mix_tasks_barrier", PTO_CORE_MIX));
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(5);
  std::vector<int32_t> x(60, 0), y(60, -1), cnt(1, 0);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(x.data(), 60 * 4, PTO_DTYPE_I32, {60}, PTO_DIR_INOUT);
  args.add_tensor(y.data(), 60 * 4, PTO_DTYPE_I32, {60}, PTO_DIR_INOUT);
  args.add_tensor(cnt.data(), 4, PTO_DTYPE_I32, {1}, PTO_DIR_INOUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 2;
  cfg.aicpu_thread_num = 3;
  const pto::RunStats s = w.run(c, args, cfg);
  EXPECT_EQ(s.mix_tasks, 4u);
  EXPECT_EQ(cnt[0], 12);
  for (int i = 0; i < 60; ++i) EXPECT_EQ(y[i], i / 20 + 4) << "element " << i;
}

}  // namespace
