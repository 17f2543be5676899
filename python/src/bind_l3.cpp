// python/src/bind_l3.cpp — the L3 Worker for Python: L3Worker, L3Orchestrator, L3RunHandle, SubContext,
// Event.
//
// pto_runtime.l3 wraps these into the public classes (Worker(level=3), Orchestrator, RunHandle).
// The C++ core never holds a Python reference: the Python layer keeps every function and
// argument object of a run alive until the run is done, and the C++ side only borrows them.
// GIL rules: every call that may wait (submit, wait, close, alloc) releases the GIL; the
// orchestration function and SUB bodies re-acquire it to call into Python. The scheduler thread
// never touches Python. Python SUB bodies, heap views and the interruptible wait are in
// l3_glue.cpp, shared with the L4 module (bind_l4.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "l3_glue.h"
#include "pto/worker.h"

namespace pto_py {
namespace {

using nb::literals::operator""_a;
using Release = nb::call_guard<nb::gil_scoped_release>;

// An orchestrator valid only while the orchestration function runs.
struct PyOrch {
  pto::HostOrchestrator *o = nullptr;
  std::shared_ptr<void> heap;
  pto::HostOrchestrator &get() const {
    if (!o) {
      throw pto::Error(PTO_NOT_INITIALIZED,
                       "this Orchestrator is only valid inside the orchestration function it was given to");
    }
    return *o;
  }
};

struct PyL3Worker {
  std::unique_ptr<pto::Worker> w;
  PyL3Worker() = default;
  PyL3Worker(const PyL3Worker &) = delete;
  PyL3Worker &operator=(const PyL3Worker &) = delete;
  // Garbage-collected without close(): SUB threads may be waiting for the GIL to run a body,
  // so close without it.
  ~PyL3Worker() {
    if (w) {
      nb::gil_scoped_release release;
      w.reset();
    }
  }
  pto::Worker &get() const {
    if (!w) {
      throw pto::Error(PTO_NOT_INITIALIZED,
                       "Worker: the worker is closed (close() was called); create a new Worker");
    }
    return *w;
  }
};

std::vector<uint64_t> ids(const std::optional<std::vector<uint64_t>> &v) {
  return v ? *v : std::vector<uint64_t>{};
}

void bind_stats(nb::module_ &m) {
  nb::class_<pto::WorkerRunStats>(m, "WorkerRunStats", "Statistics of one L3 run.")
      .def_ro("chip_tasks", &pto::WorkerRunStats::chip_tasks, "chip tasks finished (a group counts once)")
      .def_ro("sub_tasks", &pto::WorkerRunStats::sub_tasks, "SUB tasks finished")
      .def_ro("failed_tasks", &pto::WorkerRunStats::failed_tasks, "tasks that ran and failed")
      .def_ro("skipped_tasks", &pto::WorkerRunStats::skipped_tasks, "tasks not run: a predecessor failed")
      .def_ro("tasks_per_chip", &pto::WorkerRunStats::tasks_per_chip, "chip runs per chip index")
      .def_ro("tasks_per_sub_worker", &pto::WorkerRunStats::tasks_per_sub_worker, "SUB bodies per SUB worker")
      .def_ro("wall_us", &pto::WorkerRunStats::wall_us, "submit() to the last task's completion")
      .def_ro("host_cpu_us", &pto::WorkerRunStats::host_cpu_us, "CPU time of this process over the run")
      .def_ro("scheduler_cpu_us", &pto::WorkerRunStats::scheduler_cpu_us, "CPU time of the scheduler thread")
      .def_ro("chip_device_us", &pto::WorkerRunStats::chip_device_us, "sum of the chip runs' device time")
      .def("table", &pto::WorkerRunStats::table, "A short printable table.")
      .def("__repr__", [](const pto::WorkerRunStats &s) {
        return "WorkerRunStats(chip_tasks=" + std::to_string(s.chip_tasks) +
               ", sub_tasks=" + std::to_string(s.sub_tasks) +
               ", failed_tasks=" + std::to_string(s.failed_tasks) +
               ", skipped_tasks=" + std::to_string(s.skipped_tasks) +
               ", wall_us=" + std::to_string(s.wall_us) + ")";
      });
}

void bind_events(nb::module_ &m) {
  nb::class_<pto::Event>(
      m, "Event", "An external event a SUB task's completion waits for; fulfill() once, from any thread.")
      .def("fulfill", &pto::Event::fulfill, Release(),
           "Fulfills the event; the task completes once its body returned and all its events are fulfilled.")
      .def("fail", &pto::Event::fail, Release(), "why"_a,
           "Settles the event as failed: once the body returned and every other event is settled, the "
           "task fails with TASK_FAILED naming `why`, and its dependents are skipped. Once per event.")
      .def_prop_ro("fulfilled", &pto::Event::fulfilled)
      .def_prop_ro("task_id", &pto::Event::task_id)
      .def_prop_ro("index", &pto::Event::index,
                   "Which ctx.defer() call of its task made it (0, 1, ...); reports name events so.")
      .def("__repr__", [](const pto::Event &e) {
        return "Event(task_id=" + std::to_string(e.task_id()) + ", index=" + std::to_string(e.index()) +
               ", fulfilled=" + (e.fulfilled() ? "True" : "False") + ")";
      });
  nb::class_<PySubContext>(m, "SubContext", "What a SUB body is given; valid only while the body runs.")
      .def(
          "defer", [](PySubContext &c) { return c.get().defer(); },
          "Adds an external event the task's completion (and so its dependents) waits for. Only "
          "in the body, on its thread; hand the Event to other threads (fulfill from any).")
      .def_prop_ro("task_id", [](PySubContext &c) { return c.get().task_id(); })
      .def_prop_ro("name", [](PySubContext &c) { return c.get().name(); })
      .def_prop_ro("sub_worker", [](PySubContext &c) { return c.get().sub_worker(); })
      .def_prop_ro(
          "upstream_error", [](PySubContext &c) { return c.get().upstream_error(); },
          "always_run tasks: why a task it depends on failed or was not run (the root cause), or ''.");
}

void bind_comm_domain(nb::module_ &m) {
  nb::class_<pto::CommDomain>(m, "L3CommDomain", "Native domain; use pto_runtime.l3.CommDomain.")
      .def_prop_ro("name", &pto::CommDomain::name)
      .def_prop_ro("workers", &pto::CommDomain::workers)
      .def("release", &pto::CommDomain::release)
      .def_prop_ro("released", &pto::CommDomain::released)
      .def(
          "context", [](const pto::CommDomain &d, int chip) { return pto_py::context_tuple(d[chip]); },
          "chip"_a,
          "(name, chip, domain_rank, domain_size, device_ctx, local_window_base, actual_window_size, "
          "[(buffer name, dtype, count, nbytes, offset, address)])");
}

void bind_orchestrator(nb::module_ &m) {
  nb::class_<PyOrch>(m, "L3Orchestrator", "Native orchestrator; use pto_runtime.l3.Orchestrator.")
      .def(
          "submit_chip",
          [](PyOrch &o, const pto::ChipCallable &c, const pto::ChipStorageTaskArgs &a,
             const pto::ChipCallConfig *cfg, int chip, const std::string &name,
             const std::optional<std::vector<uint64_t>> &after) {
            return o.get().submit_chip(c, a, cfg ? *cfg : pto::ChipCallConfig{}, chip, name, ids(after));
          },
          "callable"_a, "args"_a, "config"_a.none() = nb::none(), "chip"_a = pto::kAnyChip, "name"_a = "",
          "after"_a.none() = nb::none())
      .def(
          "submit_chip_group",
          [](PyOrch &o, const pto::ChipCallable &c,
             const std::vector<const pto::ChipStorageTaskArgs *> &parts, const pto::ChipCallConfig *cfg,
             const std::optional<std::vector<int>> &chips, const std::string &name,
             const std::optional<std::vector<uint64_t>> &after) {
            std::vector<pto::ChipStorageTaskArgs> copies;
            for (const auto *p : parts) {
              if (!p) throw pto::Error(PTO_INVALID_ARGUMENT, "submit_chip_group: an argument set is None");
              copies.push_back(*p);
            }
            return o.get().submit_chip_group(c, copies, cfg ? *cfg : pto::ChipCallConfig{},
                                             chips ? *chips : std::vector<int>{}, name, ids(after));
          },
          "callable"_a, "args"_a, "config"_a.none() = nb::none(), "chips"_a.none() = nb::none(),
          "name"_a = "", "after"_a.none() = nb::none())
      .def(
          "submit_sub",
          [](PyOrch &o, nb::handle fn, const pto::ChipStorageTaskArgs *a, const std::string &name,
             const std::optional<std::vector<uint64_t>> &after, bool always_run) {
            if (!PyCallable_Check(fn.ptr())) {
              throw pto::Error(PTO_INVALID_ARGUMENT, "submit_sub: fn must be callable as fn(ctx)");
            }
            pto::SubFn body = python_sub_fn(fn.ptr());  // fn: kept alive by pto_runtime.l3
            return o.get().submit_sub(std::move(body), a ? *a : pto::ChipStorageTaskArgs{}, name, ids(after),
                                      nullptr, always_run);
          },
          "fn"_a, "args"_a.none() = nb::none(), "name"_a = "", "after"_a.none() = nb::none(),
          "always_run"_a = false)
      .def("scope_begin", [](PyOrch &o) { o.get().scope_begin(); })
      .def("scope_end", [](PyOrch &o) { o.get().scope_end(); })
      .def(
          "allocate_domain",
          [](PyOrch &o, const std::string &name, const std::vector<int> &workers, uint64_t window_size,
             const std::vector<pto_py::SpecTuple> &buffers) {
            const std::vector<pto::CommBufferSpec> specs = pto_py::buffer_specs(buffers);
            pto::HostOrchestrator &orch = o.get();
            nb::gil_scoped_release release;  // may wait for heap space
            return orch.allocate_domain(name, workers, window_size, specs);
          },
          "name"_a, "workers"_a, "window_size"_a, "buffers"_a,
          "A communication domain; buffers: (name, dtype, count, nbytes) tuples. Use "
          "pto_runtime.l3.Orchestrator.allocate_domain.")
      .def(
          "alloc_bytes",
          [](PyOrch &o, uint64_t nbytes) {
            pto::HostOrchestrator &orch = o.get();
            void *p;
            {
              nb::gil_scoped_release release;
              p = orch.alloc(nbytes);
            }
            return byte_view(p, nbytes, o.heap, false);
          },
          "nbytes"_a, "A uint8 view of nbytes of host heap owned by the innermost scope.")
      .def_prop_ro("num_chips", [](PyOrch &o) { return o.get().num_chips(); })
      .def_prop_ro("num_sub_workers", [](PyOrch &o) { return o.get().num_sub_workers(); });
}

void bind_worker(nb::module_ &m) {
  nb::class_<pto::RunHandle>(m, "L3RunHandle", "Native run handle; use pto_runtime.l3.RunHandle.")
      .def("done", &pto::RunHandle::done, Release())
      .def("wait", &wait_interruptibly, "timeout_ms"_a = -1,
           "Waits for the run (timeout_ms < 0: no limit). Ctrl-C cancels the run and raises "
           "KeyboardInterrupt once it stopped.")
      .def("cancel", &pto::RunHandle::cancel, Release(),
           "Stops the run: queued tasks are skipped, running chip tasks aborted.")
      .def("stats", &pto::RunHandle::stats, Release())
      .def("pending_report", &pto::RunHandle::pending_report, Release());

  nb::class_<PyL3Worker>(m, "L3Worker", "Native L3 worker; use pto_runtime.Worker(level=3, ...).")
      .def(
          "__init__",
          [](PyL3Worker *self, const std::vector<int> &device_ids, int num_sub_workers,
             const std::string &platform, const std::string &runtime, pto::ChipMode mode, uint64_t heap_bytes,
             uint32_t spawn_timeout_ms, uint32_t heap_wait_ms, uint32_t close_timeout_ms) {
            pto::WorkerOptions o;
            o.device_ids = device_ids;
            o.num_sub_workers = num_sub_workers;
            o.platform = platform;
            o.runtime = runtime;
            o.mode = mode;
            o.heap_bytes = heap_bytes;
            o.spawn_timeout_ms = spawn_timeout_ms;
            o.heap_wait_ms = heap_wait_ms;
            o.close_timeout_ms = close_timeout_ms;
            PyL3Worker *w = new (self) PyL3Worker();
            nb::gil_scoped_release release;
            w->w = std::make_unique<pto::Worker>(o);
          },
          "device_ids"_a, "num_sub_workers"_a, "platform"_a, "runtime"_a, "mode"_a, "heap_bytes"_a,
          "spawn_timeout_ms"_a, "heap_wait_ms"_a, "close_timeout_ms"_a)
      .def(
          "submit",
          [](PyL3Worker &w, nb::handle runner) {
            pto::Worker &worker = w.get();
            std::shared_ptr<void> heap = worker.heap_keepalive();
            PyObject *borrowed = runner.ptr();  // the caller holds it for the duration of the call
            pto::Worker::OrchFn fn = [borrowed, heap](pto::HostOrchestrator &o) {
              call_python_orchestration(borrowed, [&] { return new PyOrch{&o, heap}; });
            };
            nb::gil_scoped_release release;
            return worker.submit(fn);
          },
          "runner"_a)
      .def(
          "alloc_bytes",
          [](PyL3Worker &w, uint64_t nbytes) {
            pto::Worker &worker = w.get();
            void *p;
            {
              nb::gil_scoped_release release;
              p = worker.alloc(nbytes);
            }
            return byte_view(p, nbytes, worker.heap_keepalive(), true);
          },
          "nbytes"_a, "A uint8 view of nbytes of host heap, freed when the last view is garbage-collected.")
      .def("close", &close_worker<PyL3Worker>, "timeout_ms"_a = -1,
           "timeout_ms < 0: the worker's close_timeout.")
      .def_prop_ro("closed", [](PyL3Worker &w) { return !w.w || w.w->closed(); })
      .def_prop_ro("num_chips", [](PyL3Worker &w) { return w.get().num_chips(); })
      .def_prop_ro("num_sub_workers", [](PyL3Worker &w) { return w.get().num_sub_workers(); })
      .def_prop_ro("heap_bytes_in_use", [](PyL3Worker &w) { return w.get().heap_bytes_in_use(); })
      .def("in_heap", [](PyL3Worker &w, uintptr_t p,
                         uint64_t n) { return w.get().in_heap(reinterpret_cast<const void *>(p), n); })
      .def(
          "chip_pid", [](PyL3Worker &w, int chip) { return w.get().chip_pid(chip); }, "chip"_a);
}

}  // namespace

void bind_l3(nb::module_ &m) {
  m.attr("ANY_CHIP") = pto::kAnyChip;
  m.attr("L3_MAX_SUB_WORKERS") = pto::kMaxSubWorkers;
  m.attr("L3_MIN_HEAP_BYTES") = pto::kMinHeapBytes;
  m.attr("L3_MAX_HEAP_BYTES") = pto::kMaxHeapBytes;
  bind_stats(m);
  bind_events(m);
  bind_comm_domain(m);
  bind_orchestrator(m);
  bind_worker(m);
  bind_runtime_identity(m);
}

}  // namespace pto_py
