// include/pto_abi/pto_types.h — the argument and result types of the reference orchestration API.
//
// What an orchestration written for the reference implementation (hw-native-sys/simpler,
// tensormap_and_ringbuffer) builds a task from: CoreTaskArgs (tensors by access mode, then
// scalars), TensorCreateInfo (an output the runtime allocates), TaskOutputTensors (the
// descriptors of those outputs, returned by a submit), MixedKernels, scope modes and the
// run's arguments (ChipTaskArgs). pto_orchestration_api.h submits them through this
// project's own orchestrator (pto/orchestration.h); nothing here holds runtime state.
//
// Like the reference, CoreTaskArgs keeps pointers to the tensors and create-infos it is given:
// they must outlive the submit, so only named objects (lvalues) are accepted.
#ifndef PTO_ABI_PTO_TYPES_H
#define PTO_ABI_PTO_TYPES_H

#include <stdint.h>
#include <string.h>

#include <string>
#include <type_traits>
#include <utility>

#include "data_type.h"
#include "pto/dispatch_predicate.h"
#include "intrinsic.h"
#include "pto_task_id.h"
#include "tensor.h"

// Error codes of rt_report_fatal (the reference's numbering; every one fails the run with
// ORCHESTRATION_FAILED and the message).
#define PTO2_ERROR_NONE 0
#define PTO2_ERROR_SCOPE_DEADLOCK 1
#define PTO2_ERROR_HEAP_RING_DEADLOCK 2
#define PTO2_ERROR_FLOW_CONTROL_DEADLOCK 3
#define PTO2_ERROR_DEP_POOL_OVERFLOW 4
#define PTO2_ERROR_INVALID_ARGS 5
#define PTO2_ERROR_REQUIRE_SYNC_START_INVALID 7
#define PTO2_ERROR_TENSOR_WAIT_TIMEOUT 8
#define PTO2_ERROR_EXPLICIT_ORCH_FATAL 9

constexpr int32_t INVALID_KERNEL_ID = -1;
constexpr int MAX_TENSOR_ARGS = PTO_ABI_MAX_TENSOR_ARGS;
constexpr int MAX_SCALAR_ARGS = PTO_ABI_MAX_SCALAR_ARGS;

// AUTO: dependencies inferred from the views; MANUAL: only explicit ones (set_dependencies).
enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

// Explicit dependency flags. Every explicit dependency here orders the task after its
// producer (DEP_WAIT); DEP_RETAIN (keep the producer's outputs alive) holds anyway, because a
// runtime-allocated buffer lives until its scope ends.
enum DepFlags : uint8_t { DEP_NONE = 0, DEP_WAIT = 1u << 0, DEP_RETAIN = 1u << 1 };
constexpr DepFlags operator|(DepFlags a, DepFlags b) {
  return static_cast<DepFlags>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}

// Which kernel runs on each core of a cluster. One id set: an AIC or AIV task; more: a MIX task
// whose cores run their own kernels (an unset core idles).
struct MixedKernels {
  int32_t aic_kernel_id{INVALID_KERNEL_ID};
  int32_t aiv0_kernel_id{INVALID_KERNEL_ID};
  int32_t aiv1_kernel_id{INVALID_KERNEL_ID};
};

// SPMD launch parameters: the task's block count (pto::Launch::block_num) and whether its blocks
// start together. The reference's setter is set_core_num in a5's tensormap_and_ringbuffer and
// set_block_num everywhere else, and portable orchestrations pick whichever exists by SFINAE;
// so an orchestration compiled for one platform and runtime sees only that one's setter (both
// when neither is defined, as in the runtime's own sources). Both getters read the one count.
#if defined(PTO_CHIP_ARCH_A5) && defined(PTO_RUNTIME_TENSORMAP_AND_RINGBUFFER)
// The include guard of the reference's a5 tensormap_and_ringbuffer pto_types.h: orchestrations
// test it to choose set_core_num over set_block_num.
#define SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_
#endif
class PTO2LaunchSpec {
 public:
  int16_t block_num() const { return block_num_; }
  int16_t core_num() const { return block_num_; }
#if !(defined(PTO_CHIP_ARCH_A5) && defined(PTO_RUNTIME_TENSORMAP_AND_RINGBUFFER))
  void set_block_num(int16_t n) { block_num_ = n; }
#endif
#if !defined(PTO_CHIP_ARCH_A2A3) && !(defined(PTO_CHIP_ARCH_A5) && !defined(PTO_RUNTIME_TENSORMAP_AND_RINGBUFFER))
  void set_core_num(int16_t n) { block_num_ = n; }
#endif
  bool require_sync_start() const { return sync_start_; }
  void set_require_sync_start(bool v = true) { sync_start_ = v; }

 private:
  int16_t block_num_{1};
  bool sync_start_{false};
};

// An output the runtime allocates at submit (a contiguous buffer from the heap ring, alive
// until the scope that submitted it ends). Same first line as a ChipTensor, as in the reference.
class alignas(64) TensorCreateInfo {
 public:
  TensorCreateInfo() = default;
  TensorCreateInfo(const uint32_t shapes_in[], uint32_t ndims_in, DataType dtype_in = DataType::FLOAT32,
                   bool manual_dep_in = false)
      : ndims(ndims_in), dtype(dtype_in), manual_dep(manual_dep_in), is_contiguous(true) {
    for (uint32_t i = 0; i < ndims_in && i < static_cast<uint32_t>(MAX_TENSOR_DIMS); ++i)
      shapes[i] = shapes_in[i];
  }
  template <typename T = uint64_t>
  void set_initial_value(T value) {
    has_initial_value = true;
    initial_value = to_u64(value);
  }
  uint64_t buffer_size_bytes() const {
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
    return n * get_element_size(dtype);
  }
  void copy(const TensorCreateInfo &other) { *this = other; }

  uint64_t initial_value = 0;
  bool has_initial_value = false;
  uint8_t pad1_[7] = {};
  uint64_t pad2_ = 0;
  uint64_t start_offset = 0;
  int32_t version = 0;
  uint32_t ndims = 0;
  DataType dtype = DataType::FLOAT32;
  bool manual_dep = false;
  bool is_contiguous = true;
  uint8_t pad_flags_ = 0;
  uint32_t shapes[MAX_TENSOR_DIMS] = {};
};
static_assert(sizeof(TensorCreateInfo) == 64, "a create-info is one line");
static_assert(offsetof(TensorCreateInfo, ndims) == offsetof(ChipTensor, ndims),
              "shares ChipTensor's first line");
static_assert(offsetof(TensorCreateInfo, shapes) == offsetof(ChipTensor, shapes),
              "shares ChipTensor's first line");

// What a submit returns: the descriptors of the outputs it allocated (add_output with a
// TensorCreateInfo), in the order they were added, and the task's id. Holds them by value, so
// get_ref stays valid as long as this object lives.
class TaskOutputTensors {
 public:
  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  const ChipTensor &get_ref(uint32_t index) const & { return tensors_[index < count_ ? index : 0]; }
  const ChipTensor &get_ref(uint32_t index) const && = delete;  // a temporary's descriptor would dangle
  PTO2TaskId task_id() const { return task_id_; }
  void set_task_id(PTO2TaskId id) { task_id_ = id; }
  void materialize_output(const ChipTensor &t) {
    if (count_ < static_cast<uint32_t>(MAX_TENSOR_ARGS)) tensors_[count_++] = t;
  }
  ChipTensor *last_output() { return count_ ? &tensors_[count_ - 1] : nullptr; }

 private:
  PTO2TaskId task_id_ = PTO2TaskId::invalid();
  uint32_t count_ = 0;
  ChipTensor tensors_[MAX_TENSOR_ARGS];
};

// A dispatch predicate's operand: one element of a tensor, located like get_tensor_data's (the
// tensor is borrowed until the submit). Its producer must be a producer of the task.
struct CorePredicateOperand {
  const ChipTensor *tensor{nullptr};
  uint32_t ndims{0};
  uint32_t indices[MAX_TENSOR_DIMS]{};
};

// `operand op target` (e.g. count[i] > 0), read when the task is ready: false retires the task
// without running it, its consumers released as if it had run. op NONE: always run.
using PredicateOp = pto::PredicateOp;
struct CoreTaskPredicate {
  CorePredicateOperand operand;
  PredicateOp op{PredicateOp::NONE};
  int64_t target{0};
};

// args.tensor(i): a tensor argument, as .ref().
class ChipTensorRef {
 public:
  explicit ChipTensorRef(const ChipTensor *t) : t_(t) {}
  const ChipTensor &ref() const { return *t_; }

 private:
  const ChipTensor *t_;
};

// The arguments of one task: tensors (each with its access mode), then scalars, plus explicit
// dependencies and launch parameters. Errors (too many arguments, null dependencies) are kept
// in has_error / error_msg and reported by the submit.
template <size_t MaxT, size_t MaxS>
struct Arg {
  Arg() = default;
  Arg(const Arg &) = delete;
  Arg &operator=(const Arg &) = delete;

  bool has_error = false;
  const char *error_msg = nullptr;
  PTO2LaunchSpec launch_spec;

  template <typename... Ts>
  void add_input(Ts &&...ts) {
    add_tensors(TensorArgType::INPUT, std::forward<Ts>(ts)...);
  }
  // A ChipTensor: a write into an existing buffer (OUTPUT_EXISTING); a TensorCreateInfo: an
  // output the runtime allocates (OUTPUT), returned by the submit.
  template <typename... Ts>
  void add_output(Ts &&...ts) {
    add_tensors(TensorArgType::OUTPUT, std::forward<Ts>(ts)...);
  }
  template <typename... Ts>
  void add_inout(Ts &&...ts) {
    add_tensors(TensorArgType::INOUT, std::forward<Ts>(ts)...);
  }
  template <typename... Ts>
  void add_no_dep(Ts &&...ts) {
    add_tensors(TensorArgType::NO_DEP, std::forward<Ts>(ts)...);
  }
  // Each value's address is kept too when it is a variable (an lvalue): a graph's recording
  // (pto_graph.h) tells a boundary scalar forwarded as args.scalar(i) from a fixed value by it.
  template <typename... Ts>
  void add_scalar(Ts &&...vs) {
    static_assert(sizeof...(Ts) >= 1, "add_scalar: at least one value");
    static_assert((is_supported_scalar_arg_v<Ts> && ...), "add_scalar: arithmetic or enum values only");
    if (scalar_count_ + sizeof...(Ts) > MaxS) return set_error(too_many_scalars());
    (add_scalar_one(std::forward<Ts>(vs)), ...);
  }
  void add_scalars(const uint64_t *values, int count) {
    if (count < 0 || scalar_count_ + static_cast<size_t>(count) > MaxS) return set_error(too_many_scalars());
    for (int i = 0; i < count; ++i) {
      sources_[scalar_count_] = &values[i];
      scalars_[scalar_count_++] = values[i];
    }
  }
  // Each int32 zero-extended into its 64-bit slot (-1 becomes 0xFFFFFFFF).
  void add_scalars_i32(const int32_t *values, int count) {
    if (count < 0 || scalar_count_ + static_cast<size_t>(count) > MaxS) return set_error(too_many_scalars());
    for (int i = 0; i < count; ++i) {
      sources_[scalar_count_] = nullptr;
      scalars_[scalar_count_++] = static_cast<uint32_t>(values[i]);
    }
  }
  template <size_t SrcT, size_t SrcS>
  void copy_scalars_from(const Arg<SrcT, SrcS> &src, int src_offset, int count) {
    if (src_offset < 0 || count < 0 || src_offset + count > src.scalar_count())
      return set_error("copy_scalars_from: the source range is outside the source's scalars");
    add_scalars(src.scalar_data() + src_offset, count);
  }
  // Orders the task after these tasks, besides what its views infer. At most once per Arg
  // (count 0 clears); the array must outlive the submit.
  void set_dependencies(const PTO2TaskId *deps, uint32_t count) {
    if (count == 0) {
      deps_ = nullptr;
      dep_count_ = 0;
      return;
    }
    if (!deps) return set_error("set_dependencies: deps is null with count > 0");
    if (deps_) return set_error("set_dependencies: may be called at most once per Arg");
    deps_ = deps;
    dep_count_ = count;
  }
  void set_dependencies_with_kinds(const PTO2TaskId *deps, const DepFlags *kinds, uint32_t count) {
    if (count > 0 && !kinds) return set_error("set_dependencies_with_kinds: kinds is null with count > 0");
    set_dependencies(deps, count);
  }
  // A hint to the reference's scheduler (dispatch before the producers' completions are
  // counted); accepted and ignored here: tasks are dispatched once their producers finish.
  void set_allow_early_resolve(bool v = true) { early_resolve_ = v; }
  // The task's dispatch predicate (CoreTaskPredicate); op NONE (the default) clears it.
  void set_predicate(const CoreTaskPredicate &p) { predicate_ = p; }
  const CoreTaskPredicate &predicate() const { return predicate_; }
  bool allow_early_resolve() const { return early_resolve_; }
  // Tags the task with a timing slot (0 .. 15; -1: untagged): the run folds its dispatch and
  // finish into that slot (pto::Launch::timing_slot). A slot outside the range fails the submit
  // with INVALID_ARGUMENT naming it (the runtime's launch check, core/launch_check.h).
  void set_task_timing_slot(int32_t slot) { timing_slot_ = slot; }
  int32_t task_timing_slot() const { return timing_slot_; }

  // The reference's args-dump markers: dump() marks every argument added so far, dump(x, ...)
  // the tensor (an input/inout/output ChipTensor, or an output's TensorCreateInfo) or scalar
  // variable given, found by address as the reference finds it; one that is not an argument of
  // this object is an error at submit. The marks are kept (dump_marked_tensor/scalar); which
  // tasks this runtime dumps is chosen by the run's dump options (enable_dump_tensor,
  // dump_kernel, ...), not by the marks.
  void dump() {
    if (tensor_count_ == 0 && scalar_count_ == 0) return set_error("dump: no arguments added to this Arg");
    for (size_t i = 0; i < tensor_count_; ++i) dump_t_[i] = true;
    for (size_t i = 0; i < scalar_count_; ++i) dump_s_[i] = true;
  }
  template <typename... Ts>
  void dump(const Ts &...xs) {
    (dump_one(xs), ...);
  }
  bool dump_marked_tensor(int32_t i) const { return dump_t_[i]; }
  bool dump_marked_scalar(int32_t i) const { return dump_s_[i]; }

  void clear() {
    for (size_t i = 0; i < MaxT; ++i) dump_t_[i] = false;
    for (size_t i = 0; i < MaxS; ++i) dump_s_[i] = false;
    tensor_count_ = scalar_count_ = 0;
    deps_ = nullptr;
    dep_count_ = 0;
    early_resolve_ = false;
    predicate_ = CoreTaskPredicate{};
    launch_spec = PTO2LaunchSpec{};
    timing_slot_ = -1;
  }
  void reset() {
    clear();
    has_error = false;
    error_msg = nullptr;
  }
  void set_error(const char *msg) {
    if (!has_error) {
      has_error = true;
      error_msg = msg;
    }
  }

  int32_t tensor_count() const { return static_cast<int32_t>(tensor_count_); }
  int32_t scalar_count() const { return static_cast<int32_t>(scalar_count_); }
  const uint64_t &scalar(int32_t i) const { return scalars_[i]; }
  const uint64_t *scalar_data() const { return scalars_; }
  // The variable the i-th scalar was added from (add_scalar of an lvalue, add_scalars,
  // copy_scalars_from), or null.
  const void *scalar_source(int32_t i) const { return sources_[i]; }
  // The i-th tensor as the entry's arguments give it: tensor(i).ref() (a ChipTensor argument).
  ChipTensorRef tensor(int32_t i) const { return ChipTensorRef(static_cast<const ChipTensor *>(refs_[i])); }
  TensorArgType tag(int32_t i) const { return tags_[i]; }
  // The i-th tensor: a ChipTensor, or (is_create_info) a TensorCreateInfo.
  bool is_create_info(int32_t i) const { return create_[i]; }
  const ChipTensor &tensor_ref(int32_t i) const { return *static_cast<const ChipTensor *>(refs_[i]); }
  const TensorCreateInfo &create_info(int32_t i) const {
    return *static_cast<const TensorCreateInfo *>(refs_[i]);
  }
  uint32_t explicit_dep_count() const { return dep_count_; }
  PTO2TaskId explicit_dep(uint32_t i) const { return deps_[i]; }

 private:
  template <typename T>
  void add_one(TensorArgType tag, T &t) {
    using U = std::remove_cv_t<T>;
    static_assert(std::is_same_v<U, ChipTensor> || std::is_same_v<U, TensorCreateInfo>,
                  "tensor arguments are ChipTensor (or, for add_output, TensorCreateInfo) objects");
    const bool create = std::is_same_v<U, TensorCreateInfo>;
    if (create && tag != TensorArgType::OUTPUT) return set_error("a TensorCreateInfo can only be an output");
    refs_[tensor_count_] = &t;
    create_[tensor_count_] = create;
    tags_[tensor_count_] = !create && tag == TensorArgType::OUTPUT ? TensorArgType::OUTPUT_EXISTING : tag;
    ++tensor_count_;
  }
  template <typename... Ts>
  void add_tensors(TensorArgType tag, Ts &&...ts) {
    static_assert((std::is_lvalue_reference_v<Ts> && ...),
                  "pass named tensors: the args keep a pointer to each until the submit");
    if (scalar_count_ > 0) return set_error("a tensor added after a scalar: add every tensor first");
    if (tensor_count_ + sizeof...(Ts) > MaxT) return set_error(too_many_tensors());
    (add_one(tag, ts), ...);
  }
  template <typename T>
  void dump_one(const T &x) {
    if constexpr (std::is_same_v<T, ChipTensor> || std::is_same_v<T, TensorCreateInfo>) {
      const bool create = std::is_same_v<T, TensorCreateInfo>;
      for (size_t i = 0; i < tensor_count_; ++i) {
        if (refs_[i] == &x && create_[i] == create) {
          dump_t_[i] = true;
          return;
        }
      }
      set_error(create ? "dump: TensorCreateInfo is not an argument of this Arg"
                       : "dump: tensor is not an argument of this Arg");
    } else {
      static_assert(is_supported_scalar_arg_v<T>, "dump: tensors, create-infos or scalar variables");
      for (size_t i = 0; i < scalar_count_; ++i) {
        if (sources_[i] == &x) {
          dump_s_[i] = true;
          return;
        }
      }
      set_error("dump: scalar is not an argument of this Arg (pass the variable that was added)");
    }
  }
  template <typename T>
  void add_scalar_one(T &&v) {
    sources_[scalar_count_] = std::is_lvalue_reference_v<T> ? static_cast<const void *>(&v) : nullptr;
    scalars_[scalar_count_++] = to_u64(v);
  }
  // The overflow messages, with this instantiation's room (built once, kept for error_msg).
  static const char *too_many_scalars() {
    static const std::string msg = "more than " + std::to_string(MaxS) + " scalar arguments";
    return msg.c_str();
  }
  static const char *too_many_tensors() {
    static const std::string msg = "more than " + std::to_string(MaxT) + " tensor arguments";
    return msg.c_str();
  }

  const void *refs_[MaxT] = {};
  bool create_[MaxT] = {};
  TensorArgType tags_[MaxT] = {};
  uint64_t scalars_[MaxS] = {};
  const void *sources_[MaxS] = {};
  bool dump_t_[MaxT] = {};
  bool dump_s_[MaxS] = {};
  size_t tensor_count_ = 0, scalar_count_ = 0;
  const PTO2TaskId *deps_ = nullptr;
  uint32_t dep_count_ = 0;
  bool early_resolve_ = false;
  int32_t timing_slot_ = -1;
  CoreTaskPredicate predicate_;
};

using CoreTaskArgs = Arg<MAX_TENSOR_ARGS, MAX_SCALAR_ARGS>;

// A graph's boundary (rt_submit_graph, pto_graph.h): the same arguments object, with the
// reference's room.
inline constexpr uint32_t GRAPH_MAX_TENSOR_ARGS = 128;
inline constexpr uint32_t GRAPH_MAX_SCALAR_ARGS = 64;
using GraphTaskArgs = Arg<GRAPH_MAX_TENSOR_ARGS, GRAPH_MAX_SCALAR_ARGS>;

// The run's arguments as the orchestration entry sees them: tensor(i).ref() is the i-th run
// tensor's descriptor (its data is readable through data_as<T>()), scalar(i) the i-th scalar.
class ChipTaskArgs {
 public:
  using TensorRef = ChipTensorRef;
  ChipTaskArgs(const ChipTensor *tensors, int32_t num_tensors, const uint64_t *scalars, int32_t num_scalars)
      : tensors_(tensors), scalars_(scalars), num_tensors_(num_tensors), num_scalars_(num_scalars) {}
  TensorRef tensor(int32_t i) const { return TensorRef(&tensors_[i]); }
  uint64_t scalar(int32_t i) const { return scalars_[i]; }
  int32_t tensor_count() const { return num_tensors_; }
  int32_t scalar_count() const { return num_scalars_; }

 private:
  const ChipTensor *tensors_;
  const uint64_t *scalars_;
  int32_t num_tensors_, num_scalars_;
};

// What an orchestration's optional aicpu_orchestration_config() returns.
#ifndef PTO2_ORCHESTRATION_CONFIG_DEFINED
#define PTO2_ORCHESTRATION_CONFIG_DEFINED
struct PTO2OrchestrationConfig {
  int expected_arg_count;
};
#endif

#endif  // PTO_ABI_PTO_TYPES_H
