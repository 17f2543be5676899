// include/pto/orchestration.h — the device-orchestration API (PTO_DEVICE_ORCHESTRATION).
//
// In tensormap_and_ringbuffer the orchestration runs on the device, on one AICPU thread, while
// the other AICPU threads schedule: each submit_task is visible to the schedulers at once.
// host_build_graph runs the same program on the host before launch
// (src/runtime/host_build_graph/host/host_orchestrator.h): there a buffer from alloc_tensor
// lives until the run ends, and the orchestration may read or write only memory no submitted
// task uses. Dependencies are inferred
// from the tensor regions each task reads and writes, so the result equals running the tasks
// one by one in submission order:
//   INPUT            read                       waits for earlier overlapping writers
//   OUTPUT           written (not read)         waits for earlier overlapping writers and readers
//   OUTPUT_EXISTING  as OUTPUT; names a write into a buffer that already exists (a run tensor)
//   INOUT            read and written           as OUTPUT
//   NO_DEP           passed, never tracked      the caller vouches no ordering is needed
// Errors are recorded in the orchestrator (the first wins), later calls do nothing, and run()
// raises the error after the tasks already submitted have drained.
#ifndef PTO_ORCHESTRATION_H
#define PTO_ORCHESTRATION_H

#include <stdint.h>
#include <string.h>

#include "pto/device_log.h"
#include "pto/error.h"
#include "pto/dispatch_predicate.h"
#include "pto/kernel.h"
#include "pto/schedule_config.h"
#include "pto/types.h"

namespace pto {

constexpr int kMaxViewDims = 8;

enum class Access : uint32_t { INPUT = 0, OUTPUT = 1, INOUT = 2, OUTPUT_EXISTING = 3, NO_DEP = 4 };

// A strided view into a device buffer. Strides and offsets count elements.
struct TensorView {
  uint64_t buffer;        // device address of the whole buffer (its identity)
  uint64_t buffer_bytes;  // size of the whole buffer
  int64_t offset;         // element offset of the view's first element in the buffer
  pto_dtype dtype;
  uint32_t ndim;
  int64_t shape[kMaxViewDims];    // only the first ndim entries mean anything
  int64_t strides[kMaxViewDims];  // likewise

  // Empty: no buffer, ndim 0, dtype any, every entry zero.
  TensorView() : buffer(0), buffer_bytes(0), offset(0), dtype(PTO_DTYPE_ANY), ndim(0), shape{}, strides{} {}
  // Nothing written at all: for a view that is about to be overwritten or is never read, such
  // as a scalar Arg's. Zeroing 160 bytes per argument (a rep stos each, also for every element
  // of an array of Args) was a large part of an orchestration function's own time per submit.
  struct Unwritten {};
  explicit TensorView(Unwritten) {}

  uint32_t elem_size() const { return pto_dtype_size(dtype); }
  // Device address of the first element: what the kernel receives.
  uint64_t addr() const { return buffer + static_cast<uint64_t>(offset) * elem_size(); }
  int64_t numel() const {
    int64_t n = 1;
    for (uint32_t d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }
  bool contiguous() const {
    int64_t expect = 1;
    for (uint32_t d = ndim; d-- > 0;) {
      if (shape[d] != 1 && strides[d] != expect) return false;
      expect *= shape[d];
    }
    return true;
  }
  // The sub-view starting at `start` (one index per dimension) with extent `extent`.
  // Out-of-range windows are reported by submit_task, which validates every view.
  TensorView slice(const int64_t *start, const int64_t *extent) const {
    TensorView v = *this;
    for (uint32_t d = 0; d < ndim; ++d) {
      v.offset += start[d] * strides[d];
      v.shape[d] = extent[d];
    }
    return v;
  }
  // 2-D convenience: rows [r, r + nr), columns [c, c + nc) of a 2-D view.
  TensorView tile(int64_t r, int64_t c, int64_t nr, int64_t nc) const {
    const int64_t start[2] = {r, c}, extent[2] = {nr, nc};
    return slice(start, extent);
  }
};

// One task argument: a tensor view with its access mode, or a 64-bit scalar.
// A default Arg is the scalar 0. A scalar's view is not written (nothing reads it). The
// constructor is spelled out: with default member initialisers instead, GCC zeroed the whole
// 176 bytes (a rep stos per Arg, per element of an array of them).
struct Arg {
  pto_arg_kind kind;
  Access access;
  TensorView view;
  int64_t scalar;

  Arg() : kind(PTO_ARG_SCALAR), access(Access::INPUT), view(TensorView::Unwritten{}), scalar(0) {}

  static Arg in(const TensorView &v) { return tensor(v, Access::INPUT); }
  static Arg out(const TensorView &v) { return tensor(v, Access::OUTPUT); }
  static Arg inout(const TensorView &v) { return tensor(v, Access::INOUT); }
  static Arg out_existing(const TensorView &v) { return tensor(v, Access::OUTPUT_EXISTING); }
  static Arg no_dep(const TensorView &v) { return tensor(v, Access::NO_DEP); }
  static Arg tensor(const TensorView &v, Access a) {
    Arg x;
    x.kind = PTO_ARG_TENSOR;
    x.access = a;
    x.view = v;
    return x;
  }
  static Arg i64(int64_t v) {
    Arg x;
    x.scalar = v;
    return x;
  }
  static Arg f32(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return i64(static_cast<int64_t>(bits));
  }
};

// How a task is launched. The defaults (one block, no predicate) are what submit_task without
// a Launch means.
//   block_num   SPMD: the task is block_num blocks of the same kernel (a descriptor-ABI
//               kernel: get_block_idx / get_block_num tell the blocks apart), each run on a
//               core of the task's type as cores become free; its consumers wait for the last
//               block. (The reference's a5 launch spec calls the same count core_num.)
//   sync_start  every block starts together: the scheduler reserves block_num cores first.
//   predicate   see DispatchPredicate.
//   timing_slot 0 .. PTO_TASK_TIMING_SLOTS - 1: the run records the task's earliest dispatch and
//               latest finish (every block, every MIX part) into that slot, folded with every
//               other task tagged alike (RunStats::task_timing_slots; docs/guide/profiling.md,
//               "Task timing slots"); -1: untagged.
struct Launch {
  uint32_t block_num = 1;
  bool sync_start = false;
  DispatchPredicate predicate;
  int32_t timing_slot = -1;

  bool is_default() const {
    return block_num == 1 && !sync_start && predicate.op == PredicateOp::NONE && timing_slot == -1;
  }
};

// Handle of a submitted task, for explicit extra dependencies.
struct TaskHandle {
  int64_t id = -1;
  bool valid() const { return id >= 0; }
};

class Orchestrator {
 public:
  virtual ~Orchestrator() = default;

  // The run's arguments, in the order they were added (tensors as whole-buffer views).
  virtual uint32_t num_tensors() const = 0;
  virtual uint32_t num_scalars() const = 0;
  virtual TensorView tensor(uint32_t i) const = 0;
  virtual int64_t scalar(uint32_t i) const = 0;

  // Submits a task; `after` lists extra producers it must wait for (add_dep); `launch` (null:
  // the defaults) its SPMD blocks and dispatch predicate. Returns an invalid handle after an
  // error.
  virtual TaskHandle submit_task(uint32_t func_id, pto_core_type core_type, const Arg *args,
                                 uint32_t num_args, const TaskHandle *after = nullptr,
                                 uint32_t num_after = 0, const Launch *launch = nullptr) = 0;
  // A MIX task whose cores run different kernels: funcs[0] on the cluster's AIC core (a kernel
  // registered as AIC), funcs[1] and funcs[2] on its two AIV cores (registered as AIV), -1 for a
  // core that runs nothing; at least two run. Every part gets the same arguments and is checked
  // against its own kernel; pto::mix_part / get_sub_block_id tell the parts apart.
  virtual TaskHandle submit_mixed(const int32_t funcs[3], const Arg *args, uint32_t num_args,
                                  const TaskHandle *after = nullptr, uint32_t num_after = 0,
                                  const Launch *launch = nullptr) = 0;
  // A dependency-only task: it runs no kernel and takes no core. Its arguments order it like
  // any task's (inputs wait for their writers, outputs for earlier readers and writers) and it
  // is retired by the scheduler as soon as its producers have finished, releasing its
  // consumers. A runtime without them fails the orchestration with NOT_SUPPORTED.
  virtual TaskHandle submit_dummy(const Arg *args, uint32_t num_args, const TaskHandle *after = nullptr,
                                  uint32_t num_after = 0) {
    (void)args;
    (void)num_args;
    (void)after;
    (void)num_after;
    fail_with(PTO_NOT_SUPPORTED, "submit_dummy: dependency-only tasks are not supported by this runtime");
    return TaskHandle{};
  }
  // The tasks submitted from now on run on stream `stream` (0 .. kMaxStreams - 1; 0 until set)
  // with target affinity `target` (0 .. kMaxTargets - 1, or kNoTarget). Streams and targets
  // only choose pipeline_depth's per_stream / per_target gates (pto/schedule_config.h); they
  // add no ordering (dependencies are still inferred across streams). Out of range: the
  // orchestration fails with INVALID_ARGUMENT naming the value.
  virtual void set_stream(uint32_t stream, uint32_t target = kNoTarget) = 0;
  // A contiguous tensor from the heap ring, alive until the innermost open scope has ended
  // and every task that uses it has finished.
  virtual TensorView alloc_tensor(pto_dtype dtype, uint32_t ndim, const int64_t *shape) = 0;
  // Scopes nest. A manual scope turns inference off: inside it, only `after` orders tasks.
  virtual void scope_begin(bool manual = false) = 0;
  virtual void scope_end() = 0;
  virtual void fail(const char *message) = 0;
  // Records an error with a code of its own (INVALID_ARGUMENT, NOT_SUPPORTED, ...; not OK):
  // how a layer over this API (pto_abi/pto_orchestration_api.h) keeps its errors typed. run()
  // raises it like any orchestration error; the first error wins.
  virtual void fail_with(pto_status code, const char *message) = 0;
  virtual bool ok() const = 0;
  // The device's log (pto/device_log.h): DEV_INFO(o, ...) writes to it.
  virtual const pto_device_log *log() const = 0;
  // Waits until every task submitted so far whose access conflicts with the orchestration
  // reading `v` itself (write = false: the tasks writing it) or writing it (write = true: the
  // tasks reading or writing it) has finished; then the view's memory may be accessed directly.
  // Tasks touching other memory keep running. Returns false without waiting after an error,
  // and false when the run is aborted while it waits (the orchestration then fails).
  virtual bool wait_for_tasks_using(const TensorView &v, bool write) = 0;
  // The run's clusters (block_dim): each has one AIC and two AIV cores.
  virtual uint32_t num_clusters() const = 0;
  // The orchestration waits by itself (it polls memory a kernel writes: SPIN_WAIT_HINT and
  // cache_invalidate_range call this): every task submitted so far goes to the schedulers now
  // (the tensormap runtime hands ready tasks over in batches), and with a single AICPU thread
  // one scheduler pass runs; on the sim's fiber pool the other simulated threads and cores then
  // run first, so the call may return on another OS thread. Cheap when there is nothing to hand
  // over.
  virtual void progress() {}

  template <size_t N>
  TaskHandle submit_task(uint32_t func_id, pto_core_type core_type, const Arg (&args)[N]) {
    return submit_task(func_id, core_type, args, static_cast<uint32_t>(N));
  }
  TensorView alloc_tensor(pto_dtype dtype, int64_t n) { return alloc_tensor(dtype, 1, &n); }
  TensorView alloc_tensor(pto_dtype dtype, int64_t rows, int64_t cols) {
    const int64_t shape[2] = {rows, cols};
    return alloc_tensor(dtype, 2, shape);
  }
};

// Opens a scope for the lifetime of the object.
class Scope {
 public:
  explicit Scope(Orchestrator &o, bool manual = false) : o_(o) { o_.scope_begin(manual); }
  ~Scope() { o_.scope_end(); }
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;

 private:
  Orchestrator &o_;
};

// DEV_INFO(o, ...) in a device orchestration (pto/device_log.h).
inline const pto_device_log *device_log_of(const Orchestrator &o) {
  return o.log();
}

}  // namespace pto

#define PTO_DEVICE_ORCHESTRATION_ENTRY_SYMBOL "pto_device_orchestration_entry"

// Defines the device orchestration: PTO_DEVICE_ORCHESTRATION(orch) { orch.submit_task(...); }
#define PTO_DEVICE_ORCHESTRATION(orch_name) \
  extern "C" PTO_EXPORT void pto_device_orchestration_entry(pto::Orchestrator &orch_name)

#endif  // PTO_ORCHESTRATION_H
