// bench/l4/starpu_l4.cpp — the StarPU-MPI peer of l4_overhead_cpp: the same workloads on the same
// ranks with the same tasks, so both runtimes can be measured in one session (compare.py).
//
// Usage: mpirun -n R --oversubscribe l4_starpu [tasks=200] [reps=5]
//        mpirun -n R --oversubscribe l4_starpu gemm [T=8] [ts=128] [reps=3]
//
// Workloads (as l4_overhead.cpp defines them; every array one int64, a StarPU variable handle
// registered with starpu_mpi_data_register, memory on its owner only):
//   chain_cross  a[0..n]; task i runs on rank i % R (STARPU_EXECUTE_ON_NODE), reads a[i] and
//                writes a[i+1] = a[i] + 1; a[i+1] is owned by the rank of the task writing it,
//                so every edge crosses ranks and nothing is sent back to an owner
//   chain_local  the same chain with every task (and array) on rank 0
//   ring         ring[0..R-1], ring[r] owned by rank r; rounds = max(1, n / R); in round k, for
//                r in 0..R-1, a task on rank r reads ring[(r-1+R)%R] and updates ring[r]
//                (STARPU_RW) = src + 1: R edges in flight
//   gemm         C = A x B, n = T*ts, T x T tiles per matrix, each tile a handle owned by rank
//                (i*T + j) % R; every rep initialises A and B (gemm_tile.h) and zeroes C by tasks
//                on the owners, waits, then times the T^3 tasks C(i,j) += A(i,k) B(k,j) on
//                C(i,j)'s owner, k = 0..T-1 in order (StarPU-MPI moves and caches A and B tiles)
// Each workload runs one warm-up and then `reps` timed reps. A rep of chain/ring registers fresh
// handles (values 0), then: starpu_mpi_barrier, clock, submit every task (all ranks submit the
// same sequence, StarPU-MPI's sequential task flow), starpu_mpi_wait_for_all (tasks, then
// pending requests, then MPI_Barrier), clock; so the time is that of the slowest rank, as
// l4_overhead_cpp's run + MPI_Barrier. Then the answer is fetched to rank 0
// (starpu_mpi_get_data_on_node) and checked, and the handles are unregistered (untimed).
// Rank 0 prints one JSON object per workload, the fields of l4_overhead_cpp (gemm: its own).
// A wrong answer prints "error WRONG_RESULT: ..." and aborts every rank.
//
// Environment: STARPU_NCPU = CPU workers per rank (default 2 here when unset, as our Worker's 2
// SUB workers; given, StarPU then reserves no core for its MPI thread), STARPU_SILENT (default 1),
// STARPU_COMM_STATS (default 1: StarPU counts the bytes each rank sends, which gives
// transfers_per_task as bytes / 8; it prints its totals on stderr at shutdown; 0 prints null).
// Other STARPU_* variables (STARPU_SCHED, ...) apply as usual. Debian's StarPU 1.3 is built with
// non-blocking drivers (STARPU_NON_BLOCKING_DRIVERS in starpu_config.h): an idle CPU worker spins
// and never sleeps, and the MPI thread polls while any request is pending, so ranks that share
// cores (mpirun --oversubscribe) take CPU time from each other even when idle.
//
// MPI is initialised here with MPI_THREAD_MULTIPLE (as pto::l4::Worker does), before StarPU-MPI
// (initialize_mpi = 0), so this thread may sum the byte counts with MPI_Allreduce on its own
// duplicate of MPI_COMM_WORLD while StarPU's MPI thread owns the rest.
#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gemm_tile.h"

namespace {

int g_rank = 0, g_size = 1;
MPI_Comm g_own = MPI_COMM_NULL;   // this thread's collectives
starpu_mpi_tag_t g_next_tag = 1;  // every registered handle gets a new tag
bool g_stats = false;             // STARPU_COMM_STATS is on

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] __attribute__((format(printf, 2, 3))) void fail(const char *kind, const char *fmt, ...) {
  std::fprintf(stderr, "error %s: rank %d: ", kind, g_rank);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// ---- codelets ---------------------------------------------------------------------------------

// chain: buffers[0] = a[i] (R), buffers[1] = a[i+1] (W). ring: ring[r-1] (R), ring[r] (RW).
void plus_one(void *buffers[], void *) {
  const auto *src = reinterpret_cast<const int64_t *>(STARPU_VARIABLE_GET_PTR(buffers[0]));
  auto *dst = reinterpret_cast<int64_t *>(STARPU_VARIABLE_GET_PTR(buffers[1]));
  *dst = *src + 1;
}

void check_tile(void *iface, uint32_t ts) {
  if (STARPU_MATRIX_GET_NX(iface) != ts || STARPU_MATRIX_GET_NY(iface) != ts ||
      STARPU_MATRIX_GET_LD(iface) != ts)
    fail("LAYOUT", "a tile copy is not a contiguous %u x %u block", ts, ts);
}

// buffers: A(i,k) (R), B(k,j) (R), C(i,j) (RW).
void gemm_body(void *buffers[], void *) {
  const uint32_t ts = STARPU_MATRIX_GET_NX(buffers[2]);
  for (int b = 0; b < 3; ++b) check_tile(buffers[b], ts);
  pto_bench_tile_gemm(reinterpret_cast<const float *>(STARPU_MATRIX_GET_PTR(buffers[0])),
                      reinterpret_cast<const float *>(STARPU_MATRIX_GET_PTR(buffers[1])),
                      reinterpret_cast<float *>(STARPU_MATRIX_GET_PTR(buffers[2])), static_cast<int>(ts));
}

// buffers[0] = a tile of A or B (W); arguments: which (0 = A, 1 = B), ti, tj.
void init_body(void *buffers[], void *cl_arg) {
  int which = 0, ti = 0, tj = 0;
  starpu_codelet_unpack_args(cl_arg, &which, &ti, &tj);
  const uint32_t ts = STARPU_MATRIX_GET_NX(buffers[0]);
  check_tile(buffers[0], ts);
  pto_bench_gemm_init(reinterpret_cast<float *>(STARPU_MATRIX_GET_PTR(buffers[0])), which, ti, tj,
                      static_cast<int>(ts));
}

// buffers[0] = a tile of C (W).
void zero_body(void *buffers[], void *) {
  const uint32_t ts = STARPU_MATRIX_GET_NX(buffers[0]);
  check_tile(buffers[0], ts);
  std::memset(reinterpret_cast<void *>(STARPU_MATRIX_GET_PTR(buffers[0])), 0, sizeof(float) * ts * ts);
}

starpu_codelet make_codelet(starpu_cpu_func_t f, const char *name, std::vector<starpu_data_access_mode> modes,
                            starpu_perfmodel *model) {
  starpu_codelet c;
  starpu_codelet_init(&c);
  c.where = STARPU_CPU;
  c.cpu_funcs[0] = f;
  c.nbuffers = static_cast<int>(modes.size());
  for (size_t b = 0; b < modes.size(); ++b) c.modes[b] = modes[b];
  c.name = name;
  c.model = model;
  return c;
}

starpu_codelet g_chain_cl, g_ring_cl, g_gemm_cl, g_init_cl, g_zero_cl;

void make_codelets() {
  // The no-op bodies say so (starpu_perfmodel_nop), as StarPU's own MPI tests do.
  g_chain_cl = make_codelet(plus_one, "chain", {STARPU_R, STARPU_W}, &starpu_perfmodel_nop);
  g_ring_cl = make_codelet(plus_one, "ring", {STARPU_R, STARPU_RW}, &starpu_perfmodel_nop);
  g_gemm_cl = make_codelet(gemm_body, "gemm_tile", {STARPU_R, STARPU_R, STARPU_RW}, nullptr);
  g_init_cl = make_codelet(init_body, "gemm_init", {STARPU_W}, nullptr);
  g_zero_cl = make_codelet(zero_body, "gemm_zero", {STARPU_W}, nullptr);
}

// ---- helpers ----------------------------------------------------------------------------------

// A variable handle owned by `owner`: its memory is `home` there, none elsewhere (StarPU
// allocates a copy on a rank when a task there needs one).
starpu_data_handle_t register_var(int64_t *home, int owner) {
  starpu_data_handle_t h = nullptr;
  if (owner == g_rank)
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(home), sizeof(int64_t));
  else
    starpu_variable_data_register(&h, -1, 0, sizeof(int64_t));
  starpu_mpi_data_register(h, g_next_tag++, owner);
  return h;
}

// The value of an int64 handle, on rank 0 (every rank calls this: the owner sends it).
int64_t fetch_on_0(starpu_data_handle_t h) {
  starpu_mpi_get_data_on_node(MPI_COMM_WORLD, h, 0);
  int64_t v = 0;
  if (g_rank == 0) {
    starpu_data_acquire(h, STARPU_R);
    v = *static_cast<const int64_t *>(starpu_data_get_local_ptr(h));
    starpu_data_release(h);
  }
  return v;
}

void unregister_all(std::vector<starpu_data_handle_t> &hs) {
  for (starpu_data_handle_t h : hs) starpu_data_unregister(h);
  hs.clear();
}

// Bytes this rank's StarPU-MPI has sent so far (0 without STARPU_COMM_STATS).
unsigned long long bytes_sent() {
  if (!g_stats) return 0;
  std::vector<size_t> to(static_cast<size_t>(g_size), 0);
  starpu_mpi_comm_amounts_retrieve(to.data());
  unsigned long long sum = 0;
  for (size_t b : to) sum += b;
  return sum;
}

void insert(int ret) {
  if (ret != 0) fail("STARPU", "starpu_mpi_task_insert returned %d", ret);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---- chain and ring ---------------------------------------------------------------------------

struct Timing {
  std::vector<double> us;        // per timed rep: µs per task
  unsigned long long bytes = 0;  // summed over all reps (warm-up included), this rank
};

// One rep of a chain: fresh handles, timed submission and wait, check of a[n] on rank 0.
void chain_rep(const char *name, int n, bool cross, bool timed, Timing &t) {
  auto on_rank = [&](int i) { return cross ? i % g_size : 0; };
  std::vector<int64_t> mem(static_cast<size_t>(n) + 1, 0);
  std::vector<starpu_data_handle_t> a;
  a.push_back(register_var(&mem[0], on_rank(0)));
  for (int i = 0; i < n; ++i) a.push_back(register_var(&mem[static_cast<size_t>(i) + 1], on_rank(i)));

  starpu_mpi_barrier(MPI_COMM_WORLD);
  const unsigned long long b0 = bytes_sent();
  const double t0 = now_s();
  for (int i = 0; i < n; ++i)
    insert(starpu_mpi_task_insert(MPI_COMM_WORLD, &g_chain_cl, STARPU_R, a[static_cast<size_t>(i)], STARPU_W,
                                  a[static_cast<size_t>(i) + 1], STARPU_EXECUTE_ON_NODE, on_rank(i), 0));
  starpu_mpi_wait_for_all(MPI_COMM_WORLD);
  const double t1 = now_s();
  t.bytes += bytes_sent() - b0;
  if (timed) t.us.push_back((t1 - t0) / n * 1e6);

  const int64_t last = fetch_on_0(a[static_cast<size_t>(n)]);
  if (g_rank == 0 && last != n)
    fail("WRONG_RESULT", "%s: a[%d] = %lld, expected %d", name, n, static_cast<long long>(last), n);
  unregister_all(a);
}

void ring_rep(int rounds, bool timed, Timing &t) {
  const int R = g_size;
  std::vector<int64_t> mem(static_cast<size_t>(R), 0);
  std::vector<starpu_data_handle_t> ring;
  for (int r = 0; r < R; ++r) ring.push_back(register_var(&mem[static_cast<size_t>(r)], r));

  starpu_mpi_barrier(MPI_COMM_WORLD);
  const unsigned long long b0 = bytes_sent();
  const double t0 = now_s();
  for (int k = 0; k < rounds; ++k)
    for (int r = 0; r < R; ++r)
      insert(starpu_mpi_task_insert(MPI_COMM_WORLD, &g_ring_cl, STARPU_R,
                                    ring[static_cast<size_t>((r + R - 1) % R)], STARPU_RW,
                                    ring[static_cast<size_t>(r)], STARPU_EXECUTE_ON_NODE, r, 0));
  starpu_mpi_wait_for_all(MPI_COMM_WORLD);
  const double t1 = now_s();
  t.bytes += bytes_sent() - b0;
  if (timed) t.us.push_back((t1 - t0) / (rounds * R) * 1e6);

  std::vector<int64_t> want(static_cast<size_t>(R), 0);  // the same updates, in order
  for (int k = 0; k < rounds; ++k)
    for (int r = 0; r < R; ++r) want[static_cast<size_t>(r)] = want[static_cast<size_t>((r + R - 1) % R)] + 1;
  for (int r = 0; r < R; ++r) {
    const int64_t got = fetch_on_0(ring[static_cast<size_t>(r)]);
    if (g_rank == 0 && got != want[static_cast<size_t>(r)])
      fail("WRONG_RESULT", "ring: ring[%d] = %lld, expected %lld", r, static_cast<long long>(got),
           static_cast<long long>(want[static_cast<size_t>(r)]));
  }
  unregister_all(ring);
}

void print_overhead(const char *bench, int tasks, int reps, const Timing &t) {
  unsigned long long mine = t.bytes, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, g_own);
  if (g_rank != 0) return;
  std::vector<double> us = t.us;
  std::sort(us.begin(), us.end());
  char transfers[32] = "null";
  if (g_stats)  // every array is 8 bytes: one transfer = 8 bytes of payload
    std::snprintf(transfers, sizeof transfers, "%.2f", static_cast<double>(all) / 8.0 / (reps + 1) / tasks);
  std::printf(
      "{\"bench\": \"%s\", \"ranks\": %d, \"tasks\": %d, \"reps\": %d, \"us_per_task_median\": %.1f, "
      "\"us_per_task_min\": %.1f, \"us_per_task_max\": %.1f, \"transfers_per_task\": %s}\n",
      bench, g_size, tasks, reps, us[us.size() / 2], us.front(), us.back(), transfers);
  std::fflush(stdout);
}

void run_overhead(int n, int reps) {
  {
    Timing t;
    for (int rep = 0; rep <= reps; ++rep) chain_rep("chain_cross", n, true, rep > 0, t);
    print_overhead("chain_cross", n, reps, t);
  }
  {
    Timing t;
    for (int rep = 0; rep <= reps; ++rep) chain_rep("chain_local", n, false, rep > 0, t);
    print_overhead("chain_local", n, reps, t);
  }
  {
    const int rounds = std::max(1, n / g_size);
    Timing t;
    for (int rep = 0; rep <= reps; ++rep) ring_rep(rounds, rep > 0, t);
    print_overhead("ring", rounds * g_size, reps, t);
  }
}

// ---- gemm -------------------------------------------------------------------------------------

void run_gemm(int T, int ts, int reps) {
  const int R = g_size;
  const auto tiles = static_cast<size_t>(T) * static_cast<size_t>(T);
  const size_t tile_elems = static_cast<size_t>(ts) * static_cast<size_t>(ts);
  auto owner = [&](int i, int j) { return (i * T + j) % R; };
  auto at = [&](int i, int j) {
    return static_cast<size_t>(i) * static_cast<size_t>(T) + static_cast<size_t>(j);
  };

  // Memory for the tiles this rank owns; handles for all of them, registered once.
  std::vector<std::vector<float>> mem(3 * tiles);
  std::vector<starpu_data_handle_t> h(3 * tiles, nullptr);  // A, then B, then C
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        const size_t x = static_cast<size_t>(m) * tiles + at(i, j);
        const auto uts = static_cast<uint32_t>(ts);
        if (owner(i, j) == g_rank) {
          mem[x].assign(tile_elems, 0.0f);
          starpu_matrix_data_register(&h[x], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(mem[x].data()), uts,
                                      uts, uts, sizeof(float));
        } else {
          starpu_matrix_data_register(&h[x], -1, 0, uts, uts, uts, sizeof(float));
        }
        starpu_mpi_data_register(h[x], g_next_tag++, owner(i, j));
      }
  auto A = [&](int i, int j) { return h[at(i, j)]; };
  auto B = [&](int i, int j) { return h[tiles + at(i, j)]; };
  auto C = [&](int i, int j) { return h[2 * tiles + at(i, j)]; };

  std::vector<double> ms;
  for (int rep = 0; rep <= reps; ++rep) {
    // Inputs: tasks on the owners (rewriting A and B also empties StarPU-MPI's cache of them,
    // so every rep moves the same tiles).
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        for (int which = 0; which < 2; ++which)
          insert(starpu_mpi_task_insert(MPI_COMM_WORLD, &g_init_cl, STARPU_W, which == 0 ? A(i, j) : B(i, j),
                                        STARPU_VALUE, &which, sizeof which, STARPU_VALUE, &i, sizeof i,
                                        STARPU_VALUE, &j, sizeof j, STARPU_EXECUTE_ON_NODE, owner(i, j), 0));
        insert(starpu_mpi_task_insert(MPI_COMM_WORLD, &g_zero_cl, STARPU_W, C(i, j), STARPU_EXECUTE_ON_NODE,
                                      owner(i, j), 0));
      }
    starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    const double t0 = now_s();
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        for (int k = 0; k < T; ++k)
          insert(starpu_mpi_task_insert(MPI_COMM_WORLD, &g_gemm_cl, STARPU_R, A(i, k), STARPU_R, B(k, j),
                                        STARPU_RW, C(i, j), STARPU_EXECUTE_ON_NODE, owner(i, j), 0));
    starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    if (rep > 0) ms.push_back((now_s() - t0) * 1e3);
  }

  // Check C on rank 0 against a sequential i-k-j triple loop (same order of the k terms).
  const long n = static_cast<long>(T) * ts;
  const bool check = n <= 1024;
  double err = 0.0;
  if (check) {
    std::vector<float> got;
    if (g_rank == 0) got.assign(static_cast<size_t>(n * n), 0.0f);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        starpu_mpi_get_data_on_node(MPI_COMM_WORLD, C(i, j), 0);
        if (g_rank != 0) continue;
        starpu_data_acquire(C(i, j), STARPU_R);
        const auto *c = reinterpret_cast<const float *>(starpu_matrix_get_local_ptr(C(i, j)));
        for (int r = 0; r < ts; ++r)
          std::copy(c + static_cast<long>(r) * ts, c + static_cast<long>(r + 1) * ts,
                    got.begin() + (static_cast<long>(i) * ts + r) * n + static_cast<long>(j) * ts);
        starpu_data_release(C(i, j));
      }
    if (g_rank == 0) {
      std::vector<float> a(static_cast<size_t>(n * n)), b(a.size()), c(a.size(), 0.0f);
      for (long r = 0; r < n; ++r)
        for (long q = 0; q < n; ++q) {
          a[static_cast<size_t>(r * n + q)] = pto_bench_gemm_value(0, r, q);
          b[static_cast<size_t>(r * n + q)] = pto_bench_gemm_value(1, r, q);
        }
      for (long r = 0; r < n; ++r)
        for (long k = 0; k < n; ++k) {
          const float ark = a[static_cast<size_t>(r * n + k)];
          for (long q = 0; q < n; ++q)
            c[static_cast<size_t>(r * n + q)] += ark * b[static_cast<size_t>(k * n + q)];
        }
      for (size_t x = 0; x < c.size(); ++x)
        err = std::max(err, static_cast<double>(std::fabs(c[x] - got[x])));
      // The k terms are added in the same order on both sides, so anything but rounding noise
      // is a wrong answer (one missing term is at least 1/11 * 1/13 / 4 in magnitude).
      if (!(err <= 1e-3)) fail("WRONG_RESULT", "gemm: max |C - reference| = %g", err);
    }
  }
  unregister_all(h);

  if (g_rank == 0) {
    std::sort(ms.begin(), ms.end());
    char errs[32] = "null";
    if (check) std::snprintf(errs, sizeof errs, "%.3g", err);
    std::printf(
        "{\"bench\": \"gemm\", \"ranks\": %d, \"T\": %d, \"ts\": %d, \"reps\": %d, \"wall_ms_median\": %.2f, "
        "\"wall_ms_min\": %.2f, \"wall_ms_max\": %.2f, \"max_abs_err\": %s}\n",
        R, T, ts, reps, median(ms), ms.front(), ms.back(), errs);
    std::fflush(stdout);
  }
}

int arg(int argc, char **argv, int i, int dflt) {
  return argc > i ? std::atoi(argv[i]) : dflt;
}

}  // namespace

int main(int argc, char **argv) {
  const bool gemm = argc > 1 && std::strcmp(argv[1], "gemm") == 0;
  const int n = gemm ? 0 : arg(argc, argv, 1, 200);
  const int reps = gemm ? arg(argc, argv, 4, 3) : arg(argc, argv, 2, 5);
  const int T = gemm ? arg(argc, argv, 2, 8) : 0, ts = gemm ? arg(argc, argv, 3, 128) : 0;
  if (reps < 1 || (!gemm && n < 1) || (gemm && (T < 1 || ts < 1))) {
    std::fprintf(stderr,
                 "usage: %s [tasks >= 1] [reps >= 1]\n       %s gemm [T >= 1] [ts >= 1] [reps >= 1]\n",
                 argv[0], argv[0]);
    return 2;
  }
  setenv("STARPU_NCPU", "2", 0);
  setenv("STARPU_SILENT", "1", 0);
  setenv("STARPU_COMM_STATS", "1", 0);
  g_stats = std::atoi(std::getenv("STARPU_COMM_STATS")) > 0;

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (provided < MPI_THREAD_MULTIPLE)
    fail("NOT_SUPPORTED", "MPI provides thread level %d < MPI_THREAD_MULTIPLE", provided);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_own);

  starpu_conf conf;
  starpu_conf_init(&conf);  // reads STARPU_NCPU
  conf.ncuda = 0;
  conf.nopencl = 0;
  const int ret = starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, &conf);
  if (ret != 0) fail("STARPU", "starpu_mpi_init_conf returned %d", ret);
  if (starpu_cpu_worker_get_count() < 1)
    fail("STARPU", "no CPU worker (STARPU_NCPU=%s)", std::getenv("STARPU_NCPU"));
  make_codelets();

  if (gemm)
    run_gemm(T, ts, reps);
  else
    run_overhead(n, reps);

  starpu_mpi_shutdown();
  MPI_Comm_free(&g_own);
  MPI_Finalize();
  return 0;
}
