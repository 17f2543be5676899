// src/runtime/host_build_graph/host/graph_builder.cpp — add_task / add_dependency with every check.
#include "host/graph_builder.h"

#include <algorithm>

#include "core/descriptor_call.h"
#include "core/graph/task_record.h"
#include "core/launch_check.h"
#include "core/schedule_messages.h"
#include "core/tensor_dump.h"

namespace pto {
namespace hbg {
namespace {

std::string task_name(TaskId id, uint32_t func_id) {
  return "task " + std::to_string(id) + " (kernel " + std::to_string(func_id) + ")";
}

}  // namespace

void HostGraphBuilder::fail(const char *message) {
  err_.orchestration_failed(message);
}

bool HostGraphBuilder::live_tensor(uint64_t addr, uint64_t bytes) {
  if (addr >= live_lo_ && addr < live_hi_ && bytes <= live_hi_ - addr) return true;
  if (runner_.memory().contains(addr, bytes, &live_lo_, &live_hi_)) return true;
  for (const auto &r : in_.in_place) {  // a run argument used in place (a communication window)
    if (addr >= r.first && addr <= r.second && bytes <= r.second - addr) return true;
  }
  return false;
}

bool HostGraphBuilder::check_args(const KernelEntry &k, TaskId id, const TaskArg *args, uint32_t n) {
  auto who = [&] { return task_name(id, k.func_id); };  // built only for a message (hot path)
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind == PTO_ARG_TENSOR) {
      const Tensor &t = args[i].tensor;
      if (!live_tensor(t.addr, t.nbytes)) {
        error(PTO_BAD_TENSOR, who() + ": argument " + std::to_string(i) +
                                  " is not a live device tensor (use a tensor from args or alloc_tensor)");
        return false;
      }
    } else if (args[i].kind != PTO_ARG_SCALAR) {
      error(PTO_INVALID_ARGUMENT, who() + ": argument " + std::to_string(i) + " has an unknown kind");
      return false;
    }
  }
  const pto_kernel_signature_t *sig = k.loaded.signature;
  if (!sig) return true;  // the kernel declares nothing: only the checks above apply
  if (sig->num_args != n) {
    error(PTO_INVALID_ARGUMENT, who() + " has " + std::to_string(n) +
                                    " arguments but the kernel's signature declares " +
                                    std::to_string(sig->num_args));
    return false;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const pto_arg_spec &s = sig->args[i];
    auto arg = [&] { return who() + ": argument " + std::to_string(i); };
    if (s.kind != static_cast<uint32_t>(args[i].kind)) {
      error(PTO_INVALID_ARGUMENT, arg() + " is a " + (args[i].kind == PTO_ARG_TENSOR ? "tensor" : "scalar") +
                                      " but the kernel declares a " +
                                      (s.kind == PTO_ARG_TENSOR ? "tensor" : "scalar"));
      return false;
    }
    if (s.kind != PTO_ARG_TENSOR) continue;
    const Tensor &t = args[i].tensor;
    if (s.dtype != PTO_DTYPE_ANY && s.dtype != static_cast<uint32_t>(t.dtype)) {
      error(PTO_BAD_TENSOR, arg() + " has dtype " + pto_dtype_name(t.dtype) + " but the kernel takes " +
                                pto_dtype_name(static_cast<pto_dtype>(s.dtype)));
      return false;
    }
    if (s.min_elems_arg >= 0) {
      const auto ref = static_cast<uint32_t>(s.min_elems_arg);
      if (ref >= n || args[ref].kind != PTO_ARG_SCALAR) {
        error(PTO_INVALID_ARGUMENT, arg() + ": the kernel's signature sizes it by argument " +
                                        std::to_string(ref) + ", which is not a scalar of this task");
        return false;
      }
      const int64_t need = args[ref].scalar;
      if (need < 0 || static_cast<uint64_t>(need) > t.nelems) {
        error(PTO_BAD_TENSOR, arg() + " holds " + std::to_string(t.nelems) +
                                  " elements but the kernel uses " + std::to_string(need) + " (argument " +
                                  std::to_string(ref) + ")");
        return false;
      }
    }
  }
  return true;
}

TensorView view_of(const Tensor &t) {
  TensorView v;
  v.buffer = t.addr;
  v.buffer_bytes = t.nbytes;
  v.dtype = t.dtype;
  abi_shape_of(t, &v.ndim, v.shape, v.strides);
  return v;
}

void abi_shape_of(const Tensor &t, uint32_t *ndim, int64_t *shape, int64_t *strides) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t.ndim && d < static_cast<uint32_t>(kMaxTensorDims); ++d) n *= t.shape[d];
  const bool own =
      t.ndim > 0 && t.ndim <= static_cast<uint32_t>(kMaxTensorDims) && n == static_cast<int64_t>(t.nelems);
  *ndim = own ? t.ndim : 1;
  if (!own) shape[0] = static_cast<int64_t>(t.nelems);
  int64_t stride = 1;
  for (uint32_t d = *ndim; d-- > 0;) {
    if (own) shape[d] = t.shape[d];
    strides[d] = stride;
    stride *= shape[d];
  }
}

bool HostGraphBuilder::check_descriptor_args(const KernelEntry &k, TaskId id, const TaskArg *args,
                                             uint32_t n) {
  DescriptorArgCheck check;
  for (uint32_t i = 0; i < n; ++i) {
    DescriptorFault f;
    if (args[i].kind == PTO_ARG_SCALAR) {
      f = check.scalar();
    } else {
      uint32_t ndim;
      int64_t shape[kMaxTensorDims], strides[kMaxTensorDims];
      abi_shape_of(args[i].tensor, &ndim, shape, strides);
      f = check.tensor(args[i].tensor.dtype, ndim, shape, strides);
    }
    if (f != kDescOk) {
      error(descriptor_fault_code(f), descriptor_fault_message(task_name(id, k.func_id), i, k.func_id, f));
      return false;
    }
  }
  return true;
}

const KernelEntry *HostGraphBuilder::admit(TaskId id, uint32_t func_id, pto_core_type core_type,
                                           uint32_t num_args, bool args_null) {
  auto it = in_.kernels.find(func_id);
  if (it == in_.kernels.end()) {
    std::string known;
    for (auto &kv : in_.kernels) known += (known.empty() ? "" : ", ") + std::to_string(kv.first);
    error(PTO_UNKNOWN_KERNEL, task_name(id, func_id) + ": the callable defines no kernel " +
                                  std::to_string(func_id) + " (defined: " + (known.empty() ? "none" : known) +
                                  ")");
    return nullptr;
  }
  const KernelEntry &k = it->second;
  if (core_type != k.core_type) {
    error(PTO_INVALID_ARGUMENT, task_name(id, func_id) + " asks for a " + pto_core_type_name(core_type) +
                                    " core but the kernel was registered for " +
                                    pto_core_type_name(k.core_type));
    return nullptr;
  }
  if (tasks_.size() >= in_.cfg.max_tasks) {
    error(PTO_CAPACITY_EXCEEDED, "more than max_tasks = " + std::to_string(in_.cfg.max_tasks) +
                                     " tasks; raise ChipCallConfig.max_tasks");
    return nullptr;
  }
  if (in_.cfg.task_window_overflow == static_cast<uint32_t>(WindowOverflow::kError) &&
      tasks_.size() >= in_.cfg.task_window) {
    error(PTO_CAPACITY_EXCEEDED, window_overflow_message("host_build_graph", id, in_.cfg.task_window));
    return nullptr;
  }
  if (num_args > in_.cfg.max_args_per_task) {
    error(PTO_TOO_MANY_ARGS, task_name(id, func_id) + " has " + std::to_string(num_args) +
                                 " arguments; max_args_per_task is " +
                                 std::to_string(in_.cfg.max_args_per_task));
    return nullptr;
  }
  if (num_args > 0 && args_null) {
    error(PTO_INVALID_ARGUMENT, task_name(id, func_id) + ": args is null");
    return nullptr;
  }
  return &k;
}

TaskId HostGraphBuilder::commit(TaskId id, const KernelEntry &k, pto_core_type core_type, uint32_t args_begin,
                                uint32_t dump_begin, uint32_t abi_begin, uint32_t num_args, bool descriptors,
                                const HostMixParts *mix) {
  HostTask t;
  t.func_id = k.func_id;
  t.core_type = core_type;
  t.kernel_addr = k.loaded.entry_addr;
  if (core_type == PTO_CORE_MIX) {
    HostMixParts one;  // one MIX kernel: every part runs it
    if (!mix) {
      for (uint32_t p = 0; p < kMixParts; ++p) {
        one.func[p] = k.func_id;
        one.kernel_addr[p] = k.loaded.entry_addr;
      }
      one.descriptors = descriptors ? (1u << kMixParts) - 1 : 0;
      mix = &one;
    }
    t.kernel_addr = mix->kernel_addr[0];
    t.mix = static_cast<int32_t>(mix_.size());
    mix_.push_back(*mix);
  }
  t.args_begin = args_begin;
  t.num_args = num_args;
  t.dump_begin = dump_begin;
  t.num_dump = static_cast<uint32_t>(dump_.size()) - dump_begin;
  t.descriptors = descriptors;
  t.abi_begin = abi_begin;
  t.num_abi_tensors = static_cast<uint32_t>(abi_.size()) - abi_begin;
  t.stream = stream_;
  t.target = target_;
  tasks_.push_back(t);
  return id;
}

TaskId HostGraphBuilder::add_task(uint32_t func_id, pto_core_type core_type, const TaskArg *args,
                                  uint32_t num_args) {
  if (!ok()) return kInvalidTask;
  const auto id = static_cast<TaskId>(tasks_.size());
  const KernelEntry *k = admit(id, func_id, core_type, num_args, args == nullptr);
  if (!k || !check_args(*k, id, args, num_args)) return kInvalidTask;
  const bool descriptors = k->loaded.abi == static_cast<uint32_t>(KernelAbi::kDescriptor);
  if (descriptors && !check_descriptor_args(*k, id, args, num_args)) return kInvalidTask;
  const auto args_begin = static_cast<uint32_t>(args_.size()),
             dump_begin = static_cast<uint32_t>(dump_.size()), abi_begin = static_cast<uint32_t>(abi_.size());
  for (uint32_t i = 0; i < num_args; ++i) {
    const bool tensor = args[i].kind == PTO_ARG_TENSOR;
    args_.push_back(tensor ? static_cast<int64_t>(args[i].tensor.addr) : args[i].scalar);
    if (!tensor) continue;
    // No direction is known here: a dumped tensor is copied before and after the task.
    if (in_.cfg.enable_dump_tensor)
      dump_.push_back(DumpTensor{i, kDumpBefore | kDumpAfter, view_of(args[i].tensor)});
    if (descriptors) abi_.push_back(view_of(args[i].tensor));
  }
  return commit(id, *k, core_type, args_begin, dump_begin, abi_begin, num_args, descriptors);
}

std::string HostGraphBuilder::view_fault(const TensorView &v) {
  const uint32_t esize = pto_dtype_size(v.dtype);
  if (esize == 0) return "has no valid dtype";
  if (v.ndim == 0 || v.ndim > static_cast<uint32_t>(kMaxViewDims))
    return "has " + std::to_string(v.ndim) + " dimensions (1..8 are supported)";
  int64_t last = 0;  // the last element's offset from the first, overflow-checked
  bool empty = false, wraps = false;
  for (uint32_t d = 0; d < v.ndim; ++d) {
    if (v.shape[d] < 0 || v.strides[d] < 0)
      return "has a negative extent or stride in dimension " + std::to_string(d);
    empty |= v.shape[d] == 0;
    int64_t step;
    if (v.shape[d] > 0)
      wraps |= __builtin_mul_overflow(v.shape[d] - 1, v.strides[d], &step) ||
               __builtin_add_overflow(last, step, &last);
  }
  if (!live_tensor(v.buffer, v.buffer_bytes)) return "does not view a run tensor or an alloc_tensor buffer";
  int64_t end;
  uint64_t end_bytes;
  const bool inside = v.offset >= 0 && !wraps && !__builtin_add_overflow(v.offset, last, &end) &&
                      end < INT64_MAX &&
                      !__builtin_mul_overflow(static_cast<uint64_t>(end) + 1, uint64_t{esize}, &end_bytes) &&
                      end_bytes <= v.buffer_bytes;
  if (empty || inside) return "";
  return "reaches outside its buffer of " + std::to_string(v.buffer_bytes) + " bytes (offset " +
         std::to_string(v.offset) + ", last element " +
         (wraps || v.offset < 0 ? std::string("out of range") : std::to_string(v.offset + last)) + ")";
}

bool HostGraphBuilder::check_views(TaskId id, uint32_t func_id, const Arg *args, uint32_t n) {
  auto arg = [&](uint32_t i) { return task_name(id, func_id) + ": argument " + std::to_string(i); };
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind == PTO_ARG_SCALAR) continue;
    if (args[i].kind != PTO_ARG_TENSOR) {
      error(PTO_INVALID_ARGUMENT, arg(i) + " has an unknown kind");
      return false;
    }
    if (static_cast<uint32_t>(args[i].access) > static_cast<uint32_t>(Access::NO_DEP)) {
      error(PTO_INVALID_ARGUMENT, arg(i) + " has an unknown access mode " +
                                      std::to_string(static_cast<uint32_t>(args[i].access)) + " (0..4)");
      return false;
    }
    const std::string bad = view_fault(args[i].view);
    if (!bad.empty()) {
      error(PTO_BAD_TENSOR, arg(i) + " " + bad);
      return false;
    }
  }
  return true;
}

bool HostGraphBuilder::check_view_kernel(const KernelEntry &k, TaskId id, const Arg *args, uint32_t n) {
  if (!check_view_signature(k, id, args, n)) return false;
  if (k.loaded.abi != static_cast<uint32_t>(KernelAbi::kDescriptor)) return true;
  DescriptorArgCheck check;
  for (uint32_t i = 0; i < n; ++i) {
    const TensorView &v = args[i].view;
    const DescriptorFault f =
        args[i].kind == PTO_ARG_SCALAR ? check.scalar() : check.tensor(v.dtype, v.ndim, v.shape, v.strides);
    if (f != kDescOk) {
      error(descriptor_fault_code(f), descriptor_fault_message(task_name(id, k.func_id), i, k.func_id, f));
      return false;
    }
  }
  return true;
}

// The kernel's declared signature (pto/kernel.h), if any, against the views: as check_args does
// for whole tensors, with a view's element count for min_elems_arg.
bool HostGraphBuilder::check_view_signature(const KernelEntry &k, TaskId id, const Arg *args, uint32_t n) {
  const pto_kernel_signature_t *sig = k.loaded.signature;
  if (!sig) return true;
  auto who = [&] { return task_name(id, k.func_id); };
  if (sig->num_args != n) {
    error(PTO_INVALID_ARGUMENT, who() + " has " + std::to_string(n) +
                                    " arguments but the kernel's signature declares " +
                                    std::to_string(sig->num_args));
    return false;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const pto_arg_spec &s = sig->args[i];
    auto arg = [&] { return who() + ": argument " + std::to_string(i); };
    if (s.kind != static_cast<uint32_t>(args[i].kind)) {
      error(PTO_INVALID_ARGUMENT, arg() + " is a " + (args[i].kind == PTO_ARG_TENSOR ? "tensor" : "scalar") +
                                      " but the kernel declares a " +
                                      (s.kind == PTO_ARG_TENSOR ? "tensor" : "scalar"));
      return false;
    }
    if (s.kind != PTO_ARG_TENSOR) continue;
    const TensorView &v = args[i].view;
    if (s.dtype != PTO_DTYPE_ANY && s.dtype != static_cast<uint32_t>(v.dtype)) {
      error(PTO_BAD_TENSOR, arg() + " has dtype " + pto_dtype_name(v.dtype) + " but the kernel takes " +
                                pto_dtype_name(static_cast<pto_dtype>(s.dtype)));
      return false;
    }
    if (s.min_elems_arg < 0) continue;
    const auto ref = static_cast<uint32_t>(s.min_elems_arg);
    if (ref >= n || args[ref].kind != PTO_ARG_SCALAR) {
      error(PTO_INVALID_ARGUMENT, arg() + ": the kernel's signature sizes it by argument " +
                                      std::to_string(ref) + ", which is not a scalar of this task");
      return false;
    }
    if (args[ref].scalar < 0 || args[ref].scalar > v.numel()) {
      error(PTO_BAD_TENSOR, arg() + " holds " + std::to_string(v.numel()) + " elements but the kernel uses " +
                                std::to_string(args[ref].scalar) + " (argument " + std::to_string(ref) + ")");
      return false;
    }
  }
  return true;
}

TaskId HostGraphBuilder::add_view_task(uint32_t func_id, pto_core_type core_type, const Arg *args,
                                       uint32_t num_args) {
  if (!ok()) return kInvalidTask;
  const auto id = static_cast<TaskId>(tasks_.size());
  const KernelEntry *k = admit(id, func_id, core_type, num_args, args == nullptr);
  if (!k || !check_view_args(*k, id, args, num_args)) return kInvalidTask;
  const bool descriptors = k->loaded.abi == static_cast<uint32_t>(KernelAbi::kDescriptor);
  return commit_views(id, *k, core_type, args, num_args, descriptors, nullptr);
}

TaskId HostGraphBuilder::add_mixed_task(const int32_t funcs[kMixParts], const Arg *args, uint32_t num_args) {
  if (!ok()) return kInvalidTask;
  const auto id = static_cast<TaskId>(tasks_.size());
  const std::string fault = mix_funcs_fault(id, funcs);
  if (!fault.empty()) {
    error(PTO_INVALID_ARGUMENT, fault);
    return kInvalidTask;
  }
  HostMixParts parts;
  const KernelEntry *first = nullptr;  // the part whose kernel names the task (mix_task_func)
  for (uint32_t p = 0; p < kMixParts; ++p) {
    parts.func[p] = graph::kNoKernel;
    parts.kernel_addr[p] = reinterpret_cast<uint64_t>(&idle_mix_part);
    if (funcs[p] < 0) continue;
    const auto func = static_cast<uint32_t>(funcs[p]);
    const KernelEntry *k = admit(id, func, mix_part_core_type(p), num_args, args == nullptr);
    if (!k || (!first && !check_views(id, func, args, num_args)) ||
        !check_view_kernel(*k, id, args, num_args))
      return kInvalidTask;
    parts.func[p] = func;
    parts.kernel_addr[p] = k->loaded.entry_addr;
    if (k->loaded.abi == static_cast<uint32_t>(KernelAbi::kDescriptor)) parts.descriptors |= 1u << p;
    if (!first) first = k;
  }
  return commit_views(id, *first, PTO_CORE_MIX, args, num_args, parts.descriptors != 0, &parts);
}

TaskId HostGraphBuilder::commit_views(TaskId id, const KernelEntry &k, pto_core_type core_type,
                                      const Arg *args, uint32_t num_args, bool descriptors,
                                      const HostMixParts *mix) {
  const auto args_begin = static_cast<uint32_t>(args_.size()),
             dump_begin = static_cast<uint32_t>(dump_.size()), abi_begin = static_cast<uint32_t>(abi_.size());
  for (uint32_t i = 0; i < num_args; ++i) {
    const Arg &a = args[i];
    const bool tensor = a.kind == PTO_ARG_TENSOR;
    args_.push_back(tensor ? static_cast<int64_t>(a.view.addr()) : a.scalar);
    if (!tensor) continue;
    if (in_.cfg.enable_dump_tensor) {
      // As the tensormap runtime dumps: inputs before the task, outputs after, the rest both.
      const uint32_t when = a.access == Access::INPUT ? kDumpBefore
                            : a.access == Access::OUTPUT || a.access == Access::OUTPUT_EXISTING
                                ? kDumpAfter
                                : kDumpBefore | kDumpAfter;
      dump_.push_back(DumpTensor{i, when, a.view});
    }
    if (descriptors) abi_.push_back(a.view);
  }
  return commit(id, k, core_type, args_begin, dump_begin, abi_begin, num_args, descriptors, mix);
}

TaskId HostGraphBuilder::add_dummy_task() {
  if (!ok()) return kInvalidTask;
  if (tasks_.size() >= in_.cfg.max_tasks) {
    error(PTO_CAPACITY_EXCEEDED, "more than max_tasks = " + std::to_string(in_.cfg.max_tasks) +
                                     " tasks; raise ChipCallConfig.max_tasks");
    return kInvalidTask;
  }
  HostTask t;
  t.func_id = graph::kNoKernel;
  t.core_type = PTO_CORE_AIV;  // for messages only: a dependency-only task takes no core
  t.kernel_addr = 0;
  t.args_begin = static_cast<uint32_t>(args_.size());
  t.num_args = 0;
  t.dump_begin = static_cast<uint32_t>(dump_.size());
  t.abi_begin = static_cast<uint32_t>(abi_.size());
  t.stream = stream_;
  t.target = target_;
  t.dummy = true;
  tasks_.push_back(t);
  ++inline_candidates_;
  return static_cast<TaskId>(tasks_.size() - 1);
}

bool HostGraphBuilder::set_launch(TaskId id, const Launch &launch) {
  HostTask &t = tasks_[static_cast<size_t>(id)];
  const DispatchPredicate &p = launch.predicate;
  pto_status code;
  const LaunchPlaces places{static_cast<uint32_t>(t.core_type), in_.layout,
                            static_cast<uint32_t>(in_.cfg.block_dim)};
  // SPMD blocks need descriptor-ABI kernels: a MIX task's in every part that has one.
  const bool descriptors = t.mix >= 0 ? mix_parts(t).all_descriptors() : t.descriptors;
  const std::string fault =
      launch_fault(task_name(id, t.func_id), launch, descriptors,
                   p.op != PredicateOp::NONE && live_tensor(p.addr, p.elem_size), places, &code);
  if (!fault.empty()) {
    error(code, fault);
    return false;
  }
  if (p.op != PredicateOp::NONE) ++inline_candidates_;
  t.block_num = static_cast<uint16_t>(launch.block_num);
  t.sync_start = launch.sync_start;
  t.timing_slot = launch.timing_slot;
  t.predicate = p;
  return true;
}

void HostGraphBuilder::set_stream(uint32_t stream, uint32_t target) {
  if (!ok()) return;
  const std::string bad = stream_error(stream, target);
  if (!bad.empty()) {
    error(PTO_INVALID_ARGUMENT, bad);
    return;
  }
  stream_ = static_cast<uint16_t>(stream);
  target_ = static_cast<uint16_t>(target);
}

void HostGraphBuilder::add_edge(TaskId producer, TaskId consumer, uint32_t kind) {
  if (!ok()) return;
  const auto n = static_cast<TaskId>(tasks_.size());
  if (producer < 0 || producer >= n || consumer < 0 || consumer >= n) {
    error(PTO_INVALID_ARGUMENT,
          "add_dependency(" + std::to_string(producer) + ", " + std::to_string(consumer) +
              "): task ids must be ones add_task returned (0.." + std::to_string(n - 1) + ")");
    return;
  }
  if (producer == consumer) {
    error(PTO_DEPENDENCY_CYCLE, "add_dependency(" + std::to_string(producer) + ", " +
                                    std::to_string(consumer) + "): a task cannot depend on itself");
    return;
  }
  HostTask &p = tasks_[producer];
  if (p.num_succs >= in_.cfg.max_successors) {
    error(PTO_CAPACITY_EXCEEDED, "task " + std::to_string(producer) + " has more than max_successors = " +
                                     std::to_string(in_.cfg.max_successors) +
                                     " successors; raise ChipCallConfig.max_successors");
    return;
  }
  ++p.num_succs;
  ++tasks_[consumer].num_preds;
  edges_.emplace_back(static_cast<uint32_t>(producer), static_cast<uint32_t>(consumer));
  edge_kinds_.push_back(static_cast<uint8_t>(kind));
}

void HostGraphBuilder::predecessors(std::vector<uint32_t> *begin, std::vector<uint32_t> *preds) const {
  begin->assign(tasks_.size() + 1, 0);
  for (const auto &e : edges_) ++(*begin)[e.second + 1];
  for (size_t i = 0; i < tasks_.size(); ++i) (*begin)[i + 1] += (*begin)[i];
  preds->resize(edges_.size());
  std::vector<uint32_t> fill(begin->begin(), begin->end() - 1);
  for (const auto &e : edges_) (*preds)[fill[e.second]++] = e.first;
}

Tensor HostGraphBuilder::alloc_tensor(pto_dtype dtype, uint64_t nelems) {
  Tensor t;
  if (!ok()) return t;
  const uint32_t esize = pto_dtype_size(dtype);
  if (esize == 0) {
    error(PTO_INVALID_ARGUMENT,
          "alloc_tensor: dtype " + std::to_string(dtype) + " is not a concrete element type");
    return t;
  }
  // A count that is negative as a signed number (alloc_tensor(dtype, -1)) or whose byte size
  // wraps 64 bits would otherwise be reported as an impossible allocation, or worse, wrap to a
  // small one.
  if (nelems > static_cast<uint64_t>(INT64_MAX) / esize) {
    const int64_t as_signed = static_cast<int64_t>(nelems);
    error(PTO_INVALID_ARGUMENT,
          "alloc_tensor: nelems " + (as_signed < 0 ? std::to_string(as_signed) : std::to_string(nelems)) +
              " is outside 0.." + std::to_string(static_cast<uint64_t>(INT64_MAX) / esize) +
              " (elements of " + std::to_string(esize) + " bytes)");
    return t;
  }
  void *p = in_.allocations->allocate(nelems * esize);
  if (!p) {
    error(PTO_OUT_OF_MEMORY,
          "alloc_tensor: cannot allocate " + std::to_string(nelems * esize) + " device bytes");
    return t;
  }
  t.addr = reinterpret_cast<uint64_t>(p);
  t.nbytes = nelems * esize;
  t.nelems = nelems;
  t.dtype = dtype;
  t.ndim = 1;
  t.shape[0] = static_cast<int64_t>(nelems);
  return t;
}

pto_status HostGraphBuilder::finish() {
  if (!ok()) return err_.code;
  // Successors by producer, each in the order its edges were made (a stable counting sort).
  const size_t n = tasks_.size();
  uint32_t at = 0;
  for (HostTask &t : tasks_) {
    t.succ_begin = at;
    at += t.num_succs;
  }
  succ_.resize(edges_.size());
  {
    std::vector<uint32_t> fill(n);
    for (size_t i = 0; i < n; ++i) fill[i] = tasks_[i].succ_begin;
    for (const auto &e : edges_) succ_[fill[e.first]++] = e.second;
  }
  if (edges_.empty()) return PTO_OK;  // no edge, no cycle
  // Kahn's algorithm; if tasks remain, walk predecessors among them to print one cycle.
  std::vector<uint32_t> indeg(n), order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) indeg[i] = tasks_[i].num_preds;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) order.push_back(static_cast<uint32_t>(i));
  for (size_t h = 0; h < order.size(); ++h) {
    const HostTask &t = tasks_[order[h]];
    for (uint32_t k = 0; k < t.num_succs; ++k)
      if (--indeg[succ_[t.succ_begin + k]] == 0) order.push_back(succ_[t.succ_begin + k]);
  }
  if (order.size() == n) return PTO_OK;
  std::vector<uint32_t> pred_begin, preds;
  predecessors(&pred_begin, &preds);
  uint32_t cur = 0;
  while (indeg[cur] == 0) ++cur;
  std::vector<int32_t> seen_at(n, -1);
  std::vector<uint32_t> path;
  while (seen_at[cur] < 0) {
    seen_at[cur] = static_cast<int32_t>(path.size());
    path.push_back(cur);
    for (uint32_t k = pred_begin[cur]; k < pred_begin[cur + 1]; ++k) {
      if (indeg[preds[k]] != 0) {
        cur = preds[k];
        break;
      }
    }
  }
  std::string cycle;
  for (size_t i = path.size(); i-- > static_cast<size_t>(seen_at[cur]);)
    cycle += std::to_string(path[i]) + " -> ";
  cycle += std::to_string(path.back());
  error(PTO_DEPENDENCY_CYCLE, "the task graph has a dependency cycle: " + cycle);
  return err_.code;
}

}  // namespace hbg
}  // namespace pto
