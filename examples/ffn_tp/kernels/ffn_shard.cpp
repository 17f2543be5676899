// examples/ffn_tp/kernels/ffn_shard.cpp — one chip's share of a tensor-parallel FFN layer:
// y_part = relu(x @ w1_shard) @ w2_shard, in float32, the sums in index order.
//
// Arguments: tensors x [T, D] (in), w1 [D, S] (in), w2 [S, D] (in), y_part [T, D] (out);
// scalars T, D, S (S: this chip's slice of the hidden width).
#include <cstdint>

#include "pto/kernel.h"

PTO_KERNEL(args) {
  const float *x = pto::tensor<float>(args, 0);
  const float *w1 = pto::tensor<float>(args, 1);
  const float *w2 = pto::tensor<float>(args, 2);
  float *y = pto::tensor<float>(args, 3);
  const int64_t T = args[4], D = args[5], S = args[6];
  for (int64_t t = 0; t < T; ++t) {
    float *yt = y + t * D;
    for (int64_t d = 0; d < D; ++d) yt[d] = 0.0f;
    for (int64_t s = 0; s < S; ++s) {
      float h = 0.0f;
      for (int64_t d = 0; d < D; ++d) h += x[t * D + d] * w1[d * S + s];
      if (h <= 0.0f) continue;  // relu
      const float *w2s = w2 + s * D;
      for (int64_t d = 0; d < D; ++d) yt[d] += h * w2s[d];
    }
  }
}
