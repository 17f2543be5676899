// tests/cpp/test_tmr_batch_deps.cpp — batch_deps on the tensormap runtime: random programs give
// the same buffers with and without it, and equal sequential execution.
//
// Contract under test (docs/architecture.md, "Schedule primitives"): dependency inference over a
// local batch map first, then the TensorMap, orders every read after write, write after write
// and write after read exactly as the TensorMap alone does. The programs are made to batch:
// runs of one kernel, the same views again (and views inside them), stream changes and scopes
// (every one a flush point), over strided and overlapping views; small rings make the
// orchestrator wait (another flush point) constantly.
#include <gtest/gtest.h>

#include <random>

#include "common/test_kernels.h"
#include "common/tmr_program.h"

namespace {

struct Case {
  const char *name;
  const char *platform;
  int block_dim, threads;
  int64_t tasks;
  uint32_t window, deps, tmap;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.name;
}

class TmrBatchDeps : public ::testing::TestWithParam<Case> {};

TEST_P(TmrBatchDeps, EveryBatchSizeGivesTheBuffersOfSequentialExecution) {
  const Case c = GetParam();
  pto::ChipCallable callable = pto_test::make_tmr_program_callable(c.platform);
  pto::ChipWorker w;
  w.init(c.platform, "tensormap_and_ringbuffer");
  w.set_device(1);
  for (uint64_t seed : {21u, 22u, 23u}) {
    const pto_test::TmrProgram prog = pto_test::make_tmr_program(c.tasks, seed * 7919, /*batchy=*/true);
    const pto_test::TmrData init(prog, seed);
    const auto expected = pto_test::run_sequential(prog, init.bufs, init.consts);

    std::vector<std::vector<int32_t>> unbatched;
    for (uint32_t batch : {0u, 1u, 4u, 32u}) {
      pto_test::TmrData data = init;
      pto::ChipStorageTaskArgs args = data.args();
      pto::ChipCallConfig cfg;
      cfg.block_dim = c.block_dim;
      cfg.aicpu_thread_num = c.threads;
      cfg.task_window = c.window;
      cfg.dep_pool_entries = c.deps;
      cfg.tensormap_entries = c.tmap;
      cfg.heap_bytes = 8192;
      cfg.batch_deps = batch;
      cfg.enable_profiling = batch == 4 && seed == 21;  // the trace's path: retired producers seen too
      const pto::RunStats s = w.run(callable, args, cfg);
      ASSERT_EQ(s.tasks_run, static_cast<uint64_t>(prog.tasks)) << "batch_deps=" << batch;
      std::printf(
          "[ batch    ] seed %llu batch_deps %u: %llu flushes, %llu look-ups skipped, %llu not filed\n",
          static_cast<unsigned long long>(seed), batch, static_cast<unsigned long long>(s.batch_flushes),
          static_cast<unsigned long long>(s.batch_local_hits),
          static_cast<unsigned long long>(s.batch_unfiled));
      if (batch == 0) {
        EXPECT_EQ(s.batch_flushes + s.batch_local_hits + s.batch_unfiled, 0u) << "off means off";
      } else {
        EXPECT_GT(s.batch_flushes, 0u);
        if (batch > 1) {
          EXPECT_GT(s.batch_local_hits, 0u) << "the program reuses views inside one kernel's run";
        }
      }
      pto_test::expect_same_buffers(data.bufs, expected,
                                    "seed " + std::to_string(seed) + ", batch_deps " + std::to_string(batch));
      if (batch == 0) unbatched = data.bufs;
      EXPECT_EQ(data.bufs, unbatched) << "batch_deps=" << batch << " differs from batch_deps=0";
    }
  }
}

// One thread: the orchestrator schedules too (its waits run scheduling passes). Tiny pools: the
// TensorMap and the dependency pool make it wait — and so flush — on most submits.
INSTANTIATE_TEST_SUITE_P(
    Configs, TmrBatchDeps,
    ::testing::Values(Case{"one_thread_tiny_window", "a2a3sim", 1, 1, 1500, 4, 16, 24},
                      Case{"two_threads_tiny_pools", "a2a3sim", 2, 2, 2000, 64, 8, 12},
                      Case{"four_threads_default_rings", "a2a3sim", 24, 4, 4000, 1024, 16384, 16384},
                      Case{"a5_seven_threads_small_rings", "a5sim", 3, 7, 2000, 16, 64, 64}),
    [](const ::testing::TestParamInfo<Case> &i) { return std::string(i.param.name); });

}  // namespace
