// src/worker/compile_batch.cpp — KernelCompiler::compile_incore_many: kernels compiled in parallel.
//
// Each kernel is one compile_incore on a pool of min(CPUs, n) threads that take the next index
// from a shared counter; a cold tile kernel costs seconds of one CPU, so a program's kernels
// compile in about n / CPUs times that. The compiles share nothing but the process-wide caches
// of kernel_compiler.cpp and tile_toolchain.cpp (compiler versions, the tile compiler probe,
// file digests), which are guarded by their own mutexes.
#include <sched.h>
#include <stdio.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "pto/error.h"
#include "pto/kernel_compiler.h"

namespace pto {
namespace {

size_t usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<size_t>(n);
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

const char *core_name(pto_core_type t) {
  switch (t) {
    case PTO_CORE_AIC:
      return "AIC";
    case PTO_CORE_AIV:
      return "AIV";
    case PTO_CORE_MIX:
      return "MIX";
    default:
      return "bad core type";
  }
}

std::string first_line(const char *text) {
  std::string s = text;
  const std::string::size_type nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

struct Outcome {
  std::string path;
  bool failed = false;
  pto_status code = PTO_OK;
  std::string message;
};

}  // namespace

std::vector<std::string> KernelCompiler::compile_incore_many(
    const std::vector<std::pair<std::string, pto_core_type>> &kernels, bool progress) const {
  const size_t n = kernels.size();
  std::vector<Outcome> outcomes(n);
  if (n == 0) return {};
  const size_t threads = std::min(usable_cpus(), n);
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::mutex print_mutex;  // one progress line at a time
  size_t done = 0;         // guarded by print_mutex
  size_t cached = 0;       // guarded by print_mutex
  if (progress) {
    fprintf(stderr, "pto: compiling %zu kernel%s for %s on %zu thread%s\n", n, n == 1 ? "" : "s",
            platform_.c_str(), threads, threads == 1 ? "" : "s");
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      const std::string &path = kernels[i].first;
      const pto_core_type core = kernels[i].second;
      const Clock::time_point t0 = Clock::now();
      Built built;
      try {
        built = incore_file(path, core);
        outcomes[i].path = built.path;
      } catch (const Error &e) {
        outcomes[i].failed = true;
        outcomes[i].code = e.code();
        outcomes[i].message = e.what();
      } catch (const std::exception &e) {
        outcomes[i].failed = true;
        outcomes[i].code = PTO_INTERNAL;
        outcomes[i].message = e.what();
      }
      if (!progress) continue;
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(print_mutex);
      ++done;
      if (outcomes[i].failed) {
        fprintf(stderr, "pto: [%zu/%zu] %s (%s) FAILED after %.1f s: %s\n", done, n, path.c_str(),
                core_name(core), seconds, first_line(outcomes[i].message.c_str()).c_str());
      } else if (built.cached) {
        ++cached;
        fprintf(stderr, "pto: [%zu/%zu] %s (%s, %s) cached\n", done, n, path.c_str(), core_name(core),
                built.compiler.c_str());
      } else {
        fprintf(stderr, "pto: [%zu/%zu] %s (%s, %s) %.1f s\n", done, n, path.c_str(), core_name(core),
                built.compiler.c_str(), seconds);
      }
      fflush(stderr);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // the calling thread is one of the pool
  for (std::thread &t : pool) t.join();

  std::vector<size_t> failed;
  for (size_t i = 0; i < n; ++i) {
    if (outcomes[i].failed) failed.push_back(i);
  }
  if (progress) {
    fprintf(stderr, "pto: %zu kernel%s in %.1f s: %zu compiled, %zu cached, %zu failed\n", n,
            n == 1 ? "" : "s", std::chrono::duration<double>(Clock::now() - start).count(),
            n - cached - failed.size(), cached, failed.size());
  }
  if (failed.empty()) {
    std::vector<std::string> paths;
    paths.reserve(n);
    for (Outcome &o : outcomes) paths.push_back(std::move(o.path));
    return paths;
  }
  const Outcome &first = outcomes[failed[0]];
  std::string names;
  for (size_t i : failed) {
    names += std::string(names.empty() ? "" : ", ") + kernels[i].first + " (" +
             pto_status_name(outcomes[i].code) + ")";
  }
  throw Error(first.code, std::to_string(failed.size()) + " of " + std::to_string(n) +
                              " kernels failed to compile: " + names + ". The first, " +
                              kernels[failed[0]].first + ":\n" + first.message);
}

}  // namespace pto
