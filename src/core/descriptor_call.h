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

#include "core/align.h"
#include "pto/kernel.h"
#include "pto/types.h"
#include "pto_abi/intrinsic.h"
#include "pto_abi/tensor.h"

namespace pto {

// Which ABI a loaded kernel uses (LoadedKernel::abi, the runtimes' kernel slots).
enum class KernelAbi : uint32_t { kPto = 0, kDescriptor = 1 };

inline const char *kernel_abi_name(KernelAbi abi) {
  return abi == KernelAbi::kDescriptor ? "descriptor (kernel_entry)" : "pto (PTO_KERNEL)";
}

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

// Why a tensor argument cannot be given to a descriptor-ABI kernel (kDescOk: it can).
enum DescriptorFault : uint32_t {
  kDescOk = 0,
  kDescDtype,    // the descriptor has no code for the dtype (float64)
  kDescRank,     // more than MAX_TENSOR_DIMS (5) dimensions
  kDescShape,    // an extent beyond 2^32 - 1
  kDescStride,   // a stride of 0 (broadcast) or beyond 2^32 - 1 in a dimension of extent > 1
  kDescOrder,    // a tensor after a scalar: the ABI puts every tensor first
  kDescTooMany,  // more than 32 tensors or 16 scalars
};

const char *descriptor_fault_text(DescriptorFault f);

// The descriptor's dtype code for a pto_dtype; false for one it cannot express.
bool abi_dtype_of(pto_dtype t, DataType *out);
// The pto_dtype of a descriptor dtype code; PTO_DTYPE_ANY for one no run tensor can have.
pto_dtype pto_dtype_of_abi(DataType d);

// Checks one view without writing anything (kDescOk or the fault).
DescriptorFault descriptor_fault(pto_dtype dtype, uint32_t ndim, const int64_t *shape,
                                 const int64_t *strides);

// Fills `d` for the view (buffer, element offset, dtype, shapes, strides in elements), which
// descriptor_fault accepted. `owner` is the task that created the buffer, or -1.
void fill_descriptor(ChipTensor *d, uint64_t buffer, uint64_t buffer_bytes, int64_t offset, pto_dtype dtype,
                     uint32_t ndim, const int64_t *shape, const int64_t *strides, int64_t owner = -1);

// After the caller filled `tensors` descriptors (in part 0's block, or this block): the argument
// slots and the contexts of `call`. The slots hold device addresses: `call_dev` is where `call`
// lives on the device and `desc_dev` where the descriptors do (equal to the host pointers when
// the block is written in place, as the tensormap orchestrator does; host_build_graph writes an
// image that is copied in). `sub_block` is the GlobalContext lane.
void finish_descriptor_call(pto_kernel_call *call, uint64_t call_dev, uint64_t desc_dev, uint32_t tensors,
                            const int64_t *scalars, uint32_t num_scalars, int32_t sub_block);

}  // namespace pto
#endif  // PTO_CORE_DESCRIPTOR_CALL_H
