// include/pto_abi/view_descriptor.h — a strided view of this runtime as a ChipTensor descriptor.
//
// The one place that says which views a descriptor can carry and how their fields map: the
// runtimes use it when they write a kernel_entry kernel's call block (src/core/
// descriptor_call.h), the reference orchestration API (pto_orchestration_api.h) when it hands
// the run's tensors and allocated outputs to an orchestration.
#ifndef PTO_ABI_VIEW_DESCRIPTOR_H
#define PTO_ABI_VIEW_DESCRIPTOR_H

#include <stdint.h>
#include <string.h>

#include "pto/types.h"
#include "tensor.h"

namespace pto_abi {

// The descriptor's dtype code for a pto_dtype; false for one it cannot express (float64).
inline bool abi_dtype_of(pto_dtype t, DataType *out) {
  switch (t) {
    case PTO_DTYPE_F32:
      *out = DataType::FLOAT32;
      return true;
    case PTO_DTYPE_F16:
      *out = DataType::FLOAT16;
      return true;
    case PTO_DTYPE_BF16:
      *out = DataType::BFLOAT16;
      return true;
    case PTO_DTYPE_I8:
      *out = DataType::INT8;
      return true;
    case PTO_DTYPE_I16:
      *out = DataType::INT16;
      return true;
    case PTO_DTYPE_I32:
      *out = DataType::INT32;
      return true;
    case PTO_DTYPE_I64:
      *out = DataType::INT64;
      return true;
    case PTO_DTYPE_U8:
      *out = DataType::UINT8;
      return true;
    case PTO_DTYPE_U16:
      *out = DataType::UINT16;
      return true;
    case PTO_DTYPE_U32:
      *out = DataType::UINT32;
      return true;
    case PTO_DTYPE_U64:
      *out = DataType::UINT64;
      return true;
    case PTO_DTYPE_BOOL:
      *out = DataType::BOOL;
      return true;
    default:
      return false;
  }
}

// The pto_dtype of a descriptor dtype code; PTO_DTYPE_ANY for one no run tensor can have (the
// a5 FP8/FP4 formats).
inline pto_dtype pto_dtype_of_abi(DataType d) {
  for (int t = PTO_DTYPE_F32; t < PTO_DTYPE_COUNT; ++t) {
    DataType x;
    if (abi_dtype_of(static_cast<pto_dtype>(t), &x) && x == d) return static_cast<pto_dtype>(t);
  }
  return PTO_DTYPE_ANY;
}

// Why a view cannot be a descriptor (kDescOk: it can).
enum DescriptorFault : uint32_t {
  kDescOk = 0,
  kDescDtype,    // the descriptor has no code for the dtype (float64)
  kDescRank,     // more than MAX_TENSOR_DIMS (5) dimensions
  kDescShape,    // an extent beyond 2^32 - 1
  kDescStride,   // stride 0 (broadcast) or beyond 2^32 - 1 in a dimension of extent > 1
  kDescOrder,    // a tensor after a scalar: the ABI puts every tensor first
  kDescTooMany,  // more than 32 tensors or 16 scalars in one task
};

inline const char *descriptor_fault_text(DescriptorFault f) {
  switch (f) {
    case kDescOk:
      return "accepted";
    case kDescDtype:
      return "its dtype has no code in the descriptor (ChipTensor expresses float32, float16, bfloat16, "
             "int8/16/32/64, uint8/16/32/64 and bool, not float64)";
    case kDescRank:
      return "it has more than 5 dimensions (a ChipTensor holds at most MAX_TENSOR_DIMS = 5)";
    case kDescShape:
      return "an extent exceeds 2^32 - 1 elements (a ChipTensor shape is 32 bits)";
    case kDescStride:
      return "a dimension of extent > 1 has stride 0 or a stride beyond 2^32 - 1 elements (ChipTensor "
             "strides are positive 32-bit values)";
    case kDescOrder:
      return "it follows a scalar argument: a kernel_entry kernel takes its tensors first (args[0..T-1]) "
             "and its scalars after them";
    case kDescTooMany:
      return "the task has more than 32 tensor or 16 scalar arguments (the descriptor ABI's limits)";
  }
  return "unknown fault";
}

// Checks one view (shape and strides in elements) without writing anything.
inline DescriptorFault descriptor_fault(pto_dtype dtype, uint32_t ndim, const int64_t *shape,
                                        const int64_t *strides) {
  DataType d;
  if (!abi_dtype_of(dtype, &d)) return kDescDtype;
  if (ndim > static_cast<uint32_t>(MAX_TENSOR_DIMS)) return kDescRank;
  for (uint32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0 || shape[i] > INT64_C(0xFFFFFFFF)) return kDescShape;
    if (shape[i] > 1 && (strides[i] <= 0 || strides[i] > INT64_C(0xFFFFFFFF))) return kDescStride;
  }
  return kDescOk;
}

// Fills `d` for a view descriptor_fault accepted: buffer base and size, element offset of the
// first element, dtype, shapes, strides. `owner`: the task that created the buffer, or -1.
inline void fill_descriptor(ChipTensor *d, uint64_t buffer, uint64_t buffer_bytes, int64_t offset,
                            pto_dtype dtype, uint32_t ndim, const int64_t *shape, const int64_t *strides,
                            int64_t owner = -1) {
  memset(static_cast<void *>(d), 0, sizeof *d);  // the padding too: the block may hold an older one
  d->buffer.addr = buffer;
  d->buffer.size = buffer_bytes;
  d->owner_task_id = owner >= 0 ? PTO2TaskId::make(0, static_cast<uint32_t>(owner)) : PTO2TaskId::invalid();
  d->start_offset = static_cast<uint64_t>(offset);
  abi_dtype_of(dtype, &d->dtype);
  d->address_space = AddressSpace::HOST;
  d->ndims = ndim == 0 ? 1 : ndim;  // a 0-d view is one element: 1-d of extent 1
  d->shapes[0] = 1;
  d->strides[0] = 1;
  for (uint32_t i = 0; i < ndim; ++i) {
    d->shapes[i] = static_cast<uint32_t>(shape[i]);
    // An extent-1 dimension's stride addresses nothing; keep the ABI's "strides > 0".
    d->strides[i] = strides[i] > 0 ? static_cast<uint32_t>(strides[i]) : 1u;
  }
  d->refresh();
}

}  // namespace pto_abi

#endif  // PTO_ABI_VIEW_DESCRIPTOR_H
