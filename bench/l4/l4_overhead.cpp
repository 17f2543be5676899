// bench/l4/l4_overhead.cpp — per-task cost of cross-rank dependencies with the C++ L4 worker (the twin of l4_overhead.py).
//
// Usage: mpirun -n R [--oversubscribe] l4_overhead_cpp [tasks=200] [reps=5] [poll_max_us=1000] [spin_us]
// The workloads of l4_overhead.py, no-op SUB tasks on 8-byte arrays, each run `reps` times after
// one warm-up, every run closed by an MPI_Barrier (so the time is that of the slowest rank):
//   chain_cross  task i on rank i % R reads what task i-1 wrote: every edge crosses ranks
//   chain_local  the same chain on rank 0 only: the L3 baseline without transfers
//   ring         every rank's task reads what the previous rank's wrote: R edges in flight
//   mpi_pingpong_one_way  blocking MPI_Send/MPI_Recv of 8 bytes between ranks 0 and 1: the floor
// Rank 0 prints one JSON object per workload (µs per task: median, min, max over the reps).
// With PTO_L4_EDGE_TRACE=<dir> (which also makes the progress thread log each transfer, see
// src/l4/progress_mpi.cpp) every rank writes the start and end of its chain_cross bodies of the
// last rep to <dir>/bodies.rank<r>.tsv; bench/l4/edge_breakdown.py joins both into the steps
// of one cross-rank edge.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "pto/l4.h"

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// submit_us: each rep's time in the orchestration function on rank 0 (every rank unrolls every
// task), per task; its median is printed beside the whole run's.
void print(const char *bench, int ranks, int tasks, int reps, std::vector<double> us, uint64_t sends,
           std::vector<double> submit_us = {}) {
  std::sort(us.begin(), us.end());
  std::sort(submit_us.begin(), submit_us.end());
  std::printf("{\"bench\": \"%s\", \"ranks\": %d, \"tasks\": %d, \"reps\": %d, \"us_per_task_median\": %.1f, "
              "\"us_per_task_min\": %.1f, \"us_per_task_max\": %.1f, \"transfers_per_task\": %.2f, "
              "\"submit_us_per_task_median\": %.2f}\n",
              bench, ranks, tasks, reps, us[us.size() / 2], us.front(), us.back(),
              tasks ? static_cast<double>(sends) / tasks : 0.0,
              submit_us.empty() ? 0.0 : submit_us[submit_us.size() / 2]);
  std::fflush(stdout);
}

pto::ChipStorageTaskArgs io(int64_t *in, int64_t *out, pto_direction out_dir) {
  pto::ChipStorageTaskArgs a;
  a.add_tensor(in, 8, PTO_DTYPE_I64, {1}, PTO_DIR_INPUT);
  a.add_tensor(out, 8, PTO_DTYPE_I64, {1}, out_dir);
  return a;
}

}  // namespace

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const uint32_t poll_max_us = argc > 3 ? static_cast<uint32_t>(std::atoi(argv[3])) : 1000;
  const uint32_t spin_us =
      argc > 4 ? static_cast<uint32_t>(std::atoi(argv[4])) : pto::l4::WorkerOptions{}.spin_us;
  if (n < 1 || reps < 1) {
    std::fprintf(stderr, "usage: %s [tasks >= 1] [reps >= 1] [poll_max_us] [spin_us]\n", argv[0]);
    return 2;
  }
  // MPI is this program's (the Worker then leaves it initialized): the floor below runs before
  // the Worker's progress thread exists, so it measures MPI alone, and no request of the main
  // thread is completed by that thread (under TSan, Open MPI's hand-over of a receive buffer
  // between the two is invisible and was reported as a race on the buffer).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  struct Finalize {
    ~Finalize() { MPI_Finalize(); }
  } finalize;
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    if (size >= 2) {  // the floor: raw MPI one-way latency between ranks 0 and 1
      std::vector<double> us;
      int64_t buf = 0;
      const int rounds = 200;
      for (int rep = 0; rep <= reps; ++rep) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_s();
        for (int i = 0; i < rounds; ++i) {
          if (rank == 0) {
            MPI_Send(&buf, 1, MPI_INT64_T, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&buf, 1, MPI_INT64_T, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else if (rank == 1) {
            MPI_Recv(&buf, 1, MPI_INT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&buf, 1, MPI_INT64_T, 0, 0, MPI_COMM_WORLD);
          }
        }
        if (rep > 0) us.push_back((now_s() - t0) / (2 * rounds) * 1e6);
      }
      if (rank == 0) print("mpi_pingpong_one_way", size, 1, reps, us, 0);
    }

    pto::l4::WorkerOptions o;
    o.num_sub_workers = 2;
    o.heap_bytes = 16ull << 20;
    o.peer_timeout_ms = 120000;
    o.poll_max_us = poll_max_us;
    o.spin_us = spin_us;
    pto::l4::Worker w(o);  // over MPI_COMM_WORLD, the ranks above

    std::vector<int64_t *> a, ring;
    for (int i = 0; i <= n; ++i) a.push_back(static_cast<int64_t *>(w.alloc(8, "a" + std::to_string(i))));
    for (int r = 0; r < size; ++r) ring.push_back(static_cast<int64_t *>(w.alloc(8, "r" + std::to_string(r))));
    for (int64_t *p : a) *p = 0;
    for (int64_t *p : ring) *p = 0;

    const char *trace_dir = std::getenv("PTO_L4_EDGE_TRACE");
    // Each task's body start and end, written by the body (one SUB thread per task), read after
    // run() returned; a rep overwrites the previous one's.
    std::vector<std::pair<double, double>> body_times(static_cast<size_t>(n));
    auto chain = [&](const std::function<int(int)> &on_rank, bool stamp) {
      return [&, on_rank, stamp](pto::l4::Orchestrator &orch) {
        for (int i = 0; i < n; ++i) {
          int64_t *src = a[static_cast<size_t>(i)], *dst = a[static_cast<size_t>(i + 1)];
          std::pair<double, double> *t = stamp ? &body_times[static_cast<size_t>(i)] : nullptr;
          orch.submit_sub(
              [=](pto::SubContext &) {
                if (t) t->first = now_s();
                *dst = *src + 1;
                if (t) t->second = now_s();
              },
              io(src, dst, PTO_DIR_OUTPUT), on_rank(i), "t" + std::to_string(i));
        }
      };
    };
    const int rounds = std::max(1, n / size);
    auto ring_orch = [&](pto::l4::Orchestrator &orch) {
      for (int k = 0; k < rounds; ++k)
        for (int r = 0; r < size; ++r) {
          int64_t *src = ring[static_cast<size_t>((r + size - 1) % size)], *dst = ring[static_cast<size_t>(r)];
          orch.submit_sub([=](pto::SubContext &) { *dst = *src + 1; }, io(src, dst, PTO_DIR_INOUT), r,
                          "ring" + std::to_string(k) + "." + std::to_string(r));
        }
    };
    struct Workload {
      const char *name;
      pto::l4::Worker::OrchFn orch;
      int tasks;
    };
    const std::vector<Workload> workloads = {
        {"chain_cross", chain([size](int i) { return i % size; }, trace_dir != nullptr), n},
        {"chain_local", chain([](int) { return 0; }, false), n},
        {"ring", ring_orch, rounds * size},
    };
    for (const Workload &wl : workloads) {
      std::vector<double> us, submit_us;
      const uint64_t before = w.transfers().sends;
      for (int rep = 0; rep <= reps; ++rep) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_s();
        pto::RunHandle h = w.submit(wl.orch);  // returns once the orchestration function did
        const double t1 = now_s();
        h.wait(600000);
        MPI_Barrier(MPI_COMM_WORLD);  // the run is over when every rank's part is
        if (rep > 0) {
          us.push_back((now_s() - t0) / wl.tasks * 1e6);
          submit_us.push_back((t1 - t0) / wl.tasks * 1e6);
        }
      }
      unsigned long long mine = w.transfers().sends - before, all = 0;
      MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (rank == 0)
        print(wl.name, size, wl.tasks, reps, us, all / static_cast<unsigned long long>(reps + 1), submit_us);
      if (trace_dir && std::string(wl.name) == "chain_cross") {
        const std::string path = std::string(trace_dir) + "/bodies.rank" + std::to_string(rank) + ".tsv";
        if (FILE *f = std::fopen(path.c_str(), "w")) {
          std::fputs("task\tstart\tend\n", f);
          for (int i = rank; i < n; i += size)
            std::fprintf(f, "%d\t%.9f\t%.9f\n", i, body_times[static_cast<size_t>(i)].first,
                         body_times[static_cast<size_t>(i)].second);
          std::fclose(f);
        }
      }
    }
    w.close();
  } catch (const pto::Error &e) {
    std::fprintf(stderr, "error %s: %s\n", e.name(), e.what());
    return 1;
  }
  return 0;
}
