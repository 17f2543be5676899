// examples/allreduce/kernels/allreduce_ring.cpp — ring all-reduce: a reduce-scatter, then an
// all-gather, each ranks - 1 steps in which every rank sends one chunk (n / ranks elements) to
// its right neighbour. Each rank moves 2 (ranks - 1) / ranks of the data instead of the mesh's
// ranks - 1 times all of it.
//
// Window: data = float32[2 (ranks - 1) chunk] (one receive slot per step, so no step overwrites
// a slot its reader may still read); flags = int32[2 (ranks - 1) + 1]: flags[s] counts "the
// left neighbour filled slot s", the last one "the right neighbour is done with my slots" (the
// barrier before the next epoch reuses them).
// Every access to a peer is TPUT or TNOTIFY, so the kernel also runs when the ring spans hosts
// (an L4 domain, examples/l4_allreduce); it reads only its own window.
// Chunk k is summed in the order in_k + in_(k+1) + ... (ranks mod), on the rank that ends with it,
// and copied unchanged from there: every rank ends with the same bits.
#include "comm_ring.h"

PTO_KERNEL(args) {
  const allreduce::Args a = allreduce::args_of(args);
  const int N = a.ranks;
  const int right = (a.rank + 1) % N, left = (a.rank + N - 1) % N;
  const uint64_t chunk = a.n / static_cast<uint64_t>(N);
  auto part = [&](float *base, int k) { return base + static_cast<uint64_t>(k) * chunk; };
  auto slot = [&](int s) { return a.data + static_cast<uint64_t>(s) * chunk; };
  std::memcpy(a.out, a.in, a.n * sizeof(float));
  // Reduce-scatter: at step s, send the partial sum of chunk (rank - s) to the right; receive
  // chunk (rank - s - 1) from the left and add this rank's input to it.
  for (int s = 0; s < N - 1; ++s) {
    const int send = (a.rank - s + N) % N, recv = (a.rank - s - 1 + 2 * N) % N;
    allreduce::put(allreduce::at_peer(a.ctx, slot(s), right), part(a.out, send), chunk);
    allreduce::notify(a, right, s);
    allreduce::wait(a, s);
    float *mine = part(a.out, recv);
    const float *got = slot(s);
    for (uint64_t i = 0; i < chunk; ++i) mine[i] = got[i] + mine[i];
  }
  // All-gather: this rank holds the sum of chunk (rank + 1); pass the sums around the ring.
  for (int s = 0; s < N - 1; ++s) {
    const int step = N - 1 + s;
    const int send = (a.rank + 1 - s + N) % N, recv = (a.rank - s + N) % N;
    allreduce::put(allreduce::at_peer(a.ctx, slot(step), right), part(a.out, send), chunk);
    allreduce::notify(a, right, step);
    allreduce::wait(a, step);
    std::memcpy(part(a.out, recv), slot(step), chunk * sizeof(float));
  }
  // Done reading the slots the left neighbour fills: it may fill them in the next epoch.
  allreduce::notify(a, left, 2 * (N - 1));
  allreduce::wait(a, 2 * (N - 1));
}
