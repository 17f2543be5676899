// tests/cpp/test_random_dag.cpp — random host-built DAGs give the same buffers as running tasks in order.
//
// Contract under test: whatever the number of scheduler threads and cores, every task (AIC, AIV,
// or one in eight a MIX task on a whole cluster) runs exactly once and only after all of its
// predecessors have completed, so a chain of hashes over predecessors' results equals the
// sequential evaluation in submission order.
#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <vector>

#include "common/test_kernels.h"

namespace {

struct Program {
  std::vector<int64_t> words;  // [n, per task: core, n_in, ins...]
  std::vector<int64_t> expected;
};

Program make_program(int64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  Program p;
  p.words.push_back(n);
  p.expected.assign(static_cast<size_t>(n), 0);
  for (int64_t t = 0; t < n; ++t) {
    const int64_t core = rng() % 8 == 0 ? int64_t{PTO_CORE_MIX} : static_cast<int64_t>(rng() % 2);
    const int64_t max_in = std::min<int64_t>(t, 6);
    const int64_t n_in = max_in ? static_cast<int64_t>(rng() % (max_in + 1)) : 0;
    std::vector<int64_t> ins;
    for (int64_t i = 0; i < n_in; ++i) {
      // Mostly recent producers (deep chains), sometimes any earlier task (wide joins).
      const int64_t back = (rng() % 4 == 0) ? static_cast<int64_t>(rng() % t)
                                            : static_cast<int64_t>(rng() % std::min<int64_t>(t, 64));
      const int64_t in = t - 1 - back;
      if (std::find(ins.begin(), ins.end(), in) == ins.end()) ins.push_back(in);
    }
    p.words.push_back(core);
    p.words.push_back(static_cast<int64_t>(ins.size()));
    uint64_t acc = static_cast<uint64_t>(t);
    for (int64_t in : ins) {
      p.words.push_back(in);
      acc = acc * 31 + static_cast<uint64_t>(p.expected[static_cast<size_t>(in)]);
    }
    p.expected[static_cast<size_t>(t)] = pto_test::mix_hash(t, acc);
  }
  return p;
}

using Param = std::tuple<const char *, int, int>;  // platform, block_dim, aicpu threads

class RandomDag : public ::testing::TestWithParam<Param> {};

TEST_P(RandomDag, TenThousandTasksMatchSequentialExecution) {
  const auto [platform, block_dim, threads] = GetParam();
  pto::ChipCallable callable(pto_test::orch(pto_test::kRandomDagOrch, "random_dag_orch"));
  callable.add_kernel(0, PTO_CORE_AIC, pto_test::kernel(pto_test::kMixKernel, "mix", PTO_CORE_AIC));
  callable.add_kernel(1, PTO_CORE_AIV, pto_test::kernel(pto_test::kMixKernel, "mix", PTO_CORE_AIV));
  callable.add_kernel(2, PTO_CORE_MIX, pto_test::kernel(pto_test::kMixKernel, "mix", PTO_CORE_MIX));
  pto::ChipWorker w;
  w.init(platform, "host_build_graph");
  w.set_device(0);
  for (uint32_t seed : {1u, 2u}) {
    const int64_t n = 10000;
    Program p = make_program(n, seed * 7919u + static_cast<uint32_t>(block_dim));
    std::vector<int64_t> buf(n, 0), runs(n, 0);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(p.words.data(), p.words.size() * 8, PTO_DTYPE_I64, {static_cast<int64_t>(p.words.size())},
                    PTO_DIR_INPUT);
    args.add_tensor(buf.data(), n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
    args.add_tensor(runs.data(), n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
    pto::ChipCallConfig cfg;
    cfg.block_dim = block_dim;
    cfg.aicpu_thread_num = threads;
    pto::RunStats s = w.run(callable, args, cfg);
    EXPECT_EQ(s.tasks_run, static_cast<uint64_t>(n));
    EXPECT_EQ(s.aic_tasks + s.aiv_tasks + s.mix_tasks, static_cast<uint64_t>(n));
    EXPECT_GT(s.mix_tasks, 0u);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(runs[i], 1) << "task " << i << " ran " << runs[i] << " times (seed " << seed << ")";
      ASSERT_EQ(buf[i], p.expected[i])
          << "task " << i << " saw a predecessor's result too early (seed " << seed << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, RandomDag,
                         ::testing::Values(Param{"a2a3sim", 1, 1}, Param{"a2a3sim", 3, 2},
                                           Param{"a2a3sim", 24, 4}, Param{"a5sim", 36, 5},
                                           Param{"a5sim", 2, 5}),
                         [](const ::testing::TestParamInfo<Param> &i) {
                           return std::string(std::get<0>(i.param)) + "_blockdim" +
                                  std::to_string(std::get<1>(i.param)) + "_threads" +
                                  std::to_string(std::get<2>(i.param));
                         });

}  // namespace
