// tests/cpp/test_glue.cpp — the thin glue: KERNEL_LIST programs (pto/kernel_list.h) and TaskBuilder
// (pto/task_builder.h).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pto/chip_worker.h"
#include "pto/compile_options.h"
#include "pto/error.h"
#include "pto/kernel_compiler.h"
#include "pto/task_builder.h"

// The example's kernel program, compiled into this test too, to call its switch directly.
#include "glue/kernels.cpp"  // NOLINT(bugprone-suspicious-include)

namespace {

const std::string kGlueDir = std::string(PTO_TEST_EXAMPLES_DIR) + "/glue";

// --- The generated tables and the dispatch switch, in-process ---

TEST(KernelList, GeneratesIdsNamesAndCoreTypesInListOrder) {
  static_assert(kNumKernels == 3);
  static_assert(static_cast<uint32_t>(KernelId::vscale) == 1);
  EXPECT_STREQ(kKernelNames[2], "vmul");
  EXPECT_STREQ(pto_kernel_name(KernelId::vadd), "vadd");
  EXPECT_EQ(pto_kernel_core_type(KernelId::vmul), PTO_CORE_AIV);
  ASSERT_EQ(pto_kernel_table.num_kernels, kNumKernels);
  for (uint32_t i = 0; i < kNumKernels; ++i) EXPECT_STREQ(pto_kernel_table.kernels[i].name, kKernelNames[i]);
}

// A pto_kernel_call with room for four arguments, as the runtime lays one out.
struct Call {
  pto_kernel_call head{};
  int64_t more[3] = {};
};

TEST(KernelList, DispatchRunsTheKernelOfTheIdAndRefusesOthers) {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4] = {};
  Call c;
  c.head.num_args = 4;
  int64_t *args = c.head.args;
  args[0] = reinterpret_cast<int64_t>(a);
  args[1] = reinterpret_cast<int64_t>(b);
  args[2] = reinterpret_cast<int64_t>(out);
  args[3] = 4;
  EXPECT_TRUE(pto_kernel_dispatch(KernelId::vmul, args));
  EXPECT_EQ(out[3], 160.0f);
  EXPECT_TRUE(pto_kernel_dispatch(KernelId::vadd, args));
  EXPECT_EQ(out[3], 44.0f);
  pto_kernel_table.kernels[0].entry(args);  // the table's entry for id 0 goes through the switch
  EXPECT_EQ(out[0], 11.0f);
  EXPECT_FALSE(pto_kernel_dispatch(static_cast<KernelId>(7), args));
}

// --- TaskBuilder over a recording orchestrator ---

class RecordingOrchestrator final : public pto::Orchestrator {
 public:
  struct Submit {
    uint32_t func_id;
    pto_core_type core_type;
    std::vector<pto::Arg> args;
    std::vector<int64_t> after;
  };
  std::vector<Submit> submits;
  std::string error;

  uint32_t num_tensors() const override { return 0; }
  uint32_t num_scalars() const override { return 0; }
  pto::TensorView tensor(uint32_t) const override { return {}; }
  int64_t scalar(uint32_t) const override { return 0; }
  pto::TaskHandle submit_task(uint32_t func_id, pto_core_type core_type, const pto::Arg *args,
                              uint32_t num_args, const pto::TaskHandle *after, uint32_t num_after,
                              const pto::Launch *) override {
    Submit s{func_id, core_type, std::vector<pto::Arg>(args, args + num_args), {}};
    for (uint32_t i = 0; i < num_after; ++i) s.after.push_back(after[i].id);
    submits.push_back(s);
    return pto::TaskHandle{static_cast<int64_t>(submits.size() - 1)};
  }
  pto::TaskHandle submit_mixed(const int32_t[3], const pto::Arg *, uint32_t, const pto::TaskHandle *,
                               uint32_t, const pto::Launch *) override {
    return {};
  }
  pto::TensorView alloc_tensor(pto_dtype, uint32_t, const int64_t *) override { return {}; }
  void set_stream(uint32_t, uint32_t) override {}
  void scope_begin(bool) override {}
  void scope_end() override {}
  void fail(const char *message) override {
    if (error.empty()) error = message;
  }
  bool ok() const override { return error.empty(); }
  const pto_device_log *log() const override { return nullptr; }
  void fail_with(pto_status, const char *message) override { fail(message); }
  bool wait_for_tasks_using(const pto::TensorView &, bool) override { return ok(); }
  uint32_t num_clusters() const override { return 1; }
};

pto::TensorView view(uint64_t buffer) {
  pto::TensorView v;
  v.buffer = buffer;
  v.buffer_bytes = 64;
  v.dtype = PTO_DTYPE_F32;
  v.ndim = 1;
  v.shape[0] = 16;
  v.strides[0] = 1;
  return v;
}

TEST(TaskBuilder, SubmitsTheArgumentsInOrderWithTheListsCoreType) {
  RecordingOrchestrator o;
  pto::TaskBuilder b(o);
  const pto::TaskHandle first = b.alloc_task(KernelId::vscale)
                                    .add_input(view(0x100))
                                    .add_scalar_f32(2.0f)
                                    .add_output(view(0x200))
                                    .submit();
  b.alloc_task(7, PTO_CORE_AIC).add_inout(view(0x300)).add_scalar(5).add_dep(first).submit();
  ASSERT_TRUE(o.ok()) << o.error;
  ASSERT_EQ(o.submits.size(), 2u);
  const auto &s0 = o.submits[0];
  EXPECT_EQ(s0.func_id, 1u);
  EXPECT_EQ(s0.core_type, PTO_CORE_AIV);
  ASSERT_EQ(s0.args.size(), 3u);
  EXPECT_EQ(s0.args[0].access, pto::Access::INPUT);
  EXPECT_EQ(s0.args[0].view.buffer, 0x100u);
  EXPECT_EQ(s0.args[1].kind, PTO_ARG_SCALAR);
  EXPECT_EQ(s0.args[1].scalar, pto::Arg::f32(2.0f).scalar);
  EXPECT_EQ(s0.args[2].access, pto::Access::OUTPUT);
  const auto &s1 = o.submits[1];
  EXPECT_EQ(s1.func_id, 7u);
  EXPECT_EQ(s1.core_type, PTO_CORE_AIC);
  EXPECT_EQ(s1.args[0].access, pto::Access::INOUT);
  EXPECT_EQ(s1.args[1].scalar, 5);
  EXPECT_EQ(s1.after, std::vector<int64_t>{0});
  EXPECT_FALSE(b.task_open());
}

TEST(TaskBuilder, MisuseFailsTheOrchestrationNamingTheCall) {
  struct Case {
    void (*misuse)(pto::TaskBuilder &);
    const char *call;
  };
  const Case cases[] = {
      {[](pto::TaskBuilder &b) { b.add_input(view(1)); }, "TaskBuilder.add_input: no task is open"},
      {[](pto::TaskBuilder &b) { b.submit(); }, "TaskBuilder.submit: no task is open"},
      {[](pto::TaskBuilder &b) { b.alloc_task(KernelId::vadd).alloc_task(KernelId::vmul); },
       "TaskBuilder.alloc_task: the previous task was not submitted"},
      {[](pto::TaskBuilder &b) {
         b.alloc_task(KernelId::vadd);
         for (uint32_t i = 0; i <= pto::TaskBuilder::kMaxArgs; ++i) b.add_scalar(i);
       },
       "TaskBuilder.add_scalar: more than TaskBuilder::kMaxArgs arguments"},
      {[](pto::TaskBuilder &b) {
         b.alloc_task(KernelId::vadd);
         for (uint32_t i = 0; i <= pto::TaskBuilder::kMaxAfter; ++i) b.add_dep(pto::TaskHandle{0});
       },
       "TaskBuilder.add_dep: more than TaskBuilder::kMaxAfter dependencies"},
  };
  for (const Case &c : cases) {
    RecordingOrchestrator o;
    pto::TaskBuilder b(o);
    c.misuse(b);
    EXPECT_NE(o.error.find(c.call), std::string::npos) << "'" << c.call << "' not in: " << o.error;
    EXPECT_FALSE(b.task_open());  // the open task is dropped
    b.submit();
    EXPECT_TRUE(o.submits.empty());
  }
}

// --- End to end: the example's program on the simulated chip ---

class GlueRun : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.platform = "a2a3sim";
    options_.profiling = true;
    options_.aicpu_threads = 2;
    kc_ = std::make_unique<pto::KernelCompiler>(pto::make_kernel_compiler(options_));
    program_ = kc_->compile_incore(kGlueDir + "/kernels.cpp", PTO_CORE_AIV);
    orchestration_ = kc_->compile_orchestration("tensormap_and_ringbuffer", kGlueDir + "/orchestration.cpp");
    w_.init("a2a3sim", "tensormap_and_ringbuffer");
    w_.set_device(0);
  }

  // Runs the example's graph; returns f.
  std::vector<float> run(const pto::ChipCallable &c, int tiles, std::vector<float> *expected = nullptr) {
    const int n = 1024;
    std::vector<float> a(n), b(n), f(n, 0.0f);
    for (int i = 0; i < n; ++i) {
      a[i] = 0.25f * static_cast<float>(i % 17);
      b[i] = 1.0f - 0.5f * static_cast<float>(i % 5);
    }
    pto::ChipStorageTaskArgs args;
    args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
    args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
    args.add_scalar(tiles);
    args.add_scalar_f32(2.5f);
    pto::ChipCallConfig base;
    base.block_dim = 4;
    w_.run(c, args, pto::make_call_config(options_, base));
    if (expected) {
      expected->resize(n);
      for (int i = 0; i < n; ++i) (*expected)[i] = (a[i] + b[i]) * 2.5f * (a[i] + b[i]);
    }
    return f;
  }

  pto::BackendOptions options_;
  std::unique_ptr<pto::KernelCompiler> kc_;
  std::string program_, orchestration_;
  pto::ChipWorker w_;
};

TEST_F(GlueRun, OneBinaryRunsEveryKernelOfTheListAndTheTraceNamesThem) {
  pto::ChipCallable c(orchestration_);
  EXPECT_EQ(c.add_kernels(program_), 3u);
  std::vector<float> expected;
  const std::vector<float> f = run(c, 8, &expected);
  for (size_t i = 0; i < f.size(); ++i) ASSERT_FLOAT_EQ(f[i], expected[i]) << "element " << i;
  const std::string trace = w_.last_trace_json();
  for (const char *name : {"\"vadd\"", "\"vscale\"", "\"vmul\""})
    EXPECT_NE(trace.find(name), std::string::npos) << name << " not in the trace's kernel names";
}

TEST_F(GlueRun, ReadKernelTableListsTheProgramsKernels) {
  const std::vector<pto::KernelTableRow> rows = pto::read_kernel_table(program_);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].func_id, 1u);
  EXPECT_EQ(rows[1].name, "vscale");
  EXPECT_EQ(rows[1].core_type, PTO_CORE_AIV);
}

TEST_F(GlueRun, AFuncIdBeyondTheTableIsInvalidArgument) {
  pto::ChipCallable c(orchestration_);
  c.add_kernels(program_);
  c.add_kernel(3, PTO_CORE_AIV, program_);  // the program has kernels 0..2
  try {
    run(c, 8);
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find("not func_id 3"), std::string::npos) << e.what();
  }
}

TEST_F(GlueRun, ACoreTypeOtherThanTheListsIsInvalidArgument) {
  pto::ChipCallable c(orchestration_);
  c.add_kernel(0, PTO_CORE_AIC, program_);  // vadd is AIV in KERNEL_LIST
  try {
    run(c, 8);
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find("'vadd'"), std::string::npos) << e.what();
  }
}

TEST_F(GlueRun, AddKernelsIsAllOrNothingAndRefusesAOneKernelBinary) {
  pto::ChipCallable c(orchestration_);
  c.add_kernel(1, PTO_CORE_AIV, program_);
  EXPECT_THROW(c.add_kernels(program_), pto::Error);
  EXPECT_EQ(c.kernels().size(), 1u);
  const std::string single = kc_->compile_incore_source(
      "#include \"pto/kernel.h\"\nPTO_KERNEL(a) { (void)a; }\n", "glue_single", PTO_CORE_AIV);
  try {
    pto::read_kernel_table(single);
    FAIL() << "expected INVALID_ARGUMENT";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  }
}

}  // namespace
