// src/core/descriptor_call.cpp — building the call block of a descriptor-ABI kernel.
#include "core/descriptor_call.h"

#include <cstring>

namespace pto {

const char *descriptor_fault_text(DescriptorFault f) {
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

bool abi_dtype_of(pto_dtype t, DataType *out) {
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

pto_dtype pto_dtype_of_abi(DataType d) {
  switch (d) {
    case DataType::FLOAT32:
      return PTO_DTYPE_F32;
    case DataType::FLOAT16:
      return PTO_DTYPE_F16;
    case DataType::BFLOAT16:
      return PTO_DTYPE_BF16;
    case DataType::INT8:
      return PTO_DTYPE_I8;
    case DataType::INT16:
      return PTO_DTYPE_I16;
    case DataType::INT32:
      return PTO_DTYPE_I32;
    case DataType::INT64:
      return PTO_DTYPE_I64;
    case DataType::UINT8:
      return PTO_DTYPE_U8;
    case DataType::UINT16:
      return PTO_DTYPE_U16;
    case DataType::UINT32:
      return PTO_DTYPE_U32;
    case DataType::UINT64:
      return PTO_DTYPE_U64;
    case DataType::BOOL:
      return PTO_DTYPE_BOOL;
    default:
      return PTO_DTYPE_ANY;
  }
}

DescriptorFault descriptor_fault(pto_dtype dtype, uint32_t ndim, const int64_t *shape,
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

void fill_descriptor(ChipTensor *d, uint64_t buffer, uint64_t buffer_bytes, int64_t offset, pto_dtype dtype,
                     uint32_t ndim, const int64_t *shape, const int64_t *strides, int64_t owner) {
  // Whole lines written, the padding too: the block may hold an earlier task's descriptor.
  std::memset(static_cast<void *>(d), 0, sizeof *d);
  d->buffer.addr = buffer;
  d->buffer.size = buffer_bytes;
  d->owner_task_id = owner >= 0 ? PTO2TaskId::make(0, static_cast<uint32_t>(owner)) : PTO2TaskId::invalid();
  d->start_offset = static_cast<uint64_t>(offset);
  abi_dtype_of(dtype, &d->dtype);
  d->address_space = AddressSpace::HOST;
  // A 0-d view is one element: a 1-d descriptor of extent 1.
  d->ndims = ndim == 0 ? 1 : ndim;
  if (ndim == 0) {
    d->shapes[0] = 1;
    d->strides[0] = 1;
  }
  for (uint32_t i = 0; i < ndim; ++i) {
    d->shapes[i] = static_cast<uint32_t>(shape[i]);
    // An extent-1 dimension's stride is never used to address anything; keep the ABI's
    // "strides > 0" even when the view says 0 there.
    d->strides[i] = strides[i] > 0 ? static_cast<uint32_t>(strides[i]) : 1u;
  }
  d->refresh();
}

void finish_descriptor_call(pto_kernel_call *call, uint64_t call_dev, uint64_t desc_dev, uint32_t tensors,
                            const int64_t *scalars, uint32_t num_scalars, int32_t sub_block) {
  int64_t *args = call->args;
  for (uint32_t i = 0; i < tensors; ++i)
    args[i] = static_cast<int64_t>(desc_dev + uint64_t{i} * sizeof(ChipTensor));
  for (uint32_t i = 0; i < num_scalars; ++i) args[tensors + i] = scalars[i];
  for (uint32_t i = tensors + num_scalars; i < static_cast<uint32_t>(PTO_ABI_LOCAL_CONTEXT_INDEX); ++i)
    args[i] = 0;
  char *base = reinterpret_cast<char *>(call);
  auto *local = reinterpret_cast<LocalContext *>(base + kDescContextOffset);
  auto *global = reinterpret_cast<GlobalContext *>(base + kDescContextOffset + sizeof(LocalContext));
  local->block_idx = 0;
  local->block_num = 1;
  global->sub_block_id = sub_block;
  global->reserved = 0;
  args[PTO_ABI_LOCAL_CONTEXT_INDEX] = static_cast<int64_t>(call_dev + kDescContextOffset);
  args[PTO_ABI_GLOBAL_CONTEXT_INDEX] =
      static_cast<int64_t>(call_dev + kDescContextOffset + sizeof(LocalContext));
  call->num_args = static_cast<uint16_t>(tensors + num_scalars);
}

}  // namespace pto
