// src/runtime/tensormap_and_ringbuffer/aicpu/submit_validation.cpp — what a task may ask for: kernel,
// core type, arguments, views, signature, explicit producers; and a view the orchestration
// accesses itself (wait_for_tasks_using).
//
// Runs for every submit, so the checks that pass cost a few compares each: check_task and
// view_ok compute every condition in one pass and build no message; a view's buffer is looked
// up in the run tensors' index (buffer_index.h) and the heap ring (HeapRing::holds), both
// O(log n), never by a scan of the live state. Only a task that fails goes to report_task
// (cold), which repeats the checks in order to say which failed, with the same messages. In validation
// mode (full_validation_, see orchestrator.h) each look-up is repeated by scanning everything,
// and a disagreement aborts: a bug in the index, not bad input.
#include "back_pressure.h"
#include "core/check.h"
#include "core/launch_check.h"
#include "core/mix_parts.h"
#include "orchestrator.h"
#include "view_region.h"

namespace pto {
namespace tmr {

// Validation mode: the same question answered by scanning every run tensor and live heap buffer.
void DeviceOrchestrator::check_by_scan(const TensorView &v, bool known) const {
  bool scanned = false;
  for (uint32_t i = 0; !scanned && i < h_->num_tensors; ++i) {
    scanned = tensors_of(h_)[i].buffer == v.buffer && tensors_of(h_)[i].buffer_bytes == v.buffer_bytes;
  }
  scanned = scanned || heap_.holds_scan(v.buffer - h_->heap_addr, v.buffer_bytes);
  PTO_CHECK(scanned == known, "orchestrator: the buffer index disagrees with the full scan");
}

// Run tensors live for the whole run, so the last one found answers again without a search
// (consecutive arguments usually view one buffer): that compare is inlined, the rest is not.
[[gnu::always_inline]] inline bool DeviceOrchestrator::buffer_known(const TensorView &v) {
  if (__builtin_expect(have_last_run_buffer_ && v.buffer == last_run_buffer_.first &&
                           v.buffer_bytes == last_run_buffer_.second && !full_validation_,
                       1))
    return true;
  return buffer_looked_up(v);
}

// Heap buffers come and go: never cached.
bool DeviceOrchestrator::buffer_looked_up(const TensorView &v) {
  bool known = have_last_run_buffer_ && v.buffer == last_run_buffer_.first &&
               v.buffer_bytes == last_run_buffer_.second;
  if (!known && run_buffers_.contains(v.buffer, v.buffer_bytes)) {
    known = have_last_run_buffer_ = true;
    last_run_buffer_ = {v.buffer, v.buffer_bytes};
  }
  // A buffer below the heap wraps to a huge offset: not held.
  known = known || heap_.holds(v.buffer - h_->heap_addr, v.buffer_bytes);
  if (__builtin_expect(full_validation_, 0)) check_by_scan(v, known);
  return known;
}

namespace {

// *last += (shape - 1) * stride, for shape > 0 and stride >= 0; true when that overflows int64
// (a view so long reaches past any buffer). Extents and strides are the caller's, unchecked.
inline bool add_extent(int64_t *last, int64_t shape, int64_t stride) {
  int64_t step;
  return __builtin_mul_overflow(shape - 1, stride, &step) || __builtin_add_overflow(*last, step, last);
}

// Elements offset .. offset + last, esize bytes each, lie within `bytes` (no sum or product
// may wrap on the way: a wrapped one would pass the compare).
inline bool within(int64_t offset, int64_t last, uint32_t esize, uint64_t bytes) {
  int64_t end;
  uint64_t end_bytes;
  return offset >= 0 && !__builtin_add_overflow(offset, last, &end) && end < INT64_MAX &&
         !__builtin_mul_overflow(static_cast<uint64_t>(end) + 1, uint64_t{esize}, &end_bytes) &&
         end_bytes <= bytes;
}

}  // namespace

// Runs for every tensor argument of every submit: one pass of compares, no message in sight.
inline bool DeviceOrchestrator::view_ok(const TensorView &v) {
  const uint32_t esize = elem_bytes(v.dtype);
  if (esize == 0 || v.ndim == 0 || v.ndim > static_cast<uint32_t>(kMaxViewDims)) return false;
  // The common view: offset, extents and strides all in [0, 2^24) (a negative one sets the top
  // bit). Then each (shape - 1) * stride is below 2^48, the offset plus kMaxViewDims of them
  // below 2^52, and that times esize (16 at most) below 2^56: nothing wraps, so the plain sums
  // decide. Any other view takes view_ok_checked, where every step is overflow-checked.
  // (Summed as unsigned, which wraps where int64 would overflow; the sum is read only when
  // nothing wrapped.)
  uint64_t any = static_cast<uint64_t>(v.offset), last = 0;
  bool empty = false;
  for (uint32_t d = 0; d < v.ndim; ++d) {
    const uint64_t n = static_cast<uint64_t>(v.shape[d]), stride = static_cast<uint64_t>(v.strides[d]);
    any |= n | stride;
    empty |= n == 0;
    if (n != 0) last += (n - 1) * stride;
  }
  // The buffer must be one the runtime handed out, whole: a run tensor or a live heap-ring
  // allocation. (The TensorMap keys on the buffer, so a made-up one would hide overlaps.)
  if (__builtin_expect(any < (uint64_t{1} << 24), 1))
    return buffer_known(v) &&
           (empty || (static_cast<uint64_t>(v.offset) + last + 1) * esize <= v.buffer_bytes);
  return view_ok_checked(v, esize);
}

// view_ok for a view with a value of 2^24 or more, or a negative one: every sum and product
// overflow-checked.
bool DeviceOrchestrator::view_ok_checked(const TensorView &v, uint32_t esize) {
  int64_t last = 0;
  bool bad = false, empty = false, wraps = false;
  for (uint32_t d = 0; !bad && d < v.ndim; ++d) {
    bad = v.shape[d] < 0 || v.strides[d] < 0;
    empty |= v.shape[d] == 0;
    if (!bad && v.shape[d] > 0) wraps |= add_extent(&last, v.shape[d], v.strides[d]);
  }
  return !bad && buffer_known(v) && (empty || (!wraps && within(v.offset, last, esize, v.buffer_bytes)));
}

// The checks of view_ok one by one, to say which failed (and its message); false if one did.
bool DeviceOrchestrator::check_view(const TensorView &v, int64_t id, uint32_t func_id, uint32_t index) {
  auto who = [&] { return task_name(id, func_id) + ": argument " + std::to_string(index); };
  const uint32_t esize = pto_dtype_size(v.dtype);
  if (esize == 0) return error(PTO_BAD_TENSOR, who() + " has no valid dtype"), false;
  if (v.ndim == 0 || v.ndim > static_cast<uint32_t>(kMaxViewDims)) {
    return error(PTO_BAD_TENSOR,
                 who() + " has " + std::to_string(v.ndim) + " dimensions (1..8 are supported)"),
           false;
  }
  int64_t last = 0;
  bool empty = false, wraps = false;
  for (uint32_t d = 0; d < v.ndim; ++d) {
    if (v.shape[d] < 0 || v.strides[d] < 0) {
      return error(PTO_BAD_TENSOR,
                   who() + " has a negative extent or stride in dimension " + std::to_string(d)),
             false;
    }
    empty |= v.shape[d] == 0;
    if (v.shape[d] > 0) wraps |= add_extent(&last, v.shape[d], v.strides[d]);
  }
  if (!buffer_known(v)) {
    return error(PTO_BAD_TENSOR, who() + " does not view a run tensor or an alloc_tensor buffer"), false;
  }
  if (!empty && (wraps || !within(v.offset, last, esize, v.buffer_bytes))) {
    int64_t end;
    const bool far = wraps || __builtin_add_overflow(v.offset, last, &end);
    return error(PTO_BAD_TENSOR, who() + " reaches outside its buffer of " + std::to_string(v.buffer_bytes) +
                                     " bytes (offset " + std::to_string(v.offset) + ", last element " +
                                     (far ? std::string("beyond 2^63") : std::to_string(end)) + ")"),
           false;
  }
  return true;
}

// A descriptor-ABI kernel's arguments: tensors first, within the ABI's counts, each view
// expressible as a ChipTensor. kDescOk, or the first fault and (in *at) its argument index.
DescriptorFault DeviceOrchestrator::descriptor_arg_fault(const Arg *args, uint32_t n, uint32_t *at) {
  DescriptorArgCheck check;
  for (uint32_t i = 0; i < n; ++i) {
    const TensorView &v = args[i].view;
    const DescriptorFault f =
        args[i].kind == PTO_ARG_SCALAR ? check.scalar() : check.tensor(v.dtype, v.ndim, v.shape, v.strides);
    if (f != kDescOk) {
      if (at) *at = i;
      return f;
    }
  }
  return kDescOk;
}

bool DeviceOrchestrator::check_task(uint32_t func_id, pto_core_type core_type, const Arg *args, uint32_t n,
                                    const TaskHandle *after, uint32_t num_after) {
  const int64_t id = next_id_;
  const KernelSlot *k = func_id < h_->num_kernels ? &kernels_of(h_)[func_id] : nullptr;
  bool bad = !k || k->entry == 0 || (core_type == PTO_CORE_MIX && h_->block_dim == 0) ||
             core_type != static_cast<pto_core_type>(k->core_type) || n > h_->max_args || (n > 0 && !args);
  uint32_t tensors = 0;
  for (uint32_t i = 0; !bad && i < n; ++i) {
    const Arg &a = args[i];
    if (a.kind == PTO_ARG_SCALAR) continue;
    bad = a.kind != PTO_ARG_TENSOR ||
          static_cast<uint32_t>(a.access) > static_cast<uint32_t>(Access::NO_DEP) || !view_ok(a.view);
    ++tensors;
  }
  bad = bad || tensors > h_->tensormap_entries;
  if (!bad && k->abi == static_cast<uint32_t>(KernelAbi::kDescriptor))
    bad = descriptor_arg_fault(args, n) != kDescOk;
  const auto *sig = bad ? nullptr : reinterpret_cast<const pto_kernel_signature_t *>(k->signature);
  if (sig) {
    bad = sig->num_args != n;
    for (uint32_t i = 0; !bad && i < n; ++i) {
      const pto_arg_spec &spec = sig->args[i];
      bad = spec.kind != static_cast<uint32_t>(args[i].kind);
      if (bad || spec.kind != PTO_ARG_TENSOR) continue;
      const TensorView &v = args[i].view;
      bad = spec.dtype != PTO_DTYPE_ANY && spec.dtype != static_cast<uint32_t>(v.dtype);
      if (!bad && spec.min_elems_arg >= 0) {
        const auto ref = static_cast<uint32_t>(spec.min_elems_arg);
        bad = ref >= n || args[ref].kind != PTO_ARG_SCALAR || args[ref].scalar < 0 ||
              args[ref].scalar > v.numel();
      }
    }
  }
  for (uint32_t i = 0; !bad && i < num_after; ++i) bad = !after || after[i].id < 0 || after[i].id >= id;
  return __builtin_expect(!bad, 1) || report_task(func_id, core_type, args, n, after, num_after);
}

// The checks of check_task one by one, in the order that picks the message; returns false.
bool DeviceOrchestrator::report_task(uint32_t func_id, pto_core_type core_type, const Arg *args, uint32_t n,
                                     const TaskHandle *after, uint32_t num_after) {
  const int64_t id = next_id_;
  auto who = [&] { return task_name(id, func_id); };  // built only for a message
  const KernelSlot *k = func_id < h_->num_kernels ? &kernels_of(h_)[func_id] : nullptr;
  if (!k || k->entry == 0) {
    std::string known;
    for (uint32_t i = 0; i < h_->num_kernels; ++i) {
      if (kernels_of(h_)[i].entry) known += (known.empty() ? "" : ", ") + std::to_string(i);
    }
    return error(PTO_UNKNOWN_KERNEL, who() + ": the callable defines no kernel " + std::to_string(func_id) +
                                         " (defined: " + (known.empty() ? "none" : known) + ")"),
           false;
  }
  if (core_type == PTO_CORE_MIX && h_->block_dim == 0) {
    return error(PTO_INVALID_ARGUMENT, who() + ": a MIX task needs at least one cluster"), false;
  }
  if (core_type != static_cast<pto_core_type>(k->core_type)) {
    return error(PTO_INVALID_ARGUMENT, who() + " asks for a " + pto_core_type_name(core_type) +
                                           " core but the kernel was registered for " +
                                           pto_core_type_name(static_cast<pto_core_type>(k->core_type))),
           false;
  }
  if (n > h_->max_args) {
    return error(PTO_TOO_MANY_ARGS, who() + " has " + std::to_string(n) +
                                        " arguments; max_args_per_task is " + std::to_string(h_->max_args)),
           false;
  }
  if (n > 0 && !args) return error(PTO_INVALID_ARGUMENT, who() + ": args is null"), false;
  uint32_t tensors = 0;
  for (uint32_t i = 0; i < n; ++i) {
    auto arg = [&] { return who() + ": argument " + std::to_string(i); };
    if (args[i].kind == PTO_ARG_SCALAR) continue;
    if (args[i].kind != PTO_ARG_TENSOR)
      return error(PTO_INVALID_ARGUMENT, arg() + " has an unknown kind"), false;
    if (static_cast<uint32_t>(args[i].access) > static_cast<uint32_t>(Access::NO_DEP)) {
      return error(PTO_INVALID_ARGUMENT, arg() + " has an unknown access mode"), false;
    }
    if (!check_view(args[i].view, id, func_id, i)) return false;
    ++tensors;
  }
  if (tensors > h_->tensormap_entries) {
    return error(PTO_RING_CAPACITY,
                 who() + " has " + std::to_string(tensors) + " tensor arguments but the TensorMap holds " +
                     std::to_string(h_->tensormap_entries) + " entries; raise tensormap_entries"),
           false;
  }
  if (k->abi == static_cast<uint32_t>(KernelAbi::kDescriptor)) {
    uint32_t at = 0;
    const DescriptorFault f = descriptor_arg_fault(args, n, &at);
    if (f != kDescOk)
      return error(descriptor_fault_code(f), descriptor_fault_message(who(), at, func_id, f)), false;
  }
  const auto *sig = reinterpret_cast<const pto_kernel_signature_t *>(k->signature);
  if (sig) {
    if (sig->num_args != n) {
      return error(PTO_INVALID_ARGUMENT, who() + " has " + std::to_string(n) +
                                             " arguments but the kernel's signature declares " +
                                             std::to_string(sig->num_args)),
             false;
    }
    for (uint32_t i = 0; i < n; ++i) {
      const pto_arg_spec &s = sig->args[i];
      auto arg = [&] { return who() + ": argument " + std::to_string(i); };
      if (s.kind != static_cast<uint32_t>(args[i].kind)) {
        return error(PTO_INVALID_ARGUMENT,
                     arg() + " does not match the kernel's signature (tensor vs scalar)"),
               false;
      }
      if (s.kind != PTO_ARG_TENSOR) continue;
      const TensorView &v = args[i].view;
      if (s.dtype != PTO_DTYPE_ANY && s.dtype != static_cast<uint32_t>(v.dtype)) {
        return error(PTO_BAD_TENSOR, arg() + " has dtype " + pto_dtype_name(v.dtype) +
                                         " but the kernel takes " +
                                         pto_dtype_name(static_cast<pto_dtype>(s.dtype))),
               false;
      }
      if (s.min_elems_arg >= 0) {
        const auto ref = static_cast<uint32_t>(s.min_elems_arg);
        if (ref >= n || args[ref].kind != PTO_ARG_SCALAR || args[ref].scalar < 0 ||
            args[ref].scalar > v.numel()) {
          return error(PTO_BAD_TENSOR, arg() + " holds " + std::to_string(v.numel()) +
                                           " elements, fewer than the kernel uses (argument " +
                                           std::to_string(ref) + ")"),
                 false;
        }
      }
    }
  }
  for (uint32_t i = 0; i < num_after; ++i) {
    if (!after || after[i].id < 0 || after[i].id >= id) {
      return error(PTO_INVALID_ARGUMENT,
                   who() + ": dependency " + std::to_string(i) +
                       " is not a task submitted before it (use a handle submit_task returned)"),
             false;
    }
  }
  PTO_CHECK(false, "orchestrator: check_task refused a task report_task accepts");
  return false;
}

bool DeviceOrchestrator::check_dummy(const Arg *args, uint32_t n, const TaskHandle *after,
                                     uint32_t num_after) {
  const int64_t id = next_id_;
  auto who = [&] { return "task " + std::to_string(id) + " (dependency-only)"; };
  if (n > h_->max_args) {
    return error(PTO_TOO_MANY_ARGS, who() + " has " + std::to_string(n) +
                                        " arguments; max_args_per_task is " + std::to_string(h_->max_args)),
           false;
  }
  if (n > 0 && !args) return error(PTO_INVALID_ARGUMENT, who() + ": args is null"), false;
  uint32_t tensors = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind == PTO_ARG_SCALAR) continue;
    if (args[i].kind != PTO_ARG_TENSOR ||
        static_cast<uint32_t>(args[i].access) > static_cast<uint32_t>(Access::NO_DEP)) {
      return error(PTO_INVALID_ARGUMENT,
                   who() + ": argument " + std::to_string(i) + " has an unknown kind or access mode"),
             false;
    }
    if (!view_ok(args[i].view) && !check_view(args[i].view, id, graph::kNoKernel, i)) return false;
    ++tensors;
  }
  if (tensors > h_->tensormap_entries) {
    return error(PTO_RING_CAPACITY,
                 who() + " has " + std::to_string(tensors) + " tensor arguments but the TensorMap holds " +
                     std::to_string(h_->tensormap_entries) + " entries; raise tensormap_entries"),
           false;
  }
  for (uint32_t i = 0; i < num_after; ++i) {
    if (!after || after[i].id < 0 || after[i].id >= id) {
      return error(PTO_INVALID_ARGUMENT,
                   who() + ": dependency " + std::to_string(i) +
                       " is not a task submitted before it (use a handle submit_task returned)"),
             false;
    }
  }
  return true;
}

bool DeviceOrchestrator::check_launch(const Launch &launch, const int32_t funcs[3], uint32_t shape) {
  const uint32_t func_id = mix_task_func(funcs);
  bool descriptor = true;  // every kernel of the task (each part of a MIX task)
  for (int p = 0; p < 3; ++p)
    descriptor &=
        funcs[p] < 0 || kernels_of(h_)[funcs[p]].abi == static_cast<uint32_t>(KernelAbi::kDescriptor);
  // The element's buffer is not looked up here (the reference API resolved it from a tensor).
  pto_status code;
  const std::string fault = launch_fault(
      task_name(next_id_, func_id), launch, descriptor, launch.predicate.addr != 0,
      LaunchPlaces{shape, ClusterLayout{h_->num_clusters, h_->aic_per_cluster, h_->aiv_per_cluster},
                   h_->block_dim},
      &code);
  if (fault.empty()) return true;
  error(code, fault);
  return false;
}

// The orchestration reads or writes a view's memory itself (the reference API's
// get_tensor_data / set_tensor_data): the view is checked like a task's, then the TensorMap
// names the youngest conflicting task and the orchestrator waits for its retirement.
bool DeviceOrchestrator::wait_for_tasks_using(const TensorView &v, bool write) {
  if (!ok()) return false;
  if (!view_ok(v)) {
    error(PTO_BAD_TENSOR, std::string("wait_for_tasks_using: the view ") +
                              (buffer_known(v) ? "reaches outside its buffer or has a bad shape or dtype"
                                               : "does not view a run tensor or an alloc_tensor buffer"));
    return false;
  }
  if (batch_ && !flush_batch()) return false;  // batch_deps: deferred accesses are looked up below
  const int64_t last = tmap_.youngest_conflict(region_of(v), write, live_from());
  if (last < 0) return true;
  // Retirement is in id order: past `last`, every conflicting task has finished.
  return wait_until(
      kStallData, [&] { return live_from() > last; }, last + 1);
}

}  // namespace tmr
}  // namespace pto
