// tests/cpp/test_tmr_random.cpp — random programs on the tensormap runtime equal sequential execution.
//
// Contract under test: with dependencies inferred from overlapping, strided views (read after
// write, write after write, write after read) and scoped heap buffers, every buffer after the
// run equals running the tasks one by one in submission order — for any number of AICPU
// threads and cores, and with rings so small that the orchestrator waits on them constantly.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <tuple>

#include "common/test_kernels.h"
#include "common/tmr_program.h"

namespace {

struct Case {
  const char *name;
  const char *platform;
  int block_dim, threads;
  int64_t tasks;
  uint32_t window, deps, tmap;
  uint64_t heap;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.name;
}

class TmrRandom : public ::testing::TestWithParam<Case> {};

TEST_P(TmrRandom, BuffersEqualSequentialExecution) {
  const Case c = GetParam();
  pto::ChipCallable callable = pto_test::make_tmr_program_callable(c.platform);
  pto::ChipWorker w;
  w.init(c.platform, "tensormap_and_ringbuffer");
  w.set_device(1);
  for (uint64_t seed : {11u, 12u}) {
    const pto_test::TmrProgram prog =
        pto_test::make_tmr_program(c.tasks, seed * 1000 + static_cast<uint64_t>(c.threads));
    pto_test::TmrData data(prog, seed);
    const auto expected = pto_test::run_sequential(prog, data.bufs, data.consts);
    pto::ChipStorageTaskArgs args = data.args();
    pto::ChipCallConfig cfg;
    cfg.block_dim = c.block_dim;
    cfg.aicpu_thread_num = c.threads;
    cfg.task_window = c.window;
    cfg.dep_pool_entries = c.deps;
    cfg.tensormap_entries = c.tmap;
    cfg.heap_bytes = c.heap;
    const pto::RunStats s = w.run(callable, args, cfg);
    EXPECT_EQ(s.tasks_run, static_cast<uint64_t>(prog.tasks));
    // How often each ring made the orchestrator wait depends on timing, so it is reported,
    // not asserted (test_tmr.cpp's BackPressure test forces every kind deterministically).
    std::printf("[ stalls   ] seed %llu: window %llu, heap %llu, dependency pool %llu, TensorMap %llu\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(s.window.stalls),
                static_cast<unsigned long long>(s.heap.stalls),
                static_cast<unsigned long long>(s.dep_pool.stalls),
                static_cast<unsigned long long>(s.tensormap.stalls));
    pto_test::expect_same_buffers(data.bufs, expected, "seed " + std::to_string(seed));
  }
}

// A temp is 32 x 32 int32 = 4096 bytes, so a 4096-byte heap lets one scope's temp live at a
// time. A 4-slot window keeps the orchestrator waiting on most submits; 8 dependency entries or
// 12 TensorMap entries (3 tasks' worth) make the pools the limit when the window is large.
INSTANTIATE_TEST_SUITE_P(
    Configs, TmrRandom,
    ::testing::Values(Case{"one_thread_tiny_window_and_heap", "a2a3sim", 1, 1, 2000, 4, 16, 24, 4096},
                      Case{"two_threads_tiny_pools", "a2a3sim", 2, 2, 3000, 64, 8, 12, 4096},
                      Case{"full_a2a3_small_rings", "a2a3sim", 24, 4, 10000, 16, 64, 64, 8192},
                      Case{"full_a5_default_rings", "a5sim", 36, 5, 10000, 1024, 16384, 16384, 1 << 20},
                      Case{"a5_five_threads_tiny_rings", "a5sim", 3, 5, 3000, 8, 24, 32, 4096}),
    [](const ::testing::TestParamInfo<Case> &i) { return std::string(i.param.name); });

}  // namespace
