// tests/common/test_kernels.h — kernels and orchestrations the C++ tests compile, plus run helpers.
#ifndef PTO_TESTS_TEST_KERNELS_H
#define PTO_TESTS_TEST_KERNELS_H

#include <string>

#include "pto/chip_worker.h"
#include "pto/kernel_compiler.h"

namespace pto_test {

// Kernel sources (compiled with KernelCompiler::compile_incore_source).
extern const char *const kMixKernel;      // buf[self] = hash(self, buf[in...]); runs[self] += 1 (MIX: part 0)
extern const char *const kSleepKernel;    // sleeps args[0] ms
extern const char *const kFailKernel;     // calls pto::fail(args, 7)
extern const char *const kAddKernel;      // the basic example's add (declares a signature)
extern const char *const kRandomDagOrch;  // builds the graph described by an int64 "program" tensor
// Descriptor-ABI kernels in plain C++ (float32, ChipTensor arguments), for the reference API's tests:
extern const char *const kDescAdd;        // out = a + b (args: a, b, out)
extern const char *const kDescAddScalar;  // out = in + s (args: in, out, float bits s, n)
extern const char *const kDescMul;        // out = a * b (args: a, b, out)
// Descriptor ABI, compiled with -DAIV_LANE=0 (AIC) or 1 (AIV): x[(block_idx * 3 + lane) * 16] =
// block_idx + 1, lane 0 on AIC, 1 + the sub-block on AIV (args: x).
extern const char *const kDescBlockLane;
extern const char *const kFillI32;  // dst[0..n) = value (args: dst, n, value; int32)

// The basic example's callable (kernels 0, 1, 2 from examples/basic), compiled once per process.
pto::ChipCallable basic_callable(const std::string &platform = "a2a3sim");
// Compiles an orchestration from source text, kernel sources by func_id (all AIV unless given).
std::string orch(const std::string &source, const std::string &name);
std::string kernel(const std::string &source, const std::string &name, pto_core_type t = PTO_CORE_AIV);

// The hash the mix kernel computes, for the sequential reference.
inline int64_t mix_hash(int64_t self, uint64_t acc) {
  uint64_t h = acc * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(self) + 1;
  h ^= h >> 29;
  return static_cast<int64_t>(h & 0x7fffffffffffull);
}

}  // namespace pto_test
#endif  // PTO_TESTS_TEST_KERNELS_H
