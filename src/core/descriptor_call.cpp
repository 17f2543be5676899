// src/core/descriptor_call.cpp — building the call block of a descriptor-ABI kernel.
#include "core/descriptor_call.h"

namespace pto {

pto_status descriptor_fault_code(DescriptorFault f) {
  return f == kDescOrder || f == kDescTooMany ? PTO_INVALID_ARGUMENT : PTO_BAD_TENSOR;
}

std::string descriptor_fault_message(const std::string &task, uint32_t arg, uint32_t func_id,
                                     DescriptorFault f) {
  return task + ": argument " + std::to_string(arg) + " cannot be passed to kernel " +
         std::to_string(func_id) + ", a descriptor-ABI kernel (kernel_entry): " + descriptor_fault_text(f);
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
