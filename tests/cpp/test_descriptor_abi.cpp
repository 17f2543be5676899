// tests/cpp/test_descriptor_abi.cpp — the descriptor ABI (kernel_entry, include/pto_abi/) in both
// runtimes: what a kernel reads in its descriptors for whole, offset and strided views; scalars
// after the tensors; block index and count; the MIX lanes; kernels of both ABIs in one callable;
// and the typed errors for what a descriptor cannot carry, after which the worker still runs.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/expect_error.h"
#include "common/test_kernels.h"
#include "pto_abi/data_type.h"

namespace {

// Kernel (descriptor ABI): args[0] = probe (int64, OUTPUT), args[1..T-1] = tensors to describe,
// then S scalars. Writes, per described tensor, 16 fields; then the scalars, the block index
// and count, the lane and the argument count. T and S come from the probe's own descriptor
// shape: the orchestration sizes the probe as [T - 1, S] (a 2-d shape that says both).
const char *const kProbe = R"(
#include "tensor.h"
#include "intrinsic.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *probe_desc = reinterpret_cast<const ChipTensor *>(args[0]);
  int64_t *out = reinterpret_cast<int64_t *>(probe_desc->buffer.addr) + probe_desc->start_offset;
  // The probe's second dimension is 16 * described + S + 4 wide; its first says how many are described.
  const uint32_t described = probe_desc->shapes[0], width = probe_desc->shapes[1];
  const uint32_t scalars = width - 16 * described - 4;
  int64_t *o = out;
  for (uint32_t t = 0; t < described; ++t) {
    const ChipTensor *d = reinterpret_cast<const ChipTensor *>(args[1 + t]);
    *o++ = static_cast<int64_t>(d->buffer.addr);
    *o++ = static_cast<int64_t>(d->buffer.size);
    *o++ = static_cast<int64_t>(d->start_offset);
    *o++ = d->ndims;
    *o++ = static_cast<int64_t>(d->dtype);
    for (int k = 0; k < 5; ++k) *o++ = k < static_cast<int>(d->ndims) ? d->shapes[k] : -1;
    for (int k = 0; k < 5; ++k) *o++ = k < static_cast<int>(d->ndims) ? d->strides[k] : -1;
    *o++ = d->is_contiguous;
  }
  for (uint32_t s = 0; s < scalars; ++s) *o++ = args[1 + described + s];
  *o++ = get_block_idx(args);
  *o++ = get_block_num(args);
  *o++ = get_sub_block_id(args);
  *o++ = pto::num_args(args);
}
)";

// Kernel (descriptor ABI): dst[i] = sum over the strided 2-d view src of row i, through
// buffer.addr + start_offset and the strides, as a tile kernel reads its inputs.
const char *const kRowSum = R"(
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *src = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *dst = reinterpret_cast<const ChipTensor *>(args[1]);
  const float *s = reinterpret_cast<const float *>(src->buffer.addr) + src->start_offset;
  float *d = reinterpret_cast<float *>(dst->buffer.addr) + dst->start_offset;
  for (uint32_t i = 0; i < src->shapes[0]; ++i) {
    float acc = static_cast<float>(args[2]);  // the scalar after the tensors: a bias
    for (uint32_t j = 0; j < src->shapes[1]; ++j) acc += s[i * src->strides[0] + j * src->strides[1]];
    d[i * dst->strides[0]] = acc;
  }
}
)";

// Kernel (PTO_KERNEL ABI) in the same callable: dst[i] = src[i] * 2 over n.
const char *const kTwice = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const float *src = pto::tensor<float>(args, 0);
  float *dst = pto::tensor<float>(args, 1);
  for (int64_t i = 0; i < args[2]; ++i) dst[i] = src[i] * 2.0f;
}
)";

constexpr int kFields = 16;

struct DescFields {
  int64_t addr, size, offset, ndims, dtype, shapes[5], strides[5], contiguous;
};

DescFields fields_at(const std::vector<int64_t> &probe, int t) {
  DescFields f;
  const int64_t *p = probe.data() + t * kFields;
  f.addr = p[0];
  f.size = p[1];
  f.offset = p[2];
  f.ndims = p[3];
  f.dtype = p[4];
  for (int k = 0; k < 5; ++k) f.shapes[k] = p[5 + k], f.strides[k] = p[10 + k];
  f.contiguous = p[15];
  return f;
}

class DescriptorAbi : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    w.init("a2a3sim", GetParam());
    w.set_device(5);
  }
  bool tmr() const { return GetParam() == "tensormap_and_ringbuffer"; }
  std::string orch(const std::string &source, const std::string &name) {
    return pto::KernelCompiler("a2a3sim").compile_orchestration_source(GetParam(), source, name);
  }

  std::string kernel(const char *src, const char *name, pto_core_type t = PTO_CORE_AIV) {
    return pto_test::kernel(src, name, t);
  }

  pto::ChipWorker w;
};

// tensormap: a 8x12 float32 run tensor X; the probe describes X whole, the tile X[2:5, 3:9]
// (offset), the column-strided view X[:, ::3] and a 1-d offset view of Y; scalars 7 and -3.
const char *const kTmrProbeOrch = R"(
#include "pto/orchestration.h"
using pto::Arg;
PTO_DEVICE_ORCHESTRATION(o) {
  pto::TensorView probe = o.tensor(0), x = o.tensor(1), y = o.tensor(2);
  pto::TensorView tile = x.tile(2, 3, 3, 6);
  pto::TensorView cols = x;
  cols.shape[1] = 4;
  cols.strides[1] = 3;
  pto::TensorView yoff = y;
  yoff.offset = 5;
  yoff.shape[0] = 10;
  o.submit_task(0, PTO_CORE_AIV, {Arg::out(probe), Arg::in(x), Arg::in(tile), Arg::in(cols), Arg::in(y),
                                  Arg::in(yoff), Arg::i64(7), Arg::i64(-3)});
}
)";

// host_build_graph: X whole, then a sub-range of Y made by offsetting its address by 5 elements.
const char *const kHbgProbeOrch = R"(
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  const pto::Tensor &probe = args.tensor(0), &x = args.tensor(1), &y = args.tensor(2);
  pto::Tensor ysub = y;
  ysub.addr += 5 * 4;
  ysub.nelems = 10;
  ysub.nbytes = 40;
  ysub.ndim = 1;
  ysub.shape[0] = 10;
  pto::TaskArg a[] = {pto::TaskArg::of(probe), pto::TaskArg::of(x), pto::TaskArg::of(y), pto::TaskArg::of(ysub),
                      pto::TaskArg::of_i64(7), pto::TaskArg::of_i64(-3)};
  g.add_task(0, PTO_CORE_AIV, a);
}
)";

TEST_P(DescriptorAbi, KernelReadsDescriptorsOfWholeOffsetAndStridedViewsThenScalarsThenContexts) {
  const bool t = tmr();
  const int described = t ? 5 : 3, scalars = 2, width = kFields * described + scalars + 4;
  pto::ChipCallable c(orch(t ? kTmrProbeOrch : kHbgProbeOrch, t ? "probe_tmr" : "probe_hbg"));
  c.add_kernel(0, PTO_CORE_AIV, kernel(kProbe, "probe"));
  std::vector<int64_t> probe(static_cast<size_t>(described) * width, -99);
  std::vector<float> x(8 * 12, 1.0f), y(20, 2.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(probe.data(), probe.size() * 8, PTO_DTYPE_I64, {described, width}, PTO_DIR_OUTPUT);
  args.add_tensor(x.data(), x.size() * 4, PTO_DTYPE_F32, {8, 12}, PTO_DIR_INPUT);
  args.add_tensor(y.data(), y.size() * 4, PTO_DTYPE_F32, {20}, PTO_DIR_INPUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 2;
  cfg.aicpu_thread_num = 3;
  w.run(c, args, cfg);

  const DescFields whole = fields_at(probe, 0);
  EXPECT_NE(whole.addr, 0);
  EXPECT_EQ(whole.size, 8 * 12 * 4);
  EXPECT_EQ(whole.offset, 0);
  EXPECT_EQ(whole.ndims, 2);
  EXPECT_EQ(whole.dtype, static_cast<int64_t>(DataType::FLOAT32));
  EXPECT_EQ(whole.shapes[0], 8);
  EXPECT_EQ(whole.shapes[1], 12);
  EXPECT_EQ(whole.strides[0], 12);
  EXPECT_EQ(whole.strides[1], 1);
  EXPECT_EQ(whole.contiguous, 1);
  int next = 1;
  if (t) {
    const DescFields tile = fields_at(probe, next++);
    EXPECT_EQ(tile.addr, whole.addr) << "a view's descriptor keeps its buffer's base address";
    EXPECT_EQ(tile.size, whole.size);
    EXPECT_EQ(tile.offset, 2 * 12 + 3) << "start_offset counts elements from the buffer's base";
    EXPECT_EQ(tile.shapes[0], 3);
    EXPECT_EQ(tile.shapes[1], 6);
    EXPECT_EQ(tile.strides[0], 12);
    EXPECT_EQ(tile.strides[1], 1);
    EXPECT_EQ(tile.contiguous, 0);
    const DescFields cols = fields_at(probe, next++);
    EXPECT_EQ(cols.offset, 0);
    EXPECT_EQ(cols.shapes[1], 4);
    EXPECT_EQ(cols.strides[0], 12);
    EXPECT_EQ(cols.strides[1], 3);
    EXPECT_EQ(cols.contiguous, 0);
  }
  const DescFields ywhole = fields_at(probe, next++);
  EXPECT_EQ(ywhole.size, 20 * 4);
  EXPECT_EQ(ywhole.offset, 0);
  const DescFields yv = fields_at(probe, next++);
  EXPECT_EQ(yv.ndims, 1);
  EXPECT_EQ(yv.shapes[0], 10);
  EXPECT_EQ(yv.strides[0], 1);
  if (t) {  // tensormap: the run tensor's base, start_offset 5
    EXPECT_EQ(yv.addr, ywhole.addr);
    EXPECT_EQ(yv.offset, 5);
    EXPECT_EQ(yv.size, ywhole.size);
  } else {  // host_build_graph: the tensor the orchestration made, 5 elements in
    EXPECT_EQ(yv.addr, ywhole.addr + 20);
    EXPECT_EQ(yv.offset, 0);
    EXPECT_EQ(yv.size, 40);
  }
  const int64_t *tail = probe.data() + kFields * described;
  EXPECT_EQ(tail[0], 7) << "scalars follow the tensors, in order";
  EXPECT_EQ(tail[1], -3);
  EXPECT_EQ(tail[2], 0) << "block index";
  EXPECT_EQ(tail[3], 1) << "block count";
  EXPECT_EQ(tail[4], 0) << "lane of a single-core task";
  EXPECT_EQ(tail[5], described + 1 + scalars) << "num_args counts tensors and scalars";
}

// A strided, offset view computed on through its descriptor, beside a PTO_KERNEL kernel.
TEST_P(DescriptorAbi, BothAbisInOneCallableComputeOnOffsetStridedViews) {
  const bool t = tmr();
  const char *orch_tmr = R"(
#include "pto/orchestration.h"
using pto::Arg;
PTO_DEVICE_ORCHESTRATION(o) {
  pto::TensorView x = o.tensor(0), out = o.tensor(1), twice = o.tensor(2);
  pto::TensorView t = o.alloc_tensor(PTO_DTYPE_F32, 6, 8);
  // t = 2 * x[1:7, 2:10] row by row (PTO_KERNEL), then out = row sums of t[:, ::2] + 0.5 (descriptors).
  for (int r = 0; r < 6; ++r) {
    pto::TensorView src = x.tile(1 + r, 2, 1, 8), dst = t.tile(r, 0, 1, 8);
    o.submit_task(1, PTO_CORE_AIV, {Arg::in(src), Arg::out(dst), Arg::i64(8)});
  }
  pto::TensorView even = t;
  even.shape[1] = 4;
  even.strides[1] = 2;
  o.submit_task(0, PTO_CORE_AIV, {Arg::in(even), Arg::out(out), Arg::i64(0)});
  o.submit_task(1, PTO_CORE_AIV, {Arg::in(x.tile(0, 0, 1, 8)), Arg::out(twice), Arg::i64(8)});
}
)";
  const char *orch_hbg = R"(
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  // host_build_graph views are contiguous: the row sums of x's rows 1..6 (12 wide), first 8 columns
  // are not expressible, so sum rows 1..6 whole (offset address) and double row 0.
  pto::Tensor rows = args.tensor(0);
  rows.addr += 12 * 4;
  rows.ndim = 2;
  rows.shape[0] = 6;
  rows.shape[1] = 12;
  rows.nelems = 72;
  rows.nbytes = 288;
  pto::TaskArg a[] = {pto::TaskArg::of(rows), pto::TaskArg::of(args.tensor(1)), pto::TaskArg::of_i64(0)};
  g.add_task(0, PTO_CORE_AIV, a);
  pto::TaskArg b[] = {pto::TaskArg::of(args.tensor(0)), pto::TaskArg::of(args.tensor(2)), pto::TaskArg::of_i64(8)};
  g.add_task(1, PTO_CORE_AIV, b);
}
)";
  pto::ChipCallable c(orch(t ? orch_tmr : orch_hbg, t ? "both_abi_tmr" : "both_abi_hbg"));
  c.add_kernel(0, PTO_CORE_AIV, kernel(kRowSum, "row_sum"));
  c.add_kernel(1, PTO_CORE_AIV, kernel(kTwice, "twice"));
  std::vector<float> x(8 * 12), out(6, -1.0f), twice(8, -1.0f);
  for (int i = 0; i < 8 * 12; ++i) x[i] = static_cast<float>(i % 17) - 4.0f;
  pto::ChipStorageTaskArgs args;
  args.add_tensor(x.data(), x.size() * 4, PTO_DTYPE_F32, {8, 12}, PTO_DIR_INPUT);
  args.add_tensor(out.data(), out.size() * 4, PTO_DTYPE_F32, {6}, PTO_DIR_OUTPUT);
  args.add_tensor(twice.data(), twice.size() * 4, PTO_DTYPE_F32, {8}, PTO_DIR_OUTPUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 2;
  cfg.aicpu_thread_num = 3;
  w.run(c, args, cfg);
  for (int r = 0; r < 6; ++r) {
    float want = 0;
    if (t) {
      for (int j = 0; j < 4; ++j) want += 2.0f * x[(1 + r) * 12 + 2 + 2 * j];
    } else {
      for (int j = 0; j < 12; ++j) want += x[(1 + r) * 12 + j];
    }
    EXPECT_FLOAT_EQ(out[r], want) << "row " << r;
  }
  for (int j = 0; j < 8; ++j) EXPECT_FLOAT_EQ(twice[j], 2.0f * x[j]);
}

// Each refusal: a typed error naming the argument and why; the next run works.
TEST_P(DescriptorAbi, WhatADescriptorCannotCarryIsATypedErrorAndTheWorkerStaysUsable) {
  const bool t = tmr();
  struct Case {
    const char *name, *tmr_body, *hbg_body;
    pto_status code;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"scalar_before_tensor",
       "o.submit_task(0, PTO_CORE_AIV, {Arg::i64(3), Arg::in(x), Arg::out(y)});",
       "pto::TaskArg a[] = {pto::TaskArg::of_i64(3), pto::TaskArg::of(x), pto::TaskArg::of(y)};\n"
       "g.add_task(0, PTO_CORE_AIV, a);",
       PTO_INVALID_ARGUMENT,
       {"argument 1", "descriptor-ABI kernel", "tensors first"}},
      {"float64_tensor",
       "o.submit_task(0, PTO_CORE_AIV, {Arg::in(d), Arg::out(y)});",
       "pto::TaskArg a[] = {pto::TaskArg::of(d), pto::TaskArg::of(y)};\ng.add_task(0, PTO_CORE_AIV, a);",
       PTO_BAD_TENSOR,
       {"argument 0", "float64"}},
  };
  for (const Case &k : cases) {
    SCOPED_TRACE(k.name);
    const std::string tmr_src = std::string(
                                    "#include \"pto/orchestration.h\"\nusing pto::Arg;\n"
                                    "PTO_DEVICE_ORCHESTRATION(o) {\n  pto::TensorView x = o.tensor(0), y = "
                                    "o.tensor(1), d = o.tensor(2);\n  ") +
                                k.tmr_body + "\n}\n";
    const std::string hbg_src = std::string(
                                    "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n"
                                    "  const pto::Tensor &x = args.tensor(0), &y = args.tensor(1), &d = "
                                    "args.tensor(2);\n  ") +
                                k.hbg_body + "\n}\n";
    pto::ChipCallable c(orch(t ? tmr_src : hbg_src, std::string("bad_") + k.name));
    c.add_kernel(0, PTO_CORE_AIV, kernel(kRowSum, "row_sum"));
    std::vector<float> x(16, 1.0f), y(16);
    std::vector<double> d(16, 1.0);
    pto::ChipStorageTaskArgs args;
    args.add_tensor(x.data(), 64, PTO_DTYPE_F32, {4, 4}, PTO_DIR_INPUT);
    args.add_tensor(y.data(), 64, PTO_DTYPE_F32, {16}, PTO_DIR_OUTPUT);
    args.add_tensor(d.data(), 128, PTO_DTYPE_F64, {16}, PTO_DIR_INPUT);
    pto::ChipCallConfig cfg;
    cfg.aicpu_thread_num = 2;
    pto_test::expect_error([&] { w.run(c, args, cfg); }, k.code, k.fragments);
  }
  // Still usable: a correct task on the same worker.
  const char *good_tmr = R"(
#include "pto/orchestration.h"
using pto::Arg;
PTO_DEVICE_ORCHESTRATION(o) { o.submit_task(0, PTO_CORE_AIV, {Arg::in(o.tensor(0)), Arg::out(o.tensor(1)), Arg::i64(1)}); }
)";
  const char *good_hbg = R"(
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  pto::TaskArg a[] = {pto::TaskArg::of(args.tensor(0)), pto::TaskArg::of(args.tensor(1)), pto::TaskArg::of_i64(1)};
  g.add_task(0, PTO_CORE_AIV, a);
}
)";
  pto::ChipCallable c(orch(t ? good_tmr : good_hbg, "good_after_errors"));
  c.add_kernel(0, PTO_CORE_AIV, kernel(kRowSum, "row_sum"));
  std::vector<float> x(16, 1.0f), y(4, 0.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(x.data(), 64, PTO_DTYPE_F32, {4, 4}, PTO_DIR_INPUT);
  args.add_tensor(y.data(), 16, PTO_DTYPE_F32, {4}, PTO_DIR_OUTPUT);
  pto::ChipCallConfig cfg;
  cfg.aicpu_thread_num = 2;
  w.run(c, args, cfg);
  for (float v : y) EXPECT_FLOAT_EQ(v, 5.0f);
}

TEST_P(DescriptorAbi, ABinaryWithBothEntriesIsRefusedSayingToKeepOne) {
  const char *both = R"(
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) { (void)args; }
PTO_KERNEL(args) { (void)args; }
)";
  std::string path;
  try {
    path = kernel(both, "both_entries");
  } catch (const pto::Error &e) {
    // The compiler may refuse it already; then it says the same.
    EXPECT_NE(std::string(e.what()).find("kernel_entry"), std::string::npos) << e.what();
    return;
  }
  const char *orch_tmr = "#include \"pto/orchestration.h\"\nPTO_DEVICE_ORCHESTRATION(o) { (void)o; }\n";
  const char *orch_hbg =
      "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) { (void)g; (void)args; }\n";
  pto::ChipCallable c(orch(tmr() ? orch_tmr : orch_hbg, "empty_orch"));
  c.add_kernel(0, PTO_CORE_AIV, path);
  pto::ChipStorageTaskArgs args;
  pto_test::expect_error([&] { w.run(c, args, {}); }, PTO_INVALID_ARGUMENT,
                         {"kernel_entry", "keep exactly one"});
}

// A MIX task: each part sees the same descriptors; the AIV parts are lanes 0 and 1.
TEST_P(DescriptorAbi, MixPartsShareDescriptorsAndTheAivPartsAreLanesZeroAndOne) {
  const char *mix_kernel = R"(
#include "tensor.h"
#include "intrinsic.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *d = reinterpret_cast<const ChipTensor *>(args[0]);
  int64_t *out = reinterpret_cast<int64_t *>(d->buffer.addr) + d->start_offset;
  const uint32_t part = pto::mix_part(args);
  out[part * 3 + 0] = get_sub_block_id(args);
  out[part * 3 + 1] = args[1];  // the scalar, after the one tensor
  out[part * 3 + 2] = static_cast<int64_t>(d->start_offset);
}
)";
  const char *orch_src = R"(
#include "pto/orchestration.h"
using pto::Arg;
PTO_DEVICE_ORCHESTRATION(o) {
  pto::TensorView probe = o.tensor(0);
  probe.offset = 2;
  probe.shape[0] = 9;
  o.submit_task(0, PTO_CORE_MIX, {Arg::out(probe), Arg::i64(41)});
}
)";
  pto::ChipCallable c(orch(orch_src, "mix_lanes"));
  c.add_kernel(0, PTO_CORE_MIX, kernel(mix_kernel, "mix_lanes_kernel", PTO_CORE_MIX));
  std::vector<int64_t> probe(11, -1);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(probe.data(), probe.size() * 8, PTO_DTYPE_I64, {11}, PTO_DIR_INOUT);
  pto::ChipCallConfig cfg;
  cfg.block_dim = 1;
  cfg.aicpu_thread_num = 2;
  w.run(c, args, cfg);
  const int64_t want[9] = {0, 41, 2, 0, 41, 2, 1, 41, 2};  // parts 0 (AIC), 1 and 2 (AIV lanes 0, 1)
  for (int i = 0; i < 9; ++i) EXPECT_EQ(probe[2 + i], want[i]) << "slot " << i;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, DescriptorAbi,
                         ::testing::Values("host_build_graph", "tensormap_and_ringbuffer"),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                           return i.param == "host_build_graph" ? std::string("hbg") : std::string("tmr");
                         });

}  // namespace
