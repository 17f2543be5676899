// tests/python/scene_files/kernels/slow_bump.cpp — bump.cpp after sleeping 2 s: a chip run that
// takes longer than a short --run-timeout.
#include <time.h>

#include "pto/kernel.h"
PTO_KERNEL(args) {
  const struct timespec two_s = {2, 0};
  nanosleep(&two_s, nullptr);
  float *x = pto::tensor<float>(args, 0);
  const int64_t n = pto::scalar_i64(args, 1);
  for (int64_t i = 0; i < n; ++i) x[i] += 1.0f;
}
