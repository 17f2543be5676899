// include/pto/backend.h — the backend registry (cpu_sim, ascend_npu, amd_aie) and BackendOptions.
//
// A backend is what a platform name runs on: the simulated chips a2a3sim / a5sim run on
// `cpu_sim`, the Ascend chips a2a3 / a5 on `ascend_npu`; `amd_aie` has no platform yet. The
// geometry table (src/core/geometry.h) says which backend each platform belongs to, and this
// registry is the one place that turns that name into a backend (where its runtime programs
// live, whether it can run here). RuntimeBuilder and KernelCompiler go through it.
//
// Backends register themselves when their library is linked: each one defines a static
// BackendRegistrar (below), so a backend whose library is not linked into the program is
// simply absent from backends(). Factories run once, on first use; a factory that throws
// pto::Error (NOT_SUPPORTED with the reason, e.g. "CANN toolkit ... not found at build time")
// marks its backend unavailable, and get_backend() rethrows that error every time.
//
//   for (const pto::BackendInfo &b : pto::backends())
//     printf("%s %s %s\n", b.name.c_str(), b.available ? "yes" : "no", b.reason.c_str());
//   const pto::Backend &sim = pto::get_backend("cpu_sim");
#ifndef PTO_BACKEND_H
#define PTO_BACKEND_H

#include <memory>
#include <string>
#include <vector>

#include "pto/schedule_config.h"

namespace pto {

// What a compile of a program for one backend, and its runs, are asked to do (seed 004,
// section 2). Checked by Backend::check; turned into KernelCompiler options and a
// ChipCallConfig by pto/compile_options.h. (pto::CompileOptions is KernelCompiler's own flags:
// include directories, defines, cache.) Python: pto_runtime.CompileOptions, whose fields and
// error messages ("CompileOptions.<field>") are these.
//
// `sched` is seed 004's lowered schedule configuration (pto/schedule_config.h): task_window
// with its overflow mode, pipeline_depth with its scope, batch_deps (tensormap runtime; a no-op
// in host_build_graph) and dispatch_threshold with its metric, scope, policies and active core
// set. make_call_config copies it into the ChipCallConfig fields both runtimes read.
struct BackendOptions {
  std::string target = "cpu_sim";  // a registered backend name (pto::backends())
  std::string platform;            // a platform of that backend; "" = its first one
  int opt_level = 2;               // 0..3: the kernels' -O level
  bool debug = false;              // kernels and orchestrations compiled with -g
  bool profiling = false;          // runs record a trace (ChipCallConfig.enable_profiling)
  // Host scheduler threads (cpu_sim: the fiber pool's workers). 0 = the backend's default.
  int host_threads = 0;
  // AICPU scheduler threads per run (ChipCallConfig.aicpu_thread_num). 0 = the default (1).
  int aicpu_threads = 0;
  // The schedule primitives; the default asks for none (task_window 0 keeps the call config's).
  ScheduleConfig sched;
};

// One row of backends().
struct BackendInfo {
  std::string name;
  bool available = false;
  std::string reason;                  // why it is unavailable; "" when available
  std::vector<std::string> platforms;  // the platform names that run on it (geometry table)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char *name() const = 0;
  // The folder under the runtimes root holding its programs: <root>/<dir>/<runtime>/lib*.so.
  virtual const char *program_dir() const = 0;
  // Whether KernelCompiler builds its kernels with the host C++ compiler ($CXX). A backend
  // that needs another toolchain answers false and KernelCompiler raises NOT_SUPPORTED.
  virtual bool host_compiled_kernels() const = 0;
  // The platform names that run on it, from the geometry table.
  std::vector<std::string> platforms() const;
  // Checks `options` against this backend (target must be this backend): INVALID_ARGUMENT
  // naming the field for a value out of range or a platform of another backend,
  // NOT_SUPPORTED for a value this backend cannot honour. Backends refine it.
  virtual void check(const BackendOptions &options) const;
  // options.platform, or this backend's first platform when it is empty (NOT_SUPPORTED when
  // the backend has none).
  std::string platform_for(const BackendOptions &options) const;
};

using BackendFactory = std::unique_ptr<Backend> (*)();

// Adds a backend. INVALID_ARGUMENT for an empty name, a null factory or a name that is
// already registered. Thread-safe; usually called before main by a BackendRegistrar.
void register_backend(const std::string &name, BackendFactory factory);
// The backend `name`: INVALID_ARGUMENT listing the registered names when it is unknown,
// the factory's error (NOT_SUPPORTED with the reason) when it is unavailable here.
const Backend &get_backend(const std::string &name);
// Every registered backend, sorted by name, with its availability.
std::vector<BackendInfo> backends();
// The backend a platform name runs on (geometry table): INVALID_ARGUMENT listing the known
// platforms for an unknown name, get_backend()'s errors otherwise.
const Backend &backend_for_platform(const std::string &platform);

// Registers a backend at static-initialisation time: `static const pto::BackendRegistrar
// r("cpu_sim", &make_cpu_sim);` in the backend's own source file.
struct BackendRegistrar {
  BackendRegistrar(const char *name, BackendFactory factory);
};

}  // namespace pto
#endif  // PTO_BACKEND_H
