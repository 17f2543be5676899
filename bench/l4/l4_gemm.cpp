// bench/l4/l4_gemm.cpp — L4 distributed arrays: a tiled GEMM on block-cyclic arrays, and memory per rank.
//
// Usage: mpirun -n R [--oversubscribe] l4_gemm_cpp gemm T ts reps
//        mpirun -n R [--oversubscribe] l4_gemm_cpp memory N_MiB
// gemm: C = A x B on T x T grids of ts x ts float tiles, stored tile-major in kBlockCyclic arrays
//   of one tile per tile of the distribution (rank (i*T + j) % R owns tile (i, j)). Each run
//   initialises A, B and C on the owners and submits the T^3 tile updates C(i,j) += A(i,k) B(k,j)
//   with kAnyRank (they run on the owner of C(i,j)); one warm-up run, then `reps` timed runs,
//   each closed by an MPI_Barrier (so its time is that of the slowest rank). C is then fetched
//   to rank 0 and compared with a sequential triple loop when n = T*ts <= 1024. Rank 0 prints
//   {"bench": "gemm", "ranks", "T", "ts", "reps", "wall_ms_median", "wall_ms_min",
//    "wall_ms_max", "max_abs_err" (null when not checked), "peak_rss_mib_max" (max over ranks
//    of VmHWM)}.
// memory: a kBlock array of N MiB; each owner writes its tile, then one ring step in which
//   every rank reads its neighbour's tile. Each rank prints its VmHWM and VmHWM minus its
//   baseline before the alloc (after writing its tile, and after the ring step); rank 0 then a
//   JSON line with the maxima over ranks.
// The tile kernel and the initial values come from gemm_tile.h, shared with starpu_l4.cpp.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gemm_tile.h"
#include "pto/l4.h"

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A field of /proc/self/status in KiB ("VmHWM"), -1 if absent.
long long status_kib(const char *field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string want = std::string(field) + ":";
  while (std::getline(f, line))
    if (line.compare(0, want.size(), want) == 0) return std::stoll(line.substr(want.size()));
  return -1;
}

pto::l4::WorkerOptions options(uint64_t heap_bytes) {
  pto::l4::WorkerOptions o;
  o.num_sub_workers = 2;
  o.heap_bytes = heap_bytes;
  o.peer_timeout_ms = 120000;
  return o;
}

int gemm(int T, int ts, int reps) {
  const uint64_t tile_bytes = static_cast<uint64_t>(ts) * ts * sizeof(float);
  const uint64_t nbytes = tile_bytes * static_cast<uint64_t>(T) * T;
  pto::l4::Worker w(options(std::max<uint64_t>(256ull << 20, 3 * nbytes + (64ull << 20))));
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
  const auto orch = [&](pto::l4::Orchestrator &o) {
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        float *a = tile(A, i, j), *b = tile(B, i, j), *c = tile(C, i, j);
        o.submit_sub([=](pto::SubContext &) { pto_bench_gemm_init(a, 0, i, j, ts); },
                     on({{a, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank, "init A");
        o.submit_sub([=](pto::SubContext &) { pto_bench_gemm_init(b, 1, i, j, ts); },
                     on({{b, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank, "init B");
        o.submit_sub([=](pto::SubContext &) { std::memset(c, 0, tile_bytes); }, on({{c, PTO_DIR_OUTPUT}}),
                     pto::l4::kAnyRank, "zero C");
      }
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        for (int k = 0; k < T; ++k) {
          const float *a = tile(A, i, k), *b = tile(B, k, j);
          float *c = tile(C, i, j);
          o.submit_sub(
              [=](pto::SubContext &) { pto_bench_tile_gemm(a, b, c, ts); },
              on({{tile(A, i, k), PTO_DIR_INPUT}, {tile(B, k, j), PTO_DIR_INPUT}, {c, PTO_DIR_INOUT}}),
              pto::l4::kAnyRank, "gemm");
        }
  };
  w.run(orch);  // warm-up
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_s();
    w.run(orch);
    MPI_Barrier(MPI_COMM_WORLD);
    ms.push_back((now_s() - t0) * 1e3);
  }
  const int n = T * ts;
  double err = -1;
  if (n <= 1024) {
    w.run([&](pto::l4::Orchestrator &o) { o.fetch(C, 0); });
    if (w.rank() == 0) {
      // The sequential reference on whole matrices (the same values, the same i-k-j order).
      std::vector<float> fa(static_cast<size_t>(n) * n), fb(fa.size()), fc(fa.size(), 0.0f);
      std::vector<float> t(static_cast<size_t>(ts) * ts);
      for (int which = 0; which < 2; ++which)
        for (int ti = 0; ti < T; ++ti)
          for (int tj = 0; tj < T; ++tj) {
            pto_bench_gemm_init(t.data(), which, ti, tj, ts);
            for (int i = 0; i < ts; ++i)
              for (int j = 0; j < ts; ++j)
                (which == 0 ? fa : fb)[static_cast<size_t>(ti * ts + i) * n + tj * ts + j] = t[i * ts + j];
          }
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) {
          const float aik = fa[static_cast<size_t>(i) * n + k];
          for (int j = 0; j < n; ++j)
            fc[static_cast<size_t>(i) * n + j] += aik * fb[static_cast<size_t>(k) * n + j];
        }
      err = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const float got = tile(C, i / ts, j / ts)[(i % ts) * ts + j % ts];
          err = std::max(err, static_cast<double>(std::fabs(got - fc[static_cast<size_t>(i) * n + j])));
        }
    }
  }
  long long hwm = status_kib("VmHWM"), hwm_max = 0;
  MPI_Reduce(&hwm, &hwm_max, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (w.rank() == 0) {
    std::sort(ms.begin(), ms.end());
    char err_s[32] = "null";
    if (err >= 0) std::snprintf(err_s, sizeof err_s, "%.3g", err);
    std::printf(
        "{\"bench\": \"gemm\", \"ranks\": %d, \"T\": %d, \"ts\": %d, \"reps\": %d, \"wall_ms_median\": %.2f, "
        "\"wall_ms_min\": %.2f, \"wall_ms_max\": %.2f, \"max_abs_err\": %s, \"peak_rss_mib_max\": %.1f}\n",
        w.size(), T, ts, reps, ms[ms.size() / 2], ms.front(), ms.back(), err_s, hwm_max / 1024.0);
    std::fflush(stdout);
  }
  w.close();
  return err > 1e-3 * n ? 1 : 0;
}

int memory(uint64_t mib) {
  const uint64_t N = mib << 20;
  pto::l4::Worker w(options(N + (256ull << 20)));
  const int R = w.size();
  const uint64_t tile = ((N + R - 1) / R + 4095) / 4096 * 4096;
  std::vector<int64_t *> sums;
  for (int r = 0; r < R; ++r) sums.push_back(static_cast<int64_t *>(w.alloc(8, "sum" + std::to_string(r))));
  MPI_Barrier(MPI_COMM_WORLD);
  const long long base = status_kib("VmHWM");
  auto *A = static_cast<char *>(w.alloc_distributed(N, "A", pto::l4::Distribution::kBlock));
  const auto bytes = [&](int t) { return std::min(tile, N - std::min(N, static_cast<uint64_t>(t) * tile)); };
  w.run([&](pto::l4::Orchestrator &o) {
    for (int t = 0; t < R; ++t) {
      if (bytes(t) == 0) continue;
      char *p = A + static_cast<uint64_t>(t) * tile;
      const uint64_t len = bytes(t);
      pto::ChipStorageTaskArgs a;
      a.add_tensor(p, len, PTO_DTYPE_U8, {static_cast<int64_t>(len)}, PTO_DIR_OUTPUT);
      o.submit_sub([=](pto::SubContext &) { std::memset(p, 1, len); }, a, pto::l4::kAnyRank, "own tile");
    }
  });
  MPI_Barrier(MPI_COMM_WORLD);
  const long long owned = status_kib("VmHWM");
  w.run([&](pto::l4::Orchestrator &o) {
    for (int r = 0; r < R; ++r) {
      const int t = (r + 1) % R;
      if (bytes(t) == 0) continue;
      const char *p = A + static_cast<uint64_t>(t) * tile;
      const uint64_t len = bytes(t);
      int64_t *sum = sums[static_cast<size_t>(r)];
      pto::ChipStorageTaskArgs a;
      a.add_tensor(const_cast<char *>(p), len, PTO_DTYPE_U8, {static_cast<int64_t>(len)}, PTO_DIR_INPUT);
      a.add_tensor(sum, 8, PTO_DTYPE_I64, {1}, PTO_DIR_OUTPUT);
      o.submit_sub(
          [=](pto::SubContext &) {
            int64_t s = 0;
            for (uint64_t i = 0; i < len; i += 4096) s += p[i];
            *sum = s;
          },
          a, r, "ring read");
    }
  });
  MPI_Barrier(MPI_COMM_WORLD);
  const long long ring = status_kib("VmHWM");
  for (int r = 0; r < R; ++r) {  // one line per rank, in rank order
    if (r == w.rank())
      std::printf(
          "rank %d: VmHWM %.1f MiB: baseline %.1f, +%.1f after writing its tile, +%.1f after the ring step\n",
          r, ring / 1024.0, base / 1024.0, (owned - base) / 1024.0, (ring - base) / 1024.0);
    std::fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  long long mine[3] = {ring, owned - base, ring - base}, most[3] = {0, 0, 0};
  MPI_Reduce(mine, most, 3, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (w.rank() == 0) {
    std::printf(
        "{\"bench\": \"memory\", \"ranks\": %d, \"array_mib\": %llu, \"tile_mib\": %.1f, "
        "\"vmhwm_mib_max\": %.1f, \"own_tile_delta_mib_max\": %.1f, \"ring_delta_mib_max\": %.1f}\n",
        R, static_cast<unsigned long long>(mib), tile / 1048576.0, most[0] / 1024.0, most[1] / 1024.0,
        most[2] / 1024.0);
    std::fflush(stdout);
  }
  w.close();
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "gemm" && argc == 5) {
      const int T = std::atoi(argv[2]), ts = std::atoi(argv[3]), reps = std::atoi(argv[4]);
      if (T >= 1 && ts >= 1 && reps >= 1) return gemm(T, ts, reps);
    } else if (mode == "memory" && argc == 3) {
      const long long mib = std::atoll(argv[2]);
      if (mib >= 1) return memory(static_cast<uint64_t>(mib));
    }
  } catch (const pto::Error &e) {
    std::fprintf(stderr, "error %s: %s\n", e.name(), e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s gemm T ts reps | memory N_MiB\n", argv[0]);
  return 2;
}
