// tests/cpp/test_graph_replay.cpp — the reference API's graph record/replay (rt_submit_graph,
// include/pto_abi/pto_graph.h) on both runtimes: a graph function runs once per identity and is
// replayed for later calls with their own tensors, boundary scalars and creators; a construction
// parameter is another identity; a call whose boundary differs, and a graph that cannot be
// replayed (a scope inside it), run the function again; every result equals running the
// function each time; MIX tasks (SPMD, sync-start) replay like any other.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/test_kernels.h"

namespace {

// The graph: out = (seeded_a + b + d) * (seeded_a + b + 100 + variant), where d is the boundary
// scalar, 100 + variant a value the function computes (fixed in the recording), and a's creator
// an explicit dependency (as the reference's own graph test has it). `calls` counts how often
// the function ran; the entry writes it to its last tensor.
const char *const kGraphOrch = R"(
#include <array>
#include "pto_orchestration_api.h"
namespace {
int g_calls = 0;
void layer(const GraphTaskArgs &args, int variant) {
  ++g_calls;
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &out = args.tensor(2).ref();
  const int64_t n = a.shapes[0];
  uint32_t shape[1] = {a.shapes[0]};
  TensorCreateInfo ci(shape, 1, DataType::FLOAT32);
#ifdef WITH_SCOPE
  PTO2_SCOPE() {
#endif
  const std::array<PTO2TaskId, 1> dep{a.owner_task_id};
  CoreTaskArgs add;
  add.add_input(a, b);
  add.add_output(ci);
  add.set_dependencies(dep.data(), 1);
  TaskOutputTensors s = rt_submit_aiv_task(0, add);
  const ChipTensor &sum = s.get_ref(0);
  CoreTaskArgs fence;
  fence.add_inout(sum);
  rt_submit_dummy_task(fence);
  CoreTaskArgs left;
  left.add_input(sum);
  left.add_output(ci);
  left.add_scalar(args.scalar(0), n);
  TaskOutputTensors l = rt_submit_aiv_task(1, left);
  const float fixed = 100.0f + static_cast<float>(variant);
  CoreTaskArgs right;
  right.add_input(sum);
  right.add_output(ci);
  right.add_scalar(fixed, n);
  TaskOutputTensors r = rt_submit_aiv_task(1, right);
  CoreTaskArgs mul;
  mul.add_input(l.get_ref(0), r.get_ref(0));
  mul.add_output(out);
  rt_submit_aiv_task(2, mul);
#ifdef WITH_SCOPE
  }
#endif
}
}  // namespace
// Run tensors: a, b (float[n]); outputs 0..5 (float[n]); calls (int32[4]).
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  g_calls = 0;
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  uint32_t shape[1] = {a.shapes[0]};
  TensorCreateInfo ci(shape, 1, DataType::FLOAT32);
  CoreTaskArgs seed;
  seed.add_input(a);
  seed.add_output(ci);
  seed.add_scalar(0.0f, static_cast<int64_t>(a.shapes[0]));
  TaskOutputTensors seeded = rt_submit_aiv_task(1, seed);
  const ChipTensor &sa = seeded.get_ref(0);
  for (int i = 0; i < 6; ++i) {
    GraphTaskArgs g;
    const ChipTensor &out = args.tensor(2 + i).ref();
    if (i == 5) {  // another boundary signature: the first half of every tensor
      uint32_t half[1] = {a.shapes[0] / 2}, at[1] = {0};
      const ChipTensor ha = sa.view(half, at), hb = b.view(half, at), ho = out.view(half, at);
      g.add_input(ha, hb);
      g.add_output(ho);
      g.add_scalar(1.0f + static_cast<float>(i));
      rt_submit_graph(&layer, g, 0);
      continue;
    }
    g.add_input(sa, b);
    g.add_output(out);
    g.add_scalar(1.0f + static_cast<float>(i));
    rt_submit_graph(&layer, g, i == 3 ? 1 : 0);  // call 3: another construction parameter
  }
  uint32_t at[1] = {0};
  set_tensor_data<int32_t>(args.tensor(8).ref(), 1, at, g_calls);
}
)";

class GraphReplay : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    w.init("a2a3sim", GetParam());
    w.set_device(0);
  }
  pto::ChipCallable callable(const std::string &name, const std::vector<std::string> &defines = {}) {
    pto::CompileOptions options;
    options.defines = defines;
    const pto::KernelCompiler with_defines("a2a3sim", options), kc("a2a3sim");
    pto::ChipCallable c(with_defines.compile_orchestration_source(GetParam(), kGraphOrch, name));
    c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(pto_test::kDescAdd, "ref_add", PTO_CORE_AIV));
    c.add_kernel(1, PTO_CORE_AIV,
                 kc.compile_incore_source(pto_test::kDescAddScalar, "ref_add_scalar", PTO_CORE_AIV));
    c.add_kernel(2, PTO_CORE_AIV, kc.compile_incore_source(pto_test::kDescMul, "ref_mul", PTO_CORE_AIV));
    return c;
  }
  // Runs the program, checking every output; *calls: how often the graph function ran.
  void run_and_check(const pto::ChipCallable &c, int *calls_out) {
    const int n = 256;
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i % 7);
      b[i] = static_cast<float>(i % 5) * 0.5f;
    }
    std::vector<std::vector<float>> outs(6, std::vector<float>(n, -1.0f));
    std::vector<int32_t> calls(4, -1);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    for (auto &o : outs) args.add_tensor(o.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INOUT);
    args.add_tensor(calls.data(), 16, PTO_DTYPE_I32, {4}, PTO_DIR_INOUT);
    pto::ChipCallConfig cfg;
    cfg.block_dim = 2;
    cfg.aicpu_thread_num = 3;
    w.run(c, args, cfg);
    for (int k = 0; k < 6; ++k) {
      const float d = 1.0f + static_cast<float>(k), fixed = k == 3 ? 101.0f : 100.0f;
      for (int i = 0; i < n; ++i) {
        const float s = a[i] + b[i];
        const float want = k == 5 && i >= n / 2 ? -1.0f : (s + d) * (s + fixed);
        ASSERT_FLOAT_EQ(outs[k][i], want) << "call " << k << " element " << i;
      }
    }
    *calls_out = calls[0];
  }
  pto::ChipWorker w;
};

// Six calls: 0, 1, 2, 4 one identity and signature (recorded at 0, replayed at 1, 2, 4 with their
// own d), 3 another construction parameter (its own recording), 5 another signature (runs).
TEST_P(GraphReplay, ReplaysBindThisCallsTensorsScalarsAndCreatorsAndRunTheFunctionOncePerIdentity) {
  int calls = -1;
  run_and_check(callable("graph_replay"), &calls);
  EXPECT_EQ(calls, 3);
}

// A scope inside the graph leaves it unrecorded: every call runs the function, same results.
TEST_P(GraphReplay, AGraphThatCannotBeReplayedRunsItsFunctionEveryCall) {
  int calls = -1;
  run_and_check(callable("graph_replay_scope", {"WITH_SCOPE=1"}), &calls);
  EXPECT_EQ(calls, 6);
}

// A second run of the same callable records again (recordings last one run).
TEST_P(GraphReplay, EveryRunRecordsAfresh) {
  const pto::ChipCallable c = callable("graph_replay");
  for (int run = 0; run < 2; ++run) {
    int calls = -1;
    run_and_check(c, &calls);
    EXPECT_EQ(calls, 3) << "run " << run;
  }
}

// A graph of two MIX tasks with a kernel per core (MixedKernels): a sync-start one of 2 blocks
// (every cluster of block_dim 2) and an ordinary SPMD one of 5. Each block writes its index + 1
// into the lane of each part: z[(block * 3 + lane) * 16], lane 0 the AIC part, 1 and 2 the AIV
// parts. The entry calls the graph on three tensors and writes how often the function ran.
const char *const kMixGraphOrch = R"(
#include "pto_orchestration_api.h"
namespace {
int g_calls = 0;
void mix_layer(const GraphTaskArgs &args) {
  ++g_calls;
  const ChipTensor &all = args.tensor(0).ref();
  uint32_t sync_len[1] = {2 * 48}, sync_at[1] = {0}, spmd_len[1] = {5 * 48}, spmd_at[1] = {2 * 48};
  const ChipTensor sync_part = all.view(sync_len, sync_at), spmd_part = all.view(spmd_len, spmd_at);
  MixedKernels mk;
  mk.aic_kernel_id = 0;
  mk.aiv0_kernel_id = 1;
  mk.aiv1_kernel_id = 1;
  CoreTaskArgs gang;
  gang.add_inout(sync_part);
  gang.launch_spec.set_block_num(2);
  gang.launch_spec.set_require_sync_start(true);
  rt_submit_task(mk, gang);
  CoreTaskArgs spmd;
  spmd.add_inout(spmd_part);
  spmd.launch_spec.set_block_num(5);
  rt_submit_task(mk, spmd);
}
}  // namespace
// Run tensors: outputs 0..2 (float[7 * 48]), calls (int32[4]).
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  g_calls = 0;
  for (int i = 0; i < 3; ++i) {
    GraphTaskArgs g;
    g.add_inout(args.tensor(i).ref());
    rt_submit_graph(&mix_layer, g);
  }
  uint32_t at[1] = {0};
  set_tensor_data<int32_t>(args.tensor(3).ref(), 1, at, g_calls);
}
)";

// Recorded at the first call, replayed at the other two: every block of both MIX tasks runs once
// in every part, with its own block index, each time.
TEST_P(GraphReplay, AGraphOfMixTasksReplaysTheirPartsAndBlocks) {
  pto::KernelCompiler kc("a2a3sim");
  pto::ChipCallable c(kc.compile_orchestration_source(GetParam(), kMixGraphOrch, "graph_replay_mix"));
  c.add_kernel(0, PTO_CORE_AIC,
               kc.compile_incore_source(std::string("#define AIV_LANE 0\n") + pto_test::kDescBlockLane,
                                        "graph_mix_aic", PTO_CORE_AIC));
  c.add_kernel(1, PTO_CORE_AIV,
               kc.compile_incore_source(std::string("#define AIV_LANE 1\n") + pto_test::kDescBlockLane,
                                        "graph_mix_aiv", PTO_CORE_AIV));
  const int n = 7 * 48;
  std::vector<float> want(n, 0.0f);
  for (int b = 0; b < 7; ++b) {
    for (int lane = 0; lane < 3; ++lane)
      want[(b * 3 + lane) * 16] = static_cast<float>((b < 2 ? b : b - 2) + 1);
  }
  std::vector<std::vector<float>> outs(3, std::vector<float>(n, 0.0f));
  std::vector<int32_t> calls(4, -1);
  pto::ChipStorageTaskArgs args;
  for (auto &o : outs) args.add_tensor(o.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INOUT);
  args.add_tensor(calls.data(), 16, PTO_DTYPE_I32, {4}, PTO_DIR_INOUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 2;
  cfg.aicpu_thread_num = 3;
  const pto::RunStats s = w.run(c, args, cfg);
  EXPECT_EQ(s.mix_tasks, 6u);
  EXPECT_EQ(calls[0], 1) << "the graph function ran once; the other calls replayed it";
  for (int k = 0; k < 3; ++k) EXPECT_EQ(outs[k], want) << "call " << k;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, GraphReplay,
                         ::testing::Values("tensormap_and_ringbuffer", "host_build_graph"),
                         [](const ::testing::TestParamInfo<const char *> &p) {
                           return std::string(p.param).substr(0, 3) == "ten" ? "tmr" : "hbg";
                         });

}  // namespace
