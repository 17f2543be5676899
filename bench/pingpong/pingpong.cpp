// bench/pingpong/pingpong.cpp — bench_pingpong: the round trip of one cache line between two CPUs.
//
// What a dependent chain pays per task at best is a hand-off between the core that finished the
// producer and the one that runs the consumer: a cache line (the consumer's readiness) moving
// from one CPU to the other and back. This measures that round trip on this machine, so
// bench/run.py can state the chain's ns per task in round trips, in the same run (issue 41).
// Two threads, each pinned to its own CPU when there are two, take turns on one 64-byte-aligned
// atomic counter: thread A waits for an even value and adds 1, thread B waits for an odd one and
// adds 1. One round trip = two increments. Prints one JSON line:
//   {"bench": "pingpong", "round_trip_ns": [...per rep...], "median_ns": m, "min_ns": a, "max_ns": b}
// Usage: bench_pingpong [--iters N] [--reps R]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

struct alignas(64) Line {
  std::atomic<uint64_t> v{0};
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // best effort
}

// One rep: `iters` round trips; ns per round trip.
double rep(uint64_t iters, int cpus) {
  Line line;
  std::atomic<bool> go{false};
  auto player = [&](uint64_t parity, int cpu) {
    if (cpus > 1) pin(cpu);
    while (!go.load(std::memory_order_acquire)) {
    }
    for (uint64_t i = 0; i < iters; ++i) {
      const uint64_t want = 2 * i + parity;
      while (line.v.load(std::memory_order_acquire) != want) {
      }
      line.v.store(want + 1, std::memory_order_release);
    }
  };
  std::thread a(player, 0, 0), b(player, 1, 1);
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  a.join();
  b.join();
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  return ns / static_cast<double>(iters);
}

}  // namespace

int main(int argc, char **argv) {
  uint64_t iters = 200000;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters"))
      iters = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
  }
  if (iters == 0 || reps <= 0) {
    std::fprintf(stderr, "bench_pingpong: --iters and --reps must be positive\n");
    return 2;
  }
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) ns.push_back(rep(iters, cpus));
  std::vector<double> sorted = ns;
  std::sort(sorted.begin(), sorted.end());
  std::printf("{\"bench\": \"pingpong\", \"cpus\": %d, \"iters\": %llu, \"round_trip_ns\": [", cpus,
              static_cast<unsigned long long>(iters));
  for (size_t i = 0; i < ns.size(); ++i) std::printf("%s%.1f", i ? ", " : "", ns[i]);
  std::printf("], \"median_ns\": %.1f, \"min_ns\": %.1f, \"max_ns\": %.1f}\n", sorted[sorted.size() / 2],
              sorted.front(), sorted.back());
  return 0;
}
