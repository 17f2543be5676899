// python/src/bindings.h — the parts of module pto_runtime._native, one bind function per concept.
//
// Every bind_* function registers its classes and functions on the module; native_module.cpp
// calls them in dependency order (enums before the classes whose signatures name them).
#ifndef PTO_PYTHON_BINDINGS_H
#define PTO_PYTHON_BINDINGS_H

#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

namespace pto_py {

namespace nb = nanobind;

// Python's repr of a str ('a2a3sim'), so names and paths print unambiguously in __repr__.
inline std::string py_quote(const std::string &s) {
  return nb::cast<std::string>(nb::repr(nb::str(s.c_str(), s.size())));
}

// Status enum, status_* look-ups, NativeError, set_error_factory, and the pto::Error translator.
void bind_errors(nb::module_ &m);
// CoreType, Direction, DType.
void bind_types(nb::module_ &m);
// (config_enums.h) bind_config_enums: WindowOverflow, PipelineScope, DispatchMetric, DispatchScope,
// DispatchPolicy, LogLevel, ChipMode and enum_value, before the classes whose fields hold them.
// ChipCallConfig, RunStats, PlatformInfo: the plain values a run takes and returns.
void bind_run_values(nb::module_ &m);
// ChipCallable, ChipStorageTaskArgs (raw pointers; the package wraps it for NumPy), ChipWorker.
void bind_chip_worker(nb::module_ &m);
// KernelCompiler, RuntimeBuilder, RuntimeBinaries.
void bind_build(nb::module_ &m);
// backends, get_backend, backend_for_platform, Backend, BackendInfo, CompileOptions.
void bind_backend(nb::module_ &m);
// L3Worker, L3Orchestrator, L3RunHandle, WorkerRunStats, SubContext, Event (bind_l3.cpp).
void bind_l3(nb::module_ &m);

}  // namespace pto_py

#endif  // PTO_PYTHON_BINDINGS_H
