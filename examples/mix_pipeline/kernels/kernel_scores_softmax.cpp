// examples/mix_pipeline/kernels/kernel_scores_softmax.cpp — one MIX task: the AIC part computes
// score tiles s = q k^T, the two AIV parts turn each row of them into a softmax row.
//
// args: q (rows x D block of the queries), k (N x D keys), out (rows x N block), rows, N, D.
// The AIC part (part 0) computes TILE_ROWS rows of s at a time and pushes tile t to pipe t % 2;
// AIV part p (1 or 2) pops pipe p - 1, so it gets tiles p - 1, p + 1, ... A pipe holds
// PTO_MIX_PIPE_DEPTH tiles: when the AIV parts fall behind, the AIC part's push suspends it
// until they pop (back-pressure), and an AIV part waiting for the next tile is suspended too.
#include <math.h>

#include "pto/kernel.h"

namespace {
constexpr int64_t kTileRows = 8;
constexpr int64_t kMaxN = 256;  // 8 rows of 256 floats: an 8 KiB tile
}  // namespace

PTO_KERNEL(args) {
  const float *q = pto::tensor<float>(args, 0);
  const float *k = pto::tensor<float>(args, 1);
  float *out = pto::tensor<float>(args, 2);
  const int64_t rows = args[3], n = args[4], d = args[5];
  if (!pto::is_mix(args) || n > kMaxN || rows % kTileRows != 0) {
    pto::fail(args, 1);
    return;
  }
  const int64_t tiles = rows / kTileRows;
  const auto bytes = static_cast<uint32_t>(kTileRows * n * sizeof(float));
  float tile[kTileRows * kMaxN];
  const uint32_t part = pto::mix_part(args);

  if (part == 0) {  // AIC: the matmul
    for (int64_t t = 0; t < tiles; ++t) {
      for (int64_t r = 0; r < kTileRows; ++r) {
        const float *qr = q + (t * kTileRows + r) * d;
        for (int64_t c = 0; c < n; ++c) {
          float acc = 0.0f;
          for (int64_t i = 0; i < d; ++i) acc += qr[i] * k[c * d + i];
          tile[r * n + c] = acc;
        }
      }
      if (!pto::pipe_push(args, static_cast<uint32_t>(t % 2), tile, bytes)) return;  // failed: stop
    }
    return;
  }

  for (int64_t t = part - 1; t < tiles; t += 2) {  // AIV: the softmax of the tiles of this part
    if (!pto::pipe_pop(args, part - 1, tile, bytes)) return;
    for (int64_t r = 0; r < kTileRows; ++r) {
      const float *s = tile + r * n;
      float *o = out + (t * kTileRows + r) * n;
      float m = s[0];
      for (int64_t c = 1; c < n; ++c) m = s[c] > m ? s[c] : m;
      float sum = 0.0f;
      for (int64_t c = 0; c < n; ++c) sum += (o[c] = expf(s[c] - m));
      for (int64_t c = 0; c < n; ++c) o[c] /= sum;
    }
  }
}
