// tests/cpp/test_reference_api.cpp — orchestrations written against the reference implementation's
// API (include/pto_abi/pto_orchestration_api.h) run on the tensormap runtime: runtime-allocated
// outputs, scopes, scalars, views made in the orchestration, reading and writing tensor data
// with the producers and readers waited for, explicit dependencies in a manual scope; and each
// unsupported or invalid use is a typed error after which the worker runs the next program.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/expect_error.h"
#include "common/test_kernels.h"

namespace {

using pto_test::kDescAdd;
using pto_test::kDescAddScalar;
using pto_test::kDescMul;

const char *const kSlowFill = R"(
#include <time.h>
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *t = reinterpret_cast<const ChipTensor *>(args[0]);
  struct timespec ts = {0, static_cast<long>(args[1]) * 1000000L};
  nanosleep(&ts, nullptr);
  int32_t *p = reinterpret_cast<int32_t *>(t->buffer.addr) + t->start_offset;
  for (uint64_t i = 0; i < t->numel(); ++i) p[i] = static_cast<int32_t>(args[2]);
}
)";

class ReferenceApi : public ::testing::Test {
 protected:
  void SetUp() override {
    w.init("a2a3sim", "tensormap_and_ringbuffer");
    w.set_device(6);
  }
  pto::ChipCallable callable(const std::string &orch_source, const std::string &name) {
    pto::KernelCompiler kc("a2a3sim");
    pto::ChipCallable c(kc.compile_orchestration_source("tensormap_and_ringbuffer", orch_source, name));
    c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kDescAdd, "ref_add", PTO_CORE_AIV));
    c.add_kernel(1, PTO_CORE_AIV, kc.compile_incore_source(kDescAddScalar, "ref_add_scalar", PTO_CORE_AIV));
    c.add_kernel(2, PTO_CORE_AIV, kc.compile_incore_source(kDescMul, "ref_mul", PTO_CORE_AIV));
    c.add_kernel(3, PTO_CORE_AIV, kc.compile_incore_source(kSlowFill, "ref_slow_fill", PTO_CORE_AIV));
    return c;
  }
  pto::ChipCallConfig config() {
    pto::ChipCallConfig cfg;
    cfg.block_dim = 2;
    cfg.aicpu_thread_num = 3;
    return cfg;
  }
  // The vector example's program in the reference API; returns f.
  std::vector<float> run_vector(const pto::ChipCallable &c, int n = 1024) {
    std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, -1.0f);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
    w.run(c, args, config());
    return f;
  }
  // Runs a program over (flag: 256 floats, written by a slow fill; out) and returns out.
  std::vector<float> run_fill_then_add(const pto::ChipCallable &c) {
    std::vector<int32_t> flag(256, 0);
    std::vector<float> out(256, -1.0f);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(flag.data(), flag.size() * 4, PTO_DTYPE_F32, {256}, PTO_DIR_INOUT);
    args.add_tensor(out.data(), out.size() * 4, PTO_DTYPE_F32, {256}, PTO_DIR_OUTPUT);
    w.run(c, args, config());
    return out;
  }
  pto::ChipWorker w;
};

// f = (a + b + 1) * (a + b + 2) + (a + b), intermediates allocated by the runtime in scopes.
const char *const kVectorOrch = R"(
#include "pto_orchestration_api.h"
extern "C" {
__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &a) {
  (void)a;
  return PTO2OrchestrationConfig{3};
}
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &f = args.tensor(2).ref();
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);
  CoreTaskArgs t0;
  t0.add_input(a, b);
  t0.add_output(ci);
  TaskOutputTensors o0 = rt_submit_aiv_task(0, t0);
  const ChipTensor &c = o0.get_ref(0);
  PTO2_SCOPE() {
    CoreTaskArgs t1;
    t1.add_input(c);
    t1.add_output(ci);
    t1.add_scalar(1.0f, static_cast<int64_t>(a.shapes[0]));
    TaskOutputTensors o1 = rt_submit_aiv_task(1, t1);
    CoreTaskArgs t2;
    t2.add_input(c);
    t2.add_output(ci);
    t2.add_scalar(2.0f, static_cast<int64_t>(a.shapes[0]));
    TaskOutputTensors o2 = rt_submit_aiv_task(1, t2);
    CoreTaskArgs t3;
    t3.add_input(o1.get_ref(0), o2.get_ref(0));
    t3.add_output(ci);
    TaskOutputTensors o3 = rt_submit_aiv_task(2, t3);
    CoreTaskArgs t4;
    t4.add_input(o3.get_ref(0), c);
    t4.add_output(f);
    rt_submit_aiv_task(0, t4);
  }
  LOG_INFO("submitted the vector example");
}
}
)";

TEST_F(ReferenceApi, TheVectorProgramRunsWithRuntimeAllocatedOutputsAndScopes) {
  const pto::ChipCallable c = callable(kVectorOrch, "ref_vector");
  for (float v : run_vector(c)) ASSERT_FLOAT_EQ(v, 47.0f);
}

// Views made in the orchestration (view, reshape) reach the kernels as offsets into the buffer;
// get_tensor_data waits for the slow producer of a value it then branches on; set_tensor_data
// writes a run tensor after its readers finished.
TEST_F(ReferenceApi, OrchestrationViewsAndTensorDataWaitForTheirProducersAndReaders) {
  const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();       // float[4][256]
  const ChipTensor &flag = args.tensor(1).ref();    // int32[8]
  const ChipTensor &out = args.tensor(2).ref();     // float[4][256]
  // A slow task writes 3 into flag; the orchestration reads it back before deciding what to submit.
  CoreTaskArgs fill;
  fill.add_output(flag);
  fill.add_scalar(int64_t{30}, int64_t{3});
  rt_submit_aiv_task(3, fill);
  uint32_t i0[1] = {5};
  const int32_t rows = get_tensor_data<int32_t>(flag, 1, i0);
  uint32_t row_shape[2] = {1, 256};
  for (int32_t r = 0; r < rows; ++r) {          // rows 0..rows-1: out = a + a, through views
    uint32_t off[2] = {static_cast<uint32_t>(r), 0};
    ChipTensor ar = a.view(row_shape, off), orow = out.view(row_shape, off);
    uint32_t flat[1] = {256};
    ChipTensor ar1 = ar.reshape(flat, 1);
    CoreTaskArgs t;
    t.add_input(ar1, ar);
    t.add_output(orow);
    rt_submit_aiv_task(0, t);
  }
  // Overwrite flag[7] once the tasks reading flag (none) and writing it (the fill) are done.
  uint32_t i7[1] = {7};
  set_tensor_data<int32_t>(flag, 1, i7, rows * 100);
}
)";
  const pto::ChipCallable c = callable(orch, "ref_tensor_data");
  std::vector<float> a(4 * 256), out(4 * 256, -1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 97);
  std::vector<int32_t> flag(8, 0);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), a.size() * 4, PTO_DTYPE_F32, {4, 256}, PTO_DIR_INPUT);
  args.add_tensor(flag.data(), flag.size() * 4, PTO_DTYPE_I32, {8}, PTO_DIR_INOUT);
  args.add_tensor(out.data(), out.size() * 4, PTO_DTYPE_F32, {4, 256}, PTO_DIR_INOUT);
  w.run(c, args, config());
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 256; ++j) {
      const float want = r < 3 ? 2.0f * a[r * 256 + j] : -1.0f;  // the orchestration saw rows == 3
      ASSERT_FLOAT_EQ(out[r * 256 + j], want) << "row " << r << " col " << j;
    }
  }
  for (int i = 0; i < 7; ++i) EXPECT_EQ(flag[i], 3);
  EXPECT_EQ(flag[7], 300) << "set_tensor_data wrote after the fill task";
}

// In a manual scope nothing is inferred: set_dependencies orders the reader after the slow writer.
TEST_F(ReferenceApi, ExplicitDependenciesOrderTasksInAManualScope) {
  const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &flag = args.tensor(0).ref();  // int32[256], read as float bits below
  const ChipTensor &out = args.tensor(1).ref();
  PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
    CoreTaskArgs fill;
    fill.add_output(flag);
    fill.add_scalar(int64_t{40}, int64_t{0x3f800000});  // 1.0f as bits
    TaskOutputTensors f = rt_submit_aiv_task(3, fill);
    PTO2TaskId deps[1] = {f.task_id()};
    CoreTaskArgs add;
    add.add_input(flag, flag);
    add.add_output(out);
    add.set_dependencies(deps, 1);
    rt_submit_aiv_task(0, add);
  }
}
)";
  for (float v : run_fill_then_add(callable(orch, "ref_manual_deps"))) ASSERT_FLOAT_EQ(v, 2.0f);
}

// CoreTaskArgsWithDeps: the dependencies travel in the arguments object (add_dep), reused with reset().
TEST_F(ReferenceApi, ArgsWithDepsCarryTheirProducersIntoAManualScope) {
  const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &flag = args.tensor(0).ref();
  const ChipTensor &out = args.tensor(1).ref();
  PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
    CoreTaskArgsWithDeps<> t;
    t.add_output(flag);
    t.add_scalar(int64_t{40}, int64_t{0x40000000});  // 2.0f as bits, after 40 ms
    TaskOutputTensors fill = rt_submit_aiv_task(3, t);
    t.reset();
    t.add_input(flag, flag);
    t.add_output(out);
    t.add_dep(fill.task_id());
    rt_submit_aiv_task(0, t);
  }
}
)";
  for (float v : run_fill_then_add(callable(orch, "ref_args_with_deps"))) ASSERT_FLOAT_EQ(v, 4.0f);
}

// Every refusal is typed and names what was refused; the worker then runs the vector program.
TEST_F(ReferenceApi, UnsupportedAndInvalidUsesAreTypedErrorsAndTheWorkerStaysUsable) {
  struct Case {
    const char *name, *body;
    pto_status code;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"arg_count", "", PTO_INVALID_ARGUMENT, {"expects 5 arguments", "the run has 3"}},
      {"sync_start_too_wide",
       "CoreTaskArgs t; t.add_input(a, b); t.add_output(f); t.launch_spec.set_block_num(5); "
       "t.launch_spec.set_require_sync_start(true); rt_submit_aiv_task(0, t);",
       PTO_INVALID_ARGUMENT,
       {"sync-start launch of block_num 5", "the run has 4 AIV cores (block_dim 2)"}},
      {"dummy_with_launch",
       "CoreTaskArgs t; t.add_input(a); t.launch_spec.set_block_num(2); rt_submit_dummy_task(t);",
       PTO_INVALID_ARGUMENT,
       {"rt_submit_dummy_task", "no launch_spec, predicate or timing slot"}},
      {"predicate_without_tensor",
       "CoreTaskArgs t; t.add_input(a, b); t.add_output(f); CoreTaskPredicate p; p.op = PredicateOp::GT; "
       "t.set_predicate(p); rt_submit_aiv_task(0, t);",
       PTO_INVALID_ARGUMENT,
       {"set_predicate: the operand names no element", "tensor null"}},
      {"mixed_wrong_core",
       "MixedKernels mk; mk.aic_kernel_id = 0; mk.aiv0_kernel_id = 1; CoreTaskArgs t; t.add_input(a); "
       "rt_submit_task(mk, t);",
       PTO_INVALID_ARGUMENT,
       {"asks for a AIC core but the kernel was registered for AIV"}},
      {"bad_view",
       "uint32_t s[1] = {600}, o[1] = {500}; ChipTensor v = a.view(s, o); CoreTaskArgs t; t.add_input(v, b); "
       "t.add_output(f); rt_submit_aiv_task(0, t);",
       PTO_INVALID_ARGUMENT,
       {"not a valid view", "exceeds the parent"}},
      {"scalar_then_tensor",
       "CoreTaskArgs t; t.add_scalar(1); t.add_input(a); rt_submit_aiv_task(0, t);",
       PTO_INVALID_ARGUMENT,
       {"tensor added after a scalar"}},
      {"dump_not_an_argument",
       "float s = 1.0f, other = 2.0f; CoreTaskArgs t; t.add_input(a, b); t.add_output(f); t.add_scalar(s); "
       "t.dump(a, s); t.dump(other); rt_submit_aiv_task(0, t);",
       PTO_INVALID_ARGUMENT,
       {"dump: scalar is not an argument of this Arg"}},
      {"dump_nothing",
       "CoreTaskArgs t; t.dump(); t.add_input(a, b); t.add_output(f); rt_submit_aiv_task(0, t);",
       PTO_INVALID_ARGUMENT,
       {"dump: no arguments added to this Arg"}},
      {"graph_with_bad_boundary",
       "GraphTaskArgs g; g.add_scalar(1); g.add_input(a); "
       "rt_submit_graph(+[](const GraphTaskArgs &) {}, g);",
       PTO_INVALID_ARGUMENT,
       {"rt_submit_graph: invalid graph arguments", "tensor added after a scalar"}},
      {"fatal",
       "rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, \"giving up at %d\", 42);",
       PTO_ORCHESTRATION_FAILED,
       {"giving up at 42", "error 9"}},
  };
  for (const Case &k : cases) {
    SCOPED_TRACE(k.name);
    const std::string src =
        std::string("#include \"pto_orchestration_api.h\"\nextern \"C\" {\n") +
        (std::string(k.name) == "arg_count"
             ? "__attribute__((visibility(\"default\"))) PTO2OrchestrationConfig aicpu_orchestration_config("
               "const ChipTaskArgs &x) { (void)x; return PTO2OrchestrationConfig{5}; }\n"
             : "") +
        "__attribute__((visibility(\"default\"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) "
        "{\n"
        "  const ChipTensor &a = args.tensor(0).ref(), &b = args.tensor(1).ref(), &f = "
        "args.tensor(2).ref();\n"
        "  (void)a; (void)b; (void)f;\n  " +
        k.body + "\n}\n}\n";
    const pto::ChipCallable c = callable(src, std::string("ref_bad_") + k.name);
    pto_test::expect_error([&] { run_vector(c); }, k.code, k.fragments);
  }
  const pto::ChipCallable good = callable(kVectorOrch, "ref_vector");
  for (float v : run_vector(good)) ASSERT_FLOAT_EQ(v, 47.0f);
}

}  // namespace
