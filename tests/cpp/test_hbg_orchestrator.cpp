// tests/cpp/test_hbg_orchestrator.cpp — device orchestrations (PTO_DEVICE_ORCHESTRATION and the
// reference API of include/pto_abi/pto_orchestration_api.h) on the host_build_graph runtime, run
// by its host orchestrator (src/runtime/host_build_graph/host/host_orchestrator.h).
//
// Contract under test: dependencies are inferred from overlapping strided views as the tensormap
// runtime infers them (read after write, write after read, write after write; disjoint
// interleaved views order nothing), so random programs equal sequential execution; alloc_tensors
// and runtime-created outputs are intermediates; descriptors are the tensormap runtime's for the
// same views; get/set_tensor_data act on a run tensor no submitted task conflicts with (on the
// data the device will see) and are refused with a typed error otherwise; launches it cannot run
// and invalid uses are refused naming what was refused; after every refusal the worker runs the
// next program.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/expect_error.h"
#include "common/test_kernels.h"
#include "common/tmr_program.h"
#include "common/trace_json.h"

namespace {

const char *const kHbg = "host_build_graph";

// Descriptor-ABI kernels, plain C++ (no PTO-ISA), over 2-D int32 views, strides honoured.
// 0: sleeps args[1] ms, then writes args[2] into every element of view args[0].
const char *const kFill = R"(
#include <time.h>
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *t = reinterpret_cast<const ChipTensor *>(args[0]);
  struct timespec ts = {0, static_cast<long>(args[1]) * 1000000L};
  nanosleep(&ts, nullptr);
  int32_t *p = reinterpret_cast<int32_t *>(t->buffer.addr);
  for (uint32_t i = 0; i < t->shapes[0]; ++i)
    for (uint32_t j = 0; j < t->shapes[1]; ++j)
      p[t->start_offset + i * t->strides[0] + j * t->strides[1]] = static_cast<int32_t>(args[2]);
}
)";
// 1: sleeps args[2] ms, then copies view args[0] into view args[1] (same shape).
const char *const kCopy = R"(
#include <time.h>
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *a = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[1]);
  struct timespec ts = {0, static_cast<long>(args[2]) * 1000000L};
  nanosleep(&ts, nullptr);
  const int32_t *x = reinterpret_cast<const int32_t *>(a->buffer.addr);
  int32_t *y = reinterpret_cast<int32_t *>(o->buffer.addr);
  for (uint32_t i = 0; i < o->shapes[0]; ++i)
    for (uint32_t j = 0; j < o->shapes[1]; ++j)
      y[o->start_offset + i * o->strides[0] + j * o->strides[1]] =
          x[a->start_offset + i * a->strides[0] + j * a->strides[1]];
}
)";
// 2: writes its first descriptor's 128 bytes into the int64 view args[1] (16 elements).
const char *const kDescriptorDump = R"(
#include <string.h>
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[1]);
  memcpy(reinterpret_cast<int64_t *>(o->buffer.addr) + o->start_offset, reinterpret_cast<const void *>(args[0]),
         sizeof(ChipTensor));
}
)";

class HbgOrchestrator : public ::testing::Test {
 protected:
  void SetUp() override {
    w.init("a2a3sim", kHbg);
    w.set_device(0);
  }
  static pto::ChipCallable callable(const std::string &orch, const std::string &name,
                                    const char *runtime = kHbg) {
    pto::KernelCompiler kc("a2a3sim");
    pto::ChipCallable c(kc.compile_orchestration_source(runtime, orch, name));
    c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kFill, "hbg_fill", PTO_CORE_AIV));
    c.add_kernel(1, PTO_CORE_AIV, kc.compile_incore_source(kCopy, "hbg_copy", PTO_CORE_AIV));
    c.add_kernel(2, PTO_CORE_AIV, kc.compile_incore_source(kDescriptorDump, "hbg_desc_dump", PTO_CORE_AIV));
    return c;
  }
  static pto::ChipCallConfig config() {
    pto::ChipCallConfig cfg;
    cfg.block_dim = 2;
    cfg.aicpu_thread_num = 3;
    return cfg;
  }
  // Runs `c` over two 8x8 int32 run tensors (m: 0..63, out: -1) and returns them.
  std::pair<std::vector<int32_t>, std::vector<int32_t>> run_two(const pto::ChipCallable &c,
                                                                pto::ChipCallConfig cfg = config()) {
    std::vector<int32_t> m(64), out(64, -1);
    for (int i = 0; i < 64; ++i) m[i] = i;
    pto::ChipStorageTaskArgs args;
    args.add_tensor(m.data(), 64 * 4, PTO_DTYPE_I32, {8, 8}, PTO_DIR_INOUT);
    args.add_tensor(out.data(), 64 * 4, PTO_DTYPE_I32, {8, 8}, PTO_DIR_INOUT);
    w.run(c, args, cfg);
    return {m, out};
  }
  // A program known to work: out = m (one copy task); checks the worker is usable.
  void expect_worker_usable() {
    const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  CoreTaskArgs t;
  t.add_input(args.tensor(0).ref());
  t.add_output(args.tensor(1).ref());
  t.add_scalar(int64_t{0});
  rt_submit_aiv_task(1, t);
}
)";
    const auto [m, out] = run_two(callable(orch, "hbg_copy_all"));
    EXPECT_EQ(out, m) << "the worker is not usable after the error";
  }
  pto::ChipWorker w;
};

// Edges of the last run's trace: (from, to, kind).
std::set<std::tuple<int64_t, int64_t, std::string>> traced_edges(const std::string &json) {
  std::set<std::tuple<int64_t, int64_t, std::string>> out;
  for (size_t at = json.find("\"edges\": ["); (at = json.find("{\"from\": ", at)) != std::string::npos;
       ++at) {
    out.emplace(std::stoll(pto_test::json_field(json, at, "from")),
                std::stoll(pto_test::json_field(json, at, "to")),
                pto_test::json_string_field(json, at, "kind"));
  }
  return out;
}

// Even and odd columns of m interleave byte for byte but share no element. Task 0 (slow) writes
// the even columns; task 1 reads rows 0..3 (read after write); task 2 writes the odd columns
// (write after task 1's read; no order with task 0); task 3 writes the even columns again (write
// after write with task 0, write after read with task 1; none with task 2).
TEST_F(HbgOrchestrator, InfersRawWarWawOnOverlappingStridedViewsAndNothingForInterleavedOnes) {
  const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &m = args.tensor(0).ref();    // int32[8][8]
  const ChipTensor &out = args.tensor(1).ref();  // int32[8][8]
  const ChipTensor even = m.slice(1, 0, 8, 2), odd = m.slice(1, 1, 8, 2);
  uint32_t top_shape[2] = {4, 8}, at0[2] = {0, 0};
  const ChipTensor top = m.view(top_shape, at0), out_top = out.view(top_shape, at0);
  CoreTaskArgs t0;
  t0.add_output(even);
  t0.add_scalar(int64_t{40}, int64_t{1});
  rt_submit_aiv_task(0, t0);
  CoreTaskArgs t1;                                // out[0:4] = m[0:4], after 20 ms
  t1.add_input(top);
  t1.add_output(out_top);
  t1.add_scalar(int64_t{20});
  rt_submit_aiv_task(1, t1);
  CoreTaskArgs t2;
  t2.add_output(odd);
  t2.add_scalar(int64_t{0}, int64_t{2});
  rt_submit_aiv_task(0, t2);
  CoreTaskArgs t3;
  t3.add_inout(even);
  t3.add_scalar(int64_t{0}, int64_t{3});
  rt_submit_aiv_task(0, t3);
}
)";
  pto::ChipCallConfig cfg = config();
  cfg.enable_profiling = true;
  const auto [m, out] = run_two(callable(orch, "hbg_strided_deps"), cfg);
  const std::set<std::tuple<int64_t, int64_t, std::string>> want = {
      {0, 1, "raw"}, {1, 2, "war"}, {0, 3, "waw"}, {1, 3, "war"}};
  EXPECT_EQ(traced_edges(w.last_trace_json()), want);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      const int k = i * 8 + j;
      EXPECT_EQ(m[k], j % 2 == 0 ? 3 : 2) << "m[" << i << "][" << j << "]";
      EXPECT_EQ(out[k], i >= 4 ? -1 : j % 2 == 0 ? 1 : k) << "out[" << i << "][" << j << "]";
    }
  }
}

// alloc_tensors buffers and runtime-created outputs are intermediates that later tasks read; in
// a manual scope only the explicit dependency orders the copy after the slow fill.
TEST_F(HbgOrchestrator, AllocTensorsAndCreatedOutputsAreIntermediatesAndManualScopesUseExplicitDeps) {
  const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &out = args.tensor(1).ref();
  uint32_t shape[2] = {8, 8};
  TensorCreateInfo ci(shape, 2, DataType::INT32);
  TaskOutputTensors x = alloc_tensors(ci);        // no task: a buffer for the fill below
  CoreTaskArgs fill;
  fill.add_output(x.get_ref(0));
  fill.add_scalar(int64_t{30}, int64_t{7});
  rt_submit_aiv_task(0, fill);
  CoreTaskArgs copy;                              // y (created here) = x
  copy.add_input(x.get_ref(0));
  copy.add_output(ci);
  copy.add_scalar(int64_t{0});
  TaskOutputTensors y = rt_submit_aiv_task(1, copy);
  PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
    PTO2TaskId after_copy[1] = {y.task_id()};
    CoreTaskArgs refill;                          // y = 9, slowly, after the copy
    refill.add_output(y.get_ref(0));
    refill.add_scalar(int64_t{30}, int64_t{9});
    refill.set_dependencies(after_copy, 1);
    TaskOutputTensors r = rt_submit_aiv_task(0, refill);
    PTO2TaskId deps[1] = {r.task_id()};
    CoreTaskArgs last;                            // out = y, only after the refill
    last.add_input(y.get_ref(0));
    last.add_output(out);
    last.add_scalar(int64_t{0});
    last.set_dependencies(deps, 1);
    rt_submit_aiv_task(1, last);
  }
}
)";
  const auto [m, out] = run_two(callable(orch, "hbg_intermediates"));
  for (int k = 0; k < 64; ++k) ASSERT_EQ(out[k], 9) << "element " << k;
}

// get_tensor_data reads a run tensor no task writes (the orchestration branches on it);
// set_tensor_data writes the staged data of one no task touches yet, which the task submitted
// after it then reads, and of a view no task touches in a tensor tasks write (it comes back as
// written): the check is by region, like the tensormap runtime's wait.
TEST_F(HbgOrchestrator, TensorDataOfUntouchedRunTensorsIsTheDataTheDeviceSees) {
  const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &m = args.tensor(0).ref();
  const ChipTensor &out = args.tensor(1).ref();
  uint32_t at[2] = {0, 5};
  const int32_t rows = get_tensor_data<int32_t>(m, 2, at);  // m[0][5] = 5
  uint32_t at2[2] = {1, 0};
  set_tensor_data<int32_t>(m, 2, at2, 1000);                // m[1][0], before the copy reads it
  uint32_t shape[2] = {static_cast<uint32_t>(rows) - 3, 8}, origin[2] = {0, 0};
  const ChipTensor src = m.view(shape, origin), dst = out.view(shape, origin);
  CoreTaskArgs t;                                           // out[0:2] = m[0:2]
  t.add_input(src);
  t.add_output(dst);
  t.add_scalar(int64_t{0});
  rt_submit_aiv_task(1, t);
  uint32_t one[2] = {1, 1}, at3[2] = {7, 7}, zero[2] = {0, 0};
  const ChipTensor corner = out.view(one, at3);             // no task touches out[7][7]
  set_tensor_data<int32_t>(corner, 2, zero, rows * 100);
}
)";
  const auto [m, out] = run_two(callable(orch, "hbg_tensor_data"));
  EXPECT_EQ(m[8], 1000);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(out[k], k == 8 ? 1000 : k) << "element " << k;
  for (int k = 16; k < 63; ++k) EXPECT_EQ(out[k], -1) << "element " << k;
  EXPECT_EQ(out[63], 500);
}

// Reading a tensor a submitted task writes (or writing one it reads) cannot wait on
// host_build_graph: NOT_SUPPORTED naming the tensor and the task; nothing hangs.
TEST_F(HbgOrchestrator, TensorDataOfATaskWrittenTensorIsATypedErrorAndTheWorkerGoesOn) {
  const std::string head = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &m = args.tensor(0).ref();
  const ChipTensor &out = args.tensor(1).ref();
  CoreTaskArgs t;
  t.add_input(m);
  t.add_output(out);
  t.add_scalar(int64_t{0});
  rt_submit_aiv_task(1, t);
  uint32_t at[2] = {2, 3};
)";
  pto_test::expect_error(
      [&] {
        run_two(callable(head + "  (void)get_tensor_data<int32_t>(out, 2, at);\n}\n", "hbg_get_written"));
      },
      PTO_NOT_SUPPORTED, {"reading run tensor 1", "task 0 (kernel 1) writes it"});
  expect_worker_usable();
  pto_test::expect_error(
      [&] { run_two(callable(head + "  set_tensor_data<int32_t>(m, 2, at, 1);\n}\n", "hbg_set_read")); },
      PTO_NOT_SUPPORTED, {"writing run tensor 0", "task 0 (kernel 1) uses it"});
  expect_worker_usable();
}

// The descriptors written when the graph is laid out equal the tensormap runtime's for the same
// views (buffer addresses aside: each run has its own).
TEST_F(HbgOrchestrator, DescriptorsEqualTheTensormapRuntimesForTheSameViews) {
  const char *orch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &m = args.tensor(0).ref();      // int32[8][8]
  const ChipTensor &out = args.tensor(1).ref();    // int64[4][16]: one descriptor per row
  uint32_t win[2] = {3, 4}, at[2] = {2, 1};
  const ChipTensor views[4] = {m, m.view(win, at), m.slice(1, 1, 8, 3), m.transpose(0, 1).view(win, at)};
  for (uint32_t k = 0; k < 4; ++k) {
    uint32_t row[2] = {1, 16}, start[2] = {k, 0};
    const ChipTensor dst = out.view(row, start);
    CoreTaskArgs t;
    t.add_input(views[k]);
    t.add_output(dst);
    rt_submit_aiv_task(2, t);
  }
}
)";
  std::vector<int64_t> got[2];
  const char *runtimes[2] = {kHbg, "tensormap_and_ringbuffer"};
  for (int r = 0; r < 2; ++r) {
    pto::ChipWorker tw;
    pto::ChipWorker &worker = r == 0 ? w : tw;
    if (r == 1) {
      tw.init("a2a3sim", runtimes[1]);
      tw.set_device(1);
    }
    std::vector<int32_t> m(64);
    std::vector<int64_t> out(64, 0);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(m.data(), 64 * 4, PTO_DTYPE_I32, {8, 8}, PTO_DIR_INPUT);
    args.add_tensor(out.data(), 64 * 8, PTO_DTYPE_I64, {4, 16}, PTO_DIR_INOUT);
    worker.run(callable(orch, std::string("hbg_desc_") + (r ? "tmr" : "hbg"), runtimes[r]), args, config());
    for (int k = 0; k < 4; ++k) out[k * 16] = 0;  // buffer.addr: each run has its own
    got[r] = out;
  }
  EXPECT_EQ(got[0], got[1]);
  EXPECT_NE(got[0], std::vector<int64_t>(64, 0));
}

// Launches this runtime cannot run as asked and invalid uses of the API (ours and the
// reference's: a MIX part whose kernel is registered for the other core type, scopes, views) each
// fail the orchestration with a typed error naming what was refused.
TEST_F(HbgOrchestrator, BadLaunchesAndInvalidUsesAreTypedErrorsAndTheWorkerGoesOn) {
  struct Case {
    const char *name;
    std::string source;
    pto_status code;
    std::vector<std::string> fragments;
  };
  const std::string ours =
      "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) {\n"
      "  pto::Launch l;\n  const pto::Arg a[3] = {pto::Arg::out(o.tensor(1)), "
      "pto::Arg::i64(0), pto::Arg::i64(1)};\n";
  const std::string ref =
      "#include \"pto_orchestration_api.h\"\nextern \"C\" __attribute__((visibility(\"default\"))) "
      "void aicpu_orchestration_entry(const ChipTaskArgs &args) {\n"
      "  const ChipTensor &out = args.tensor(1).ref();\n  CoreTaskArgs t;\n  t.add_output(out);\n"
      "  t.add_scalar(int64_t{0}, int64_t{1});\n";
  const std::vector<Case> cases = {
      {"spmd_no_blocks",
       ours + "  l.block_num = 0;\n  o.submit_task(0, PTO_CORE_AIV, a, 3, nullptr, 0, &l);\n}\n",
       PTO_INVALID_ARGUMENT,
       {"block_num 0 (1 .. 65535 blocks are allowed)"}},
      {"sync_start_too_wide",
       ours + "  l.sync_start = true;\n  l.block_num = 5;\n  o.submit_task(0, PTO_CORE_AIV, a, 3, nullptr, "
              "0, &l);\n}\n",
       PTO_INVALID_ARGUMENT,
       {"sync-start launch of block_num 5", "the run has 4 AIV cores (block_dim 2)"}},
      {"predicate_without_element",
       ours + "  l.predicate.op = pto::PredicateOp::EQ;\n  o.submit_task(0, PTO_CORE_AIV, a, 3, nullptr, 0, "
              "&l);\n}\n",
       PTO_INVALID_ARGUMENT,
       {"task 0 (kernel 0): dispatch predicate (op 1", "is invalid"}},
      {"dummy_bad_after",
       ours + "  (void)l;\n  pto::TaskHandle h{7};\n  o.submit_dummy(a, 1, &h, 1);\n}\n",
       PTO_INVALID_ARGUMENT,
       {"after[0] is 7"}},
      {"ref_sync_start_too_wide",
       ref + "  t.launch_spec.set_block_num(5);\n  t.launch_spec.set_require_sync_start(true);\n"
             "  rt_submit_aiv_task(0, t);\n}\n",
       PTO_INVALID_ARGUMENT,
       {"block_num 5", "4 AIV cores"}},
      {"ref_mixed_wrong_core",
       ref + "  MixedKernels mk;\n  mk.aic_kernel_id = 0;\n  mk.aiv0_kernel_id = 0;\n  rt_submit_task(mk, "
             "t);\n}\n",
       PTO_INVALID_ARGUMENT,
       {"task 0 (kernel 0) asks for a AIC core but the kernel was registered for AIV"}},
      {"ref_bad_after",
       ours + "  (void)l;\n  pto::TaskHandle h{5};\n  o.submit_task(0, PTO_CORE_AIV, a, 3, &h, 1);\n}\n",
       PTO_INVALID_ARGUMENT,
       {"after[0] is 5", "submitted before this one"}},
      {"scope_end",
       ref + "  rt_scope_end();\n}\n",
       PTO_INVALID_ARGUMENT,
       {"scope_end without a matching scope_begin"}},
      {"scope_open", ref + "  rt_scope_begin();\n}\n", PTO_INVALID_ARGUMENT, {"1 scope(s) still open"}},
      {"outside",
       ref + "  ChipTensor v = out;\n  v.start_offset = 60;\n  CoreTaskArgs u;\n  u.add_output(v);\n"
             "  u.add_scalar(int64_t{0}, int64_t{1});\n  rt_submit_aiv_task(0, u);\n}\n",
       PTO_BAD_TENSOR,
       {"task 0 (kernel 0): argument 0 reaches outside its buffer of 256 bytes"}},
  };
  for (const Case &k : cases) {
    SCOPED_TRACE(k.name);
    pto_test::expect_error([&] { run_two(callable(k.source, std::string("hbg_bad_") + k.name)); }, k.code,
                           k.fragments);
    expect_worker_usable();
  }
}

// Random programs of tasks over overlapping strided views, scoped temporaries and NO_DEP reads
// (common/tmr_program.h) equal running their tasks one by one, as on the tensormap runtime.
TEST(HbgRandom, DeviceOrchestrationsEqualSequentialExecution) {
  pto::ChipCallable callable = pto_test::make_tmr_program_callable("a2a3sim", kHbg);
  pto::ChipWorker w;
  w.init("a2a3sim", kHbg);
  w.set_device(2);
  for (int threads : {1, 3}) {
    for (uint64_t seed : {21u, 22u, 23u, 24u}) {
      // Even seeds: batchy programs (the same tiles again, tiles inside them, stream changes).
      const pto_test::TmrProgram prog =
          pto_test::make_tmr_program(1000, seed * 100 + threads, seed % 2 == 0, false);
      pto_test::TmrData data(prog, seed);
      const auto expected = pto_test::run_sequential(prog, data.bufs, data.consts);
      pto::ChipStorageTaskArgs args = data.args();
      pto::ChipCallConfig cfg;
      cfg.block_dim = 2;
      cfg.aicpu_thread_num = threads;
      const pto::RunStats s = w.run(callable, args, cfg);
      EXPECT_EQ(s.tasks_run, static_cast<uint64_t>(prog.tasks));
      pto_test::expect_same_buffers(data.bufs, expected,
                                    "seed " + std::to_string(seed) + ", threads " + std::to_string(threads));
    }
  }
}

}  // namespace
