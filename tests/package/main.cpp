// tests/package/main.cpp — a program built against the installed C++ package only
// (find_package(pto_runtime), tests/package/CMakeLists.txt): the basic example's graph,
// f = (a + b + 1)(a + b + 2) = 42 for a = 2, b = 3, on both runtimes; on host_build_graph also
// in the sim's timing mode, which reads the installed timing profile (sim_profiles/a2a3.json).
//
// Usage: pto_package_consumer <dir with orchestration.cpp, orchestration_tmr.cpp, kernels/>
// Prints where the library found its runtimes ("lib_root: ...") for the driver to check
// (tests/package/run_test.cmake); exits 1 on any error or wrong element.
#include <cstdio>
#include <string>
#include <vector>

#include "pto/chip_worker.h"
#include "pto/kernel_compiler.h"

namespace {

bool run_basic(const std::string &dir, const std::string &runtime, const char *orchestration) {
  pto::KernelCompiler kc("a2a3sim");
  pto::ChipCallable callable(kc.compile_orchestration(runtime, dir + "/" + orchestration));
  callable.add_kernel(0, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_add.cpp", PTO_CORE_AIV));
  callable.add_kernel(1, PTO_CORE_AIV,
                      kc.compile_incore(dir + "/kernels/kernel_add_scalar.cpp", PTO_CORE_AIV));
  callable.add_kernel(2, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/kernel_mul.cpp", PTO_CORE_AIV));

  const int64_t n = 4096;
  std::vector<float> a(n, 2.0f), b(n, 3.0f), f(n, -1.0f);
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
  args.add_tensor(f.data(), n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);

  pto::ChipWorker worker;
  worker.init("a2a3sim", runtime);
  worker.set_device(0);
  pto::ChipCallConfig config;
  config.block_dim = 2;
  const pto::RunStats stats = worker.run(callable, args, config);
  // Virtual time: the package's default profile prices the hand-offs. Only where runs can be
  // seeded (not with PTO_SIM_EXEC=threads, which refuses them as NOT_SUPPORTED).
  if (runtime == "host_build_graph") {
    pto::ChipCallConfig timed = config;
    timed.sim_seed = 1;
    timed.sim_timing = true;
    try {
      const double predicted_us = worker.run(callable, args, timed).predicted_makespan_us;
      if (!(predicted_us > 0)) {
        std::printf("FAILED %s: the timed run predicted %f us\n", runtime.c_str(), predicted_us);
        return false;
      }
      std::printf("OK timing: %s predicted %.3f us\n", runtime.c_str(), predicted_us);
    } catch (const pto::Error &e) {
      if (e.code() != PTO_NOT_SUPPORTED) throw;
      std::printf("SKIP timing: %s\n", e.what());
    }
  }
  worker.finalize();
  for (int64_t i = 0; i < n; ++i) {
    if (f[i] != 42.0f) {
      std::printf("FAILED %s: f[%lld] = %f, expected 42\n", runtime.c_str(), static_cast<long long>(i), f[i]);
      return false;
    }
  }
  if (stats.tasks_run != 4) {
    std::printf("FAILED %s: %llu tasks ran, expected 4\n", runtime.c_str(),
                static_cast<unsigned long long>(stats.tasks_run));
    return false;
  }
  std::printf("OK %s: %lld elements are 42\n", runtime.c_str(), static_cast<long long>(n));
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <basic example dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  try {
    std::printf("lib_root: %s\n", pto::RuntimeBuilder::lib_root().c_str());
    const bool ok = run_basic(dir, "host_build_graph", "orchestration.cpp") &&
                    run_basic(dir, "tensormap_and_ringbuffer", "orchestration_tmr.cpp");
    return ok ? 0 : 1;
  } catch (const pto::Error &e) {
    std::fprintf(stderr, "error %s: %s\nhint: %s\n", e.name(), e.what(), e.hint());
    return 1;
  }
}
