// examples/glue/orchestration.cpp — f = s * (a + b)^2 per tile, written with TaskBuilder over the kernel list.
//
// The shape generated orchestration code takes: one alloc_task / add_* / submit per task, kernel
// ids from kernels.h, no hand-built Arg arrays. Dependencies (vadd -> vscale -> vmul, vadd ->
// vmul) are inferred by the tensormap_and_ringbuffer runtime from the views.
#include "kernels.h"
#include "pto/task_builder.h"

PTO_DEVICE_ORCHESTRATION(orch) {
  if (orch.num_tensors() != 3 || orch.num_scalars() != 2) {
    orch.fail("glue example expects tensors (a, b, f) and scalars (tiles, s as float bits)");
    return;
  }
  const pto::TensorView a = orch.tensor(0), b = orch.tensor(1), f = orch.tensor(2);
  const int64_t tiles = orch.scalar(0);
  const int64_t n = a.numel();
  if (tiles <= 0 || n % tiles != 0) {
    orch.fail("glue example: the tile count must divide the element count");
    return;
  }
  const int64_t tile = n / tiles;
  pto::TaskBuilder task(orch);
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t start = t * tile;
    const pto::TensorView at = a.slice(&start, &tile), bt = b.slice(&start, &tile), ft = f.slice(&start, &tile);
    pto::Scope scope(orch);
    const pto::TensorView sum = orch.alloc_tensor(PTO_DTYPE_F32, tile);
    const pto::TensorView scaled = orch.alloc_tensor(PTO_DTYPE_F32, tile);
    task.alloc_task(KernelId::vadd).add_input(at).add_input(bt).add_output(sum).add_scalar(tile).submit();
    task.alloc_task(KernelId::vscale).add_input(sum).add_scalar(orch.scalar(1)).add_output(scaled).add_scalar(tile);
    task.submit();
    task.alloc_task(KernelId::vmul).add_input(scaled).add_input(sum).add_output_existing(ft).add_scalar(tile);
    task.submit();
  }
}
