// bench/l3/l3_bench.cpp — host cost of the L3 Worker: per dispatched task, and host CPU while chips run.
//
// Prints one JSON object per line (see bench/l3/README.md):
//   {"bench":"sub_noop","mode":"thread","tasks":1000,"wall_us_per_task":..,"cpu_us_per_task":..}
//   {"bench":"chip_tiny", ...}     1,000 chip tasks running an empty kernel, any idle chip
//   {"bench":"chips_busy", ...}    every chip sleeps in a kernel: host CPU vs wall
// cpu = CPU time of this process (all threads; in THREAD mode that includes the simulated
// chips' own threads, in PROCESS mode only the host side), scheduler = the scheduler thread.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pto/kernel_compiler.h"
#include "pto/worker.h"

namespace {

const char *const kOneTaskOrch = R"(
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  pto::TaskArg a[16];
  uint32_t n = 0;
  for (uint32_t i = 0; i < args.num_tensors() && n < 16; ++i) a[n++] = pto::TaskArg::of(args.tensor(i));
  for (uint32_t i = 0; i < args.num_scalars() && n < 16; ++i) a[n++] = pto::TaskArg::of_i64(args.scalar(i));
  g.add_task(0, PTO_CORE_AIV, a, n);
}
)";

const char *const kEmptyKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) { (void)args; }
)";

const char *const kSleepKernel = R"(
#include <time.h>
#include "pto/kernel.h"
PTO_KERNEL(args) {
  struct timespec ts = {static_cast<time_t>(args[0] / 1000), static_cast<long>(args[0] % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}
)";

pto::ChipCallable make_callable(const char *kernel, const std::string &name) {
  pto::KernelCompiler kc("a2a3sim");
  pto::ChipCallable c(kc.compile_orchestration_source("host_build_graph", kOneTaskOrch, "l3_bench_orch"));
  c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore_source(kernel, name, PTO_CORE_AIV));
  return c;
}

void print(const char *bench, const char *mode, int chips, int subs, int tasks,
           const pto::WorkerRunStats &s) {
  std::printf(
      "{\"bench\":\"%s\",\"mode\":\"%s\",\"chips\":%d,\"sub_workers\":%d,\"tasks\":%d,\"wall_us\":%.1f,"
      "\"cpu_us\":%.1f,\"scheduler_cpu_us\":%.1f,\"wall_us_per_task\":%.3f,\"cpu_us_per_task\":%.3f,"
      "\"cpu_over_wall\":%.4f}\n",
      bench, mode, chips, subs, tasks, s.wall_us, s.host_cpu_us, s.scheduler_cpu_us, s.wall_us / tasks,
      s.host_cpu_us / tasks, s.wall_us > 0 ? s.host_cpu_us / s.wall_us : 0.0);
  std::fflush(stdout);
}

pto::WorkerOptions options(pto::ChipMode mode, int chips, int subs) {
  pto::WorkerOptions o;
  o.device_ids.clear();
  for (int i = 0; i < chips; ++i) o.device_ids.push_back(i);
  o.num_sub_workers = subs;
  o.mode = mode;
  o.heap_bytes = 16ull << 20;
  return o;
}

}  // namespace

int main(int argc, char **argv) {
  setenv("PTO_RUNTIME_LIB_DIR", PTO_BENCH_RUNTIMES_DIR, 0);
  setenv("PTO_CACHE_DIR", PTO_BENCH_CACHE_DIR, 0);
  const int tasks = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int chips = 4;
  // Compile before any process-mode worker forks (and before any thread exists).
  const pto::ChipCallable empty = make_callable(kEmptyKernel, "l3_bench_empty");
  const pto::ChipCallable sleep = make_callable(kSleepKernel, "l3_bench_sleep");
  for (pto::ChipMode mode : {pto::ChipMode::kThread, pto::ChipMode::kProcess}) {
    const char *m = mode == pto::ChipMode::kThread ? "thread" : "process";
    for (int subs : {1, 2}) {
      pto::Worker w(options(mode, 1, subs));  // an L3 worker has >= 1 chip; it stays idle here
      auto sub_run = [&] {
        return w.run([&](pto::HostOrchestrator &o) {
          for (int i = 0; i < tasks; ++i) o.submit_sub([](pto::SubContext &) {});
        });
      };
      sub_run();  // warm-up
      print("sub_noop", m, 1, subs, tasks, sub_run());
    }
    pto::Worker w(options(mode, chips, 1));
    pto::ChipStorageTaskArgs none;
    none.add_scalar(0);
    auto chip_run = [&] {
      return w.run([&](pto::HostOrchestrator &o) {
        for (int i = 0; i < tasks; ++i) o.submit_chip(empty, none);
      });
    };
    chip_run();  // warm-up: first load of the kernels in every chip context
    print("chip_tiny", m, chips, 1, tasks, chip_run());
    pto::ChipStorageTaskArgs nap;
    nap.add_scalar(500);  // ms
    const pto::WorkerRunStats busy = w.run([&](pto::HostOrchestrator &o) {
      for (int c = 0; c < chips; ++c) o.submit_chip(sleep, nap, {}, c);
    });
    print("chips_busy", m, chips, 1, chips, busy);
  }
  return 0;
}
