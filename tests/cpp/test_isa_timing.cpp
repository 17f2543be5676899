// tests/cpp/test_isa_timing.cpp — timing mode charges tile kernels what PTO-ISA's cost model predicts.
//
// Contract under test: in a timed run (sim_seed + sim_timing) of the tile examples (bgemm and
// paged attention, host_build_graph, with their kernels' cost-model twins attached), every task
// is priced by the model ("isa_model" in RunStats and in the trace), and the cycles charged to
// each invocation equal what the same twin predicts for the same shapes and scalars called
// outside the runtime — exactly; the task's virtual duration is those cycles at the profile's
// clock; with tasks <= AIC cores, doubling the tile edge scales each GEMM task's time by the
// model's own ratio; a kernel without a twin falls back to host time visibly; the results are
// still right (the sim runs the real kernel for values). Needs what the tile tests need.
#include <dlfcn.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/tile_toolchain.h"
#include "common/trace_json.h"
#include "pto/chip_worker.h"
#include "pto/error.h"
#include "pto/kernel_compiler.h"
#include "pto_abi/intrinsic.h"
#include "pto_abi/tensor.h"
#include "pto_costmodel_shim/pto_costmodel_probe.h"

namespace {

const std::string kExamples = PTO_TEST_EXAMPLES_DIR;

// A twin called outside the runtime: what "the model alone" predicts.
struct Twin {
  void (*entry)(int64_t *) = nullptr;
  void (*begin)() = nullptr;
  int (*end)(PtoCostmodelCycles *, size_t) = nullptr;

  explicit Twin(const std::string &so) {
    void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);  // the runtime loads the same file: one copy
    EXPECT_NE(h, nullptr) << dlerror();
    if (h == nullptr) return;
    entry = reinterpret_cast<void (*)(int64_t *)>(dlsym(h, "kernel_entry"));
    begin = reinterpret_cast<void (*)()>(dlsym(h, "pto_costmodel_begin"));
    end = reinterpret_cast<int (*)(PtoCostmodelCycles *, size_t)>(dlsym(h, "pto_costmodel_end"));
  }

  // One call with these tensors (shape, dtype) and scalars, laid out as the runtime does.
  uint64_t cycles(const std::vector<std::pair<std::vector<uint32_t>, DataType>> &tensors,
                  const std::vector<int64_t> &scalars = {}) const {
    std::vector<std::vector<unsigned char>> buffers;
    std::vector<ChipTensor> descs(tensors.size());
    std::vector<int64_t> args(PTO_ABI_ARGS_LEN, 0);
    size_t i = 0;
    for (const auto &[shape, dtype] : tensors) {
      uint64_t n = 1;
      for (uint32_t s : shape) n *= s;
      buffers.emplace_back(n * get_element_size(dtype));
      std::vector<uint32_t> dims = shape;
      descs[i].init_external(buffers.back().data(), buffers.back().size(), dims.data(),
                             static_cast<uint32_t>(dims.size()), dtype);
      args[i] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&descs[i]));
      ++i;
    }
    for (int64_t s : scalars) args[i++] = s;
    LocalContext local{0, 1};
    GlobalContext global{0, 0};
    args[PTO_ABI_LOCAL_CONTEXT_INDEX] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&local));
    args[PTO_ABI_GLOBAL_CONTEXT_INDEX] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&global));
    PtoCostmodelCycles c{};
    begin();
    entry(args.data());
    EXPECT_EQ(end(&c, sizeof c), 0);
    return c.total_cycles;
  }
};

using pto_test::traced_tasks;
using pto_test::TracedTask;

class IsaTiming : public ::testing::Test {
 protected:
  void SetUp() override {
    const char *exec = getenv("PTO_SIM_EXEC");
    if (exec != nullptr && std::string(exec) == "threads") {
      GTEST_SKIP() << "timing mode needs seeded runs (the fiber model; PTO_SIM_EXEC=threads has none)";
    }
    PTO_SKIP_OR_FAIL_WITHOUT(pto_test::tile_unavailable());
  }

  static pto::KernelCompiler compiler() {
    pto::CompileOptions o;
    o.pto_isa_root = pto_test::isa_root();
    return pto::KernelCompiler("a2a3sim", o);
  }

  // The example's hbg orchestration, kernels (func_id = index) and, unless `no_twin` names one,
  // their twins; fills twins_ by func_id.
  pto::ChipCallable build(const std::string &example,
                          const std::vector<std::pair<std::string, pto_core_type>> &kernels,
                          int no_twin = -1) {
    const pto::KernelCompiler kc = compiler();
    pto::ChipCallable c(
        kc.compile_orchestration("host_build_graph", kExamples + "/" + example + "/orchestration_hbg.cpp"));
    std::vector<std::pair<std::string, pto_core_type>> sources;
    for (const auto &[name, core] : kernels)
      sources.emplace_back(kExamples + "/" + example + "/kernels/" + name, core);
    const std::vector<std::string> paths = kc.compile_incore_many(sources);
    const std::vector<pto::CostModelBuild> twins = kc.compile_cost_models_many(sources);
    twins_.clear();
    for (uint32_t i = 0; i < sources.size(); ++i) {
      c.add_kernel(i, sources[i].second, paths[i]);
      EXPECT_FALSE(twins[i].path.empty()) << twins[i].unavailable;
      if (static_cast<int>(i) == no_twin) {
        c.set_cost_model(i, "", "left out by the test");
        continue;
      }
      c.set_cost_model(i, twins[i].path);
      twins_.emplace(i, Twin(twins[i].path));
    }
    return c;
  }

  // A timed, profiled run: its stats and its trace's tasks.
  std::map<int64_t, TracedTask> run(pto::ChipCallable &callable, pto::ChipStorageTaskArgs &args,
                                    uint32_t block_dim, pto::RunStats *stats) {
    pto::ChipWorker w;
    w.init("a2a3sim", "host_build_graph");
    w.set_device(0);
    pto::ChipCallConfig cfg;
    cfg.block_dim = block_dim;
    cfg.aicpu_thread_num = 3;
    cfg.sim_seed = 7;
    cfg.sim_timing = 1;
    cfg.enable_profiling = 1;
    *stats = w.run(callable, args, cfg);
    const std::string json = w.last_trace_json();
    w.finalize();
    return traced_tasks(json);
  }

  // bgemm: `groups` x 2 GEMM and ADD tasks of `tiles` float32 tiles of edge `edge`; checks C.
  std::map<int64_t, TracedTask> bgemm(uint32_t groups, uint32_t tiles, uint32_t edge, pto::RunStats *stats,
                                      int no_twin = -1) {
    pto::ChipCallable c =
        build("bgemm", {{"kernel_gemm.cpp", PTO_CORE_AIC}, {"kernel_add.cpp", PTO_CORE_AIV}}, no_twin);
    const uint64_t tile = uint64_t{edge} * edge, n = uint64_t{groups} * 2 * tiles * tile;
    std::vector<float> a(n, 0.5f), b(n, 0.25f), out(uint64_t{groups} * tiles * tile, 0.0f);
    pto::ChipStorageTaskArgs args;
    const std::vector<int64_t> ab = {groups, 2, tiles, edge, edge};
    args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, ab, PTO_DIR_INPUT);
    args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, ab, PTO_DIR_INPUT);
    args.add_tensor(out.data(), out.size() * 4, PTO_DTYPE_F32, {groups, tiles, edge, edge}, PTO_DIR_INOUT);
    auto tasks = run(c, args, std::max<uint32_t>(groups * 2, 2), stats);
    const float expected = 2.0f * static_cast<float>(edge) * 0.5f * 0.25f;  // two k-steps
    EXPECT_FLOAT_EQ(out.front(), expected);
    EXPECT_FLOAT_EQ(out.back(), expected);
    return tasks;
  }

  std::map<uint32_t, Twin> twins_;
};

TEST_F(IsaTiming, EveryBgemmTaskIsChargedExactlyWhatTheModelAlonePredicts) {
  constexpr uint32_t kGroups = 2, kTiles = 4, kEdge = 64;
  pto::RunStats stats;
  const auto tasks = bgemm(kGroups, kTiles, kEdge, &stats);
  const std::vector<std::pair<std::vector<uint32_t>, DataType>> tiles3 = {
      {{kTiles, kEdge, kEdge}, DataType::FLOAT32},
      {{kTiles, kEdge, kEdge}, DataType::FLOAT32},
      {{kTiles, kEdge, kEdge}, DataType::FLOAT32}};
  const uint64_t gemm = twins_.at(0).cycles(tiles3);
  const uint64_t add = twins_.at(1).cycles({tiles3[0], tiles3[1]});
  ASSERT_EQ(tasks.size(), kGroups * 2u * 2u);
  for (const auto &[id, t] : tasks) {
    EXPECT_EQ(t.cost_source, "isa_model") << "task " << id;
    EXPECT_EQ(t.cycles, t.func == 0 ? gemm : add) << "task " << id << " (func " << t.func << ")";
    // The virtual duration is those cycles at the a2a3 profile's 1850 MHz (rounded to ns).
    EXPECT_EQ(t.end - t.start, static_cast<uint64_t>(std::llround(t.cycles / 1.85))) << "task " << id;
  }
  EXPECT_EQ(stats.priced_isa_model, tasks.size());
  EXPECT_EQ(stats.priced_table + stats.priced_host_time, 0u);
  ASSERT_EQ(stats.kernel_pricing.size(), 2u);
  EXPECT_EQ(stats.kernel_pricing[0].second, "isa_model");
  EXPECT_EQ(stats.kernel_pricing[1].second, "isa_model");
  EXPECT_EQ(stats.price_note, "");
  EXPECT_GT(stats.predicted_makespan_us, 0.0);
}

TEST_F(IsaTiming, EveryPagedAttentionTaskIsChargedExactlyWhatTheModelAlonePredicts) {
  // examples/paged_attention --case small: 2 requests of 33 and 17 tokens, 16 heads, head_dim
  // 16, blocks of 16 tokens (3 + 2 blocks), bfloat16 inputs.
  constexpr uint32_t kHeads = 16, kDim = 16, kBlock = 16, kMaxBlocks = 16;
  const std::vector<int32_t> contexts = {33, 17};
  pto::ChipCallable c = build("paged_attention", {{"kernel_qk.cpp", PTO_CORE_AIC},
                                                  {"kernel_softmax_prepare.cpp", PTO_CORE_AIV},
                                                  {"kernel_pv.cpp", PTO_CORE_AIC},
                                                  {"kernel_online_update.cpp", PTO_CORE_AIV}});
  const uint32_t cache_blocks = 2 * 3;
  std::vector<uint16_t> q(2 * kHeads * kDim, 0x3e80),
      kv(cache_blocks * kBlock * kDim, 0x3e00);  // 0.25, 0.125
  std::vector<int32_t> table(2 * kMaxBlocks);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<int32_t>(i % cache_blocks);
  std::vector<float> out(2 * kHeads * kDim, 0.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(q.data(), q.size() * 2, PTO_DTYPE_BF16, {2, kHeads, kDim}, PTO_DIR_INPUT);
  args.add_tensor(kv.data(), kv.size() * 2, PTO_DTYPE_BF16, {cache_blocks, kBlock, kDim}, PTO_DIR_INPUT);
  args.add_tensor(kv.data(), kv.size() * 2, PTO_DTYPE_BF16, {cache_blocks, kBlock, kDim}, PTO_DIR_INPUT);
  args.add_tensor(table.data(), table.size() * 4, PTO_DTYPE_I32, {2, kMaxBlocks}, PTO_DIR_INPUT);
  args.add_tensor(const_cast<int32_t *>(contexts.data()), 8, PTO_DTYPE_I32, {2}, PTO_DIR_INPUT);
  args.add_tensor(out.data(), out.size() * 4, PTO_DTYPE_F32, {2, kHeads, kDim}, PTO_DIR_OUTPUT);
  args.add_scalar_f32(0.25f);
  pto::RunStats stats;
  const auto tasks = run(c, args, 4, &stats);
  EXPECT_NEAR(out.front(), 0.125f, 1e-3f);  // every value is 0.125: so is any average of them

  // The model alone, for the arguments the orchestration gives each task (orchestration_hbg.cpp).
  using T = std::pair<std::vector<uint32_t>, DataType>;
  const T qd{{kHeads, kDim}, DataType::BFLOAT16}, kd{{kBlock, kDim}, DataType::BFLOAT16};
  const T s{{kHeads, kBlock}, DataType::FLOAT32}, p{{kHeads, kBlock}, DataType::BFLOAT16};
  const T vec{{kHeads}, DataType::FLOAT32}, o{{kHeads, kDim}, DataType::FLOAT32};
  float scale = 0.25f;
  int64_t scale_bits = 0;
  memcpy(&scale_bits, &scale, sizeof scale);
  std::vector<uint64_t> expected;  // in task-id order: qk, softmax, pv, update per block
  for (int32_t context : contexts) {
    const int32_t blocks = (context + kBlock - 1) / kBlock;
    for (int32_t j = 0; j < blocks; ++j) {
      const int64_t valid = std::min<int64_t>(kBlock, context - j * kBlock);
      expected.push_back(twins_.at(0).cycles({qd, kd, s}));
      expected.push_back(twins_.at(1).cycles({s, p, vec, vec}, {scale_bits, valid}));
      expected.push_back(twins_.at(2).cycles({p, kd, o}));
      expected.push_back(twins_.at(3).cycles({vec, vec, o, vec, vec, o, o}, {j == 0, j == blocks - 1}));
    }
  }
  ASSERT_EQ(tasks.size(), expected.size());
  for (const auto &[id, t] : tasks) {
    EXPECT_EQ(t.cost_source, "isa_model") << "task " << id;
    EXPECT_EQ(t.cycles, expected[static_cast<size_t>(id)]) << "task " << id << " (func " << t.func << ")";
  }
  EXPECT_EQ(stats.priced_isa_model, expected.size());
}

TEST_F(IsaTiming, DoublingTheTileEdgeScalesEachGemmTaskByTheModelsOwnRatio) {
  // 2 GEMM tasks at a time on 4 AIC cores: nothing queues, so a task's time is its kernel's.
  pto::RunStats small_stats, big_stats;
  const auto small = bgemm(1, 2, 64, &small_stats);
  const auto big = bgemm(1, 2, 128, &big_stats);
  const std::vector<std::pair<std::vector<uint32_t>, DataType>> t64(3, {{2, 64, 64}, DataType::FLOAT32}),
      t128(3, {{2, 128, 128}, DataType::FLOAT32});
  const double model_ratio = static_cast<double>(twins_.at(0).cycles(t128)) / twins_.at(0).cycles(t64);
  EXPECT_GT(model_ratio, 4.0);  // 8x the multiply-adds, 4x the bytes
  for (int64_t id = 0; id < 4; ++id) {
    if (small.at(id).func != 0) continue;
    const double ratio = static_cast<double>(big.at(id).end - big.at(id).start) /
                         static_cast<double>(small.at(id).end - small.at(id).start);
    EXPECT_NEAR(ratio, model_ratio, 0.01 * model_ratio) << "GEMM task " << id;
  }
  EXPECT_GT(big_stats.predicted_makespan_us, small_stats.predicted_makespan_us);
}

TEST_F(IsaTiming, AKernelWithoutATwinTakesItsHostTimeAndTheRunSaysWhy) {
  pto::RunStats stats;
  const auto tasks = bgemm(1, 2, 64, &stats, /*no_twin=*/1);
  for (const auto &[id, t] : tasks)
    EXPECT_EQ(t.cost_source, t.func == 0 ? "isa_model" : "host_time") << "task " << id;
  EXPECT_EQ(stats.priced_isa_model, 2u);
  EXPECT_EQ(stats.priced_host_time, 2u);
  ASSERT_EQ(stats.kernel_pricing.size(), 2u);
  EXPECT_EQ(stats.kernel_pricing[1], (std::pair<uint32_t, std::string>{1, "host_time"}));
  EXPECT_NE(stats.price_note.find("kernel 1: no cost model (left out by the test)"), std::string::npos)
      << stats.price_note;
}

TEST_F(IsaTiming, ATableEntryOverridesTheModel) {
  setenv("PTO_SIM_KERNEL_COSTS", "1=5000", 1);
  pto::RunStats stats;
  const auto tasks = bgemm(1, 2, 64, &stats);
  unsetenv("PTO_SIM_KERNEL_COSTS");
  for (const auto &[id, t] : tasks) {
    EXPECT_EQ(t.cost_source, t.func == 0 ? "isa_model" : "table") << "task " << id;
    if (t.func == 1) {
      EXPECT_EQ(t.end - t.start, 5000u) << "task " << id;
    }
  }
  EXPECT_EQ(stats.priced_table, 2u);
}

TEST_F(IsaTiming, ABadTwinPathIsALoadErrorNamingItAndTheWorkerRunsOn) {
  pto::ChipCallable c = build("bgemm", {{"kernel_gemm.cpp", PTO_CORE_AIC}, {"kernel_add.cpp", PTO_CORE_AIV}});
  c.set_cost_model(0, "/nonexistent/twin.so");
  std::vector<float> a(2 * 64 * 64, 0.5f), b(a), out(64 * 64, 0.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), a.size() * 4, PTO_DTYPE_F32, {1, 2, 1, 64, 64}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), b.size() * 4, PTO_DTYPE_F32, {1, 2, 1, 64, 64}, PTO_DIR_INPUT);
  args.add_tensor(out.data(), out.size() * 4, PTO_DTYPE_F32, {1, 1, 64, 64}, PTO_DIR_INOUT);
  pto::ChipWorker w;
  w.init("a2a3sim", "host_build_graph");
  w.set_device(0);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 2;
  cfg.sim_seed = 1;
  cfg.sim_timing = 1;
  try {
    w.run(c, args, cfg);
    ADD_FAILURE() << "a missing twin was accepted";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_LOAD_FAILED);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/twin.so"), std::string::npos) << e.what();
  }
  cfg.sim_timing = 0;  // the same worker, untimed: twins are not read
  EXPECT_EQ(w.run(c, args, cfg).tasks_run, 4u);
  w.finalize();
}

}  // namespace
