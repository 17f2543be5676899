// src/worker/compile_options.cpp — turns a BackendOptions into KernelCompiler options and a
// ChipCallConfig.
#include "pto/compile_options.h"

#include <utility>

namespace pto {
namespace {

const Backend &checked(const BackendOptions &o) {
  const Backend &b = get_backend(o.target);
  b.check(o);
  return b;
}

}  // namespace

std::string platform_of(const BackendOptions &o) {
  return checked(o).platform_for(o);
}

CompileOptions kernel_compile_options(const BackendOptions &o, CompileOptions base) {
  checked(o);
  base.opt_level = "-O" + std::to_string(o.opt_level);
  base.debug_info = o.debug;
  return base;
}

KernelCompiler make_kernel_compiler(const BackendOptions &o, CompileOptions base) {
  return KernelCompiler(platform_of(o), kernel_compile_options(o, std::move(base)));
}

ChipCallConfig make_call_config(const BackendOptions &o, ChipCallConfig base) {
  checked(o);
  base.enable_profiling = o.profiling;
  if (o.aicpu_threads != 0) base.aicpu_thread_num = o.aicpu_threads;
  // The schedule primitives: one field each, read alike by both runtimes (pto/schedule_config.h).
  if (o.sched.task_window != 0) base.task_window = o.sched.task_window;
  base.task_window_overflow = static_cast<uint32_t>(o.sched.window_overflow);
  base.pipeline_depth = o.sched.pipeline_depth;
  base.pipeline_scope = static_cast<uint32_t>(o.sched.pipeline_scope);
  base.batch_deps = o.sched.batch_deps;
  base.dispatch_metric = static_cast<uint32_t>(o.sched.dispatch_metric);
  base.dispatch_threshold = o.sched.dispatch_threshold;
  base.dispatch_scope = static_cast<uint32_t>(o.sched.dispatch_scope);
  base.dispatch_below = static_cast<uint32_t>(o.sched.dispatch_below);
  base.dispatch_above = static_cast<uint32_t>(o.sched.dispatch_above);
  base.active_cores_below = o.sched.active_cores_below;
  return base;
}

}  // namespace pto
