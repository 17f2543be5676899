// bench/comm/kernels/pingpong.cpp — a TPUT + TNOTIFY ping-pong between domain ranks 0 and 1.
//
// Arguments (examples/allreduce/orchestration.cpp passes them in order):
//   tensor 0  src   float32[n]  what this rank sends
//   tensor 1  data  float32[n]  the domain buffer "data" (this rank's window; the peer writes it)
//   tensor 2  flag  int32[1]    the domain buffer "flag" (zero when the domain is made)
//   scalar 0  n
//   scalar 1  the CommContext
//   scalar 2  iters: round trips
// Round trip i: rank 0 puts n floats into rank 1's data and adds 1 to its flag; rank 1 waits for
// its flag to reach i, puts n floats back and adds 1 to rank 0's flag, which rank 0 waits for.
#include "../../../examples/allreduce/kernels/comm_ring.h"

PTO_KERNEL(args) {
  float *src = pto::tensor<float>(args, 0);
  float *data = pto::tensor<float>(args, 1);
  int32_t *flag = pto::tensor<int32_t>(args, 2);
  const auto n = static_cast<uint64_t>(args[3]);
  const auto *ctx = reinterpret_cast<const CommContext *>(args[4]);
  const auto iters = static_cast<int32_t>(args[5]);
  const int rank = static_cast<int>(ctx->rankId), peer = 1 - rank;
  pto::comm::Signal mine(flag), theirs(allreduce::at_peer(ctx, flag, peer));
  for (int32_t i = 1; i <= iters; ++i) {
    if (rank == 1) pto::comm::TWAIT(mine, i, pto::comm::WaitCmp::GE);
    allreduce::put(allreduce::at_peer(ctx, data, peer), src, n);
    pto::comm::TNOTIFY(theirs, 1, pto::comm::NotifyOp::AtomicAdd);
    if (rank == 0) pto::comm::TWAIT(mine, i, pto::comm::WaitCmp::GE);
  }
}
