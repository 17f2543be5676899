// python/src/bind_l4.cpp — module pto_runtime._l4native: pto::l4 (include/pto/l4.h) for Python, built only
// with MPI.
//
// A module of its own so that `import pto_runtime` (module _native) never needs libmpi: CMake
// builds this one only when it finds an MPI C library. pto_runtime.l4 wraps these classes into
// Worker(level=4), Orchestrator and RunHandle. It returns and takes the classes of _native
// (L3RunHandle, ChipStorageTaskArgs, ChipCallable, ChipCallConfig, SubContext): nanobind finds
// types across modules, so pto_runtime imports _native first. As in bind_l3.cpp the C++ core
// never holds a Python reference (pto_runtime.l4 keeps a run's functions and arguments alive
// until it is done); every call that may wait or takes the L4 worker's lock releases the GIL,
// and the orchestration function and SUB bodies re-acquire it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "l3_glue.h"
#include "pto/l4.h"

#ifndef PTO_VERSION
#define PTO_VERSION "0.0.0+unknown"
#endif

namespace pto_py {
namespace {

using nb::literals::operator""_a;

// An L4 orchestrator valid only while the orchestration function runs.
struct PyL4Orch {
  pto::l4::Orchestrator *o = nullptr;
  pto::l4::Orchestrator &get() const {
    if (!o) {
      throw pto::Error(PTO_NOT_INITIALIZED,
                       "this Orchestrator is only valid inside the orchestration function it was given to");
    }
    return *o;
  }
};

struct PyL4Worker {
  std::unique_ptr<pto::l4::Worker> w;
  PyL4Worker() = default;
  PyL4Worker(const PyL4Worker &) = delete;
  PyL4Worker &operator=(const PyL4Worker &) = delete;
  // Garbage-collected without close(): SUB threads may be waiting for the GIL, so close without it.
  ~PyL4Worker() {
    if (w) {
      nb::gil_scoped_release release;
      w.reset();
    }
  }
  pto::l4::Worker &get() const {
    if (!w || w->closed()) {
      throw pto::Error(PTO_NOT_INITIALIZED,
                       "Worker(level=4): the worker is closed (close() was called); create a new Worker");
    }
    return *w;
  }
};

std::vector<uint64_t> ids(const std::optional<std::vector<uint64_t>> &v) {
  return v ? *v : std::vector<uint64_t>{};
}

const void *address(uintptr_t p) {
  return reinterpret_cast<const void *>(p);
}

void bind_orchestrator(nb::module_ &m) {
  nb::class_<PyL4Orch>(m, "L4Orchestrator", "Native L4 orchestrator; use pto_runtime.l4.Orchestrator.")
      .def(
          "submit_chip",
          [](PyL4Orch &o, const pto::ChipCallable &c, const pto::ChipStorageTaskArgs &a,
             const pto::ChipCallConfig *cfg, int rank, int chip, const std::string &name,
             const std::optional<std::vector<uint64_t>> &after) {
            return o.get().submit_chip(c, a, cfg ? *cfg : pto::ChipCallConfig{}, rank, chip, name,
                                       ids(after));
          },
          "callable"_a, "args"_a, "config"_a.none() = nb::none(), "rank"_a, "chip"_a, "name"_a,
          "after"_a.none() = nb::none())
      .def(
          "submit_sub",
          [](PyL4Orch &o, nb::handle fn, const pto::ChipStorageTaskArgs &a, int rank, const std::string &name,
             const std::optional<std::vector<uint64_t>> &after) {
            if (!PyCallable_Check(fn.ptr())) {
              throw pto::Error(PTO_INVALID_ARGUMENT, "submit_sub: fn must be callable as fn(ctx)");
            }
            // fn: kept alive by pto_runtime.l4 until the run is done.
            return o.get().submit_sub(python_sub_fn(fn.ptr()), a, rank, name, ids(after));
          },
          "fn"_a, "args"_a, "rank"_a, "name"_a, "after"_a.none() = nb::none())
      .def(
          "fetch", [](PyL4Orch &o, uintptr_t array, int rank) { o.get().fetch(address(array), rank); },
          "array"_a, "rank"_a, "array: the address of a byte of a distributed array.")
      .def(
          "allocate_domain",
          [](PyL4Orch &o, const std::string &name, const std::vector<std::pair<int, int>> &members,
             uint64_t window_size, const std::vector<pto_py::SpecTuple> &buffers) {
            std::vector<pto::l4::DomainMember> ms;
            for (const auto &[rank, chip] : members) ms.push_back({rank, chip});
            const std::vector<pto::CommBufferSpec> specs = pto_py::buffer_specs(buffers);
            pto::l4::Orchestrator &orch = o.get();
            nb::gil_scoped_release release;  // collective: waits for the other ranks
            return orch.allocate_domain(name, ms, window_size, specs);
          },
          "name"_a, "members"_a, "window_size"_a, "buffers"_a,
          "A communication domain across ranks; members: (rank, chip) pairs; buffers: (name, dtype, "
          "count, nbytes) tuples. Use pto_runtime.l4.Orchestrator.allocate_domain.")
      .def_prop_ro("rank", [](PyL4Orch &o) { return o.get().rank(); })
      .def_prop_ro("size", [](PyL4Orch &o) { return o.get().size(); });
}

void bind_global_domain(nb::module_ &m) {
  nb::class_<pto::l4::GlobalCommDomain>(m, "L4CommDomain",
                                        "Native domain; use pto_runtime.l4.GlobalCommDomain.")
      .def_prop_ro("name", &pto::l4::GlobalCommDomain::name)
      .def_prop_ro("members",
                   [](const pto::l4::GlobalCommDomain &d) {
                     std::vector<std::pair<int, int>> out;
                     for (const pto::l4::DomainMember &x : d.members()) out.emplace_back(x.rank, x.chip);
                     return out;
                   })
      .def("release", &pto::l4::GlobalCommDomain::release)
      .def_prop_ro("released", &pto::l4::GlobalCommDomain::released)
      .def("is_local", &pto::l4::GlobalCommDomain::is_local, "rank"_a, "chip"_a)
      .def(
          "context",
          [](const pto::l4::GlobalCommDomain &d, int rank, int chip) {
            return pto_py::context_tuple(d(rank, chip));
          },
          "rank"_a, "chip"_a, "As pto_runtime.l3's domain context().");
}

void bind_worker(nb::module_ &m) {
  nb::class_<PyL4Worker>(m, "L4Worker", "Native L4 worker; use pto_runtime.Worker(level=4, ...).")
      .def(
          "__init__",
          [](PyL4Worker *self, const std::vector<int> &device_ids, int num_sub_workers,
             const std::string &platform, const std::string &runtime, pto::ChipMode mode, uint64_t heap_bytes,
             uint32_t spawn_timeout_ms, uint32_t heap_wait_ms, uint32_t close_timeout_ms,
             uint32_t peer_timeout_ms, uint32_t poll_max_us, uint32_t spin_us, uint64_t landing_bytes,
             uintptr_t comm) {
            pto::l4::WorkerOptions o;
            o.device_ids = device_ids;
            o.num_sub_workers = num_sub_workers;
            o.platform = platform;
            o.runtime = runtime;
            o.mode = mode;
            o.heap_bytes = heap_bytes;
            o.spawn_timeout_ms = spawn_timeout_ms;
            o.heap_wait_ms = heap_wait_ms;
            o.close_timeout_ms = close_timeout_ms;
            o.peer_timeout_ms = peer_timeout_ms;
            o.poll_max_us = poll_max_us;
            o.spin_us = spin_us;
            o.landing_bytes = landing_bytes;
            o.mpi_comm = comm ? address(comm) : nullptr;
            PyL4Worker *w = new (self) PyL4Worker();
            nb::gil_scoped_release release;  // collective: waits for the other ranks
            w->w = std::make_unique<pto::l4::Worker>(o);
          },
          "device_ids"_a, "num_sub_workers"_a, "platform"_a, "runtime"_a, "mode"_a, "heap_bytes"_a,
          "spawn_timeout_ms"_a, "heap_wait_ms"_a, "close_timeout_ms"_a, "peer_timeout_ms"_a, "poll_max_us"_a,
          "spin_us"_a, "landing_bytes"_a, "comm"_a,
          "comm: the address of an MPI_Comm (mpi4py: MPI._addressof(comm)), 0 for MPI_COMM_WORLD.")
      .def(
          "submit",
          [](PyL4Worker &w, nb::handle runner) {
            pto::l4::Worker &worker = w.get();
            PyObject *borrowed = runner.ptr();  // the caller holds it for the duration of the call
            pto::l4::Worker::OrchFn fn = [borrowed](pto::l4::Orchestrator &o) {
              call_python_orchestration(borrowed, [&] { return new PyL4Orch{&o}; });
            };
            nb::gil_scoped_release release;
            return worker.submit(fn);
          },
          "runner"_a, "Returns an L3RunHandle (this rank's part of the run).")
      .def(
          "alloc_bytes",
          [](PyL4Worker &w, uint64_t nbytes, const std::string &name, int valid) {
            pto::l4::Worker &worker = w.get();
            void *p;
            {
              nb::gil_scoped_release release;
              p = worker.alloc(nbytes, name, valid);
            }
            // Never freed while the worker lives (its arrays are its bookkeeping); the view keeps
            // the heap's memory alive after close.
            return byte_view(p, nbytes, worker.l3().heap_keepalive(), false);
          },
          "nbytes"_a, "name"_a, "valid"_a, "A uint8 view of this rank's copy of a new replicated array.")
      .def(
          "alloc_distributed_bytes",
          [](PyL4Worker &w, uint64_t nbytes, const std::string &name, const std::string &kind,
             uint64_t tile_bytes) {
            pto::l4::Worker &worker = w.get();
            pto::l4::Distribution k;
            if (kind == "block") {
              k = pto::l4::Distribution::kBlock;
            } else if (kind == "block_cyclic") {
              k = pto::l4::Distribution::kBlockCyclic;
            } else {
              throw pto::Error(PTO_INVALID_ARGUMENT, "alloc: distribute = '" + kind +
                                                         "'; give 'block' or 'block_cyclic' (or None)");
            }
            void *p;
            {
              nb::gil_scoped_release release;
              p = worker.alloc_distributed(nbytes, name, k, tile_bytes);
            }
            return byte_view(p, nbytes, worker.l3().heap_keepalive(), false);
          },
          "nbytes"_a, "name"_a, "kind"_a, "tile_bytes"_a,
          "A uint8 view of this rank's address range of a new distributed array ('block' or 'block_cyclic').")
      .def(
          "valid_ranks",
          [](PyL4Worker &w, uintptr_t array) {
            pto::l4::Worker &worker = w.get();
            nb::gil_scoped_release release;
            return worker.valid_ranks(address(array));
          },
          "array"_a)
      .def("transfers",
           [](PyL4Worker &w) {
             pto::l4::TransferCounts c;
             {
               pto::l4::Worker &worker = w.get();
               nb::gil_scoped_release release;
               c = worker.transfers();
             }
             nb::dict d;
             d["tasks"] = c.tasks;
             d["sends"] = c.sends;
             d["recvs"] = c.recvs;
             d["sent_done"] = c.sent_done;
             d["received_done"] = c.received_done;
             d["evictions"] = c.evictions;
             return d;
           })
      .def("close", &close_worker<PyL4Worker>, "timeout_ms"_a = -1,
           "timeout_ms < 0: the worker's close_timeout.")
      .def_prop_ro("closed", [](PyL4Worker &w) { return !w.w || w.w->closed(); })
      .def_prop_ro("rank", [](PyL4Worker &w) { return w.w ? w.w->rank() : 0; })
      .def_prop_ro("size", [](PyL4Worker &w) { return w.w ? w.w->size() : 1; })
      .def_prop_ro("mpi_thread_level", [](PyL4Worker &w) { return w.w ? w.w->mpi_thread_level() : 0; })
      .def_prop_ro("num_chips", [](PyL4Worker &w) { return w.get().l3().num_chips(); })
      .def_prop_ro("num_sub_workers", [](PyL4Worker &w) { return w.get().l3().num_sub_workers(); });
}

}  // namespace
}  // namespace pto_py

NB_MODULE(_l4native, m) {
  m.doc() = "Private native L4 (MPI) of pto_runtime; import pto_runtime instead.";
  m.attr("VERSION") = PTO_VERSION;
  m.attr("ANY_RANK") = pto::l4::kAnyRank;
  m.attr("ALL_RANKS") = pto::l4::kAllRanks;
  m.attr("MIN_PEER_TIMEOUT_MS") = pto::l4::kMinPeerTimeoutMs;
  m.attr("MAX_PEER_TIMEOUT_MS") = pto::l4::kMaxPeerTimeoutMs;
  m.attr("MIN_POLL_MAX_US") = pto::l4::kMinPollMaxUs;
  m.attr("MAX_POLL_MAX_US") = pto::l4::kMaxPollMaxUs;
  m.attr("MAX_SPIN_US") = pto::l4::kMaxSpinUs;
  m.attr("MIN_LANDING_BYTES") = pto::l4::kMinLandingBytes;
  m.attr("MAX_LANDING_BYTES") = pto::l4::kMaxLandingBytes;
  m.def("mpi_available", &pto::l4::Worker::mpi_available,
        "True when pto::l4 was built with MPI (this module is built only then).");
  pto_py::bind_global_domain(m);
  pto_py::bind_orchestrator(m);
  pto_py::bind_worker(m);
  pto_py::bind_runtime_identity(m);
}
