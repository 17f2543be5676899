// bench/common/pto_harness.h — host side shared by the pto_hbg / pto_tmr binaries: compile, init, run.
//
// Each bench/<workload>/pto_*.cpp is both the orchestration (compiled at run time by
// KernelCompiler with PTO_BENCH_ORCHESTRATION defined) and the host program (compiled by
// CMake) that measures it. Kernels come from bench/common/kernels/. Compilation, worker
// init and device start-up happen before anything is timed; a timed run is one
// ChipWorker::run (orchestration, argument copies, launch, execution, copy-back).
#ifndef PTO_BENCH_PTO_HARNESS_H
#define PTO_BENCH_PTO_HARNESS_H

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "kernel_ids.h"
#include "pto/chip_worker.h"
#include "pto/kernel_compiler.h"

#ifndef PTO_BENCH_DIR
#error "PTO_BENCH_DIR must name the bench/ source directory (bench/CMakeLists.txt sets it)"
#endif

namespace bench {

struct PtoKernel {
  uint32_t func_id;
  const char *source;  // file name under bench/common/kernels/
  pto_core_type core_type;
};

// FNV-1a over the headers in `dirs`: KernelCompiler's cache key covers the compiled source and
// the pto/ headers, not bench/common/*.h, so this digest goes into the flags instead.
inline std::string headers_digest(const std::vector<std::string> &dirs) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&h](const std::string &s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  };
  for (const std::string &dir : dirs) {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
      while (const dirent *e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.size() > 2 && n.compare(n.size() - 2, 2, ".h") == 0) names.push_back(n);
      }
      closedir(d);
    }
    std::sort(names.begin(), names.end());
    for (const std::string &n : names) {
      std::ifstream f(dir + "/" + n, std::ios::binary);
      std::stringstream text;
      text << f.rdbuf();
      add(n);
      add(text.str());
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

inline std::string directory_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Keep equal to PTO_BENCH_KERNEL_ALIGN in bench/CMakeLists.txt.
constexpr const char *kKernelAlignFlags = "-falign-functions=64 -falign-loops=64";

class PtoBench {
 public:
  // runtime: "host_build_graph" or "tensormap_and_ringbuffer"; orchestration_source: the
  // calling pto_*.cpp file.
  PtoBench(const Options &o, const std::string &runtime, const std::string &orchestration_source,
           const std::vector<PtoKernel> &kernels) {
    // The kernels get the loop alignment pto_bench_kernels is built with (bench/CMakeLists.txt),
    // added to whatever PTO_KERNEL_CFLAGS already holds (CI's sanitizer flags, say).
    const char *cflags = std::getenv("PTO_KERNEL_CFLAGS");
    const std::string aligned = std::string(cflags ? cflags : "") + " " + kKernelAlignFlags;
    setenv("PTO_KERNEL_CFLAGS", aligned.c_str(), 1);
    const std::string common = std::string(PTO_BENCH_DIR) + "/common";
    pto::CompileOptions copts;
    copts.include_dirs = {common};
    copts.opt_level = "-O2";
    copts.defines = {"PTO_BENCH_HEADERS=" + headers_digest({common, directory_of(orchestration_source)})};
    const pto::KernelCompiler kc(o.platform, copts);
    copts.defines.push_back("PTO_BENCH_ORCHESTRATION=1");
    const pto::KernelCompiler oc(o.platform, copts);
    callable_.set_orchestration(oc.compile_orchestration(runtime, orchestration_source));
    for (const PtoKernel &k : kernels) {
      callable_.add_kernel(k.func_id, k.core_type,
                           kc.compile_incore(common + "/kernels/" + k.source, k.core_type));
    }
    profiling_ = o.profiling;
    window_ = o.window;
    worker_.init(o.platform, runtime);
    worker_.set_device(0);
    const pto::PlatformInfo info = worker_.platform_info();
    std::vector<int> dims = o.block_dims;
    if (dims.empty()) dims.push_back(info.num_clusters);
    for (const int bd : dims) {
      geometries_.push_back(Geometry{bd, o.aicpu_threads > 0 ? o.aicpu_threads : info.max_aicpu_threads});
    }
  }
  ~PtoBench() { worker_.finalize(); }
  PtoBench(const PtoBench &) = delete;
  PtoBench &operator=(const PtoBench &) = delete;

  const std::vector<Geometry> &geometries() const { return geometries_; }

  // One timed run. max_args: the most arguments one task of the workload has.
  RunInfo run(const pto::ChipStorageTaskArgs &args, const Geometry &g, int64_t tasks, uint32_t max_args) {
    pto::ChipCallConfig cfg;
    cfg.block_dim = g.block_dim;
    cfg.aicpu_thread_num = g.aicpu_threads;
    cfg.max_tasks = static_cast<uint32_t>(std::max<int64_t>(cfg.max_tasks, tasks + 1));
    cfg.max_args_per_task = std::max(cfg.max_args_per_task, max_args);
    cfg.timeout_ms = 600000;  // a slow run is measured, not failed
    cfg.enable_profiling = profiling_;
    if (window_ > 0) cfg.task_window = static_cast<uint32_t>(window_);
    cfg.trace_tasks =
        std::max<uint32_t>(cfg.trace_tasks, static_cast<uint32_t>(tasks + 1));  // trace them all
    const pto::RunStats s = worker_.run(callable_, args, cfg);
    RunInfo info;
    info.orchestration_us = s.orchestration_us;
    // tensormap_and_ringbuffer waits for ring space inside the orchestration (host_build_graph
    // reports zero stalls): what is left is the time spent submitting.
    info.orch_wait_us = s.window.stall_us + s.heap.stall_us + s.dep_pool.stall_us + s.tensormap.stall_us;
    info.device_us = s.device_us;
    info.tasks_run = static_cast<int64_t>(s.tasks_run);
    if (s.predicted_makespan_us > 0) info.predicted_us = s.predicted_makespan_us;
    info.load_us = s.load_us;
    return info;
  }

 private:
  pto::ChipWorker worker_;
  pto::ChipCallable callable_;
  bool profiling_ = false;
  int64_t window_ = 0;
  std::vector<Geometry> geometries_;
};

// The usual arguments of a cell workload: the cells (in and out), then the scalars.
inline pto::ChipStorageTaskArgs cell_args(uint64_t *cells, int64_t ncells,
                                          const std::vector<int64_t> &scalars) {
  pto::ChipStorageTaskArgs a;
  a.add_tensor(cells, static_cast<uint64_t>(ncells) * sizeof(uint64_t), PTO_DTYPE_U64, {ncells},
               PTO_DIR_INOUT);
  for (const int64_t s : scalars) a.add_scalar(s);
  return a;
}

// Three n x ld float32 matrices: a and b read (INPUT), c read and written (INOUT); then scalars.
inline pto::ChipStorageTaskArgs matrix_args(const float *a, const float *b, float *c, int64_t n, int64_t ld,
                                            const std::vector<int64_t> &scalars) {
  pto::ChipStorageTaskArgs x;
  const uint64_t bytes = static_cast<uint64_t>(n * ld) * sizeof(float);
  // INPUT tensors are only read from the host copy; the API takes a non-const pointer.
  x.add_tensor(const_cast<float *>(a), bytes, PTO_DTYPE_F32, {n, ld}, PTO_DIR_INPUT);
  x.add_tensor(const_cast<float *>(b), bytes, PTO_DTYPE_F32, {n, ld}, PTO_DIR_INPUT);
  x.add_tensor(c, bytes, PTO_DTYPE_F32, {n, ld}, PTO_DIR_INOUT);
  for (const int64_t s : scalars) x.add_scalar(s);
  return x;
}

// main() of a PTO benchmark: reports pto::Error as a failure with its hint.
template <typename Body>
int pto_main(Body body) {
  try {
    return body();
  } catch (const pto::Error &e) {
    std::fprintf(stderr, "error %s: %s\nhint: %s\n", e.name(), e.what(), e.hint());
    return 1;
  }
}

}  // namespace bench
#endif  // PTO_BENCH_PTO_HARNESS_H
