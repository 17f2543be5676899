// examples/allreduce/kernels/allreduce_twophase.cpp — two-phase all-reduce: each rank sums one
// chunk (about n / ranks elements) of every rank's window, then copies the other chunks' sums
// from their owners' windows. Each rank reads ranks chunks and (ranks - 1) sums: 2 (ranks - 1) /
// ranks of the data from its peers, as the ring, but in two steps instead of 2 (ranks - 1).
//
// Window: data = float32[n] (this rank's input, then its chunk's sum); flags = int32[3 ranks]:
// flags[p] counts "rank p's input is in its window", flags[ranks + p] "rank p's chunk sum is in
// its window", flags[2 ranks + p] "rank p has copied every sum" (nobody overwrites its window in
// the next epoch while a peer still reads it).
// Every chunk is summed in rank order, in_0 + in_1 + ..., as the mesh kernel does; every rank
// copies the same bits.
#include "comm_ring.h"

namespace {

constexpr uint64_t kBlock = 2048;  // floats summed at once: 8 KiB per operand, in L1

// out[0, len) and win[0, len) = sum over r of src[r][0, len), in rank order (win may be one of
// the sources: this rank's own window). A block at a time into a buffer that stays in L1, so
// each pass is one read of a source; the restrict pointers let the compiler vectorise it.
void sum_ranks(float *out, float *win, const float *const *src, int ranks, uint64_t len) {
  alignas(64) float block[kBlock];
  for (uint64_t b = 0; b < len; b += kBlock) {
    const uint64_t m = len - b < kBlock ? len - b : kBlock;
    float *__restrict o = block;
    const float *__restrict s0 = src[0] + b;
    const float *__restrict s1 = src[1] + b;
    for (uint64_t i = 0; i < m; ++i) o[i] = s0[i] + s1[i];
    for (int r = 2; r < ranks; ++r) {
      const float *__restrict s = src[r] + b;
      for (uint64_t i = 0; i < m; ++i) o[i] += s[i];
    }
    std::memcpy(out + b, block, m * sizeof(float));
    std::memcpy(win + b, block, m * sizeof(float));
  }
}

}  // namespace

PTO_KERNEL(args) {
  const allreduce::Args a = allreduce::args_of(args);
  const int N = a.ranks;
  auto begin = [&](int k) { return a.n * static_cast<uint64_t>(k) / static_cast<uint64_t>(N); };
  auto barrier = [&](int phase) {  // every rank has passed this point of this epoch
    for (int p = 0; p < N; ++p) {
      if (p != a.rank) allreduce::notify(a, p, phase * N + a.rank);
    }
    for (int p = 0; p < N; ++p) {
      if (p != a.rank) allreduce::wait(a, phase * N + p);
    }
  };
  std::memcpy(a.data, a.in, a.n * sizeof(float));
  barrier(0);
  // Phase 1: this rank's chunk, summed over every rank's window, into out and into its window.
  const uint64_t lo = begin(a.rank), len = begin(a.rank + 1) - lo;
  const float *src[PTO_COMM_MAX_RANKS];
  for (int r = 0; r < N; ++r) src[r] = allreduce::at_peer(a.ctx, a.data, r) + lo;
  if (N == 1) {
    std::memcpy(a.out + lo, src[0], len * sizeof(float));
  } else {
    sum_ranks(a.out + lo, a.data + lo, src, N, len);
  }
  barrier(1);
  // Phase 2: every other chunk's sum, from the window of the rank that made it.
  for (int q = 0; q < N; ++q) {
    if (q == a.rank) continue;
    const uint64_t qlo = begin(q), qlen = begin(q + 1) - qlo;
    std::memcpy(a.out + qlo, allreduce::at_peer(a.ctx, a.data, q) + qlo, qlen * sizeof(float));
  }
  barrier(2);
}
