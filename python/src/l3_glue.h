// python/src/l3_glue.h — what the L3 and L4 bindings share: SUB bodies in Python, heap views, interruptible
// waits.
//
// Compiled into both extension modules (_native and, when built with MPI, _l4native). The types
// here have external linkage and the same name in both, so nanobind finds the class registered
// by _native (SubContext) when _l4native hands one to Python. GIL rules as in bind_l3.cpp: the
// SUB body wrapper acquires the GIL to call Python; waits release it.
#ifndef PTO_PYTHON_L3_GLUE_H
#define PTO_PYTHON_L3_GLUE_H

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nanobind/ndarray.h>

#include "bindings.h"
#include "pto/worker.h"

namespace pto_py {

using ByteArray = nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>, nb::c_contig>;

// A SUB body's context, valid only while the body runs (Python class SubContext of _native).
struct PySubContext {
  pto::SubContext *c = nullptr;
  pto::SubContext &get() const;
};

// The message of the Python exception being handled, as "Type: message" (GIL held); *code is
// the exception's `code` attribute when it has one (a pto_runtime.Error), else
// PTO_ORCHESTRATION_FAILED.
std::string py_error_text(nb::python_error &e, pto_status *code);

// A SUB body calling the Python callable `fn(ctx)`. Borrows `fn`: the caller keeps it alive
// until the run is done (pto_runtime.l3 does). A Python exception fails the task (TASK_FAILED).
pto::SubFn python_sub_fn(PyObject *fn);

// A view of [ptr, ptr + nbytes) keeping `heap` alive; when `release`, the buffer is freed
// (Worker::release_heap_buffer) once the last view is garbage-collected.
ByteArray byte_view(void *ptr, uint64_t nbytes, std::shared_ptr<void> heap, bool release);

// A domain's context as Python's comm.ChipDomainContext takes it: (name, chip, domain_rank,
// domain_size, device_ctx, local_window_base, actual_window_size, [(buffer name, dtype, count,
// nbytes, offset, address)]). The L3 and L4 domains' context().
using BufferTuple = std::tuple<std::string, pto_dtype, uint64_t, uint64_t, uint64_t, uintptr_t>;
using ContextTuple =
    std::tuple<std::string, int, int, int, uint64_t, uint64_t, uint64_t, std::vector<BufferTuple>>;
ContextTuple context_tuple(const pto::ChipDomainContext &c);
// allocate_domain's buffers, (name, dtype, count, nbytes) tuples, as CommBufferSpecs.
using SpecTuple = std::tuple<std::string, pto_dtype, uint64_t, uint64_t>;
std::vector<pto::CommBufferSpec> buffer_specs(const std::vector<SpecTuple> &buffers);

// RunHandle::wait with the GIL released, in slices; Ctrl-C cancels the run, waits for it to
// stop and raises KeyboardInterrupt.
pto::WorkerRunStats wait_interruptibly(const pto::RunHandle &h, int64_t timeout_ms);

// Which copy of the C++ runtime this module calls, for the test that both modules share one
// (tests/python/test_l4.py): the file holding pto::get_backend's code and the address of the
// process-wide backend registry's "cpu_sim" entry. Defines _runtime_identity() on `m`.
void bind_runtime_identity(nb::module_ &m);

// A run's Python orchestration function, called on the orchestrating thread: with the GIL, a
// new binding object make() (owned by Python) is passed to `fn`, then invalidated (its `o`
// set to null: Python may keep it, but not use it past the orchestration); a Python exception
// becomes a pto::Error with its code and text. The L3 and L4 bindings' submit.
template <typename Make>
void call_python_orchestration(PyObject *fn, Make make) {
  std::string err;
  pto_status code = PTO_ORCHESTRATION_FAILED;
  {
    nb::gil_scoped_acquire gil;
    auto *py = make();
    nb::object wrapped = nb::cast(py, nb::rv_policy::take_ownership);
    try {
      // (not `nb::handle(fn)(wrapped);`: that declares a variable)
      nb::object ignored = nb::handle(fn)(wrapped);
    } catch (nb::python_error &e) {
      err = py_error_text(e, &code);
    }
    py->o = nullptr;
  }
  if (!err.empty()) throw pto::Error(code, err);
}

// Worker.close(timeout_ms) of the L3 and L4 bindings: nothing once closed; the GIL released
// while the worker drains; timeout_ms < 0 means the worker's own close_timeout.
template <typename Holder>
void close_worker(Holder &h, int64_t timeout_ms) {
  if (!h.w) return;
  nb::gil_scoped_release release;
  if (timeout_ms < 0) {
    h.w->close();
  } else {
    h.w->close(static_cast<uint32_t>(timeout_ms));
  }
}

}  // namespace pto_py

#endif  // PTO_PYTHON_L3_GLUE_H
