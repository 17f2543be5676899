// python/src/l3_glue.cpp — what the L3 and L4 bindings share (l3_glue.h): Python SUB bodies, heap views, waits.
#include "l3_glue.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "pto/backend.h"

namespace pto_py {

pto::SubContext &PySubContext::get() const {
  if (!c) throw pto::Error(PTO_NOT_INITIALIZED, "this SubContext is only valid while the SUB body runs");
  return *c;
}

std::string py_error_text(nb::python_error &e, pto_status *code) {
  nb::handle value = e.value();
  *code = PTO_ORCHESTRATION_FAILED;
  if (nb::hasattr(value, "code")) {
    try {
      *code = static_cast<pto_status>(nb::cast<int>(value.attr("code")));
    } catch (...) {
    }
  }
  std::string type = nb::cast<std::string>(nb::str(e.type().attr("__name__")));
  return type + ": " + nb::cast<std::string>(nb::str(value));
}

pto::SubFn python_sub_fn(PyObject *fn) {
  return [fn](pto::SubContext &ctx) {
    std::string err;
    {
      nb::gil_scoped_acquire gil;
      // Owned by Python (a body may keep ctx); invalidated below, never dangling.
      auto *pyctx = new PySubContext{&ctx};
      nb::object wrapped = nb::cast(pyctx, nb::rv_policy::take_ownership);
      try {
        nb::object ignored = nb::handle(fn)(wrapped);
      } catch (nb::python_error &e) {
        pto_status unused;
        err = py_error_text(e, &unused);
      }
      pyctx->c = nullptr;
    }
    if (!err.empty()) throw pto::Error(PTO_TASK_FAILED, err);
  };
}

ByteArray byte_view(void *ptr, uint64_t nbytes, std::shared_ptr<void> heap, bool release) {
  struct Owner {
    std::shared_ptr<void> heap;
    void *ptr;
    bool release;
  };
  auto *owner = new Owner{std::move(heap), ptr, release};
  nb::capsule cap(owner, [](void *p) noexcept {
    auto *o = static_cast<Owner *>(p);
    if (o->release) pto::Worker::release_heap_buffer(o->heap, o->ptr);
    delete o;
  });
  size_t shape[1] = {static_cast<size_t>(nbytes)};
  return ByteArray(static_cast<uint8_t *>(ptr), 1, shape, cap);
}

namespace {
constexpr int64_t kSliceMs = 50;          // Ctrl-C is noticed within about this long
constexpr int64_t kCancelDrainMs = 10000;  // after Ctrl-C: how long the run may take to stop
}  // namespace

// RunHandle::wait in slices with the GIL released; between slices PyErr_CheckSignals(). On a
// signal whose handler raised (Ctrl-C: KeyboardInterrupt) the run is cancelled, its stop is
// awaited (up to kCancelDrainMs; a second Ctrl-C stops waiting) and the exception propagates.
pto::WorkerRunStats wait_interruptibly(const pto::RunHandle &h, int64_t timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  };
  for (;;) {
    int64_t slice = kSliceMs;
    if (timeout_ms >= 0) slice = std::max<int64_t>(0, std::min<int64_t>(slice, timeout_ms - elapsed_ms()));
    bool done;
    {
      nb::gil_scoped_release release;
      done = h.wait_done(slice);
    }
    if (done || (timeout_ms >= 0 && elapsed_ms() >= timeout_ms)) break;
    if (PyErr_CheckSignals() != 0) {
      nb::python_error interrupted;  // takes the pending exception
      const auto c0 = Clock::now();
      for (bool first = true;; first = false) {
        {
          nb::gil_scoped_release release;
          if (first) h.cancel();
          if (h.wait_done(kSliceMs)) break;
        }
        if (Clock::now() - c0 > std::chrono::milliseconds(kCancelDrainMs)) break;
        if (PyErr_CheckSignals() != 0) {
          PyErr_Clear();  // a second Ctrl-C: stop waiting for the cancelled run
          break;
        }
      }
      throw interrupted;
    }
  }
  nb::gil_scoped_release release;
  return h.wait(0);  // the stats, or the run's error; RUN_TIMEOUT if still running
}

void bind_runtime_identity(nb::module_ &m) {
  m.def(
      "_runtime_identity",
      [] {
        Dl_info info{};
        const void *code = reinterpret_cast<const void *>(&pto::get_backend);
        std::string file = dladdr(code, &info) != 0 && info.dli_fname ? info.dli_fname : "";
        // One registry per copy of the runtime, so one cpu_sim Backend object per copy.
        const auto state = reinterpret_cast<uintptr_t>(&pto::get_backend("cpu_sim"));
        return std::make_tuple(file, state);
      },
      "(file holding the C++ runtime's code, address of its cpu_sim backend): for tests.");
}

ContextTuple context_tuple(const pto::ChipDomainContext &c) {
  std::vector<BufferTuple> buffers;
  for (const pto::CommBuffer &b : c.buffers)
    buffers.emplace_back(b.name, b.dtype, b.count, b.nbytes, b.offset, reinterpret_cast<uintptr_t>(b.addr));
  return ContextTuple(c.name, c.chip, c.domain_rank, c.domain_size, c.device_ctx, c.local_window_base,
                      c.actual_window_size, std::move(buffers));
}

std::vector<pto::CommBufferSpec> buffer_specs(const std::vector<SpecTuple> &buffers) {
  std::vector<pto::CommBufferSpec> specs;
  for (const auto &b : buffers)
    specs.push_back({std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b)});
  return specs;
}

}  // namespace pto_py
