// src/runtime/host_build_graph/host/host_orchestrator.cpp — submits, dependencies, allocations,
// scopes and direct accesses of a device orchestration run on the host.
#include "host/host_orchestrator.h"

#include <algorithm>
#include <cstdio>

namespace pto {
namespace hbg {
namespace {

std::string task_name(uint32_t id, uint32_t func_id) {
  return "task " + std::to_string(id) + " (kernel " + std::to_string(func_id) + ")";
}

// The bytes view v touches (core/region.h), for the dependency look-ups.
Region region_of(const TensorView &v) {
  Region r;
  fill_region(&r, v.buffer, v.offset, v.elem_size(), v.ndim, v.shape, v.strides);
  return r;
}

}  // namespace

void HostOrchestrator::run(void *entry) {
  scopes_.assign(1, false);  // the root scope: the whole orchestration, inference on
  reinterpret_cast<void (*)(Orchestrator &)>(entry)(*this);
  if (ok() && scopes_.size() != 1) {
    b_.fail_with(PTO_INVALID_ARGUMENT, std::to_string(scopes_.size() - 1) +
                                           " scope(s) still open when the orchestration returned; end every "
                                           "scope_begin with scope_end (or use pto::Scope)");
  }
}

// A run tensor as the whole-buffer view the tensormap runtime gives (a 0-d array is a
// one-element vector).
TensorView HostOrchestrator::tensor(uint32_t i) const {
  TensorView v;
  if (i >= in_.tensors.size()) return v;
  const Tensor &t = in_.tensors[i];
  v.buffer = t.addr;
  v.buffer_bytes = t.nbytes;
  v.dtype = t.dtype;
  v.ndim = t.ndim == 0 ? 1 : t.ndim;
  int64_t stride = 1;
  for (uint32_t d = v.ndim; d-- > 0;) {
    v.shape[d] = t.ndim == 0 ? 1 : t.shape[d];
    v.strides[d] = stride;
    stride *= v.shape[d];
  }
  return v;
}

bool HostOrchestrator::check_after(const TaskHandle *after, uint32_t num_after) {
  const uint32_t id = b_.num_tasks();
  if (num_after > 0 && !after) {
    b_.fail_with(PTO_INVALID_ARGUMENT, "task " + std::to_string(id) + ": after is null but num_after is " +
                                           std::to_string(num_after));
    return false;
  }
  for (uint32_t i = 0; i < num_after; ++i) {
    if (after[i].id >= 0 && after[i].id < id) continue;
    b_.fail_with(PTO_INVALID_ARGUMENT, "task " + std::to_string(id) + ": after[" + std::to_string(i) +
                                           "] is " + std::to_string(after[i].id) +
                                           "; it must be a task submitted before this one (0.." +
                                           std::to_string(static_cast<int64_t>(id) - 1) + ")");
    return false;
  }
  return true;
}

void HostOrchestrator::add_dependencies(uint32_t id, const Arg *args, uint32_t n, const TaskHandle *after,
                                        uint32_t num_after) {
  producers_.clear();
  const bool manual = scopes_.back();
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind != PTO_ARG_TENSOR || args[i].access == Access::NO_DEP) continue;
    const Region r = region_of(args[i].view);
    const bool write = args[i].access != Access::INPUT;
    if (manual) {
      deps_.insert(r, write, id);  // still seen by wait_for_tasks_using and by later look-ups
    } else {
      deps_.access(r, write, id, &producers_);
    }
  }
  for (uint32_t i = 0; i < num_after; ++i)
    producers_.push_back(RegionDeps::Producer{static_cast<uint32_t>(after[i].id), kEdgeExplicit});
  listed_by_.resize(id + 1, -1);
  for (const RegionDeps::Producer &p : producers_) {  // one edge per producer, of the first kind found
    if (p.task == id || listed_by_[p.task] == id) continue;
    listed_by_[p.task] = id;
    b_.add_edge(static_cast<TaskId>(p.task), static_cast<TaskId>(id), p.kind);
  }
}

TaskHandle HostOrchestrator::submit_task(uint32_t func_id, pto_core_type core_type, const Arg *args,
                                         uint32_t num_args, const TaskHandle *after, uint32_t num_after,
                                         const Launch *launch) {
  if (!ok() || !check_after(after, num_after)) return TaskHandle{};
  const TaskId id = b_.add_view_task(func_id, core_type, args, num_args);
  if (id == kInvalidTask) return TaskHandle{};
  if (launch && !launch->is_default() && !b_.set_launch(id, *launch)) return TaskHandle{};
  add_dependencies(static_cast<uint32_t>(id), args, num_args, after, num_after);
  return ok() ? TaskHandle{id} : TaskHandle{};
}

TaskHandle HostOrchestrator::submit_dummy(const Arg *args, uint32_t num_args, const TaskHandle *after,
                                          uint32_t num_after) {
  if (!ok() || !check_after(after, num_after)) return TaskHandle{};
  if (num_args > 0 && !args) {
    b_.fail_with(PTO_INVALID_ARGUMENT,
                 "task " + std::to_string(b_.num_tasks()) + " (dependency-only): args is null");
    return TaskHandle{};
  }
  for (uint32_t i = 0; i < num_args; ++i) {
    if (args[i].kind != PTO_ARG_TENSOR) continue;
    const std::string fault = b_.view_fault(args[i].view);
    if (!fault.empty()) {
      b_.fail_with(PTO_BAD_TENSOR, "task " + std::to_string(b_.num_tasks()) +
                                       " (dependency-only): argument " + std::to_string(i) + " " + fault);
      return TaskHandle{};
    }
  }
  const TaskId id = b_.add_dummy_task();
  if (id == kInvalidTask) return TaskHandle{};
  add_dependencies(static_cast<uint32_t>(id), args, num_args, after, num_after);
  return ok() ? TaskHandle{id} : TaskHandle{};
}

TaskHandle HostOrchestrator::submit_mixed(const int32_t funcs[3], const Arg *args, uint32_t num_args,
                                          const TaskHandle *after, uint32_t num_after, const Launch *launch) {
  if (!ok() || !check_after(after, num_after)) return TaskHandle{};
  const TaskId id = b_.add_mixed_task(funcs, args, num_args);
  if (id == kInvalidTask) return TaskHandle{};
  if (launch && !launch->is_default() && !b_.set_launch(id, *launch)) return TaskHandle{};
  add_dependencies(static_cast<uint32_t>(id), args, num_args, after, num_after);
  return ok() ? TaskHandle{id} : TaskHandle{};
}

TensorView HostOrchestrator::alloc_tensor(pto_dtype dtype, uint32_t ndim, const int64_t *shape) {
  TensorView v;
  if (!ok()) return v;
  const uint32_t esize = pto_dtype_size(dtype);
  if (esize == 0 || ndim == 0 || ndim > static_cast<uint32_t>(kMaxViewDims) || !shape) {
    b_.fail_with(PTO_INVALID_ARGUMENT, "alloc_tensor: dtype " + std::to_string(static_cast<int>(dtype)) +
                                           ", ndim " + std::to_string(ndim) + (shape ? "" : ", shape null") +
                                           ": needs a concrete dtype, 1..8 dimensions and a shape");
    return v;
  }
  int64_t numel = 1;
  for (uint32_t d = 0; d < ndim; ++d) {
    if (shape[d] < 0 || (shape[d] != 0 && numel > INT64_MAX / esize / shape[d])) {
      b_.fail_with(PTO_INVALID_ARGUMENT, "alloc_tensor: shape[" + std::to_string(d) + "] is " +
                                             std::to_string(shape[d]) +
                                             "; extents must be 0 or more and the tensor below 2^63 bytes");
      return v;
    }
    numel *= shape[d];
  }
  // An empty tensor still gets a buffer of its own (one element): its address identifies it.
  const Tensor t = b_.alloc_tensor(dtype, static_cast<uint64_t>(std::max<int64_t>(numel, 1)));
  if (!ok()) return v;
  v.buffer = t.addr;
  v.buffer_bytes = static_cast<uint64_t>(numel) * esize;
  v.dtype = dtype;
  v.ndim = ndim;
  int64_t stride = 1;
  for (uint32_t d = ndim; d-- > 0;) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

void HostOrchestrator::scope_begin(bool manual) {
  if (!ok()) return;
  scopes_.push_back(manual || scopes_.back());
}

void HostOrchestrator::scope_end() {
  if (!ok()) return;
  if (scopes_.size() <= 1) {
    b_.fail_with(PTO_INVALID_ARGUMENT, "scope_end without a matching scope_begin");
    return;
  }
  scopes_.pop_back();
}

std::string HostOrchestrator::buffer_name(const TensorView &v) const {
  for (size_t i = 0; i < in_.tensors.size(); ++i) {
    if (in_.tensors[i].addr == v.buffer) return "run tensor " + std::to_string(i);
  }
  char addr[32];
  snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(v.buffer));
  return std::string("the alloc_tensor buffer at ") + addr;
}

bool HostOrchestrator::wait_for_tasks_using(const TensorView &v, bool write) {
  if (!ok()) return false;
  const std::string bad = b_.view_fault(v);
  if (!bad.empty()) {
    b_.fail_with(PTO_BAD_TENSOR, "wait_for_tasks_using: the view " + bad);
    return false;
  }
  const int64_t last = deps_.youngest_conflict(region_of(v), write);
  if (last < 0) return true;  // no task conflicts: the memory is what the device will see
  const HostTask &t = b_.tasks()[static_cast<size_t>(last)];
  b_.fail_with(PTO_NOT_SUPPORTED,
               std::string(write ? "writing" : "reading") + " " + buffer_name(v) +
                   " in the orchestration (get_tensor_data / set_tensor_data / wait_for_tasks_using): " +
                   task_name(static_cast<uint32_t>(last), t.func_id) + (write ? " uses" : " writes") +
                   " it, and host_build_graph builds the whole graph before any task runs, so the "
                   "orchestration cannot wait for it; access only tensors no submitted task " +
                   (write ? "reads or writes" : "writes") +
                   ", pass the value as a scalar, or use tensormap_and_ringbuffer");
  return false;
}

}  // namespace hbg
}  // namespace pto
