// examples/allreduce/kernels/allreduce_mesh.cpp — one-phase (mesh) all-reduce: every rank puts its
// input in its window, tells every peer, and sums every rank's window itself.
//
// Window: data = float32[n] (this rank's input); flags = int32[2 * ranks]: flags[p] counts
// "rank p's data is in place", flags[ranks + p] "rank p has read every window" (the second
// barrier: nobody overwrites its data for the next epoch while a peer still reads it).
// out[i] = in_0[i] + in_1[i] + ... in rank order on every rank, so all ranks agree bit for bit.
#include "comm_ring.h"

PTO_KERNEL(args) {
  const allreduce::Args a = allreduce::args_of(args);
  std::memcpy(a.data, a.in, a.n * sizeof(float));
  for (int p = 0; p < a.ranks; ++p) {
    if (p != a.rank) allreduce::notify(a, p, a.rank);
  }
  for (int p = 0; p < a.ranks; ++p) {
    if (p != a.rank) allreduce::wait(a, p);
  }
  const float *first = allreduce::at_peer(a.ctx, a.data, 0);
  for (uint64_t i = 0; i < a.n; ++i) a.out[i] = first[i];
  for (int r = 1; r < a.ranks; ++r) {
    const float *peer = allreduce::at_peer(a.ctx, a.data, r);
    for (uint64_t i = 0; i < a.n; ++i) a.out[i] += peer[i];
  }
  for (int p = 0; p < a.ranks; ++p) {
    if (p != a.rank) allreduce::notify(a, p, a.ranks + a.rank);
  }
  for (int p = 0; p < a.ranks; ++p) {
    if (p != a.rank) allreduce::wait(a, a.ranks + p);
  }
}
