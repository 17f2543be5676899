// tests/common/test_kernels.cpp — sources of the test kernels and orchestrations (see test_kernels.h).
#include "common/test_kernels.h"

#include <cstdlib>

namespace pto_test {

const char *const kMixKernel = R"(
#include "pto/kernel.h"
// args: buf (int64[]), runs (int64[]), self, n_in, in_0 .. in_{n_in-1}
PTO_KERNEL(args) {
  if (pto::is_mix(args) && pto::mix_part(args) != 0) return;  // a MIX task's: part 0 does the work
  int64_t *buf = pto::tensor<int64_t>(args, 0);
  int64_t *runs = pto::tensor<int64_t>(args, 1);
  const int64_t self = args[2], n_in = args[3];
  uint64_t acc = static_cast<uint64_t>(self);  // unsigned: wrap-around is defined
  for (int64_t i = 0; i < n_in; ++i) acc = acc * 31 + static_cast<uint64_t>(buf[args[4 + i]]);
  uint64_t h = acc * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(self) + 1;
  h ^= h >> 29;
  buf[self] = static_cast<int64_t>(h & 0x7fffffffffffull);
  runs[self] += 1;
}
)";

const char *const kSleepKernel = R"(
#include <time.h>
#include "pto/kernel.h"
PTO_KERNEL(args) {
  struct timespec ts = {static_cast<time_t>(args[0] / 1000), static_cast<long>(args[0] % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}
)";

const char *const kFailKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) { pto::fail(args, 7); }
)";

const char *const kAddKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL_SIGNATURE(pto::tensor_arg(PTO_DTYPE_F32, 3), pto::tensor_arg(PTO_DTYPE_F32, 3),
                     pto::tensor_arg(PTO_DTYPE_F32, 3), pto::scalar_arg());
PTO_KERNEL(args) {
  const float *a = pto::tensor<float>(args, 0);
  const float *b = pto::tensor<float>(args, 1);
  float *out = pto::tensor<float>(args, 2);
  for (int64_t i = 0; i < args[3]; ++i) out[i] = a[i] + b[i];
}
)";

// Program tensor (int64): [num_tasks, then per task: core_type, n_in, in_0..in_{n_in-1}].
// Tensors: 0 = program, 1 = buf, 2 = runs. Kernel 0 is the AIC mix kernel, 1 the AIV one.
const char *const kRandomDagOrch = R"(
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  const int64_t *prog = static_cast<const int64_t *>(args.host_data(0));
  const pto::Tensor &buf = args.tensor(1), &runs = args.tensor(2);
  const int64_t n = prog[0];
  int64_t pos = 1;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t core = prog[pos], n_in = prog[pos + 1];
    pto::TaskArg a[16];
    a[0] = pto::TaskArg::of(buf);
    a[1] = pto::TaskArg::of(runs);
    a[2] = pto::TaskArg::of_i64(t);
    a[3] = pto::TaskArg::of_i64(n_in);
    for (int64_t i = 0; i < n_in; ++i) a[4 + i] = pto::TaskArg::of_i64(prog[pos + 2 + i]);
    pto::TaskId id = g.add_task(static_cast<uint32_t>(core), static_cast<pto_core_type>(core), a,
                                static_cast<uint32_t>(4 + n_in));
    for (int64_t i = 0; i < n_in; ++i) g.add_dependency(static_cast<pto::TaskId>(prog[pos + 2 + i]), id);
    pos += 2 + n_in;
  }
}
)";

std::string orch(const std::string &source, const std::string &name) {
  return pto::KernelCompiler("a2a3sim").compile_orchestration_source("host_build_graph", source, name);
}

std::string kernel(const std::string &source, const std::string &name, pto_core_type t) {
  return pto::KernelCompiler("a2a3sim").compile_incore_source(source, name, t);
}

pto::ChipCallable basic_callable(const std::string &platform) {
  const char *env = getenv("PTO_EXAMPLES_DIR");
  const std::string dir = std::string(env ? env : "examples") + "/basic";
  pto::KernelCompiler kc(platform);
  pto::ChipCallable c(kc.compile_orchestration("host_build_graph", dir + "/orchestration.cpp"));
  c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_add.cpp", PTO_CORE_AIV));
  c.add_kernel(1, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_add_scalar.cpp", PTO_CORE_AIV));
  c.add_kernel(2, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_mul.cpp", PTO_CORE_AIV));
  return c;
}

// Descriptor-ABI kernels, plain C++ (no PTO-ISA): enough to check what the API layer hands over.
// 0: out = a + b over n (n from out's shape).
const char *const kDescAdd = R"(
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *a = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *b = reinterpret_cast<const ChipTensor *>(args[1]);
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[2]);
  const float *x = reinterpret_cast<const float *>(a->buffer.addr) + a->start_offset;
  const float *y = reinterpret_cast<const float *>(b->buffer.addr) + b->start_offset;
  float *z = reinterpret_cast<float *>(o->buffer.addr) + o->start_offset;
  for (uint64_t i = 0; i < o->numel(); ++i) z[i] = x[i] + y[i];
}
)";
// 1: out = in + scalar (a float in args[2]), n from args[3].
const char *const kDescAddScalar = R"(
#include <string.h>
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *a = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[1]);
  float s;
  const uint32_t bits = static_cast<uint32_t>(args[2]);
  memcpy(&s, &bits, 4);
  const float *x = reinterpret_cast<const float *>(a->buffer.addr) + a->start_offset;
  float *z = reinterpret_cast<float *>(o->buffer.addr) + o->start_offset;
  for (int64_t i = 0; i < args[3]; ++i) z[i] = x[i] + s;
}
)";
// 2: out = a * b.
const char *const kDescMul = R"(
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *a = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *b = reinterpret_cast<const ChipTensor *>(args[1]);
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[2]);
  const float *x = reinterpret_cast<const float *>(a->buffer.addr) + a->start_offset;
  const float *y = reinterpret_cast<const float *>(b->buffer.addr) + b->start_offset;
  float *z = reinterpret_cast<float *>(o->buffer.addr) + o->start_offset;
  for (uint64_t i = 0; i < o->numel(); ++i) z[i] = x[i] * y[i];
}
)";
// 3: sleeps args[1] ms, then writes args[2] into every int32 element of its tensor (a slow producer).
const char *const kDescBlockLane = R"(
#include "tensor.h"
#include "intrinsic.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[0]);
  float *z = reinterpret_cast<float *>(o->buffer.addr) + o->start_offset;
  const int32_t lane = AIV_LANE ? 1 + get_sub_block_id(args) : 0;
  z[(get_block_idx(args) * 3 + lane) * 16] = static_cast<float>(get_block_idx(args) + 1);
}
)";

const char *const kFillI32 = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  int32_t *dst = pto::tensor<int32_t>(args, 0);
  for (int64_t i = 0; i < args[1]; ++i) dst[i] = static_cast<int32_t>(args[2]);
}
)";

}  // namespace pto_test
