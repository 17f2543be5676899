// tests/cpp/l3_util.h — kernels, callables and worker options shared by the L3 tests.
#ifndef PTO_TESTS_L3_UTIL_H
#define PTO_TESTS_L3_UTIL_H

#include <string>
#include <vector>

#include "common/test_kernels.h"
#include "pto/worker.h"

namespace l3_test {

// One task running kernel 0 with every tensor of the run, then every scalar.
inline const char *const kOneTaskOrch = R"(
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  pto::TaskArg a[16];
  uint32_t n = 0;
  for (uint32_t i = 0; i < args.num_tensors() && n < 16; ++i) a[n++] = pto::TaskArg::of(args.tensor(i));
  for (uint32_t i = 0; i < args.num_scalars() && n < 16; ++i) a[n++] = pto::TaskArg::of_i64(args.scalar(i));
  g.add_task(0, PTO_CORE_AIV, a, n);
}
)";

// out[i] = in[i] + add   (tensors in, out: int64; scalars n, add)
inline const char *const kAddI64Kernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const int64_t *in = pto::tensor<int64_t>(args, 0);
  int64_t *out = pto::tensor<int64_t>(args, 1);
  for (int64_t i = 0; i < args[2]; ++i) out[i] = in[i] + args[3];
}
)";

// sleeps ms, then out[i] = in[i]   (tensors in, out: int64; scalars n, ms)
inline const char *const kSlowCopyKernel = R"(
#include <time.h>
#include "pto/kernel.h"
PTO_KERNEL(args) {
  struct timespec ts = {static_cast<time_t>(args[3] / 1000), static_cast<long>(args[3] % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
  const int64_t *in = pto::tensor<int64_t>(args, 0);
  int64_t *out = pto::tensor<int64_t>(args, 1);
  for (int64_t i = 0; i < args[2]; ++i) out[i] = in[i];
}
)";

// Writes through a null pointer: the chip process dies with SIGSEGV.
inline const char *const kSegvKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  volatile int64_t *p = reinterpret_cast<volatile int64_t *>(args[0] * 0);
  *p = 1;
}
)";

inline pto::ChipCallable callable(const char *kernel_source, const std::string &name) {
  pto::ChipCallable c(pto_test::orch(kOneTaskOrch, "l3_one_task_orch"));
  c.add_kernel(0, PTO_CORE_AIV, pto_test::kernel(kernel_source, name));
  return c;
}

inline pto::WorkerOptions options(pto::ChipMode mode, int chips, int subs) {
  pto::WorkerOptions o;
  o.device_ids.clear();
  for (int i = 0; i < chips; ++i) o.device_ids.push_back(i);
  o.num_sub_workers = subs;
  o.mode = mode;
  o.heap_bytes = 64ull << 20;
  return o;
}

inline const char *mode_name(pto::ChipMode m) {
  return m == pto::ChipMode::kThread ? "thread" : "process";
}

// int64 tensors: in (INPUT), out (OUTPUT), scalars...
inline pto::ChipStorageTaskArgs io_args(int64_t *in, int64_t *out, int64_t n, std::vector<int64_t> scalars) {
  pto::ChipStorageTaskArgs a;
  a.add_tensor(in, static_cast<uint64_t>(n) * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
  a.add_tensor(out, static_cast<uint64_t>(n) * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
  for (int64_t s : scalars) a.add_scalar(s);
  return a;
}

inline bool contains(const std::string &s, const std::string &what) {
  return s.find(what) != std::string::npos;
}

}  // namespace l3_test
#endif  // PTO_TESTS_L3_UTIL_H
