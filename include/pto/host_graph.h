// include/pto/host_graph.h — orchestration API of the host_build_graph runtime.
//
// An orchestration source for host_build_graph defines PTO_ORCHESTRATION(graph, args): it runs
// on the host before launch, sees the run's tensors (already in device memory) and scalars,
// and builds the task graph with add_task / add_dependency. Errors are recorded in the
// builder (first one wins) and reported by run(); calls after an error return kInvalidTask.
#ifndef PTO_HOST_GRAPH_H
#define PTO_HOST_GRAPH_H

#include <stdint.h>

#include "pto/kernel.h"
#include "pto/schedule_config.h"
#include "pto/types.h"

namespace pto {

constexpr int kMaxTensorDims = 8;
using TaskId = int32_t;
constexpr TaskId kInvalidTask = -1;

// A tensor in device memory, as the orchestration sees it (always contiguous).
struct Tensor {
  uint64_t addr = 0;  // device address, what the kernel receives
  uint64_t nbytes = 0;
  uint64_t nelems = 0;
  pto_dtype dtype = PTO_DTYPE_ANY;
  uint32_t ndim = 0;
  int64_t shape[kMaxTensorDims] = {};
};

// One argument of a task: a tensor or a 64-bit scalar.
struct TaskArg {
  pto_arg_kind kind = PTO_ARG_SCALAR;
  Tensor tensor;
  int64_t scalar = 0;

  static TaskArg of(const Tensor &t) {
    TaskArg a;
    a.kind = PTO_ARG_TENSOR;
    a.tensor = t;
    return a;
  }
  static TaskArg of_i64(int64_t v) {
    TaskArg a;
    a.scalar = v;
    return a;
  }
  static TaskArg of_f32(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return of_i64(static_cast<int64_t>(bits));
  }
};

// The run's arguments in the order the caller added them (ChipStorageTaskArgs).
class OrchArgs {
 public:
  virtual ~OrchArgs() = default;
  virtual uint32_t num_tensors() const = 0;
  virtual uint32_t num_scalars() const = 0;
  virtual const Tensor &tensor(uint32_t i) const = 0;  // i-th tensor argument
  virtual int64_t scalar(uint32_t i) const = 0;        // i-th scalar argument
  // The caller's host copy of the i-th tensor, as it was passed to run() (read-only): lets a
  // host-side orchestration shape the graph by input data without touching device memory.
  virtual const void *host_data(uint32_t i) const = 0;
};

// What the orchestration builds the graph through. Implemented by the host program.
class GraphBuilder {
 public:
  virtual ~GraphBuilder() = default;
  // Adds a task running kernel `func_id` on a core of `core_type`; returns its id (0, 1, ...).
  virtual TaskId add_task(uint32_t func_id, pto_core_type core_type, const TaskArg *args,
                          uint32_t num_args) = 0;
  // The tasks added from now on run on stream `stream` (0 .. kMaxStreams - 1; 0 until set) with
  // target affinity `target` (0 .. kMaxTargets - 1, or kNoTarget). Streams and targets only
  // choose pipeline_depth's per_stream / per_target gates (pto/schedule_config.h); they add no
  // ordering. Out of range: INVALID_ARGUMENT naming the value.
  virtual void set_stream(uint32_t stream, uint32_t target = kNoTarget) = 0;
  // `consumer` runs only after `producer` has completed.
  virtual void add_dependency(TaskId producer, TaskId consumer) = 0;
  // A device tensor for intermediates, freed after the run.
  virtual Tensor alloc_tensor(pto_dtype dtype, uint64_t nelems) = 0;
  // Records an orchestration error; run() raises ORCHESTRATION_FAILED with this message.
  virtual void fail(const char *message) = 0;
  virtual bool ok() const = 0;

  template <size_t N>
  TaskId add_task(uint32_t func_id, pto_core_type core_type, const TaskArg (&args)[N]) {
    return add_task(func_id, core_type, args, static_cast<uint32_t>(N));
  }
};

}  // namespace pto

#define PTO_ORCHESTRATION_ENTRY_SYMBOL "pto_orchestration_entry"

// Defines the orchestration: PTO_ORCHESTRATION(graph, args) { graph.add_task(...); }
#define PTO_ORCHESTRATION(graph_name, args_name)                                    \
  extern "C" PTO_EXPORT void pto_orchestration_entry(pto::GraphBuilder &graph_name, \
                                                     const pto::OrchArgs &args_name)

#endif  // PTO_HOST_GRAPH_H
