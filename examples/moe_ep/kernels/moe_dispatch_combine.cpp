// examples/moe_ep/kernels/moe_dispatch_combine.cpp — expert parallelism, one expert per rank:
// each rank sends each of its tokens to the rank of the expert its router chose (dispatch),
// every rank applies its expert to what it received, and sends each result back to where the
// token came from (combine).
//
// Arguments: tensors x [T, D] float32 (in), route [T] int32 (in: the expert of each token),
// out [T, D] float32 (out), then the domain buffers recv float32 [ranks * T * D], ids int32
// [ranks * T], counts int32 [ranks], back float32 [T * D], flags int32 [2]; scalars T, D and
// the CommContext. The expert of rank e: y = x * (e + 1) + e / 2.
//
// A sender owns its slot in every receiver's window (slot src of recv, ids and counts), so no
// two ranks write the same bytes; flags[0] counts senders done with this rank's slots, flags[1]
// experts done with this rank's tokens: both reach `ranks` (every rank, itself included).
#include <cstdint>
#include <cstring>

#include <pto/pto-inst.hpp>

#include "platform_comm/comm_context.h"
#include "pto/comm/comm_types.hpp"
#include "pto/comm/pto_comm_inst.hpp"
#include "pto/kernel.h"

namespace {

template <class T>
T *at_peer(const CommContext *ctx, T *local, int peer) {
  const uint64_t offset = reinterpret_cast<uint64_t>(local) - ctx->windowsIn[ctx->rankId];
  return reinterpret_cast<T *>(ctx->windowsIn[peer] + offset);
}

void notify(const CommContext *ctx, int32_t *flag, int peer) {
  pto::comm::Signal s(at_peer(ctx, flag, peer));
  pto::comm::TNOTIFY(s, 1, pto::comm::NotifyOp::AtomicAdd);
}

void wait_all(int32_t *flag, int ranks) {
  pto::comm::Signal s(flag);
  pto::comm::TWAIT(s, ranks, pto::comm::WaitCmp::GE);
}

}  // namespace

PTO_KERNEL(args) {
  const float *x = pto::tensor<float>(args, 0);
  const int32_t *route = pto::tensor<int32_t>(args, 1);
  float *out = pto::tensor<float>(args, 2);
  float *recv = pto::tensor<float>(args, 3);
  int32_t *ids = pto::tensor<int32_t>(args, 4);
  int32_t *counts = pto::tensor<int32_t>(args, 5);
  float *back = pto::tensor<float>(args, 6);
  int32_t *flags = pto::tensor<int32_t>(args, 7);
  const int64_t T = args[8], D = args[9];
  const auto *ctx = reinterpret_cast<const CommContext *>(args[10]);
  const int me = static_cast<int>(ctx->rankId), ranks = static_cast<int>(ctx->rankNum);
  const uint64_t row = static_cast<uint64_t>(D) * sizeof(float);

  // Dispatch: my tokens for expert p go into slot `me` of rank p's recv, ids and counts.
  for (int p = 0; p < ranks; ++p) {
    float *dst = at_peer(ctx, recv + static_cast<int64_t>(me) * T * D, p);
    int32_t *dst_ids = at_peer(ctx, ids + static_cast<int64_t>(me) * T, p);
    int32_t n = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (route[t] != p) continue;
      std::memcpy(dst + n * D, x + t * D, row);
      dst_ids[n++] = static_cast<int32_t>(t);
    }
    *at_peer(ctx, counts + me, p) = n;
    notify(ctx, flags + 0, p);
  }
  wait_all(flags + 0, ranks);

  // Expert `me` on every received token; each result goes back to its source rank's `back`,
  // at the row of the token's own index there.
  const float scale = static_cast<float>(me + 1), bias = static_cast<float>(me) * 0.5f;
  for (int src = 0; src < ranks; ++src) {
    const float *in = recv + static_cast<int64_t>(src) * T * D;
    const int32_t *in_ids = ids + static_cast<int64_t>(src) * T;
    float *dst = at_peer(ctx, back, src);
    for (int32_t i = 0; i < counts[src]; ++i) {
      float *y = dst + static_cast<int64_t>(in_ids[i]) * D;
      for (int64_t d = 0; d < D; ++d) y[d] = in[i * D + d] * scale + bias;
    }
    notify(ctx, flags + 1, src);
  }
  wait_all(flags + 1, ranks);
  std::memcpy(out, back, static_cast<uint64_t>(T) * row);
}
