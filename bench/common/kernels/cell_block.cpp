// bench/common/kernels/cell_block.cpp — the spmd workload's kernel (descriptor ABI): block i of
// task s computes cell i of the task's output row from cell i of its input row.
//
// Arguments: [0] output row, [1] input row (uint64 ChipTensor views of `width` cells), [2] the
// step s, [3] grain.
#include "intrinsic.h"
#include "pto/kernel.h"
#include "task_body.h"
#include "tensor.h"

extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *out = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *in = reinterpret_cast<const ChipTensor *>(args[1]);
  const int64_t i = get_block_idx(args);
  const uint64_t *inputs[1] = {reinterpret_cast<const uint64_t *>(in->buffer.addr) + in->start_offset + i};
  reinterpret_cast<uint64_t *>(out->buffer.addr)[out->start_offset + i] =
      bench::cell_task(bench::salt_of(args[2], i), args[3], inputs, 1);
}
