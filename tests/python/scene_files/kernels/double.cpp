// tests/python/scene_files/kernels/double.cpp — y = 2 x (tensors 0 and 1, n = scalar 2).
#include "pto/kernel.h"
PTO_KERNEL(args) {
  const float *x = pto::tensor<float>(args, 0);
  float *y = pto::tensor<float>(args, 1);
  const int64_t n = pto::scalar_i64(args, 2);
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
