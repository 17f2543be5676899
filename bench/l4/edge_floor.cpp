// bench/l4/edge_floor.cpp — what one cross-rank edge costs on this machine without the runtime.
//
// Usage: mpirun -n R [--oversubscribe] l4_edge_floor [hops=200] [reps=5] [spin_us=100]
// The chain of l4_overhead_cpp's chain_cross (hop i on rank i % R reads the 8 bytes hop i-1
// wrote, adds one, sends them on), written with MPI and threads only, in the three shapes a
// progress engine can take. Rank 0 prints one JSON line per shape (µs per hop over `reps` runs
// after one warm-up, each run closed by a barrier, as l4_overhead_cpp does):
//   blocking  the main thread sits in MPI_Recv, then MPI_Send: MPI's own latency (Open MPI spins
//             inside a blocking receive; no thread is woken)
//   wake1     a progress thread per rank: MPI_Test for spin_us, then parks on a futex in shared
//             memory that the sender rings after its MPI_Isend; the progress thread runs the hop
//             itself (one wake-up per hop)
//   wake2     the same progress thread hands the arrived value to a worker thread through a
//             second futex; the worker runs the hop, posts the MPI_Isend and rings the next
//             rank's futex (two wake-ups per hop: the shape of the L4 runtime, whose SUB worker
//             runs the task)
// Everything a runtime adds (dependency tracking, the transfer header, the scheduler) is absent,
// so wake2 is the floor under l4_overhead_cpp's chain_cross with the same spin_us.
// All ranks must share one node (the doorbells are the runtime's l4::NodeBells).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hierarchical/shm_bell.h"
#include "l4/node_bells.h"

namespace {

using pto::l3::ShmBell;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Setup {
  int rank = 0, size = 1, hops = 200;
  double spin_s = 100e-6;
  pto::l4::NodeBells *bells = nullptr;  // the runtime's own: one futex word per rank of the node
  ShmBell &own() const { return bells->mine(); }
  int next() const { return (rank + 1) % size; }
  int prev() const { return (rank + size - 1) % size; }
};

// Waits for `req` to complete: MPI_Test for spin_s, then parks on `own` until rung, and again.
void wait_request(const Setup &s, MPI_Request &req, ShmBell &own) {
  double spin_until = now_s() + s.spin_s;
  for (;;) {
    const uint32_t seen = own.prepare();
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (now_s() < spin_until) continue;
    // Parks at once, as the runtime's progress thread does, and like it polls again after
    // 1 ms: an Isend that returned need not have made its message matchable yet.
    own.wait(seen, 1000000, 0, 0);
    spin_until = now_s() + s.spin_s;
  }
}

void send_and_ring(const Setup &s, int64_t *val, MPI_Request &req) {
  MPI_Isend(val, 1, MPI_INT64_T, s.next(), 0, MPI_COMM_WORLD, &req);
  s.bells->ring(s.next());
}

void run_blocking(const Setup &s) {
  int64_t v = 0;
  for (int i = s.rank; i < s.hops; i += s.size) {
    if (i > 0) MPI_Recv(&v, 1, MPI_INT64_T, s.prev(), 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ++v;
    if (i + 1 < s.hops) MPI_Send(&v, 1, MPI_INT64_T, s.next(), 0, MPI_COMM_WORLD);
  }
}

void run_wake1(const Setup &s) {
  std::thread progress([&s] {
    int64_t in = 0, out = 0;
    MPI_Request send = MPI_REQUEST_NULL;
    for (int i = s.rank; i < s.hops; i += s.size) {
      if (i > 0) {
        MPI_Request recv;
        MPI_Irecv(&in, 1, MPI_INT64_T, s.prev(), 0, MPI_COMM_WORLD, &recv);
        wait_request(s, recv, s.own());
      }
      if (send != MPI_REQUEST_NULL) MPI_Wait(&send, MPI_STATUS_IGNORE);  // long done: R-1 hops ago
      out = in + 1;
      if (i + 1 < s.hops) send_and_ring(s, &out, send);
    }
    if (send != MPI_REQUEST_NULL) MPI_Wait(&send, MPI_STATUS_IGNORE);
  });
  progress.join();
}

// busy: while the worker runs the hop, the progress thread keeps testing MPI (a receive that
// never completes, as the runtime's heartbeat receive) instead of parking.
void run_wake2_shape(const Setup &s, bool busy) {
  ShmBell worker_bell;  // process-local use of the same futex protocol
  std::atomic<int> handed{-1};   // the hop the worker may run (its input is in `in`)
  std::atomic<int> posted{-1};   // the hop whose send the worker has posted (request in `send`)
  int64_t in = 0, out = 0;
  MPI_Request send = MPI_REQUEST_NULL;
  std::thread worker([&] {
    for (int i = s.rank; i < s.hops; i += s.size) {
      for (;;) {  // parks like a SUB worker: spin, yield, then the futex
        const uint32_t seen = worker_bell.prepare();
        if (handed.load(std::memory_order_acquire) == i) break;
        worker_bell.wait(seen);
      }
      out = in + 1;
      if (i + 1 < s.hops) send_and_ring(s, &out, send);
      posted.store(i, std::memory_order_release);
      s.own().ring();  // the progress thread owns the send request from here
    }
  });
  std::thread progress([&] {
    for (int i = s.rank; i < s.hops; i += s.size) {
      if (i > 0) {
        MPI_Request recv;
        MPI_Irecv(&in, 1, MPI_INT64_T, s.prev(), 0, MPI_COMM_WORLD, &recv);
        wait_request(s, recv, s.own());
      }
      handed.store(i, std::memory_order_release);
      worker_bell.ring();
      MPI_Request idle = MPI_REQUEST_NULL;
      int64_t never = 0;
      if (busy) MPI_Irecv(&never, 1, MPI_INT64_T, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &idle);
      for (;;) {  // the worker's send, completed by this thread as the runtime's progress does
        const uint32_t seen = s.own().prepare();
        if (posted.load(std::memory_order_acquire) == i) break;
        if (!busy) {
            s.own().wait(seen, 1000000, 0, 0);
          continue;
        }
        int done = 0;
        MPI_Test(&idle, &done, MPI_STATUS_IGNORE);
        std::this_thread::yield();
      }
      if (busy) {
        MPI_Cancel(&idle);
        MPI_Wait(&idle, MPI_STATUS_IGNORE);
      }
      if (send != MPI_REQUEST_NULL) wait_request(s, send, s.own());
    }
  });
  progress.join();
  worker.join();
}

void run_wake2(const Setup &s) { run_wake2_shape(s, false); }
void run_wake2_busy(const Setup &s) { run_wake2_shape(s, true); }

void print(const char *shape, const Setup &s, int reps, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  std::printf("{\"bench\": \"floor_%s\", \"ranks\": %d, \"tasks\": %d, \"reps\": %d, "
              "\"spin_us\": %.0f, \"us_per_task_median\": %.1f, \"us_per_task_min\": %.1f, "
              "\"us_per_task_max\": %.1f}\n",
              shape, s.size, s.hops, reps, s.spin_s * 1e6, us[us.size() / 2], us.front(), us.back());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Setup s;
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  s.hops = argc > 1 ? std::atoi(argv[1]) : 200;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  s.spin_s = (argc > 3 ? std::atof(argv[3]) : 100.0) * 1e-6;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  if (s.hops < 1 || reps < 1 || s.spin_s < 0 || s.size < 2 || node_size != s.size ||
      provided < MPI_THREAD_MULTIPLE) {
    if (s.rank == 0)
      std::fprintf(stderr,
                   "usage: mpirun -n R l4_edge_floor [hops >= 1] [reps >= 1] [spin_us >= 0]: needs 2 <= R "
                   "ranks on one node and MPI_THREAD_MULTIPLE (got R=%d, %d on this node, thread level %d)\n",
                   s.size, node_size, provided);
    MPI_Finalize();
    return 2;
  }
  pto::l4::NodeBells bells;
  bells.make(MPI_COMM_WORLD, s.rank, s.size);
  s.bells = &bells;
  MPI_Barrier(MPI_COMM_WORLD);
  struct Shape {
    const char *name;
    void (*run)(const Setup &);
  };
  for (const Shape &shape : {Shape{"blocking", run_blocking}, Shape{"wake1", run_wake1},
                             Shape{"wake2", run_wake2}, Shape{"wake2_busy", run_wake2_busy}}) {
    std::vector<double> us;
    for (int rep = 0; rep <= reps; ++rep) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = now_s();
      shape.run(s);
      MPI_Barrier(MPI_COMM_WORLD);
      if (rep > 0) us.push_back((now_s() - t0) / s.hops * 1e6);
    }
    if (s.rank == 0) print(shape.name, s, reps, us);
  }
  MPI_Finalize();
  return 0;
}
