// tests/python/scene_files/kernels/bump.cpp — x[i] += 1 in place (tensor 0, n = scalar 1).
#include "pto/kernel.h"
PTO_KERNEL(args) {
  float *x = pto::tensor<float>(args, 0);
  const int64_t n = pto::scalar_i64(args, 1);
  for (int64_t i = 0; i < n; ++i) x[i] += 1.0f;
}
