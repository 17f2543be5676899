// examples/mix_pipeline/orchestration.cpp — softmax(q k^T) by row blocks, one MIX task per block.
//
// Runs on the device (tensormap_and_ringbuffer). Tensors: q (M x D), k (N x D), out (M x N);
// scalar 0: rows per block. Each task gets its block of q and out and all of k; inside it the
// cluster's AIC core and two AIV cores pass score tiles through MIX pipes (the kernel).
#include "pto/orchestration.h"

PTO_DEVICE_ORCHESTRATION(orch) {
  if (orch.num_tensors() != 3 || orch.num_scalars() != 1) {
    orch.fail("mix_pipeline expects 3 tensors (q, k, out) and 1 scalar (rows per block)");
    return;
  }
  using pto::Arg;
  const pto::TensorView q = orch.tensor(0), k = orch.tensor(1), out = orch.tensor(2);
  const int64_t m = q.shape[0], d = q.shape[1], n = k.shape[0], block = orch.scalar(0);
  for (int64_t r = 0; r < m; r += block) {
    orch.submit_task(0, PTO_CORE_MIX,
                     {Arg::in(q.tile(r, 0, block, d)), Arg::in(k), Arg::out(out.tile(r, 0, block, n)),
                      Arg::i64(block), Arg::i64(n), Arg::i64(d)});
  }
}
