// tests/cpp/test_launch_model.cpp — SPMD launches, dependency-only tasks and dispatch predicates
// in one program, on both runtimes, run repeatedly (under TSan in CI: blocks of one task finish on
// different scheduler threads, dependency-only tasks retire on whichever thread releases them).
// tests/python/test_launch_model.py covers each feature on its own, on both platforms.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "common/test_kernels.h"
#include "pto/chip_worker.h"
#include "pto/kernel_compiler.h"

namespace {

// 0 (AIV) and 1 (AIC): pto_test::kDescBlockLane. 2 (AIV): x[1] = -5 (the predicated clobber). 3 (AIV): y[0] =
// sum of x.
const char *const kClobber = R"(
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[0]);
  reinterpret_cast<float *>(o->buffer.addr)[o->start_offset + 1] = -5.0f;
}
)";
const char *const kSum = R"(
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *x = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *y = reinterpret_cast<const ChipTensor *>(args[1]);
  const float *p = reinterpret_cast<const float *>(x->buffer.addr) + x->start_offset;
  double s = 0;
  for (uint64_t i = 0; i < x->numel(); ++i) s += p[i];
  reinterpret_cast<float *>(y->buffer.addr)[y->start_offset] = static_cast<float>(s);
}
)";
// X (float, kBlocks * 3 * 16), Y (float, 1), gate (int32, 1). Scalar 0: 1 for a MIX SPMD task
// (one cluster per block) in place of the AIV one. An SPMD task of kBlocks blocks, kDummies
// dependency-only tasks on X, a clobber of X[1] predicated on gate[0] > 0, an AIC SPMD task of 5
// blocks, then Y = sum(X).
const char *const kOrch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &X = a.tensor(0).ref(), &Y = a.tensor(1).ref(), &gate = a.tensor(2).ref();
  {
    CoreTaskArgs t;
    t.add_inout(X);
    t.launch_spec.set_block_num(24);
    if (a.scalar(0) != 0) {
      MixedKernels mk;
      mk.aic_kernel_id = 1;
      mk.aiv0_kernel_id = 0;
      mk.aiv1_kernel_id = 0;
      rt_submit_task(mk, t);
    } else {
      rt_submit_aiv_task(0, t);
    }
  }
  for (int i = 0; i < 50; ++i) { CoreTaskArgs t; t.add_inout(X); rt_submit_dummy_task(t); }
  {
    CoreTaskArgs t;
    t.add_inout(X);
    CoreTaskPredicate p;
    p.operand.tensor = &gate;
    p.operand.ndims = 1;
    p.op = PredicateOp::GT;
    t.set_predicate(p);
    rt_submit_aiv_task(2, t);
  }
  { CoreTaskArgs t; t.add_inout(X); t.launch_spec.set_block_num(5); rt_submit_aic_task(1, t); }
  CoreTaskArgs t;
  t.add_input(X);
  t.add_inout(Y);
  rt_submit_aiv_task(3, t);
}
)";

constexpr int kBlocks = 24;

class LaunchModel : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    w.init("a2a3sim", GetParam());
    w.set_device(0);
    pto::KernelCompiler kc("a2a3sim");
    c = std::make_unique<pto::ChipCallable>(
        kc.compile_orchestration_source(GetParam(), kOrch, "launch_model_cpp"));
    c->add_kernel(0, PTO_CORE_AIV,
                  kc.compile_incore_source(std::string("#define AIV_LANE 1\n") + pto_test::kDescBlockLane,
                                           "lm_block_aiv", PTO_CORE_AIV));
    c->add_kernel(1, PTO_CORE_AIC,
                  kc.compile_incore_source(std::string("#define AIV_LANE 0\n") + pto_test::kDescBlockLane,
                                           "lm_block_aic", PTO_CORE_AIC));
    c->add_kernel(2, PTO_CORE_AIV, kc.compile_incore_source(kClobber, "lm_clobber", PTO_CORE_AIV));
    c->add_kernel(3, PTO_CORE_AIV, kc.compile_incore_source(kSum, "lm_sum", PTO_CORE_AIV));
  }

  // Runs kOrch with gate[0] = `gate`; checks X and Y, returns the stats.
  pto::RunStats run(int32_t gate, bool mix) {
    std::vector<float> x(kBlocks * 3 * 16, 0.0f), y(1, -1.0f);
    std::vector<int32_t> g(1, gate);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(x.data(), x.size() * 4, PTO_DTYPE_F32, {static_cast<int64_t>(x.size())}, PTO_DIR_INOUT);
    args.add_tensor(y.data(), 4, PTO_DTYPE_F32, {1}, PTO_DIR_INOUT);
    args.add_tensor(g.data(), 4, PTO_DTYPE_I32, {1}, PTO_DIR_INPUT);
    args.add_scalar(int64_t{mix ? 1 : 0});
    pto::ChipCallConfig cfg;
    cfg.block_dim = 2;
    cfg.aicpu_thread_num = 3;
    const pto::RunStats stats = w.run(*c, args, cfg);
    std::vector<float> want(x.size(), 0.0f);
    for (int b = 0; b < kBlocks; ++b) {
      want[(b * 3 + 1) * 16] = static_cast<float>(b + 1);
      if (mix) want[(b * 3 + 2) * 16] = want[(b * 3 + 0) * 16] = static_cast<float>(b + 1);
    }
    for (int b = 0; b < 5; ++b) want[(b * 3) * 16] = static_cast<float>(b + 1);
    if (gate > 0) want[1] = -5.0f;
    EXPECT_EQ(x, want);
    EXPECT_EQ(y[0], std::accumulate(want.begin(), want.end(), 0.0f));
    return stats;
  }

  pto::ChipWorker w;
  std::unique_ptr<pto::ChipCallable> c;
};

TEST_P(LaunchModel, BlocksDummiesAndPredicatesTogetherGiveTheSequentialResult) {
  for (int i = 0; i < 10; ++i) {
    SCOPED_TRACE(i);
    const pto::RunStats off = run(0, false);
    EXPECT_EQ(off.tasks_run, 3u);              // the two SPMD tasks and the sum
    EXPECT_EQ(off.tasks_retired_inline, 51u);  // 50 dependency-only tasks and the predicated one
    const pto::RunStats on = run(1, false);
    EXPECT_EQ(on.tasks_run, 4u);
    EXPECT_EQ(on.tasks_retired_inline, 50u);
    EXPECT_EQ(run(1, true).mix_tasks, 1u);  // MIX blocks
  }
}

// Sync-start gangs competing with each other and with ordinary SPMD tasks for the same cores:
// each round submits, all independent (each writes its own part of X), a 4-block AIV gang (every
// AIV core of block_dim 2), an ordinary 6-block AIV task, a 2-block AIC gang (every AIC core), a
// 3-block AIV gang and a 2-block MIX gang (every cluster). Scalar 0: rounds, scalar 1: 1 for
// the MIX gangs. Each task's part is kPart floats.
constexpr int kPart = 6 * 3 * 16;
const char *const kGangOrch = R"(
#include "pto_orchestration_api.h"
static void submit(const ChipTensor &X, uint32_t part, int shape, int blocks, bool sync) {
  uint32_t off[1] = {part * 6 * 3 * 16}, len[1] = {6 * 3 * 16};
  CoreTaskArgs t;
  const ChipTensor v = X.view(len, off);
  t.add_inout(v);
  t.launch_spec.set_block_num(static_cast<int16_t>(blocks));
  t.launch_spec.set_require_sync_start(sync);
  if (shape == 0) rt_submit_aiv_task(0, t);
  if (shape == 1) rt_submit_aic_task(1, t);
  if (shape == 2) {
    MixedKernels mk;
    mk.aic_kernel_id = 1;
    mk.aiv0_kernel_id = 0;
    mk.aiv1_kernel_id = 0;
    rt_submit_task(mk, t);
  }
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &a) {
  const ChipTensor &X = a.tensor(0).ref(), &Y = a.tensor(1).ref();
  const int rounds = static_cast<int>(a.scalar(0));
  const bool mix = a.scalar(1) != 0;
  uint32_t part = 0;
  for (int r = 0; r < rounds; ++r) {
    submit(X, part++, 0, 4, true);
    submit(X, part++, 0, 6, false);
    submit(X, part++, 1, 2, true);
    submit(X, part++, 0, 3, true);
    if (mix) submit(X, part++, 2, 2, true);
  }
  CoreTaskArgs t;
  t.add_input(X);
  t.add_inout(Y);
  rt_submit_aiv_task(3, t);
}
)";

TEST_P(LaunchModel, SyncStartGangsAmongOrdinaryTasksEachRunEveryBlockOnce) {
  pto::KernelCompiler kc("a2a3sim");
  pto::ChipCallable gangs(kc.compile_orchestration_source(GetParam(), kGangOrch, "launch_model_gangs_cpp"));
  gangs.add_kernel(0, PTO_CORE_AIV,
                   kc.compile_incore_source(std::string("#define AIV_LANE 1\n") + pto_test::kDescBlockLane,
                                            "lm_block_aiv", PTO_CORE_AIV));
  gangs.add_kernel(1, PTO_CORE_AIC,
                   kc.compile_incore_source(std::string("#define AIV_LANE 0\n") + pto_test::kDescBlockLane,
                                            "lm_block_aic", PTO_CORE_AIC));
  gangs.add_kernel(3, PTO_CORE_AIV, kc.compile_incore_source(kSum, "lm_sum", PTO_CORE_AIV));
  // (shape, blocks) of each round's tasks, in kGangOrch's order; lanes: AIV 1 and 2 are written
  // by sub-block 0 and 1 of an AIV core pair only in a MIX task.
  const std::vector<std::pair<int, int>> tasks = {{0, 4}, {0, 6}, {1, 2}, {0, 3}, {2, 2}};
  constexpr int kRounds = 12;
  std::vector<float> want(kRounds * tasks.size() * kPart, 0.0f);
  for (int r = 0, part = 0; r < kRounds; ++r) {
    for (const auto &[shape, blocks] : tasks) {
      for (int b = 0; b < blocks; ++b) {
        for (int lane = 0; lane < 3; ++lane) {
          if ((shape == 0 && lane == 1) || (shape == 1 && lane == 0) || shape == 2)
            want[part * kPart + (b * 3 + lane) * 16] = static_cast<float>(b + 1);
        }
      }
      ++part;
    }
  }
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    std::vector<float> x(want.size(), 0.0f), y(1, -1.0f);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(x.data(), x.size() * 4, PTO_DTYPE_F32, {static_cast<int64_t>(x.size())}, PTO_DIR_INOUT);
    args.add_tensor(y.data(), 4, PTO_DTYPE_F32, {1}, PTO_DIR_INOUT);
    args.add_scalar(int64_t{kRounds});
    args.add_scalar(int64_t{1});
    pto::ChipCallConfig cfg;
    cfg.block_dim = 2;
    cfg.aicpu_thread_num = 3;
    const pto::RunStats stats = w.run(gangs, args, cfg);
    EXPECT_EQ(x, want);
    EXPECT_EQ(y[0], std::accumulate(want.begin(), want.end(), 0.0f));
    EXPECT_EQ(stats.tasks_run, kRounds * tasks.size() + 1);
  }
}

INSTANTIATE_TEST_SUITE_P(BothRuntimes, LaunchModel,
                         ::testing::Values("tensormap_and_ringbuffer", "host_build_graph"),
                         [](const auto &p) { return std::string(p.param)[0] == 't' ? "tmr" : "hbg"; });

}  // namespace
