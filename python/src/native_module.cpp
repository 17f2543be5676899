// python/src/native_module.cpp — module pto_runtime._native: the C++ API of include/pto/ for Python.
//
// The module is private: users import pto_runtime, which re-exports these classes, adds the
// NumPy-facing ChipStorageTaskArgs and the Worker factory, and registers the factory that turns
// pto::Error into the typed exceptions of pto_runtime.errors (see bind_errors.cpp).
#include "bindings.h"
#include "config_enums.h"

#ifndef PTO_VERSION
#define PTO_VERSION "0.0.0+unknown"
#endif

NB_MODULE(_native, m) {
  m.doc() = "Private native core of pto_runtime; import pto_runtime instead.";
  m.attr("VERSION") = PTO_VERSION;  // pto_runtime.__version__; the project() version in CMake
  pto_py::bind_errors(m);
  pto_py::bind_types(m);
  pto_py::bind_config_enums(m);
  pto_py::bind_run_values(m);
  pto_py::bind_chip_worker(m);
  pto_py::bind_build(m);
  pto_py::bind_backend(m);
  pto_py::bind_l3(m);
}
