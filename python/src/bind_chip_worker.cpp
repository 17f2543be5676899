// python/src/bind_chip_worker.cpp — ChipCallable, ChipStorageTaskArgs and ChipWorker for Python.
//
// ChipStorageTaskArgs is bound at the level of the C++ API (a host address and a byte count);
// pto_runtime.ChipStorageTaskArgs subclasses it in Python to take NumPy arrays, check them and
// keep them alive. Calls that may block (init, set_device, run, finalize) release the GIL so
// other Python threads proceed; a per-worker mutex then keeps two Python threads from driving
// the same ChipWorker at once, which the C++ class does not promise to survive.
//
// Ctrl-C: run() and wait() wait in slices of kSliceMs with the GIL released; between slices
// they take the GIL and call PyErr_CheckSignals(). On a pending KeyboardInterrupt (or any
// exception a signal handler raised) the run is aborted (ChipWorker::abort: stopped, drained,
// freed) and the exception propagates: the worker stays usable for the next run.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "pto/chip_worker.h"
#include "pto/kernel.h"

namespace pto_py {
namespace {

using nb::literals::operator""_a;
namespace fs = std::filesystem;
using pto::ChipCallable;
using pto::ChipCallConfig;
using pto::ChipStorageTaskArgs;

using KernelTuple = std::tuple<uint32_t, pto_core_type, fs::path>;

void bind_callable(nb::module_ &m) {
  nb::class_<ChipCallable>(
      m, "ChipCallable",
      "An orchestration shared object plus the kernels (by func_id) its tasks call; all paths "
      "are results of KernelCompiler.")
      .def(
          "__init__",
          [](ChipCallable *self, std::optional<fs::path> orchestration,
             std::optional<std::vector<KernelTuple>> kernels) {
            ChipCallable *c = new (self) ChipCallable();
            if (orchestration) c->set_orchestration(orchestration->string());
            if (kernels)
              for (const auto &[func_id, core_type, path] : *kernels)
                c->add_kernel(func_id, core_type, path.string());
          },
          "orchestration"_a.none() = nb::none(), "kernels"_a.none() = nb::none(),
          "kernels: (func_id, core_type, binary_path) tuples, as add_kernel takes them.")
      .def(
          "add_kernel",
          [](ChipCallable &c, uint32_t func_id, pto_core_type core_type, const fs::path &path) {
            c.add_kernel(func_id, core_type, path.string());
          },
          "func_id"_a, "core_type"_a, "binary_path"_a,
          "Adds a compiled kernel; raises InvalidArgumentError if func_id is already defined.")
      .def(
          "set_cost_model",
          [](ChipCallable &c, uint32_t func_id, std::optional<fs::path> path,
             std::optional<std::string> unavailable) {
            c.set_cost_model(func_id, path ? path->string() : "", unavailable.value_or(""));
          },
          "func_id"_a, "path"_a.none(), "unavailable"_a.none() = nb::none(),
          "Sim timing mode: kernel func_id's cost-model twin (KernelCompiler.compile_incore_cost_model), "
          "which prices each of its invocations with PTO-ISA's cost model; or, with path None, why "
          "there is none (the run reports it in RunStats.price_note and prices the kernel by its "
          "host time). Raises InvalidArgumentError for an undefined func_id or when both are None.")
      .def(
          "add_kernels", [](ChipCallable &c, const fs::path &path) { return c.add_kernels(path.string()); },
          "program_path"_a,
          "Adds every kernel of a kernel program (PTO_KERNEL_PROGRAM, pto/kernel_list.h) under its "
          "KernelId as func_id and its KERNEL_LIST core type; returns how many. All or nothing.")
      .def_prop_rw(
          "orchestration", [](const ChipCallable &c) { return c.orchestration(); },
          [](ChipCallable &c, const fs::path &p) { c.set_orchestration(p.string()); },
          "Path of the orchestration shared object.")
      .def_prop_ro(
          "kernels",
          [](const ChipCallable &c) {
            std::vector<std::tuple<uint32_t, pto_core_type, std::string>> out;
            for (const auto &k : c.kernels()) out.emplace_back(k.func_id, k.core_type, k.binary_path);
            return out;
          },
          "(func_id, core_type, binary_path) of every kernel, in the order added.")
      .def("__repr__", [](const ChipCallable &c) {
        std::string r = "ChipCallable(orchestration=" + py_quote(c.orchestration()) + ", kernels={";
        const char *sep = "";
        for (const auto &k : c.kernels()) {
          r += sep + std::to_string(k.func_id) + ": " + pto_core_type_name(k.core_type);
          sep = ", ";
        }
        return r + "})";
      });
}

std::string arg_repr(const pto_arg_desc &a) {
  if (a.kind == PTO_ARG_SCALAR) return "scalar(" + std::to_string(a.scalar) + ")";
  static const char *const kDir[] = {"in", "out", "inout"};
  std::string r = std::string(pto_dtype_name(static_cast<pto_dtype>(a.dtype))) + "[";
  for (uint32_t i = 0; i < a.ndim && i < PTO_MAX_DIMS; ++i) r += (i ? ", " : "") + std::to_string(a.shape[i]);
  return r + "] " + (a.direction < 3 ? kDir[a.direction] : "?") +
         (a.kind == PTO_ARG_DEVICE_TENSOR   ? " device"
          : a.kind == PTO_ARG_SHARED_TENSOR ? " shared"
                                            : "");
}

void bind_task_args(nb::module_ &m) {
  nb::class_<ChipStorageTaskArgs>(
      m, "ChipStorageTaskArgs",
      "The run's arguments in order: host tensors (by address) and scalars. The caller keeps "
      "every tensor's memory valid until the run returns; pto_runtime.ChipStorageTaskArgs takes "
      "NumPy arrays and does that for you.")
      .def(nb::init<>())
      .def(
          "add_host_tensor",
          [](ChipStorageTaskArgs &a, uintptr_t host_ptr, uint64_t nbytes, pto_dtype dtype,
             const std::vector<int64_t> &shape, pto_direction direction) {
            a.add_tensor(reinterpret_cast<void *>(host_ptr), nbytes, dtype, shape, direction);
          },
          "host_ptr"_a, "nbytes"_a, "dtype"_a, "shape"_a, "direction"_a,
          "Adds a C-contiguous host buffer of nbytes at address host_ptr. Unchecked: prefer "
          "pto_runtime.ChipStorageTaskArgs.add_tensor(array).")
      .def(
          "add_device_tensor",
          [](ChipStorageTaskArgs &a, uintptr_t device_ptr, uint64_t nbytes, pto_dtype dtype,
             const std::vector<int64_t> &shape, pto_direction direction) {
            a.add_device_tensor(reinterpret_cast<void *>(device_ptr), nbytes, dtype, shape, direction);
          },
          "device_ptr"_a, "nbytes"_a, "dtype"_a, "shape"_a, "direction"_a,
          "Adds a tensor already in the chip's device memory (a communication domain's buffer): "
          "the run uses it in place and copies nothing. Prefer CommBuffer.tensor().")
      .def(
          "add_scalar_i64", [](ChipStorageTaskArgs &a, int64_t v) { a.add_scalar(v); }, "value"_a,
          "Adds a 64-bit integer scalar.")
      .def("add_scalar_f32", &ChipStorageTaskArgs::add_scalar_f32, "value"_a,
           "Adds a float32 scalar (its bits travel in the 64-bit slot).")
      .def("clear", &ChipStorageTaskArgs::clear, "Removes every argument.")
      .def("__len__", [](const ChipStorageTaskArgs &a) { return a.descs().size(); })
      .def("__repr__", [](const ChipStorageTaskArgs &a) {
        std::string r = "ChipStorageTaskArgs([";
        const char *sep = "";
        for (const auto &d : a.descs()) {
          r += sep + arg_repr(d);
          sep = ", ";
        }
        return r + "])";
      });
}

// The bound ChipWorker: the C++ worker plus the lock that serializes Python threads on it.
struct PyChipWorker {
  pto::ChipWorker worker;
  // Held for the whole of every C++ call on `worker`, always taken after the GIL is released
  // (so a thread waiting for it never blocks other Python threads).
  std::mutex mu;
  // The args of a started run, kept alive (with their arrays) until poll() finishes it.
  // Touched only with the GIL held.
  nb::object in_flight_args;
};

using Release = nb::call_guard<nb::gil_scoped_release>;

template <typename F>
auto locked(PyChipWorker &w, F &&f) {
  std::lock_guard<std::mutex> lock(w.mu);
  return f(w.worker);
}

constexpr int64_t kSliceMs = 50;  // Ctrl-C is noticed within about this long

// Waits (GIL held on entry and exit) for the started run to end, up to timeout_s seconds (none:
// no limit). True once it ended, false when the timeout passed. A signal whose Python handler
// raises (Ctrl-C: KeyboardInterrupt) aborts the run and throws nb::python_error.
bool wait_interruptibly(PyChipWorker &w, std::optional<double> timeout_s) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (;;) {
    int64_t slice = kSliceMs;
    if (timeout_s) {
      const double left_ms =
          *timeout_s * 1e3 - std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (left_ms <= 0) return false;
      slice = std::min<int64_t>(slice, static_cast<int64_t>(left_ms) + 1);
    }
    bool ended;
    {
      nb::gil_scoped_release release;
      ended = locked(w, [&](pto::ChipWorker &cw) { return cw.wait(slice); });
    }
    if (ended) return true;
    if (PyErr_CheckSignals() != 0) {
      nb::python_error interrupted;  // takes the pending exception (KeyboardInterrupt)
      try {
        nb::gil_scoped_release release;
        locked(w, [](pto::ChipWorker &cw) {
          if (cw.busy()) cw.abort();
        });
      } catch (...) {
        // A kernel that did not return: the worker is broken and says so on its next run;
        // the interrupt is still what the caller asked for.
      }
      w.in_flight_args = nb::object();
      throw interrupted;
    }
  }
}

// Finishes a run that ended (wait_interruptibly returned true): copies outputs, returns stats.
pto::RunStats finish_run(PyChipWorker &w) {
  pto::RunStats stats;
  try {
    nb::gil_scoped_release release;
    locked(w, [&](pto::ChipWorker &cw) { cw.poll(&stats); });
  } catch (...) {
    w.in_flight_args = nb::object();
    throw;
  }
  w.in_flight_args = nb::object();
  return stats;
}

void start_run(PyChipWorker &w, const ChipCallable &callable, nb::object args, const ChipCallConfig *config) {
  const auto &a = nb::cast<const ChipStorageTaskArgs &>(args);
  {
    nb::gil_scoped_release release;
    locked(w, [&](pto::ChipWorker &cw) { cw.start(callable, a, config ? *config : ChipCallConfig{}); });
  }
  w.in_flight_args = std::move(args);
}

void bind_worker(nb::module_ &m) {
  nb::class_<PyChipWorker>(
      m, "ChipWorker",
      "One device context of a host program (L2, one chip): init, set_device, run any number "
      "of times, finalize. Also a context manager that finalizes on exit.")
      .def(nb::init<>())
      .def(
          "init",
          [](PyChipWorker &w, const std::string &platform, const std::string &runtime) {
            locked(w, [&](pto::ChipWorker &cw) { cw.init(platform, runtime); });
          },
          "platform"_a = "a2a3sim", "runtime"_a = "host_build_graph", Release(),
          "Loads the host program of (platform, runtime) from the installed runtimes.")
      .def(
          "init",
          [](PyChipWorker &w, const pto::RuntimeBinaries &binaries) {
            locked(w, [&](pto::ChipWorker &cw) { cw.init(binaries); });
          },
          "binaries"_a, Release(),
          "Loads explicit binaries, e.g. RuntimeBuilder(platform).get_binaries(runtime).")
      .def(
          "set_device",
          [](PyChipWorker &w, int device_id) {
            locked(w, [&](pto::ChipWorker &cw) { cw.set_device(device_id); });
          },
          "device_id"_a = 0, Release(),
          "Creates the device context (on sim: starts the threads) and warms it with one internal run, "
          "so that the first run() costs less.")
      .def(
          "prewarm",
          [](PyChipWorker &w, const ChipCallConfig &config) {
            locked(w, [&](pto::ChipWorker &cw) { cw.prewarm(config); });
          },
          "config"_a, Release(),
          "One more warm-up run, with this config's clusters, AICPU threads and ring sizes instead of the "
          "defaults, so that a first run() with it costs what a later one does. After set_device(); a bad "
          "config raises as run() would.")
      .def(
          "run",
          [](PyChipWorker &w, const ChipCallable &callable, nb::object args, const ChipCallConfig *config) {
            locked(w, [](pto::ChipWorker &cw) { cw.check_ready("run"); });
            start_run(w, callable, std::move(args), config);
            wait_interruptibly(w, std::nullopt);
            return finish_run(w);
          },
          "callable"_a, "args"_a, "config"_a.none() = nb::none(),
          nb::sig("def run(self, callable: ChipCallable, args: ChipStorageTaskArgs, "
                  "config: ChipCallConfig | None = None) -> RunStats"),
          "Runs the callable's graph on the device; blocks until it is done. Output tensors are "
          "copied back into the arrays given in args. Ctrl-C (KeyboardInterrupt) aborts the run "
          "within about 50 ms and propagates; the worker stays usable.")
      .def(
          "start",
          [](PyChipWorker &w, const ChipCallable &callable, nb::object args, const ChipCallConfig *config) {
            start_run(w, callable, std::move(args), config);
          },
          "callable"_a, "args"_a, "config"_a.none() = nb::none(),
          nb::sig("def start(self, callable: ChipCallable, args: ChipStorageTaskArgs, "
                  "config: ChipCallConfig | None = None) -> None"),
          "Starts a run and returns once the device programs are launched (TACL-style); "
          "wait() or poll() finishes it. The arrays in args are kept alive until then. One run in "
          "flight per worker.")
      .def(
          "wait",
          [](PyChipWorker &w, std::optional<double> timeout) {
            if (timeout && !(*timeout >= 0)) {
              throw pto::Error(
                  PTO_INVALID_ARGUMENT,
                  "ChipWorker.wait: timeout must be >= 0 seconds or None, got " + std::to_string(*timeout));
            }
            {
              nb::gil_scoped_release release;
              if (!locked(w, [](pto::ChipWorker &cw) { return cw.busy(); }))
                throw pto::Error(PTO_INVALID_ARGUMENT,
                                 "ChipWorker.wait without a started run: call start() first");
            }
            if (!wait_interruptibly(w, timeout)) {
              char secs[32];
              std::snprintf(secs, sizeof secs, "%g", *timeout);
              throw pto::Error(
                  PTO_RUN_TIMEOUT,
                  std::string("ChipWorker.wait: the started run did not finish within timeout=") + secs +
                      " s; it is still running: wait() again, poll(), or abort() it");
            }
            return finish_run(w);
          },
          "timeout"_a.none() = nb::none(),
          "Waits for the started run and returns its RunStats (outputs copied back), like run(). "
          "timeout in seconds (None = no limit): past it, raises RunTimeoutError and the run goes "
          "on. Ctrl-C aborts the run and raises KeyboardInterrupt, as in run().")
      .def(
          "abort",
          [](PyChipWorker &w) {
            {
              nb::gil_scoped_release release;
              locked(w, [](pto::ChipWorker &cw) { cw.abort(); });
            }
            w.in_flight_args = nb::object();
          },
          "Stops the started run (its outputs are not copied back); the worker can run again. "
          "Raises DeviceError if a kernel did not return within 5 s (the worker is then broken).")
      .def(
          "poll",
          [](PyChipWorker &w) -> std::optional<pto::RunStats> {
            pto::RunStats stats;
            bool done = true;
            try {
              nb::gil_scoped_release release;
              done = locked(w, [&](pto::ChipWorker &cw) { return cw.poll(&stats); });
            } catch (...) {
              w.in_flight_args = nb::object();  // the run is over, failed
              throw;
            }
            if (!done) return std::nullopt;
            w.in_flight_args = nb::object();
            return stats;
          },
          "Never blocks: None while the started run is in flight, its RunStats once it "
          "finished (outputs copied back). Raises like run() if the run failed.")
      .def_prop_ro(
          "busy",
          [](PyChipWorker &w) {
            nb::gil_scoped_release release;
            return locked(w, [](pto::ChipWorker &cw) { return cw.busy(); });
          },
          "True between start() and the poll() that finishes the run.")
      .def(
          "finalize",
          [](PyChipWorker &w) {
            {
              nb::gil_scoped_release release;
              locked(w, [](pto::ChipWorker &cw) { cw.finalize(); });
            }
            w.in_flight_args = nb::object();
          },
          "Stops the device context (and a started run nobody finished) and unloads the host "
          "program.")
      .def_prop_ro(
          "initialized",
          [](PyChipWorker &w) {
            nb::gil_scoped_release release;
            return locked(w, [](pto::ChipWorker &cw) { return cw.initialized(); });
          },
          "True between init() and finalize().")
      .def_prop_ro(
          "device_id",
          [](PyChipWorker &w) {
            nb::gil_scoped_release release;
            return locked(w, [](pto::ChipWorker &cw) { return cw.device_id(); });
          },
          "The device set by set_device().")
      .def_prop_ro(
          "platform_info",
          [](PyChipWorker &w) {
            nb::gil_scoped_release release;
            return locked(w, [](pto::ChipWorker &cw) { return cw.platform_info(); });
          },
          "Geometry of the loaded platform.")
      .def(
          "last_trace_json",
          [](PyChipWorker &w) {
            nb::gil_scoped_release release;
            return locked(w, [](pto::ChipWorker &cw) { return cw.last_trace_json(); });
          },
          "The last run's trace as JSON text (docs/guide/profiling.md); empty unless that run had "
          "ChipCallConfig.enable_profiling. ChipWorker.last_trace() parses it.")
      .def(
          "last_trace",
          [](PyChipWorker &w) -> nb::object {
            std::string text;
            {
              nb::gil_scoped_release release;
              text = locked(w, [](pto::ChipWorker &cw) { return cw.last_trace_json(); });
            }
            if (text.empty()) return nb::none();
            return nb::module_::import_("json").attr("loads")(nb::str(text.data(), text.size()));
          },
          nb::sig("def last_trace(self) -> dict[str, typing.Any] | None"),
          "The last run's trace as a dict (schema in docs/guide/profiling.md), or None unless that run "
          "had ChipCallConfig(enable_profiling=True).")
      .def(
          "__enter__", [](nb::handle self) { return nb::borrow(self); },
          nb::sig("def __enter__(self) -> ChipWorker"))
      .def(
          "__exit__",
          [](PyChipWorker &w, nb::handle, nb::handle, nb::handle) {
            {
              nb::gil_scoped_release release;
              locked(w, [](pto::ChipWorker &cw) {
                if (cw.initialized()) cw.finalize();
              });
            }
            w.in_flight_args = nb::object();
          },
          "exc_type"_a.none(), "exc_value"_a.none(), "traceback"_a.none())
      .def("__repr__", [](PyChipWorker &w) {
        std::unique_lock<std::mutex> lock(w.mu, std::try_to_lock);
        if (!lock.owns_lock()) return std::string("ChipWorker(<running>)");
        if (!w.worker.initialized()) return std::string("ChipWorker(<not initialized>)");
        return "ChipWorker(platform='" + w.worker.platform_info().platform +
               "', device_id=" + std::to_string(w.worker.device_id()) + ")";
      });
}

void bind_kernel_table(nb::module_ &m) {
  nb::class_<pto::KernelTableRow>(m, "KernelTableRow", "One kernel of a kernel program: func_id, name, core_type.")
      .def_ro("func_id", &pto::KernelTableRow::func_id)
      .def_ro("name", &pto::KernelTableRow::name)
      .def_ro("core_type", &pto::KernelTableRow::core_type)
      .def("__repr__", [](const pto::KernelTableRow &r) {
        return "KernelTableRow(func_id=" + std::to_string(r.func_id) + ", name=" + py_quote(r.name) +
               ", core_type=" + std::to_string(static_cast<int>(r.core_type)) + ")";
      });
  m.def(
      "read_kernel_table", [](const fs::path &path) { return pto::read_kernel_table(path.string()); },
      "program_path"_a,
      "The kernels of a kernel program binary (pto/kernel_list.h), in func_id order. LoadError if "
      "it cannot be loaded, InvalidArgumentError for a one-kernel binary.");
}

}  // namespace

void bind_chip_worker(nb::module_ &m) {
  bind_callable(m);
  bind_kernel_table(m);
  bind_task_args(m);
  bind_worker(m);
}

}  // namespace pto_py
