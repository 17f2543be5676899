// tests/cpp/test_tmr.cpp — the tensormap runtime's promises: inferred ordering (including write after
// read), scopes and rings with their errors, failures, explicit dependencies, manual scopes.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "common/expect_error.h"
#include "common/test_kernels.h"

namespace {

// Kernel 0 (AIV): copy. args: src, dst, n, sleep_ms — sleeps first, so a missing edge shows.
const char *const kSlowCopy = R"(
#include <time.h>
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const int32_t *src = pto::tensor<int32_t>(args, 0);
  int32_t *dst = pto::tensor<int32_t>(args, 1);
  struct timespec ts = {0, static_cast<long>(args[3]) * 1000000L};
  nanosleep(&ts, nullptr);
  for (int64_t i = 0; i < args[2]; ++i) dst[i] = src[i];
}
)";
// Kernel 1 (AIV): fill, pto_test::kFillI32 (args: dst, n, value).

class Tmr : public ::testing::Test {
 protected:
  void SetUp() override {
    w.init("a2a3sim", "tensormap_and_ringbuffer");
    w.set_device(2);
  }

  pto::ChipCallable callable(const std::string &body, const std::string &name) {
    pto::KernelCompiler kc("a2a3sim");
    pto::ChipCallable c(kc.compile_orchestration_source(
        "tensormap_and_ringbuffer",
        "#include \"pto/orchestration.h\"\nusing pto::Arg;\nPTO_DEVICE_ORCHESTRATION(o) {\n"
        "  pto::TensorView x = o.tensor(0), y = o.tensor(1);\n  const int64_t n = x.numel();\n  (void)y; "
        "(void)n;\n" +
            body + "\n}\n",
        name));
    c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kSlowCopy, "slow_copy", PTO_CORE_AIV));
    c.add_kernel(1, PTO_CORE_AIV, kc.compile_incore_source(pto_test::kFillI32, "fill", PTO_CORE_AIV));
    c.add_kernel(2, PTO_CORE_AIV, kc.compile_incore_source(pto_test::kFailKernel, "fail", PTO_CORE_AIV));
    return c;
  }

  // Runs with x = 0..n-1 and y = -1; returns y.
  std::vector<int32_t> run(const pto::ChipCallable &c, pto::ChipCallConfig cfg = {},
                           std::vector<int32_t> *x_out = nullptr) {
    std::vector<int32_t> x(64), y(64, -1);
    for (int i = 0; i < 64; ++i) x[i] = i;
    pto::ChipStorageTaskArgs args;
    args.add_tensor(x.data(), 64 * 4, PTO_DTYPE_I32, {64}, PTO_DIR_INOUT);
    args.add_tensor(y.data(), 64 * 4, PTO_DTYPE_I32, {64}, PTO_DIR_INOUT);
    if (cfg.block_dim == 1) cfg.block_dim = 2;
    if (cfg.aicpu_thread_num == 1) cfg.aicpu_thread_num = 3;
    w.run(c, args, cfg);
    if (x_out) *x_out = x;
    return y;
  }

  template <typename Fn>
  void expect_error(Fn fn, pto_status code, std::vector<std::string> fragments) {
    pto_test::expect_error(fn, code, fragments);
    // The worker runs the next graph normally.
    std::vector<int32_t> y =
        run(callable("o.submit_task(1, PTO_CORE_AIV, {Arg::out(y), Arg::i64(n), Arg::i64(5)});", "fill5"));
    for (int32_t v : y) ASSERT_EQ(v, 5) << "the worker is not usable after the error";
  }

  pto::ChipWorker w;
};

TEST_F(Tmr, WriteAfterReadWaitsForTheSlowReaderWithoutAddDep) {
  // t0 copies x to y after 100 ms; t1 overwrites x at once. Sequentially y == 0..63.
  auto c = callable(
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(x), Arg::out(y), Arg::i64(n), Arg::i64(100)});\n"
      "o.submit_task(1, PTO_CORE_AIV, {Arg::out(x), Arg::i64(n), Arg::i64(7)});",
      "war");
  std::vector<int32_t> x;
  std::vector<int32_t> y = run(c, {}, &x);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(y[i], i) << "the writer ran before the reader finished";
    ASSERT_EQ(x[i], 7);
  }
}

TEST_F(Tmr, ReadAfterWriteAndWriteAfterWriteFollowSubmissionOrder) {
  auto c = callable(
      "o.submit_task(1, PTO_CORE_AIV, {Arg::out(x), Arg::i64(n), Arg::i64(1)});\n"
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(y), Arg::out(x), Arg::i64(n), Arg::i64(50)});\n"
      "o.submit_task(1, PTO_CORE_AIV, {Arg::out(x), Arg::i64(n), Arg::i64(9)});\n"
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(x), Arg::out(y), Arg::i64(n), Arg::i64(0)});",
      "raw_waw");
  for (int32_t v : run(c)) ASSERT_EQ(v, 9);
}

TEST_F(Tmr, NoDepArgumentsAreOrderedOnlyByExplicitDependencies) {
  // NO_DEP hides the overlap; the handle passed as `after` restores the order.
  auto c = callable(
      "pto::TaskHandle t = o.submit_task(0, PTO_CORE_AIV, {Arg::no_dep(x), Arg::no_dep(y), Arg::i64(n), "
      "Arg::i64(50)});\n"
      "pto::Arg a[3] = {Arg::no_dep(y), Arg::i64(n), Arg::i64(3)};\n"
      "o.submit_task(1, PTO_CORE_AIV, a, 3, &t, 1);",
      "explicit_dep");
  for (int32_t v : run(c)) ASSERT_EQ(v, 3);
}

// More handles than the orchestrator's producer list holds (task_window 4 + tensormap_entries 4
// = 8 ids, 3 * 4 + 64 = 76 traced edges): the list is reduced to its live producers on the way
// and the traced edges are flushed early, so none is lost. Task 99 alone copies x to y, slowly
// (the others copy nothing), and the last task overwrites y: a live producer dropped from the
// list would let y end as x.
TEST_F(Tmr, MoreExplicitHandlesThanTheProducerListHoldsAreAllWaitedForAndTraced) {
  auto c = callable(
      "static pto::TaskHandle h[100];\n"
      "for (int k = 0; k < 100; ++k)\n"
      "  h[k] = o.submit_task(0, PTO_CORE_AIV, {Arg::no_dep(x), Arg::no_dep(y), Arg::i64(k == 99 ? n : 0), "
      "Arg::i64(k == 99 ? 100 : 0)});\n"
      "pto::TaskHandle after[200];\n"
      "for (int k = 0; k < 200; ++k) after[k] = h[(k * 37) % 100];\n"
      "pto::Arg a[3] = {Arg::no_dep(y), Arg::i64(n), Arg::i64(6)};\n"
      "o.submit_task(1, PTO_CORE_AIV, a, 3, after, 200);",
      "many_handles");
  pto::ChipCallConfig cfg;
  cfg.task_window = 4;
  cfg.tensormap_entries = 4;
  cfg.enable_profiling = true;
  for (int32_t v : run(c, cfg)) ASSERT_EQ(v, 6);
  const std::string trace = w.last_trace_json();
  for (int k = 0; k < 100; ++k) {
    const std::string edge = "{\"from\": " + std::to_string(k) + ", \"to\": 100, \"kind\": \"explicit\"";
    EXPECT_NE(trace.find(edge), std::string::npos) << "no traced edge " << k << " -> 100";
  }
}

TEST_F(Tmr, ManualScopeUsesOnlyExplicitDependencies) {
  auto c = callable(
      "pto::Scope s(o, /*manual=*/true);\n"
      "pto::TaskHandle t = o.submit_task(1, PTO_CORE_AIV, {Arg::out(y), Arg::i64(n), Arg::i64(4)});\n"
      "pto::Arg a[4] = {Arg::in(y), Arg::out(x), Arg::i64(n), Arg::i64(0)};\n"
      "o.submit_task(0, PTO_CORE_AIV, a, 4, &t, 1);",
      "manual");
  std::vector<int32_t> x;
  run(c, {}, &x);
  for (int32_t v : x) ASSERT_EQ(v, 4);
}

TEST_F(Tmr, ScopedTempsFlowThroughTheHeapRing) {
  // 200 scopes, each with a fresh temp, through a heap that holds two temps at a time.
  auto c = callable(
      "for (int k = 0; k < 200; ++k) {\n"
      "  pto::Scope s(o);\n"
      "  pto::TensorView t = o.alloc_tensor(PTO_DTYPE_I32, n);\n"
      "  o.submit_task(1, PTO_CORE_AIV, {Arg::out(t), Arg::i64(n), Arg::i64(k)});\n"
      "  o.submit_task(0, PTO_CORE_AIV, {Arg::in(t), Arg::out(y), Arg::i64(n), Arg::i64(0)});\n"
      "}",
      "temps");
  pto::ChipCallConfig cfg;
  cfg.heap_bytes = 512;
  for (int32_t v : run(c, cfg)) ASSERT_EQ(v, 199);
}

// Validation finds a view's heap buffer by binary search among the live buffers' starts: every
// one of many live buffers is found, and a view that starts inside a buffer or claims more bytes
// than it has is not one the runtime handed out.
TEST_F(Tmr, EveryLiveHeapBufferIsFoundAndMadeUpOnesAreNot) {
  auto many = callable(
      "pto::Scope s(o);\n"
      "pto::TensorView t[100];\n"
      "for (int k = 0; k < 100; ++k) t[k] = o.alloc_tensor(PTO_DTYPE_I32, n);\n"
      "for (int k = 99; k >= 0; --k) o.submit_task(1, PTO_CORE_AIV, {Arg::out(t[k]), Arg::i64(n), "
      "Arg::i64(k)});\n"
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(t[57]), Arg::out(y), Arg::i64(n), Arg::i64(0)});",
      "many_temps");
  for (int32_t v : run(many)) ASSERT_EQ(v, 57);
  expect_error(
      [&] {
        run(callable(
            "pto::TensorView t = o.alloc_tensor(PTO_DTYPE_I32, n), u = o.alloc_tensor(PTO_DTYPE_I32, n);\n"
            "(void)u; t.buffer += 64; t.buffer_bytes -= 64; t.shape[0] -= 16;\n"
            "o.submit_task(1, PTO_CORE_AIV, {Arg::out(t), Arg::i64(1), Arg::i64(0)});",
            "inside_temp"));
      },
      PTO_BAD_TENSOR,
      {"task 0 (kernel 1): argument 0", "does not view a run tensor or an alloc_tensor buffer"});
  expect_error(
      [&] {
        run(
            callable("pto::TensorView t = o.alloc_tensor(PTO_DTYPE_I32, n);\n"
                     "t.buffer_bytes += 64;\n"
                     "o.submit_task(1, PTO_CORE_AIV, {Arg::out(t), Arg::i64(1), Arg::i64(0)});",
                     "bigger_temp"));
      },
      PTO_BAD_TENSOR, {"does not view a run tensor or an alloc_tensor buffer"});
}

// Retirement is in submission order, so a slow first task keeps every ring full behind it:
// with rings of 4, the orchestrator must wait on each of them whatever the timing.
TEST_F(Tmr, BackPressureWaitsOnEveryRingAndStillGivesTheSequentialResult) {
  auto c = callable(
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(y), Arg::out(x), Arg::i64(n), Arg::i64(300)});\n"
      "for (int k = 0; k < 8; ++k) {\n"
      "  pto::Scope s(o);\n"
      "  pto::TensorView t = o.alloc_tensor(PTO_DTYPE_I32, n);\n"
      "  o.submit_task(0, PTO_CORE_AIV, {Arg::in(x), Arg::out(t), Arg::i64(n), Arg::i64(0)});\n"
      "}\n"
      "o.submit_task(1, PTO_CORE_AIV, {Arg::out(y), Arg::i64(n), Arg::i64(8)});",
      "back_pressure");
  std::vector<int32_t> x(64), y(64, -1);
  for (int i = 0; i < 64; ++i) x[i] = i;
  pto::ChipStorageTaskArgs args;
  args.add_tensor(x.data(), 64 * 4, PTO_DTYPE_I32, {64}, PTO_DIR_INOUT);
  args.add_tensor(y.data(), 64 * 4, PTO_DTYPE_I32, {64}, PTO_DIR_INOUT);
  auto run_with = [&](uint32_t window, uint64_t heap, uint32_t deps, uint32_t tmap) {
    pto::ChipCallConfig cfg;
    cfg.block_dim = 4;
    cfg.aicpu_thread_num = 2;
    cfg.task_window = window;
    cfg.heap_bytes = heap;
    cfg.dep_pool_entries = deps;
    cfg.tensormap_entries = tmap;
    for (int i = 0; i < 64; ++i) x[i] = i, y[i] = -1;
    const pto::RunStats s = w.run(c, args, cfg);
    EXPECT_EQ(s.tasks_run, 10u);
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(x[i], -1);  // t0 copied the initial y into x
      EXPECT_EQ(y[i], 8);
    }
    return s;
  };
  const pto::RunStats w4 = run_with(4, 1 << 20, 1024, 1024);
  EXPECT_GT(w4.window.stalls, 0u);
  EXPECT_EQ(w4.window.capacity, 4u);
  EXPECT_EQ(w4.window.high_water, 4u);  // the slow first task keeps the window full
  EXPECT_GT(w4.window.stall_us, 0.0);
  EXPECT_NE(w4.table().find("task window"), std::string::npos);
  EXPECT_GT(run_with(64, 512, 1024, 1024).heap.stalls, 0u);  // two 256-byte temps
  EXPECT_GT(run_with(64, 1 << 20, 4, 1024).dep_pool.stalls, 0u);
  EXPECT_GT(run_with(64, 1 << 20, 1024, 6).tensormap.stalls, 0u);
}

TEST_F(Tmr, ScopeThatCanNeverFitTheHeapFailsFastNamingTheRing) {
  auto c = callable(
      "pto::Scope s(o);\n"
      "for (int k = 0; k < 4; ++k) {\n"
      "  pto::TensorView t = o.alloc_tensor(PTO_DTYPE_I32, n);\n"
      "  o.submit_task(1, PTO_CORE_AIV, {Arg::out(t), Arg::i64(n), Arg::i64(k)});\n"
      "}",
      "too_big_scope");
  pto::ChipCallConfig cfg;
  cfg.heap_bytes = 512;  // two 256-byte temps; the scope wants four alive at once
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { run(c, cfg); }, PTO_RING_CAPACITY,
               {"heap ring", "needs 256 bytes", "heap_bytes is 512", "open scopes hold 512 bytes"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(Tmr, TaskWithMoreProducersThanTheDependencyPoolFailsFast) {
  auto c = callable(
      "pto::TensorView t[6];\n"
      "for (int k = 0; k < 6; ++k) {\n"
      "  t[k] = x.tile(0, 0, 1, 1); t[k].offset = k; t[k].ndim = 1; t[k].shape[0] = 1; t[k].strides[0] = 1;\n"
      "  o.submit_task(0, PTO_CORE_AIV, {Arg::in(y), Arg::out(t[k]), Arg::i64(1), Arg::i64(20)});\n"
      "}\n"
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(x), Arg::out(y), Arg::i64(n), Arg::i64(0)});",
      "many_producers");
  pto::ChipCallConfig cfg;
  cfg.dep_pool_entries = 4;
  expect_error([&] { run(c, cfg); }, PTO_RING_CAPACITY,
               {"task 6", "depends on 6 running tasks", "holds 4 entries"});
}

TEST_F(Tmr, FailingKernelNamesTheTaskAndTheWorkerRunsTheNextGraph) {
  auto c = callable(
      "o.submit_task(2, PTO_CORE_AIV, {Arg::out(y)});\n"
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(y), Arg::out(x), Arg::i64(n), Arg::i64(0)});",
      "failing");
  std::vector<int32_t> x;
  expect_error([&] { run(c, {}, &x); }, PTO_TASK_FAILED,
               {"task 0 (kernel 2) failed with status 7", "were not run"});
}

TEST_F(Tmr, UnknownKernelAndBadViewsAreOrchestrationErrors) {
  expect_error([&] { run(callable("o.submit_task(9, PTO_CORE_AIV, {Arg::i64(0)});", "unknown")); },
               PTO_UNKNOWN_KERNEL, {"task 0 (kernel 9)", "defined: 0, 1, 2"});
  expect_error(
      [&] {
        run(
            callable("pto::TensorView v = x; v.offset = 60; v.shape[0] = 8;\n"
                     "o.submit_task(1, PTO_CORE_AIV, {Arg::out(v), Arg::i64(8), Arg::i64(0)});",
                     "outside"));
      },
      PTO_BAD_TENSOR, {"reaches outside its buffer of 256 bytes"});
  expect_error(
      [&] {
        run(
            callable("pto::TensorView v = x; v.buffer += 4096;\n"
                     "o.submit_task(1, PTO_CORE_AIV, {Arg::out(v), Arg::i64(1), Arg::i64(0)});",
                     "foreign"));
      },
      PTO_BAD_TENSOR, {"does not view a run tensor"});
  expect_error(
      [&] {
        run(callable("o.submit_task(1, PTO_CORE_MIX, {Arg::out(x), Arg::i64(1), Arg::i64(0)});", "mix"));
      },
      PTO_INVALID_ARGUMENT, {"asks for a MIX core but the kernel was registered for AIV"});
}

// Found by tests/fuzz (fuzz_tmr): the span of a view, (shape - 1) x stride summed and then
// (offset + span + 1) x element size, was computed in int64 and overflowed (undefined; it could
// wrap to a span that fits). Such views reach outside their buffer. An empty view may carry any
// offset and strides: it touches nothing, and its region no longer overflows either.
TEST_F(Tmr, ViewsWhoseSpanOverflowsReachOutsideTheirBuffer) {
  expect_error(
      [&] {
        run(
            callable("pto::TensorView v = x; v.shape[0] = int64_t{1} << 62;\n"
                     "v.strides[0] = int64_t{1} << 40;\n"
                     "o.submit_task(1, PTO_CORE_AIV, {Arg::out(v), Arg::i64(1), Arg::i64(0)});",
                     "span_overflow"));
      },
      PTO_BAD_TENSOR, {"reaches outside its buffer of 256 bytes", "last element beyond 2^63"});
  expect_error(
      [&] {
        run(
            callable("pto::TensorView v = x; v.offset = INT64_MAX - 1; v.shape[0] = 1;\n"
                     "o.submit_task(1, PTO_CORE_AIV, {Arg::out(v), Arg::i64(1), Arg::i64(0)});",
                     "offset_overflow"));
      },
      PTO_BAD_TENSOR, {"reaches outside its buffer of 256 bytes", "offset 9223372036854775806"});
  // Two dimensions, one empty: the other's extent and stride are never multiplied out.
  std::vector<int32_t> y = run(callable(
      "pto::TensorView v = x; v.ndim = 2; v.offset = INT64_MAX; v.shape[0] = 0; v.strides[0] = INT64_MAX;\n"
      "v.shape[1] = int64_t{1} << 62; v.strides[1] = int64_t{1} << 62;\n"
      "o.submit_task(1, PTO_CORE_AIV, {Arg::out(v), Arg::i64(0), Arg::i64(0)});\n"
      "o.submit_task(1, PTO_CORE_AIV, {Arg::out(y), Arg::i64(n), Arg::i64(4)});",
      "empty_view"));
  for (int32_t v : y) ASSERT_EQ(v, 4);
}

// Submit validation sums a view's extents in plain int64 only while the offset, every extent and
// every stride are below 2^24; other views take the overflow-checked path. Both paths must agree:
// here valid views with larger values (one element with a huge stride; a broadcast row of 2^30
// elements, stride 0) run, and an offset of 2^24 elements into a 256-byte buffer is refused.
TEST_F(Tmr, ViewsWithLargeExtentsOrStridesAreCheckedExactly) {
  std::vector<int32_t> y =
      run(callable("pto::TensorView v = y; v.shape[0] = 1; v.strides[0] = int64_t{1} << 40;\n"
                   "o.submit_task(1, PTO_CORE_AIV, {Arg::out(v), Arg::i64(1), Arg::i64(6)});\n"
                   "pto::TensorView b = y; b.ndim = 2; b.offset = 1; b.shape[0] = int64_t{1} << 30;\n"
                   "b.strides[0] = 0; b.shape[1] = 1; b.strides[1] = 1;\n"
                   "o.submit_task(1, PTO_CORE_AIV, {Arg::out(b), Arg::i64(1), Arg::i64(7)});",
                   "large_values"));
  EXPECT_EQ(y[0], 6);
  EXPECT_EQ(y[1], 7);
  EXPECT_EQ(y[2], -1);
  expect_error(
      [&] {
        run(
            callable("pto::TensorView v = x; v.offset = int64_t{1} << 24; v.shape[0] = 1;\n"
                     "o.submit_task(1, PTO_CORE_AIV, {Arg::out(v), Arg::i64(1), Arg::i64(0)});",
                     "large_offset"));
      },
      PTO_BAD_TENSOR, {"reaches outside its buffer of 256 bytes", "offset 16777216"});
}

TEST_F(Tmr, UnbalancedScopesAreReported) {
  expect_error([&] { run(callable("o.scope_begin();", "open_scope")); }, PTO_INVALID_ARGUMENT,
               {"1 scope(s) still open"});
  expect_error([&] { run(callable("o.scope_end();", "extra_end")); }, PTO_INVALID_ARGUMENT,
               {"scope_end without a matching scope_begin"});
}

TEST_F(Tmr, TimeOutReportsTheRunningAndWaitingTasks) {
  auto c = callable(
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(x), Arg::out(y), Arg::i64(n), Arg::i64(400)});\n"
      "o.submit_task(0, PTO_CORE_AIV, {Arg::in(y), Arg::out(x), Arg::i64(n), Arg::i64(0)});",
      "slow");
  pto::ChipCallConfig cfg;
  cfg.timeout_ms = 100;
  expect_error([&] { run(c, cfg); }, PTO_RUN_TIMEOUT,
               {"time limit of 100 ms", "2 of 2 submitted tasks unfinished",
                "task 0 (kernel 0, AIV): dispatched to core",
                "task 1 (kernel 0, AIV): pending, waiting for 1 producer(s)"});
}

class TmrBasic : public ::testing::TestWithParam<std::tuple<const char *, int, int>> {};

TEST_P(TmrBasic, FormulaGivesFortyTwo) {
  const auto [platform, block_dim, threads] = GetParam();
  const char *env = getenv("PTO_EXAMPLES_DIR");
  const std::string dir = std::string(env ? env : "examples") + "/basic";
  pto::KernelCompiler kc(platform);
  pto::ChipCallable c(kc.compile_orchestration("tensormap_and_ringbuffer", dir + "/orchestration_tmr.cpp"));
  c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_add.cpp", PTO_CORE_AIV));
  c.add_kernel(1, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_add_scalar.cpp", PTO_CORE_AIV));
  c.add_kernel(2, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_mul.cpp", PTO_CORE_AIV));
  pto::ChipWorker w;
  w.init(platform, "tensormap_and_ringbuffer");
  w.set_device(0);
  const int64_t n = 16384;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, 0.0f);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
    pto::ChipCallConfig cfg;
    cfg.block_dim = block_dim;
    cfg.aicpu_thread_num = threads;
    EXPECT_EQ(w.run(c, args, cfg).tasks_run, 4u);
    for (float v : f) ASSERT_EQ(v, 42.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, TmrBasic,
                         ::testing::Values(std::make_tuple("a2a3sim", 1, 1),
                                           std::make_tuple("a2a3sim", 24, 4), std::make_tuple("a5sim", 1, 2),
                                           std::make_tuple("a5sim", 36, 5)),
                         [](const auto &i) {
                           return std::string(std::get<0>(i.param)) + "_blockdim" +
                                  std::to_string(std::get<1>(i.param)) + "_threads" +
                                  std::to_string(std::get<2>(i.param));
                         });

}  // namespace
