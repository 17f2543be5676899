// bench/common/harness.h — what every benchmark binary shares: options, timed repetitions, JSON output.
//
// A binary measures one (workload, runtime) at one or more points (grain x block_dim). For
// each point it resets the workload's state (untimed), times `warmup + reps` runs, checks
// the last run's result against the serial reference, and prints one JSON line on stdout:
//   {"workload": ..., "runtime": ..., "width": ..., "steps": ..., "grain": ..., "tasks": ...,
//    "wall_us_median": ..., "wall_us_min": ..., "wall_us_max": ..., "ns_per_task": ..., ...}
// The exit code is 0 only if every check passed (timing never fails a run).
#ifndef PTO_BENCH_HARNESS_H
#define PTO_BENCH_HARNESS_H

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace bench {

// Command-line options, shared by every binary (a workload ignores what it has no use for).
struct Options {
  std::string workload;
  std::string runtime;
  int64_t width = 4;               // tasks per step (matmul: tiles per matrix side)
  int64_t steps = 100;             // steps (independent: tasks = width * steps)
  int64_t radix = 3;               // nearest: inputs per task
  std::vector<int64_t> grains{0};  // busy rounds per task (matmul: tile size)
  int reps = 5;                    // timed repetitions per point
  int warmup = 1;                  // untimed runs before them
  int threads = 0;                 // worker threads of the peers (0 = the CPU count)
  std::vector<int> block_dims;     // PTO: clusters (empty = the platform's all)
  int aicpu_threads = 0;           // PTO: AICPU threads (0 = the platform's all)
  std::string platform = "a2a3sim";
  bool check = true;       // compare every point's result with the serial reference
  bool profiling = false;  // PTO: run with enable_profiling (bench/profiling_overhead.py)
  int64_t window = 0;      // pto_tmr: task_window (0 = the default); >= tasks: submit never stalls
};

inline void usage(const char *prog) {
  std::fprintf(
      stderr,
      "usage: %s [--width N] [--steps N] [--radix N] [--grain G[,G...]] [--reps N] [--warmup N]\n"
      "          [--threads N] [--block-dim B[,B...]] [--aicpu-threads N] [--platform P] [--no-check]\n"
      "          [--profiling] [--window N]\n",
      prog);
}

template <typename T>
std::vector<T> parse_list(const char *text) {
  std::vector<T> out;
  const char *p = text;
  while (*p) {
    char *end = nullptr;
    out.push_back(static_cast<T>(std::strtoll(p, &end, 10)));
    if (end == p) break;
    p = (*end == ',') ? end + 1 : end;
  }
  return out;
}

// Parses argv over the workload's defaults; exits with 2 on a bad option.
inline Options parse_options(int argc, char **argv, Options defaults) {
  Options o = std::move(defaults);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        usage(argv[0]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--width")
      o.width = std::atoll(value());
    else if (a == "--steps")
      o.steps = std::atoll(value());
    else if (a == "--radix")
      o.radix = std::atoll(value());
    else if (a == "--grain")
      o.grains = parse_list<int64_t>(value());
    else if (a == "--reps")
      o.reps = std::atoi(value());
    else if (a == "--warmup")
      o.warmup = std::atoi(value());
    else if (a == "--threads")
      o.threads = std::atoi(value());
    else if (a == "--block-dim")
      o.block_dims = parse_list<int>(value());
    else if (a == "--aicpu-threads")
      o.aicpu_threads = std::atoi(value());
    else if (a == "--platform")
      o.platform = value();
    else if (a == "--no-check")
      o.check = false;
    else if (a == "--profiling")
      o.profiling = true;
    else if (a == "--window")
      o.window = std::atoll(value());
    else {
      usage(argv[0]);
      std::exit(2);
    }
  }
  if (o.threads <= 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (o.width < 1 || o.steps < 1 || o.radix < 1 || o.reps < 1 || o.warmup < 0 || o.grains.empty()) {
    std::fprintf(stderr, "%s: width, steps, radix and reps must be >= 1, warmup >= 0\n", argv[0]);
    std::exit(2);
  }
  return o;
}

// One measured point. The caller fills what it knows; run_point fills the timings.
struct Point {
  int64_t grain = 0;
  int block_dim = 0;      // PTO only (0 = not a PTO runtime)
  int aicpu_threads = 0;  // PTO only
  int64_t tasks = 0;
};

// What one timed run reports besides its wall time (PTO's RunStats; negative = not known).
struct RunInfo {
  double orchestration_us = -1;
  double orch_wait_us = -1;  // of orchestration_us, the time spent waiting for ring space
  double device_us = -1;
  int64_t tasks_run = -1;
  double predicted_us = -1;  // timing mode (sim_timing): the predicted device makespan
  double load_us = -1;       // of the run: opening programs on their first use (RunStats.load_us)
};

using Clock = std::chrono::steady_clock;

inline double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct Spread {
  double median = 0, min = 0, max = 0;
};

inline Spread spread_of(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.median = (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

inline std::string json_escaped(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out;
}

// Failures seen so far; the binary's exit code.
inline int &failures() {
  static int n = 0;
  return n;
}

// Times one point: reset() (untimed) before each run, run() timed, then verify() on the last
// run's state, which returns "" when the result equals the serial reference. `extra` is
// appended to the JSON line (already formatted, starting with a comma, or empty).
inline void run_point(const Options &o, Point p, const std::function<void()> &reset,
                      const std::function<RunInfo()> &run, const std::function<std::string()> &verify,
                      const std::string &extra = "") {
  std::vector<double> wall, orch, orch_busy, device, predicted;
  std::string problem;
  static bool first_point_in_process = true;  // its rep 0 is the first run of a fresh worker
  const bool first_in_process = first_point_in_process;
  first_point_in_process = false;
  double first_us = 0;        // rep 0, warm-up or not
  double first_load_us = -1;  // of it: loading programs (PTO: RunStats.load_us)
  for (int r = 0; r < o.warmup + o.reps; ++r) {
    reset();
    const Clock::time_point t0 = Clock::now();
    const RunInfo info = run();
    const double us = us_since(t0);
    if (r == 0) {
      first_us = us;
      first_load_us = info.load_us;
    }
    if (info.tasks_run >= 0 && info.tasks_run != p.tasks && problem.empty()) {
      problem = "ran " + std::to_string(info.tasks_run) + " tasks, expected " + std::to_string(p.tasks);
    }
    if (std::getenv("PTO_BENCH_VERBOSE"))  // every repetition on stderr (diagnosing outliers)
      std::fprintf(stderr, "%s/%s rep %d: %.1f us%s\n", o.workload.c_str(), o.runtime.c_str(), r, us,
                   r < o.warmup ? " (warm-up)" : "");
    if (r < o.warmup) continue;
    wall.push_back(us);
    if (info.orchestration_us >= 0) orch.push_back(info.orchestration_us);
    if (info.orchestration_us >= 0 && info.orch_wait_us >= 0)
      orch_busy.push_back(info.orchestration_us - info.orch_wait_us);
    if (info.device_us >= 0) device.push_back(info.device_us);
    if (info.predicted_us >= 0) predicted.push_back(info.predicted_us);
  }
  std::string check = "off";
  if (o.check || !problem.empty()) {
    if (problem.empty()) problem = verify();
    check = problem.empty() ? "ok" : "FAIL: " + problem;
  }
  if (!problem.empty()) {
    ++failures();
    std::fprintf(stderr, "%s/%s grain %lld: WRONG RESULT: %s\n", o.workload.c_str(), o.runtime.c_str(),
                 static_cast<long long>(p.grain), problem.c_str());
  }
  const Spread w = spread_of(wall);
  const double per = 1000.0 / static_cast<double>(std::max<int64_t>(1, p.tasks));
  std::string line;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"workload\": \"%s\", \"runtime\": \"%s\", \"threads\": %d, \"block_dim\": %d, "
                "\"aicpu_threads\": %d, \"width\": %lld, \"steps\": %lld, \"radix\": %lld, \"grain\": %lld, "
                "\"tasks\": %lld, \"reps\": %d, \"wall_us_median\": %.3f, \"wall_us_min\": %.3f, "
                "\"wall_us_max\": %.3f, \"ns_per_task\": %.2f, \"ns_per_task_min\": %.2f, "
                "\"ns_per_task_max\": %.2f",
                o.workload.c_str(), o.runtime.c_str(), o.threads, p.block_dim, p.aicpu_threads,
                static_cast<long long>(o.width), static_cast<long long>(o.steps),
                static_cast<long long>(o.radix), static_cast<long long>(p.grain),
                static_cast<long long>(p.tasks), o.reps, w.median, w.min, w.max, w.median * per, w.min * per,
                w.max * per);
  line = buf;
  if (!orch.empty()) {
    const Spread s = spread_of(orch);
    std::snprintf(buf, sizeof buf, ", \"orch_us_median\": %.3f, \"orch_ns_per_task\": %.2f", s.median,
                  s.median * per);
    line += buf;
  }
  if (!orch_busy.empty()) {
    std::snprintf(buf, sizeof buf, ", \"orch_busy_ns_per_task\": %.2f", spread_of(orch_busy).median * per);
    line += buf;
  }
  if (!device.empty()) {
    std::snprintf(buf, sizeof buf, ", \"device_us_median\": %.3f", spread_of(device).median);
    line += buf;
  }
  if (!predicted.empty()) {
    std::snprintf(buf, sizeof buf, ", \"predicted_us_median\": %.3f", spread_of(predicted).median);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, ", \"first_us\": %.3f%s", first_us,
                first_in_process ? ", \"first_in_process\": true" : "");
  line += buf;
  if (first_load_us >= 0) {
    std::snprintf(buf, sizeof buf, ", \"first_load_us\": %.3f", first_load_us);
    line += buf;
  }
  line += extra;
  if (o.profiling) line += ", \"profiling\": true";
  line += ", \"check\": \"" + json_escaped(check) + "\"}";
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// Compares two checksums; "" when equal.
inline std::string same_checksum(uint64_t got, uint64_t want) {
  if (got == want) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, "checksum %016llx, serial gives %016llx",
                static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
  return buf;
}

// A workload whose state is an array of uint64 cells, with its serial reference.
struct CellProblem {
  int64_t tasks = 0;
  int64_t cells = 0;
  std::function<void(uint64_t *cells)> reset;
  std::function<void(uint64_t *cells, int64_t grain)> serial;
  std::function<uint64_t(const uint64_t *cells)> checksum;
};

// A PTO geometry to measure at: (block_dim, aicpu_threads); {0, 0} for the peers.
struct Geometry {
  int block_dim = 0;
  int aicpu_threads = 0;
};

// Measures `run` (one timed run on the cells at a grain) at every grain x geometry of the
// options, checking each point's checksum against the serial reference. Returns the exit code.
inline int measure_cells(const Options &o, const CellProblem &p,
                         const std::function<RunInfo(uint64_t *cells, int64_t grain, const Geometry &)> &run,
                         const std::vector<Geometry> &geometries = {Geometry{}}) {
  std::vector<uint64_t> cells(static_cast<size_t>(p.cells));
  for (const int64_t grain : o.grains) {
    uint64_t expected = 0;
    if (o.check) {
      std::vector<uint64_t> ref(static_cast<size_t>(p.cells));
      p.reset(ref.data());
      p.serial(ref.data(), grain);
      expected = p.checksum(ref.data());
    }
    for (const Geometry &g : geometries) {
      Point pt;
      pt.grain = grain;
      pt.block_dim = g.block_dim;
      pt.aicpu_threads = g.aicpu_threads;
      pt.tasks = p.tasks;
      run_point(
          o, pt, [&] { p.reset(cells.data()); }, [&] { return run(cells.data(), grain, g); },
          [&] { return same_checksum(p.checksum(cells.data()), expected); });
    }
  }
  return failures() ? 1 : 0;
}

}  // namespace bench
#endif  // PTO_BENCH_HARNESS_H
