// examples/glue/kernels.cpp — three AIV kernels linked into one binary, dispatched by kernel id.
//
// Every kernel takes (in0, [in1,] out, n) over float32 tiles of n elements.
#include "kernels.h"

void vadd(__gm__ int64_t *args) {  // out = a + b
  const float *a = pto::tensor<float>(args, 0), *b = pto::tensor<float>(args, 1);
  float *out = pto::tensor<float>(args, 2);
  const int64_t n = pto::scalar_i64(args, 3);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void vscale(__gm__ int64_t *args) {  // out = a * s
  const float *a = pto::tensor<float>(args, 0);
  const float s = pto::scalar_f32(args, 1);
  float *out = pto::tensor<float>(args, 2);
  const int64_t n = pto::scalar_i64(args, 3);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * s;
}

void vmul(__gm__ int64_t *args) {  // out = a * b
  const float *a = pto::tensor<float>(args, 0), *b = pto::tensor<float>(args, 1);
  float *out = pto::tensor<float>(args, 2);
  const int64_t n = pto::scalar_i64(args, 3);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

PTO_KERNEL_PROGRAM(KERNEL_LIST);
