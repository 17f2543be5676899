// src/core/descriptor_call.h — the kernel-call block of a descriptor-ABI kernel (kernel_entry).
//
// A kernel binary picks its ABI by the entry it exports (pto/kernel.h): pto_kernel_entry gets
// the call block of pto_kernel_call with one int64_t per argument (tensor addresses and scalars
// in the order given); kernel_entry (include/pto_abi/) gets a longer block, written by the same
// runtimes at the same time (tensormap: the orchestrator at submit; host_build_graph: the host
// when it lays the graph out):
//
//   offset 0                 pto_kernel_call header (status, num_args, MIX fields, log)
//   offset 32                args[PTO_ABI_ARGS_LEN]: tensors first, each the address of its
//                            ChipTensor below, then the scalars, unused slots 0, then
//                            args[48] = &local, args[49] = &global (pto_abi/intrinsic.h)
//   kDescContextOffset       LocalContext local; GlobalContext global
//   kDescTensorsOffset       ChipTensor desc[tensors] (64-byte aligned, 128 bytes each)
//
// The header stays where pto::fail / pto::mix_part find it, so MIX sync and failure reports
// work for both ABIs. A MIX task's AIV parts have blocks of their own (their GlobalContext says
// which lane they are) whose tensor slots point at part 0's descriptors.
#ifndef PTO_CORE_DESCRIPTOR_CALL_H
#define PTO_CORE_DESCRIPTOR_CALL_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/align.h"
#include "pto/error.h"
#include "pto/kernel.h"
#include "pto/types.h"
#include "pto_abi/intrinsic.h"
#include "pto_abi/tensor.h"
#include "pto_abi/view_descriptor.h"

namespace pto {

// Which ABI a loaded kernel uses (LoadedKernel::abi, the runtimes' kernel slots).
enum class KernelAbi : uint32_t { kPto = 0, kDescriptor = 1 };

constexpr uint64_t kDescArgsEnd = offsetof(pto_kernel_call, args) + 8ull * PTO_ABI_ARGS_LEN;
constexpr uint64_t kDescContextOffset = align_up(kDescArgsEnd, 8);
constexpr uint64_t kDescTensorsOffset =
    align_up(kDescContextOffset + sizeof(LocalContext) + sizeof(GlobalContext), alignof(ChipTensor));
static_assert(kDescTensorsOffset % 64 == 0, "descriptors start on a cache line");

// Bytes of a descriptor call block with room for `tensors` descriptors (a multiple of 64, so
// consecutive blocks keep their descriptors aligned).
constexpr uint64_t descriptor_call_bytes(uint32_t tensors) {
  return kDescTensorsOffset + uint64_t{tensors} * sizeof(ChipTensor);
}

inline ChipTensor *descriptors_of(pto_kernel_call *call) {
  return reinterpret_cast<ChipTensor *>(reinterpret_cast<char *>(call) + kDescTensorsOffset);
}

// Which views a descriptor can carry, and how: one owner for both runtimes and the reference
// orchestration API (include/pto_abi/view_descriptor.h).
using pto_abi::descriptor_fault;
using pto_abi::descriptor_fault_text;
using pto_abi::DescriptorFault;
using pto_abi::fill_descriptor;
using pto_abi::kDescDtype;
using pto_abi::kDescOk;
using pto_abi::kDescOrder;
using pto_abi::kDescRank;
using pto_abi::kDescShape;
using pto_abi::kDescStride;
using pto_abi::kDescTooMany;

// One task's arguments for a descriptor-ABI kernel, walked in order: tensors first, at most 32
// of them and 16 scalars, each tensor a view a ChipTensor can carry. Both runtimes check with it.
class DescriptorArgCheck {
 public:
  DescriptorFault scalar() {
    return ++scalars_ > static_cast<uint32_t>(PTO_ABI_MAX_SCALAR_ARGS) ? kDescTooMany : kDescOk;
  }
  DescriptorFault tensor(pto_dtype dtype, uint32_t ndim, const int64_t *shape, const int64_t *strides) {
    if (scalars_ > 0) return kDescOrder;
    if (++tensors_ > static_cast<uint32_t>(PTO_ABI_MAX_TENSOR_ARGS)) return kDescTooMany;
    return descriptor_fault(dtype, ndim, shape, strides);
  }

 private:
  uint32_t tensors_ = 0, scalars_ = 0;
};

// The error a refused argument raises: INVALID_ARGUMENT for the argument list (order, counts),
// BAD_TENSOR for a view no descriptor can carry; the message names task, argument and reason.
pto_status descriptor_fault_code(DescriptorFault f);
std::string descriptor_fault_message(const std::string &task, uint32_t arg, uint32_t func_id,
                                     DescriptorFault f);

// After the caller filled `tensors` descriptors (in part 0's block, or this block): the argument
// slots and the contexts of `call`. The slots hold device addresses: `call_dev` is where `call`
// lives on the device and `desc_dev` where the descriptors do (equal to the host pointers when
// the block is written in place, as the tensormap orchestrator does; host_build_graph writes an
// image that is copied in). `sub_block` is the GlobalContext lane.
void finish_descriptor_call(pto_kernel_call *call, uint64_t call_dev, uint64_t desc_dev, uint32_t tensors,
                            const int64_t *scalars, uint32_t num_scalars, int32_t sub_block);

}  // namespace pto
#endif  // PTO_CORE_DESCRIPTOR_CALL_H
