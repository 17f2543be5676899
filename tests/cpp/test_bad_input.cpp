// tests/cpp/test_bad_input.cpp — every bad input gets a typed error naming what was wrong, and the
// worker still runs the next graph correctly.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "common/expect_error.h"
#include "common/test_kernels.h"

namespace {

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    w.init("a2a3sim", "host_build_graph");
    w.set_device(0);
  }

  // Expects `fn` to throw pto::Error with `code` and a message containing every fragment,
  // then checks that the basic example still runs on the same worker.
  template <typename Fn>
  void expect_error(Fn fn, pto_status code, std::vector<std::string> fragments) {
    EXPECT_STRNE(pto_test::expect_error(fn, code, fragments).hint(), "");
    expect_basic_still_works();
  }

  void expect_basic_still_works() {
    const int64_t n = 256;
    std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, 0.0f);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
    w.run(pto_test::basic_callable(), args);
    for (float x : f) ASSERT_EQ(x, 42.0f) << "the worker is not usable after the error";
  }

  // A callable whose orchestration body is `body`, with the signature-checked add kernel as 0.
  pto::ChipCallable callable(const std::string &body, const std::string &name) {
    pto::ChipCallable c(pto_test::orch(
        "#include \"pto/host_graph.h\"\nusing pto::TaskArg;\nPTO_ORCHESTRATION(g, args) {\n" + body + "\n}\n",
        name));
    c.add_kernel(0, PTO_CORE_AIV, pto_test::kernel(pto_test::kAddKernel, "add_sig"));
    c.add_kernel(5, PTO_CORE_AIV, pto_test::kernel(pto_test::kSleepKernel, "sleep"));
    c.add_kernel(6, PTO_CORE_AIV, pto_test::kernel(pto_test::kFailKernel, "fail"));
    return c;
  }

  void run(const pto::ChipCallable &c, pto::ChipCallConfig cfg = {}) {
    std::vector<float> x(64, 1.0f);
    std::vector<int32_t> xi(64, 1);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(x.data(), 64 * 4, PTO_DTYPE_F32, {64}, PTO_DIR_INOUT);
    args.add_tensor(xi.data(), 64 * 4, PTO_DTYPE_I32, {64}, PTO_DIR_INOUT);
    w.run(c, args, cfg);
  }

  pto::ChipWorker w;
};

TEST_F(BadInput, UnknownKernelIdNamesTheIdAndTheDefinedOnes) {
  auto c = callable("g.add_task(9, PTO_CORE_AIV, {TaskArg::of_i64(1)});", "unknown_kernel");
  expect_error([&] { run(c); }, PTO_UNKNOWN_KERNEL, {"no kernel 9", "defined: 0, 5, 6"});
}

TEST_F(BadInput, TooManyArgumentsNamesTheLimit) {
  auto c =
      callable("TaskArg a[20]; for (auto &x : a) x = TaskArg::of_i64(1);\n g.add_task(5, PTO_CORE_AIV, a);",
               "too_many_args");
  expect_error([&] { run(c); }, PTO_TOO_MANY_ARGS, {"20 arguments", "max_args_per_task is 16"});
}

TEST_F(BadInput, WrongDtypeForTheKernelSignature) {
  auto c = callable(
      "auto &x = args.tensor(0); auto &xi = args.tensor(1);\n"
      "g.add_task(0, PTO_CORE_AIV, {TaskArg::of(x), TaskArg::of(xi), TaskArg::of(x), TaskArg::of_i64(64)});",
      "wrong_dtype");
  expect_error([&] { run(c); }, PTO_BAD_TENSOR, {"argument 1", "dtype int32", "takes float32"});
}

TEST_F(BadInput, TensorSmallerThanTheKernelUses) {
  auto c = callable(
      "auto &x = args.tensor(0);\n"
      "g.add_task(0, PTO_CORE_AIV, {TaskArg::of(x), TaskArg::of(x), TaskArg::of(x), TaskArg::of_i64(65)});",
      "too_small");
  expect_error([&] { run(c); }, PTO_BAD_TENSOR, {"holds 64 elements", "uses 65"});
}

// The second task's view starts inside the first task's allocation (which the builder has
// just seen and remembers) and runs 8 bytes past its end: still rejected.
TEST_F(BadInput, TensorRunningPastItsAllocationIsNotALiveDeviceTensor) {
  auto c = callable(
      "pto::Tensor x = args.tensor(0);\n"
      "g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0), TaskArg::of(x)});\n"
      "pto::Tensor past = x; past.addr += 8;\n"
      "g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0), TaskArg::of(past)});",
      "past_the_end");
  expect_error([&] { run(c); }, PTO_BAD_TENSOR, {"task 1", "argument 1", "not a live device tensor"});
}

TEST_F(BadInput, TensorOutsideEveryAllocationIsNotALiveDeviceTensor) {
  auto c = callable(
      "pto::Tensor x = args.tensor(0);\n"
      "g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0), TaskArg::of(x)});\n"
      "pto::Tensor far = x; far.addr = 64;\n"
      "g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0), TaskArg::of(far)});",
      "outside_all");
  expect_error([&] { run(c); }, PTO_BAD_TENSOR, {"task 1", "argument 1", "not a live device tensor"});
}

TEST_F(BadInput, NonContiguousHostTensorIsRejected) {
  // The C++ API takes shape + nbytes; a strided view shows up as a size mismatch.
  std::vector<float> x(64, 1.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(x.data(), 64 * 4, PTO_DTYPE_F32, {8, 16}, PTO_DIR_INPUT);
  expect_error([&] { w.run(pto_test::basic_callable(), args); }, PTO_BAD_TENSOR, {"C-contiguous"});
}

TEST_F(BadInput, DeviceIdOutOfRange) {
  pto::ChipWorker other;
  other.init("a2a3sim", "host_build_graph");
  expect_error([&] { other.set_device(16); }, PTO_DEVICE_OUT_OF_RANGE, {"device id 16", "0..15"});
  expect_error([&] { other.set_device(-1); }, PTO_DEVICE_OUT_OF_RANGE, {"device id -1"});
}

TEST_F(BadInput, SecondWorkerOnTheSameDeviceIsRefusedUntilTheFirstFinalizes) {
  pto::ChipWorker other;
  other.init("a2a3sim", "tensormap_and_ringbuffer");
  expect_error([&] { other.set_device(0); }, PTO_INVALID_ARGUMENT,
               {"device_id 0 of a2a3sim is already used by another worker"});
  other.set_device(1);  // another device is fine
  expect_error([&] { other.set_device(2); }, PTO_INVALID_ARGUMENT, {"already uses device 1"});
  other.finalize();
  pto::ChipWorker third;
  third.init("a2a3sim", "host_build_graph");
  third.set_device(1);  // released by finalize
}

TEST_F(BadInput, AllocTensorWithANegativeOrHugeCountIsNamed) {
  expect_error([&] { run(callable("g.alloc_tensor(PTO_DTYPE_F32, -1);", "alloc_neg")); },
               PTO_INVALID_ARGUMENT, {"alloc_tensor: nelems -1 is outside 0..2305843009213693951"});
  expect_error([&] { run(callable("g.alloc_tensor(PTO_DTYPE_F32, 1ull << 62);", "alloc_huge")); },
               PTO_INVALID_ARGUMENT, {"nelems 4611686018427387904"});
}

TEST_F(BadInput, BlockDimBeyondGeometry) {
  pto::ChipCallConfig cfg;
  cfg.block_dim = 25;
  expect_error([&] { run(callable("", "noop"), cfg); }, PTO_GEOMETRY_EXCEEDED, {"block_dim 25", "1..24"});
}

TEST_F(BadInput, AicpuThreadsBeyondGeometry) {
  pto::ChipCallConfig cfg;
  cfg.aicpu_thread_num = 5;
  expect_error([&] { run(callable("", "noop"), cfg); }, PTO_GEOMETRY_EXCEEDED,
               {"aicpu_thread_num 5", "1..4"});
}

TEST_F(BadInput, KernelThatFailsToCompileCarriesTheCompilerMessage) {
  expect_error(
      [&] {
        pto_test::kernel("#include \"pto/kernel.h\"\nPTO_KERNEL(args) { this is not c++; }\n", "broken");
      },
      PTO_KERNEL_COMPILE, {"broken", "error"});
}

TEST_F(BadInput, DependencyCycleIsNamed) {
  auto c = callable(
      "auto t0 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n"
      "auto t1 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n"
      "auto t2 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n"
      "g.add_dependency(t0, t1); g.add_dependency(t1, t2); g.add_dependency(t2, t1);",
      "cycle");
  expect_error([&] { run(c); }, PTO_DEPENDENCY_CYCLE, {"dependency cycle", "1 -> 2", "2 -> 1"});
}

TEST_F(BadInput, TimeOutListsPendingTasksAndWhatTheyWaitFor) {
  auto c = callable(
      "auto t0 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(400)});\n"
      "auto t1 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n"
      "g.add_dependency(t0, t1);",
      "slow");
  pto::ChipCallConfig cfg;
  cfg.timeout_ms = 50;
  const auto start = std::chrono::steady_clock::now();
  expect_error(
      [&] { run(c, cfg); }, PTO_RUN_TIMEOUT,
      {"time limit of 50 ms", "2 of 2 tasks unfinished", "task 0 (kernel 5, AIV): dispatched to core",
       "task 1 (kernel 5, AIV): waiting for task(s) 0 (running)"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(BadInput, FailingKernelNamesTaskAndKernelAndSkipsDependents) {
  auto c = callable(
      "auto t0 = g.add_task(6, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n"
      "auto t1 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n"
      "auto t2 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n"
      "g.add_dependency(t0, t1); g.add_dependency(t1, t2);",
      "failing");
  expect_error([&] { run(c); }, PTO_TASK_FAILED,
               {"task 0 (kernel 6, AIV) failed with status 7", "2 dependent task(s) were not run"});
}

TEST_F(BadInput, OrchestrationFailureIsPassedThrough) {
  expect_error([&] { run(callable("g.fail(\"no shapes fit\");", "orch_fail")); }, PTO_ORCHESTRATION_FAILED,
               {"no shapes fit"});
}

TEST_F(BadInput, DependencyOnUnknownTaskId) {
  auto c = callable("auto t0 = g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});\n g.add_dependency(t0, 3);",
                    "bad_dep");
  expect_error([&] { run(c); }, PTO_INVALID_ARGUMENT, {"add_dependency(0, 3)"});
}

TEST_F(BadInput, TaskCountBeyondMaxTasks) {
  auto c =
      callable("for (int i = 0; i < 10; ++i) g.add_task(5, PTO_CORE_AIV, {TaskArg::of_i64(0)});", "many");
  pto::ChipCallConfig cfg;
  cfg.max_tasks = 8;
  expect_error([&] { run(c, cfg); }, PTO_CAPACITY_EXCEEDED, {"max_tasks = 8"});
}

TEST_F(BadInput, CoreTypeMismatchWithRegistration) {
  auto c = callable("g.add_task(5, PTO_CORE_AIC, {TaskArg::of_i64(0)});", "core_mismatch");
  expect_error([&] { run(c); }, PTO_INVALID_ARGUMENT, {"AIC core", "registered for AIV"});
}

TEST_F(BadInput, DumpSettingsOutOfRange) {
  pto::ChipCallConfig cfg;
  cfg.enable_dump_tensor = true;
  cfg.dump_bytes = 0;
  expect_error([&] { run(callable("", "noop"), cfg); }, PTO_INVALID_ARGUMENT,
               {"dump_bytes=0", "1..17179869184"});
}

TEST_F(BadInput, LogLevelOutOfRange) {
  pto::ChipCallConfig cfg;
  cfg.log_level = 9;
  expect_error([&] { run(callable("", "noop"), cfg); }, PTO_INVALID_ARGUMENT, {"log_level=9", "0..4"});
}

// host_build_graph also runs device orchestrations (its host orchestrator); a binary with
// neither entry says what it is instead.
TEST_F(BadInput, OrchestrationWithoutEitherEntrySaysWhatItIs) {
  const std::string tmr_orch = pto::KernelCompiler("a2a3sim").compile_orchestration_source(
      "tensormap_and_ringbuffer",
      "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) { (void)o; }\n", "tmr_orch_on_hbg");
  run(pto::ChipCallable(tmr_orch));
  pto::ChipCallable kernel_as_orch(pto_test::kernel(pto_test::kAddKernel, "add_as_orch"));
  expect_error([&] { run(kernel_as_orch); }, PTO_LOAD_FAILED,
               {"pto_orchestration_entry", "PTO_KERNEL(args)", "compute kernel"});
}

TEST_F(BadInput, ConfigFieldOutOfItsRangeNamesFieldValueAndRange) {
  pto::ChipCallConfig cfg;
  cfg.log_level = -5;
  expect_error([&] { run(callable("", "noop"), cfg); }, PTO_INVALID_ARGUMENT, {"log_level=-5", "0..4"});
  cfg = {};
  cfg.task_window = 1u << 25;
  expect_error([&] { run(callable("", "noop"), cfg); }, PTO_INVALID_ARGUMENT,
               {"task_window=33554432", "1..16777216"});
  cfg = {};
  cfg.block_dim = 0;
  expect_error([&] { run(callable("", "noop"), cfg); }, PTO_INVALID_ARGUMENT, {"block_dim=0", "1.."});
}

TEST_F(BadInput, RunBeforeSetDevice) {
  pto::ChipWorker other;
  other.init("a2a3sim", "host_build_graph");
  pto::ChipStorageTaskArgs args;
  expect_error([&] { other.run(pto_test::basic_callable(), args); }, PTO_NOT_INITIALIZED, {"set_device"});
}

}  // namespace
