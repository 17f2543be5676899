// include/pto/compile_options.h — what a BackendOptions means for the kernel compiler and for a run.
//
// One options object drives both halves of "compile for a backend, then run":
//   pto::BackendOptions o;  o.target = "cpu_sim";  o.opt_level = 3;  o.profiling = true;
//   pto::KernelCompiler kc = pto::make_kernel_compiler(o);       // a2a3sim, -O3
//   pto::ChipCallConfig cfg = pto::make_call_config(o);          // enable_profiling = true
// Each function first checks `o` with get_backend(o.target).check(o): an unknown target is
// INVALID_ARGUMENT, an unavailable one NOT_SUPPORTED with its reason, a bad field
// INVALID_ARGUMENT (or NOT_SUPPORTED) naming it.
#ifndef PTO_COMPILE_OPTIONS_H
#define PTO_COMPILE_OPTIONS_H

#include <string>

#include "pto/backend.h"
#include "pto/chip_worker.h"
#include "pto/kernel_compiler.h"

namespace pto {

// The platform `o` runs on: o.platform, or the first platform of o.target's backend.
std::string platform_of(const BackendOptions &o);

// `base` (include directories, defines, cache) with o's settings: opt_level -> "-O<n>",
// debug -> -g (debug information in every kernel and orchestration binary).
CompileOptions kernel_compile_options(const BackendOptions &o, CompileOptions base = {});

// A KernelCompiler for platform_of(o) with kernel_compile_options(o, base).
KernelCompiler make_kernel_compiler(const BackendOptions &o, CompileOptions base = {});

// `base` with o's settings: profiling -> enable_profiling, aicpu_threads (when not 0) ->
// aicpu_thread_num.
ChipCallConfig make_call_config(const BackendOptions &o, ChipCallConfig base = {});

}  // namespace pto
#endif  // PTO_COMPILE_OPTIONS_H
