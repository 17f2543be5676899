// tests/cpp/test_hung_kernel.cpp — a kernel that never returns. Fibers cannot be pre-empted and
// threads cannot be killed, so the run's time-out is the watchdog: it names the task and the core
// the kernel hangs on, says the worker cannot run again, and nothing hangs after it — not the
// run, not finalize, not the next worker of the process (which must still find pool workers).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/test_kernels.h"

namespace {

const char *const kSpinForever = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  (void)args;
  volatile int spinning = 1;
  while (spinning) {}
}
)";

struct Case {
  const char *runtime;
  const char *orchestration;  // kernel 0 spins forever; one task of it
  const char *report;         // what the time-out report says of that task
};

const Case kCases[] = {
    {"host_build_graph",
     "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n  (void)args;\n"
     "  g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});\n}\n",
     "task 0 (kernel 0, AIV): dispatched to core"},
    {"tensormap_and_ringbuffer",
     "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n"
     "  o.submit_task(0, PTO_CORE_AIV, {pto::Arg::i64(0)});\n}\n",
     "task 0 (kernel 0, AIV): dispatched to core"},
};

class HungKernel : public ::testing::TestWithParam<Case> {};

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST_P(HungKernel, TimesOutNamingTaskAndCoreAndNothingHangsAfterIt) {
  const Case &tc = GetParam();
  pto::KernelCompiler kc("a2a3sim");
  pto::ChipCallable hung(
      kc.compile_orchestration_source(tc.runtime, tc.orchestration, std::string("hung_") + tc.runtime));
  hung.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kSpinForever, "spin_forever", PTO_CORE_AIV));
  const auto start = std::chrono::steady_clock::now();
  {
    pto::ChipWorker w;
    w.init("a2a3sim", tc.runtime);
    w.set_device(0);
    pto::ChipStorageTaskArgs none;
    pto::ChipCallConfig cfg;
    cfg.timeout_ms = 50;
    try {
      w.run(hung, none, cfg);
      FAIL() << "a kernel that never returns must time out";
    } catch (const pto::Error &e) {
      const std::string m = e.what();
      EXPECT_EQ(e.code(), PTO_RUN_TIMEOUT) << m;
      EXPECT_TRUE(contains(m, "time limit of 50 ms")) << m;
      EXPECT_TRUE(contains(m, tc.report)) << m;
      EXPECT_TRUE(contains(m, "a kernel did not return")) << m;
      EXPECT_TRUE(contains(m, "can no longer run")) << m;
    }
    // The next run is refused with the reason, not hung.
    try {
      w.run(hung, none, cfg);
      FAIL() << "a broken worker must refuse to run";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_DEVICE_BROKEN) << e.what();
      EXPECT_TRUE(contains(e.what(), "did not return")) << e.what();
    }
    // ~ChipWorker finalizes: it must return although the kernel still spins on its core.
  }
  // Time-out, then the drain grace (5 s) the kernel did not use; well short of anything hung.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));

  // Another worker of this process still runs graphs, in fiber mode on the same pool, whose
  // worker the spinning kernel keeps.
  pto::ChipWorker next;
  next.init("a2a3sim", "host_build_graph");
  next.set_device(1);
  const int64_t n = 256;
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, 0.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
  pto::ChipCallConfig cfg;
  cfg.timeout_ms = 20000;
  next.run(pto_test::basic_callable(), args, cfg);
  for (float x : f) ASSERT_EQ(x, 42.0f);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, HungKernel, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return std::string(i.param.runtime[0] == 'h' ? "hbg" : "tmr");
                         });

}  // namespace
