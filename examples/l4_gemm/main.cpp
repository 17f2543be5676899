// examples/l4_gemm/main.cpp — many hosts (L4) from C++: C = A x B on tile-major distributed arrays.
//
// Usage: mpirun -n 4 --oversubscribe build/dev/examples/l4_gemm_example_cpp [T=4] [ts=32]
//        (as root add --allow-run-as-root; run alone it is one rank)
// The C++ twin of main.py. A, B and C are T x T grids of ts x ts float tiles, stored tile-major
// (tile (i, j) is the (i*T + j)-th block of ts*ts floats) in arrays of alloc_distributed with
// kBlockCyclic and one tile per tile of the distribution: rank (i*T + j) % R owns tile (i, j),
// and each rank's memory holds only its share. Init tasks write the tiles on their owners
// (kAnyRank places a task that writes a tile there); T^3 tasks C(i,j) += A(i,k) B(k,j), also
// kAnyRank, run on the owner of C(i,j) (owner computes) while the runtime moves the remote A and
// B tiles they read. Rank 0 fetches C (the whole matrix on one rank: for checking, not
// scalable), compares it with a sequential triple loop and prints the SUCCESS line.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pto/l4.h"

namespace {

// The value at (i, j) of tile (ti, tj) of A (which = 0) or B (which = 1), as main.py's init_tile.
float init_value(int which, int ti, int tj, int i, int j, int ts) {
  const int gi = ti * ts + i, gj = tj * ts + j;
  return static_cast<float>((gi * 7 + gj * 3) % 11) / 11.0f - 0.5f + static_cast<float>(which) * 0.25f;
}

// c += a * b, ts x ts row-major.
void tile_gemm(const float *a, const float *b, float *c, int ts) {
  for (int i = 0; i < ts; ++i)
    for (int k = 0; k < ts; ++k) {
      const float aik = a[i * ts + k];
      for (int j = 0; j < ts; ++j) c[i * ts + j] += aik * b[k * ts + j];
    }
}

}  // namespace

int main(int argc, char **argv) {
  const int T = argc > 1 ? std::atoi(argv[1]) : 4;
  const int ts = argc > 2 ? std::atoi(argv[2]) : 32;
  if (T < 1 || ts < 1) {
    std::fprintf(stderr, "usage: %s [T >= 1] [ts >= 1]\n", argv[0]);
    return 2;
  }
  try {
    pto::l4::WorkerOptions o;
    o.num_sub_workers = 2;
    o.peer_timeout_ms = 60000;
    pto::l4::Worker w(o);  // collective
    const int n = T * ts;
    if (w.rank() == 0)
      std::printf("=== l4_gemm (C++): %d rank(s), %d x %d tiles of %d x %d ===\n", w.size(), T, T, ts, ts);
    const uint64_t tile_bytes = static_cast<uint64_t>(ts) * ts * sizeof(float);
    const uint64_t nbytes = tile_bytes * static_cast<uint64_t>(T) * T;
    using pto::l4::Distribution;
    auto *A = static_cast<float *>(w.alloc_distributed(nbytes, "A", Distribution::kBlockCyclic, tile_bytes));
    auto *B = static_cast<float *>(w.alloc_distributed(nbytes, "B", Distribution::kBlockCyclic, tile_bytes));
    auto *C = static_cast<float *>(w.alloc_distributed(nbytes, "C", Distribution::kBlockCyclic, tile_bytes));
    const auto tile = [&](float *m, int i, int j) { return m + static_cast<size_t>(i * T + j) * ts * ts; };
    const auto on = [&](std::initializer_list<std::pair<float *, pto_direction>> ts_) {
      pto::ChipStorageTaskArgs a;
      for (const auto &[p, d] : ts_) a.add_tensor(p, tile_bytes, PTO_DTYPE_F32, {ts * ts}, d);
      return a;
    };

    w.run(
        [&](pto::l4::Orchestrator &orch) {
          for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j) {
              for (int which = 0; which < 3; ++which) {
                float *t = tile(which == 0 ? A : which == 1 ? B : C, i, j);
                orch.submit_sub(
                    [=](pto::SubContext &) {
                      for (int r = 0; r < ts; ++r)
                        for (int s = 0; s < ts; ++s)
                          t[r * ts + s] = which == 2 ? 0.0f : init_value(which, i, j, r, s, ts);
                    },
                    on({{t, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank, "init");
              }
            }
          for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
              for (int k = 0; k < T; ++k) {
                const float *a = tile(A, i, k), *b = tile(B, k, j);
                float *c = tile(C, i, j);
                orch.submit_sub(
                    [=](pto::SubContext &) { tile_gemm(a, b, c, ts); },
                    on({{tile(A, i, k), PTO_DIR_INPUT}, {tile(B, k, j), PTO_DIR_INPUT}, {c, PTO_DIR_INOUT}}),
                    pto::l4::kAnyRank, "C(" + std::to_string(i) + "," + std::to_string(j) + ") += A B");
              }
          orch.fetch(C, 0);  // every tile of C lands on rank 0 (pinned): to check it
        },
        600000);
    if (w.rank() != 0) return 0;  // only rank 0 prints: mpirun may interleave the ranks' lines
    const pto::l4::TransferCounts counts = w.transfers();
    std::printf("rank 0 ran %llu tasks and received %llu tiles (%llu evicted)\n",
                static_cast<unsigned long long>(counts.tasks), static_cast<unsigned long long>(counts.recvs),
                static_cast<unsigned long long>(counts.evictions));
    // The sequential reference on whole matrices, in double.
    auto full = [&](int which, int r, int s) {
      return init_value(which, r / ts, s / ts, r % ts, s % ts, ts);
    };
    double err = 0;
    for (int r = 0; r < n; ++r)
      for (int s = 0; s < n; ++s) {
        double want = 0;
        for (int k = 0; k < n; ++k) want += static_cast<double>(full(0, r, k)) * full(1, k, s);
        const float got = tile(C, r / ts, s / ts)[(r % ts) * ts + s % ts];
        err = std::fmax(err, std::fabs(got - want));
      }
    if (err > 1e-3 * n) {
      std::printf("FAILED: C differs from the sequential triple loop by up to %g\n", err);
      return 1;
    }
    std::printf(
        "SUCCESS: C = A x B (%d x %d, %dx%d tiles) on %d rank(s) matches the sequential triple loop "
        "(max abs error %.2e)\n",
        n, n, T, T, w.size(), err);
  } catch (const pto::Error &e) {
    std::fprintf(stderr, "error %s: %s\nhint: %s\n", e.name(), e.what(), e.hint());
    return 1;
  }
  return 0;
}
