// include/pto_abi/pto_orchestration_api.h — the reference implementation's device-orchestration API,
// as a thin layer over this project's orchestrator interface (pto/orchestration.h).
//
// An orchestration written for the reference (hw-native-sys/simpler, tensormap_and_ringbuffer)
// includes only this header and defines
//   extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args);
//   extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &args); // optional
// Compile it with KernelCompiler.compile_orchestration("tensormap_and_ringbuffer", path) and run
// it like any tensormap orchestration, or for "host_build_graph", which runs it on the host
// before launch (src/runtime/host_build_graph/host/host_orchestrator.h). This header defines (weak, so it is one per binary) the
// entry the runtime looks for, pto_device_orchestration_entry, which hands the run's arguments
// to aicpu_orchestration_entry as ChipTensor descriptors and scalars. Every call below turns
// into a call of pto::Orchestrator: a submit into submit_task (descriptors into TensorViews,
// TensorCreateInfo outputs into alloc_tensor), a scope into scope_begin/scope_end,
// get_tensor_data/set_tensor_data into wait_for_tasks_using plus a direct access. There is no
// second runtime: dependencies, rings, scheduling and errors are the orchestrator's.
//
// Other names. The reference looks both functions up by name at run time (a scene test's
// `function_name` and `config_name`); here the names are fixed when the orchestration is
// compiled: -DPTO_ORCHESTRATION_ENTRY=build_paged_attention_graph and
// -DPTO_ORCHESTRATION_CONFIG=name (Python: KernelCompiler(platform, defines=[...])). A run whose
// binary lacks the entry fails with INVALID_ARGUMENT naming the symbol it expected; a missing
// config function is not an error (the reference skips the check too).
//
// The argument count: as in the reference, a run is refused (INVALID_ARGUMENT, naming both
// counts) only when the config's expected_arg_count is > 0 and the run has FEWER arguments
// (tensors + scalars); extra arguments are the orchestration's to ignore.
//
// Dependency-only tasks (rt_submit_dummy_task) are Orchestrator::submit_dummy; SPMD launches
// (launch_spec.set_block_num, or a5's name set_core_num, for the same count;
// set_require_sync_start) and dispatch predicates (CoreTaskArgs::set_predicate, the operand
// resolved to an element address at submit) and timing slots (set_task_timing_slot) become a
// pto::Launch. A runtime that lacks one fails the run with NOT_SUPPORTED naming it.
// set_allow_early_resolve is accepted and has no effect.
//
// Which orchestrator a call goes to: the entry binds it to the calling thread; every call that
// can wait (and so let the simulator move this fiber to another thread) binds it again before
// it returns, so the binding is right wherever the orchestration code runs next.
#ifndef PTO_ABI_PTO_ORCHESTRATION_API_H
#define PTO_ABI_PTO_ORCHESTRATION_API_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vector>

#include "pto/device_log.h"
#include "pto/orchestration.h"
#include "pto_types.h"
#include "view_descriptor.h"

namespace pto_abi {

inline thread_local pto::Orchestrator *t_orchestrator = nullptr;
struct GraphState;  // the run's graph recordings (pto_graph.h)
inline thread_local GraphState *t_graph = nullptr;

// The orchestrator of the running orchestration (and its graph recordings); rebinds both on
// destruction (after a call that may have waited on another thread).
class Bound {
 public:
  Bound() : o_(t_orchestrator), g_(t_graph) {}
  ~Bound() {
    t_orchestrator = o_;
    t_graph = g_;
  }
  Bound(const Bound &) = delete;
  Bound &operator=(const Bound &) = delete;
  pto::Orchestrator *get() const { return o_; }

 private:
  pto::Orchestrator *o_;
  GraphState *g_;
};

// Graph recording (defined in pto_graph.h): whether one is in progress on this thread, noting a
// submitted task in it, and marking it unreplayable.
inline bool graph_recording_active();
inline void graph_taint(const char *why);
constexpr int kDummyTask = -2;  // submit's core for rt_submit_dummy_task
inline void graph_note(int core, int32_t func_id, const CoreTaskArgs &args, const int32_t *mixed,
                       const TaskOutputTensors &out);


inline pto::Orchestrator &orchestrator() {
  return *t_orchestrator;
}

inline void fail(pto::Orchestrator &o, pto_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
inline void fail(pto::Orchestrator &o, pto_status code, const char *fmt, ...) {
  char msg[480];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  o.fail_with(code, msg);
}

// A descriptor as the orchestrator's view; false (with the orchestration failed) when the
// descriptor came from a view operation that could not make it.
inline bool view_of(pto::Orchestrator &o, const ChipTensor &t, pto::TensorView *v) {
  if (t.abi_error != CHIP_TENSOR_OK) {
    fail(o, PTO_INVALID_ARGUMENT, "a tensor argument is not a valid view: %s",
         chip_tensor_error_text(t.abi_error));
    return false;
  }
  const pto_dtype dtype = pto_dtype_of_abi(t.dtype);
  if (dtype == PTO_DTYPE_ANY) {
    fail(o, PTO_BAD_TENSOR, "dtype %s has no NumPy counterpart here (no run tensor or buffer can hold it)",
         get_dtype_name(t.dtype));
    return false;
  }
  *v = pto::TensorView{};
  v->buffer = t.buffer.addr;
  v->buffer_bytes = t.buffer.size;
  v->offset = static_cast<int64_t>(t.start_offset);
  v->dtype = dtype;
  v->ndim = t.ndims;
  for (uint32_t d = 0; d < t.ndims && d < static_cast<uint32_t>(MAX_TENSOR_DIMS); ++d) {
    v->shape[d] = t.shapes[d];
    v->strides[d] = t.strides[d];
  }
  return true;
}

// The descriptor of an orchestrator view (a run tensor, or a buffer it allocated). A view no
// descriptor can carry (float64, > 5 dimensions) gives one marked invalid, refused if used.
inline ChipTensor descriptor_of(const pto::TensorView &v, int64_t owner = -1) {
  ChipTensor t;
  if (descriptor_fault(v.dtype, v.ndim, v.shape, v.strides) != kDescOk) {
    memset(static_cast<void *>(&t), 0, sizeof t);
    t.buffer = {v.buffer, v.buffer_bytes};
    t.ndims = 1;
    t.abi_error = CHIP_TENSOR_NOT_EXPRESSIBLE;
    return t;
  }
  fill_descriptor(&t, v.buffer, v.buffer_bytes, v.offset, v.dtype, v.ndim, v.shape, v.strides, owner);
  return t;
}

// Allocates the buffer of a create-info output and fills it when it has an initial value.
inline bool materialize(pto::Orchestrator &o, const TensorCreateInfo &ci, pto::TensorView *v) {
  if (ci.ndims < 1 || ci.ndims > static_cast<uint32_t>(MAX_TENSOR_DIMS)) {
    fail(o, PTO_INVALID_ARGUMENT, "a TensorCreateInfo has %u dimensions (1..5 are allowed)", ci.ndims);
    return false;
  }
  const pto_dtype dtype = pto_dtype_of_abi(ci.dtype);
  if (dtype == PTO_DTYPE_ANY) {
    fail(o, PTO_BAD_TENSOR, "a TensorCreateInfo has dtype %s, which no buffer here can hold",
         get_dtype_name(ci.dtype));
    return false;
  }
  int64_t shape[MAX_TENSOR_DIMS];
  for (uint32_t d = 0; d < ci.ndims; ++d) shape[d] = ci.shapes[d];
  *v = o.alloc_tensor(dtype, ci.ndims, shape);
  if (!o.ok()) return false;
  if (ci.has_initial_value) {
    const uint64_t esize = get_element_size(ci.dtype), n = v->buffer_bytes / esize;
    char *p = reinterpret_cast<char *>(static_cast<uintptr_t>(v->buffer));
    for (uint64_t i = 0; i < n; ++i) memcpy(p + i * esize, &ci.initial_value, esize);
  }
  return true;
}

// The predicate's operand as an element address, checked like get_tensor_data's indices; false
// (the orchestration failed) when it names no element.
inline bool resolve_predicate(pto::Orchestrator &o, const CoreTaskPredicate &p, pto::DispatchPredicate *out) {
  const ChipTensor *t = p.operand.tensor;
  bool bad = t == nullptr || t->buffer.addr == 0 || p.operand.ndims != t->ndims;
  for (uint32_t d = 0; !bad && d < p.operand.ndims && d < static_cast<uint32_t>(MAX_TENSOR_DIMS); ++d)
    bad = p.operand.indices[d] >= t->shapes[d];
  if (bad) {
    fail(o, PTO_INVALID_ARGUMENT,
         "set_predicate: the operand names no element (tensor %s, %u indices for a %u-dimensional tensor, "
         "each index below its dimension's extent)",
         t == nullptr ? "null" : (t->buffer.addr == 0 ? "without a buffer" : "given"), p.operand.ndims,
         t == nullptr ? 0u : t->ndims);
    return false;
  }
  const uint64_t esize = get_element_size(t->dtype);
  out->addr = t->buffer.addr + t->compute_flat_offset(p.operand.indices, p.operand.ndims) * esize;
  out->target = p.target;
  out->elem_size = static_cast<uint8_t>(esize);
  out->op = p.op;
  return true;
}

// The submit behind rt_submit_task and friends: core_type AIC / AIV (kernel func_id), MIX (one
// kernel per core in `mixed`), kDummyTask (a dependency-only task), or -1 for "outputs only"
// (alloc_tensors: allocate, submit nothing).
inline TaskOutputTensors submit(int core, int32_t func_id, const CoreTaskArgs &args,
                                const int32_t *mixed = nullptr) {
  Bound bound;
  pto::Orchestrator &o = *bound.get();
  TaskOutputTensors out;
  if (!o.ok()) return out;
  if (args.has_error) {
    fail(o, PTO_INVALID_ARGUMENT, "invalid task arguments: %s",
         args.error_msg ? args.error_msg : "(no message)");
    return out;
  }
  pto::Launch launch;
  if (args.launch_spec.block_num() < 1) {
    fail(o, PTO_INVALID_ARGUMENT, "launch_spec: block_num (core_num) %d; 1 .. 32767 blocks are allowed",
         args.launch_spec.block_num());
    return out;
  }
  launch.block_num = static_cast<uint32_t>(args.launch_spec.block_num());
  launch.sync_start = args.launch_spec.require_sync_start();
  launch.timing_slot = args.task_timing_slot();  // checked by the runtime (core/launch_check.h)
  if (args.predicate().op != PredicateOp::NONE && !resolve_predicate(o, args.predicate(), &launch.predicate))
    return out;
  if (core == kDummyTask && !launch.is_default()) {
    fail(o, PTO_INVALID_ARGUMENT,
         "rt_submit_dummy_task: a dependency-only task has no launch_spec, predicate or timing slot");
    return out;
  }
  pto::Arg a[MAX_TENSOR_ARGS + MAX_SCALAR_ARGS];
  // Producers named outright: the creators of manual_dep tensors, then the explicit
  // dependencies (any number: past the inline room they go to the heap).
  constexpr uint32_t kInlineAfter = MAX_TENSOR_ARGS + 64;
  pto::TaskHandle after_inline[kInlineAfter];
  std::vector<pto::TaskHandle> after_heap;
  const uint32_t max_after = static_cast<uint32_t>(args.tensor_count()) + args.explicit_dep_count();
  if (max_after > kInlineAfter) after_heap.resize(max_after);
  pto::TaskHandle *after = max_after > kInlineAfter ? after_heap.data() : after_inline;
  uint32_t n = 0, num_after = 0;
  int32_t created[MAX_TENSOR_ARGS];
  uint32_t num_created = 0;
  for (int32_t i = 0; i < args.tensor_count(); ++i) {
    pto::TensorView v;
    if (args.is_create_info(i)) {
      if (!materialize(o, args.create_info(i), &v)) return out;
      created[num_created++] = static_cast<int32_t>(n);
      a[n++] = pto::Arg::tensor(v, pto::Access::OUTPUT);
      continue;
    }
    const ChipTensor &t = args.tensor_ref(i);
    if (!view_of(o, t, &v)) return out;
    auto access = static_cast<pto::Access>(static_cast<uint32_t>(args.tag(i)));
    // manual_dep: tracked only through its creator (the reference's "creator-only" tensors).
    if (t.manual_dep && access != pto::Access::NO_DEP) {
      access = pto::Access::NO_DEP;
      if (t.owner_task_id.is_valid()) after[num_after++] = pto::TaskHandle{static_cast<int64_t>(t.owner_task_id.local())};
    }
    a[n++] = pto::Arg::tensor(v, access);
  }
  for (int32_t i = 0; i < args.scalar_count(); ++i)
    a[n++] = pto::Arg::i64(static_cast<int64_t>(args.scalar(i)));
  for (uint32_t i = 0; i < args.explicit_dep_count(); ++i) {
    const PTO2TaskId d = args.explicit_dep(i);
    if (d.is_invalid()) continue;  // "no task": nothing to wait for
    after[num_after++] = pto::TaskHandle{static_cast<int64_t>(d.local())};
  }
  int64_t id = -1;
  if (core >= 0 || core == kDummyTask) {
    const pto::Launch *l = launch.is_default() ? nullptr : &launch;
    const pto::TaskHandle h = core == kDummyTask ? o.submit_dummy(a, n, after, num_after)
                              : mixed            ? o.submit_mixed(mixed, a, n, after, num_after, l)
                                                 : o.submit_task(static_cast<uint32_t>(func_id),
                                                                 static_cast<pto_core_type>(core), a, n, after,
                                                                 num_after, l);
    if (!h.valid()) return out;
    id = h.id;
    out.set_task_id(PTO2TaskId::make(0, static_cast<uint32_t>(id)));
  }
  for (uint32_t k = 0; k < num_created; ++k) out.materialize_output(descriptor_of(a[created[k]].view, id));
  if (graph_recording_active()) graph_note(core, func_id, args, mixed, out);
  return out;
}

}  // namespace pto_abi

// ----- The API an orchestration calls -----

// One kernel id set: an AIC or AIV task. Several: a MIX task on a whole cluster, each core
// running its kernel (an unset core idles), all with the same arguments.
inline TaskOutputTensors rt_submit_task(const MixedKernels &mk, const CoreTaskArgs &args) {
  const int32_t funcs[3] = {mk.aic_kernel_id, mk.aiv0_kernel_id, mk.aiv1_kernel_id};
  const int set =
      (funcs[0] != INVALID_KERNEL_ID) + (funcs[1] != INVALID_KERNEL_ID) + (funcs[2] != INVALID_KERNEL_ID);
  if (set == 0) {
    pto_abi::Bound bound;
    pto_abi::fail(*bound.get(), PTO_INVALID_ARGUMENT, "rt_submit_task: MixedKernels names no kernel");
    return TaskOutputTensors{};
  }
  if (set > 1) return pto_abi::submit(PTO_CORE_MIX, 0, args, funcs);
  if (funcs[0] != INVALID_KERNEL_ID) return pto_abi::submit(PTO_CORE_AIC, funcs[0], args);
  return pto_abi::submit(PTO_CORE_AIV, funcs[1] != INVALID_KERNEL_ID ? funcs[1] : funcs[2], args);
}

inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return pto_abi::submit(PTO_CORE_AIC, kernel_id, args);
}
inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return pto_abi::submit(PTO_CORE_AIV, kernel_id, args);
}
// A dependency-only task: ordered by its arguments and dependencies like any task, it runs no
// kernel and takes no core; its create-info outputs are allocated as for any task.
inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs &args) {
  return pto_abi::submit(pto_abi::kDummyTask, 0, args);
}

// Buffers for outputs, allocated now (alive until the current scope ends), no task.
inline TaskOutputTensors alloc_tensors(const CoreTaskArgs &args) {
  return pto_abi::submit(-1, 0, args);
}
inline TaskOutputTensors alloc_tensors(const TensorCreateInfo create_infos[], uint32_t count) {
  CoreTaskArgs args;
  for (uint32_t i = 0; i < count; ++i) args.add_output(create_infos[i]);
  return alloc_tensors(args);
}
template <typename... CIs>
inline TaskOutputTensors alloc_tensors(const CIs &...cis) {
  static_assert(sizeof...(cis) > 0, "alloc_tensors: at least one TensorCreateInfo");
  static_assert((std::is_same_v<CIs, TensorCreateInfo> && ...),
                "alloc_tensors takes TensorCreateInfo objects");
  CoreTaskArgs args;
  (args.add_output(cis), ...);
  return alloc_tensors(args);
}

inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
  pto_abi::graph_taint("a scope inside the graph");
  pto_abi::Bound bound;
  bound.get()->scope_begin(mode == PTO2ScopeMode::MANUAL);
}
inline void rt_scope_end() {
  pto_abi::Bound bound;  // closing a scope may wait for ring space
  bound.get()->scope_end();
}
// The orchestration's end is its return; nothing to do early.
inline void rt_orchestration_done() {}
inline bool rt_is_fatal() {
  return !pto_abi::orchestrator().ok();
}
inline int32_t rt_available_cluster_count() {
  return static_cast<int32_t>(pto_abi::orchestrator().num_clusters());
}
inline int32_t rt_available_aiv_count() {
  return 2 * static_cast<int32_t>(pto_abi::orchestrator().num_clusters());
}

// Between two polls of memory a kernel writes (the reference's orchestrations spin on it): the
// tasks submitted so far go to the schedulers (pto::Orchestrator::progress), and a hint to the
// CPU, so the spinning thread leaves the core's resources to the other. On the sim, progress
// lets the other simulated threads and cores run first, so it may return on another thread.
inline void spin_wait_hint() {
  pto_abi::Bound bound;
  bound.get()->progress();
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}
#ifndef SPIN_WAIT_HINT
#define SPIN_WAIT_HINT() spin_wait_hint()
#endif

// The reference logs through its runtime; here every level goes to the device log.
#define PTO_ABI_LOG(level, fmt, ...) \
  PTO_DEV_LOG(pto_abi::orchestrator().log(), level, "%s: " fmt, __func__, ##__VA_ARGS__)
#define LOG_ERROR(fmt, ...) PTO_ABI_LOG(PTO_LOG_ERROR, fmt, ##__VA_ARGS__)
#define LOG_WARN(fmt, ...) PTO_ABI_LOG(PTO_LOG_WARN, fmt, ##__VA_ARGS__)
#define LOG_INFO(fmt, ...) PTO_ABI_LOG(PTO_LOG_INFO, fmt, ##__VA_ARGS__)
#define LOG_TIMING(fmt, ...) PTO_ABI_LOG(PTO_LOG_INFO, fmt, ##__VA_ARGS__)
#define LOG_DEBUG(fmt, ...) PTO_ABI_LOG(PTO_LOG_DEBUG, fmt, ##__VA_ARGS__)
// Fails the run (ORCHESTRATION_FAILED) with the reference error code and the message.
#define rt_report_fatal(code, fmt, ...)                                                            \
  pto_abi::fail(pto_abi::orchestrator(), PTO_ORCHESTRATION_FAILED, "%s: error %d: " fmt, __func__, \
                (int)(code), ##__VA_ARGS__)

// Reads one element once every task writing the tensor has finished (the tasks writing other
// memory keep running). T = uint64_t returns the raw bits zero-extended.
template <typename T = uint64_t>
inline T get_tensor_data(const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[]) {
  pto_abi::graph_taint("get_tensor_data inside the graph");
  pto_abi::Bound bound;
  pto::Orchestrator &o = *bound.get();
  pto::TensorView v;
  if (!o.ok() || !pto_abi::view_of(o, tensor, &v) || !o.wait_for_tasks_using(v, false)) return from_u64<T>(0);
  const uint64_t esize = get_element_size(tensor.dtype);
  uint64_t bits = 0;
  memcpy(
      &bits,
      reinterpret_cast<const char *>(tensor.buffer.addr) + tensor.compute_flat_offset(indices, ndims) * esize,
      esize < 8 ? esize : 8);
  return from_u64<T>(bits);
}

// Writes one element once every task reading or writing the tensor has finished.
template <typename T = uint64_t>
inline void set_tensor_data(const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[], T value) {
  pto_abi::graph_taint("set_tensor_data inside the graph");
  pto_abi::Bound bound;
  pto::Orchestrator &o = *bound.get();
  pto::TensorView v;
  if (!o.ok() || !pto_abi::view_of(o, tensor, &v) || !o.wait_for_tasks_using(v, true)) return;
  const uint64_t esize = get_element_size(tensor.dtype), bits = to_u64(value);
  memcpy(reinterpret_cast<char *>(tensor.buffer.addr) + tensor.compute_flat_offset(indices, ndims) * esize,
         &bits, esize < 8 ? esize : 8);
}

// A scope for the lifetime of the object: runtime-allocated outputs submitted in it live until
// it ends; MANUAL turns dependency inference off inside it.
class PTO2ScopeGuard {
 public:
  explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) { rt_scope_begin(mode); }
  ~PTO2ScopeGuard() { rt_scope_end(); }
  PTO2ScopeGuard(const PTO2ScopeGuard &) = delete;
  PTO2ScopeGuard &operator=(const PTO2ScopeGuard &) = delete;
};

#define PTO_ABI_CAT2(a, b) a##b
#define PTO_ABI_CAT(a, b) PTO_ABI_CAT2(a, b)
// PTO2_SCOPE_GUARD();  — a scope until the end of the enclosing block.
#define PTO2_SCOPE_GUARD(...)                                                   \
  [[maybe_unused]] PTO2ScopeGuard PTO_ABI_CAT(pto2_scope_guard_, __COUNTER__) { \
    __VA_ARGS__                                                                 \
  }
// PTO2_SCOPE() { ... }  — a scope around the block that follows.
#define PTO2_SCOPE(...) if (PTO2ScopeGuard PTO_ABI_CAT(pto2_scope_, __COUNTER__){__VA_ARGS__}; true)
// Seed 002's names for the same scopes.
#define PTO2_SCOPE_BEGIN(...) rt_scope_begin(__VA_ARGS__)
#define PTO2_SCOPE_END() rt_scope_end()
inline TaskOutputTensors pto2_rt_submit_task(const MixedKernels &mk, const CoreTaskArgs &args) {
  return rt_submit_task(mk, args);
}

// CoreTaskArgsWithDeps and its submit overloads (they use the calls above).
#include "pto_arg_with_deps.h"
// Graph record/replay: rt_submit_graph, GRAPH_KEY.
#include "pto_graph.h"

// ----- The entry the runtime calls -----

// The names of the orchestration's entry and config function (see the top of this file).
#ifndef PTO_ORCHESTRATION_ENTRY
#define PTO_ORCHESTRATION_ENTRY aicpu_orchestration_entry
#endif
#ifndef PTO_ORCHESTRATION_CONFIG
#define PTO_ORCHESTRATION_CONFIG aicpu_orchestration_config
#endif
#define PTO_ABI_STR2(x) #x
#define PTO_ABI_STR(x) PTO_ABI_STR2(x)

extern "C" void PTO_ORCHESTRATION_ENTRY(const ChipTaskArgs &args) __attribute__((weak));
extern "C" PTO2OrchestrationConfig PTO_ORCHESTRATION_CONFIG(const ChipTaskArgs &args) __attribute__((weak));

extern "C" __attribute__((weak, visibility("default"))) void pto_device_orchestration_entry(
    pto::Orchestrator &o) {
  pto_abi::t_orchestrator = &o;
  pto_abi::GraphState graphs;  // the run's recordings
  pto_abi::t_graph = &graphs;
  std::vector<ChipTensor> tensors(o.num_tensors());
  std::vector<uint64_t> scalars(o.num_scalars());
  for (uint32_t i = 0; i < o.num_tensors(); ++i) tensors[i] = pto_abi::descriptor_of(o.tensor(i));
  for (uint32_t i = 0; i < o.num_scalars(); ++i) scalars[i] = static_cast<uint64_t>(o.scalar(i));
  const ChipTaskArgs args(tensors.data(), static_cast<int32_t>(tensors.size()), scalars.data(),
                          static_cast<int32_t>(scalars.size()));
  const int expected = PTO_ORCHESTRATION_CONFIG ? PTO_ORCHESTRATION_CONFIG(args).expected_arg_count : 0;
  const size_t actual = tensors.size() + scalars.size();
  if (!PTO_ORCHESTRATION_ENTRY) {
    o.fail_with(PTO_INVALID_ARGUMENT,
                "the orchestration includes pto_orchestration_api.h but defines no entry "
                "extern \"C\" void " PTO_ABI_STR(PTO_ORCHESTRATION_ENTRY) "(const ChipTaskArgs &); "
                "an entry of another name is given when compiling: "
                "defines=[\"PTO_ORCHESTRATION_ENTRY=<name>\"] (the reference's function_name)");
  } else if (expected > 0 && actual < static_cast<size_t>(expected)) {
    pto_abi::fail(o, PTO_INVALID_ARGUMENT,
                  "the orchestration expects %d arguments (%s().expected_arg_count) but the run has %zu "
                  "(%zu tensors, %zu scalars)",
                  expected, PTO_ABI_STR(PTO_ORCHESTRATION_CONFIG), actual, tensors.size(), scalars.size());
  } else {
    PTO_ORCHESTRATION_ENTRY(args);
  }
  if (graphs.replays > 0)
    PTO_DEV_LOG(o.log(), PTO_LOG_INFO, "graphs: %zu recorded, %llu calls replayed", graphs.defs.size(),
                static_cast<unsigned long long>(graphs.replays));
  pto_abi::t_orchestrator = nullptr;
  pto_abi::t_graph = nullptr;
}

#endif  // PTO_ABI_PTO_ORCHESTRATION_API_H
