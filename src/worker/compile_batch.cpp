// src/worker/compile_batch.cpp — compile_incore_many and compile_cost_models_many: kernels in parallel.
//
// Each kernel is one compile_incore (or compile_incore_cost_model) on a pool of min(CPUs, n)
// threads that take the next index from a shared counter; a cold tile kernel costs seconds of
// one CPU, so a program's kernels compile in about n / CPUs times that. The compiles share
// nothing but the process-wide caches of kernel_compiler.cpp and tile_toolchain.cpp (compiler
// versions, the tile compiler probe, file digests, the formula-table generation), which are
// guarded by their own mutexes.
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

// The one line compile_cost_models_many gives for a kernel without a twin: for a twin that does
// not compile, the compiler's first error line (it names what the cost model lacks), else the
// first line of the error's message.
std::string unavailable_reason(pto_status code, const std::string &message) {
  static const char kOutput[] = "\ncompiler output:\n";
  const std::string::size_type out = message.find(kOutput);
  if (code == PTO_KERNEL_COMPILE && out != std::string::npos) {
    std::string::size_type at = out + sizeof kOutput - 1;
    while (at < message.size()) {
      std::string::size_type nl = message.find('\n', at);
      if (nl == std::string::npos) nl = message.size();
      const std::string line = message.substr(at, nl - at);
      if (line.find("error:") != std::string::npos) return "the cost-model build fails: " + line;
      at = nl + 1;
    }
  }
  return first_line(message.c_str());
}

}  // namespace

std::vector<KernelCompiler::Attempt> KernelCompiler::compile_batch(
    const std::vector<std::pair<std::string, pto_core_type>> &kernels, bool progress, bool cost_model) const {
  const size_t n = kernels.size();
  std::vector<Attempt> attempts(n);
  if (n == 0) return attempts;
  const size_t threads = std::min(usable_cpus(), n);
  const char *what = cost_model ? "cost model" : "kernel";
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::mutex print_mutex;  // one progress line at a time
  size_t done = 0;         // guarded by print_mutex
  size_t cached = 0;       // guarded by print_mutex
  size_t failures = 0;     // guarded by print_mutex
  if (progress) {
    fprintf(stderr, "pto: compiling %zu %s%s for %s on %zu thread%s\n", n, what, n == 1 ? "" : "s",
            platform_.c_str(), threads, threads == 1 ? "" : "s");
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      const std::string &path = kernels[i].first;
      const pto_core_type core = kernels[i].second;
      const Clock::time_point t0 = Clock::now();
      Attempt &a = attempts[i];
      try {
        a.built = cost_model ? cost_model_file(path, core) : incore_file(path, core);
      } catch (const Error &e) {
        a.failed = true;
        a.code = e.code();
        a.message = e.what();
      } catch (const std::exception &e) {
        a.failed = true;
        a.code = PTO_INTERNAL;
        a.message = e.what();
      }
      if (!progress) continue;
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      // "AIV" for a kernel, "AIV cost model" for a twin.
      const std::string kind = std::string(core_name(core)) + (cost_model ? " cost model" : "");
      std::lock_guard<std::mutex> lock(print_mutex);
      ++done;
      if (a.failed) {
        ++failures;
        const std::string why =
            cost_model ? unavailable_reason(a.code, a.message) : first_line(a.message.c_str());
        fprintf(stderr, "pto: [%zu/%zu] %s (%s) %s after %.1f s: %s\n", done, n, path.c_str(), kind.c_str(),
                cost_model ? "unavailable" : "FAILED", seconds, why.c_str());
      } else if (a.built.cached) {
        ++cached;
        fprintf(stderr, "pto: [%zu/%zu] %s (%s, %s) cached\n", done, n, path.c_str(), kind.c_str(),
                a.built.compiler.c_str());
      } else {
        fprintf(stderr, "pto: [%zu/%zu] %s (%s, %s) %.1f s\n", done, n, path.c_str(), kind.c_str(),
                a.built.compiler.c_str(), seconds);
      }
      fflush(stderr);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // the calling thread is one of the pool
  for (std::thread &t : pool) t.join();
  if (progress) {
    fprintf(stderr, "pto: %zu %s%s in %.1f s: %zu compiled, %zu cached, %zu %s\n", n, what, n == 1 ? "" : "s",
            std::chrono::duration<double>(Clock::now() - start).count(), n - cached - failures, cached,
            failures, cost_model ? "unavailable" : "failed");
  }
  return attempts;
}

std::vector<std::string> KernelCompiler::compile_incore_many(
    const std::vector<std::pair<std::string, pto_core_type>> &kernels, bool progress) const {
  std::vector<Attempt> attempts = compile_batch(kernels, progress, false);
  const size_t n = attempts.size();
  std::vector<size_t> failed;
  for (size_t i = 0; i < n; ++i) {
    if (attempts[i].failed) failed.push_back(i);
  }
  if (failed.empty()) {
    std::vector<std::string> paths;
    paths.reserve(n);
    for (Attempt &a : attempts) paths.push_back(std::move(a.built.path));
    return paths;
  }
  const Attempt &first = attempts[failed[0]];
  std::string names;
  for (size_t i : failed) {
    names += std::string(names.empty() ? "" : ", ") + kernels[i].first + " (" +
             pto_status_name(attempts[i].code) + ")";
  }
  throw Error(first.code, std::to_string(failed.size()) + " of " + std::to_string(n) +
                              " kernels failed to compile: " + names + ". The first, " +
                              kernels[failed[0]].first + ":\n" + first.message);
}

std::vector<CostModelBuild> KernelCompiler::compile_cost_models_many(
    const std::vector<std::pair<std::string, pto_core_type>> &kernels, bool progress) const {
  std::vector<Attempt> attempts = compile_batch(kernels, progress, true);
  std::vector<CostModelBuild> builds(attempts.size());
  for (size_t i = 0; i < attempts.size(); ++i) {
    if (attempts[i].failed) {
      builds[i].unavailable = unavailable_reason(attempts[i].code, attempts[i].message);
    } else {
      builds[i].path = std::move(attempts[i].built.path);
    }
  }
  return builds;
}

}  // namespace pto
