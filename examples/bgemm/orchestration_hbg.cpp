// examples/bgemm/orchestration_hbg.cpp — batched tiled GEMM for the host_build_graph runtime.
//
// Same run arguments and graph as orchestration_tmr.cpp, built on the host with explicit edges.
// Tensors here are contiguous (pto::Tensor), which the layout allows: the tile_loop tiles of one
// (group, k) of A and B, and the tiles of one group of C, are each one contiguous block, passed as
// a Tensor with the block's address, byte size and shape (tile_loop, T, T).
//
// Temps: the products go to a ring of kSlots buffers rather than one per task (Case0 would need
// 128 MiB). A GEMM that reuses a slot must wait for the add that read the slot's last product
// (write after read); host_build_graph infers nothing, so that edge is written here like the
// others: GEMM(g, k) -> ADD(g, k) and ADD(g, k - 1) -> ADD(g, k).
#include "pto/host_graph.h"

namespace {
constexpr uint32_t kGemm = 0, kAdd = 1;
constexpr int kSlots = 16;

// The contiguous block of `count` elements starting `first` elements into `whole`, as `shape`.
pto::Tensor block(const pto::Tensor &whole, uint64_t first, uint64_t count, uint32_t ndim,
                  const int64_t *shape) {
  pto::Tensor t = whole;
  const uint64_t esize = whole.nbytes / whole.nelems;
  t.addr = whole.addr + first * esize;
  t.nbytes = count * esize;
  t.nelems = count;
  t.ndim = ndim;
  for (uint32_t d = 0; d < pto::kMaxTensorDims; ++d) t.shape[d] = d < ndim ? shape[d] : 0;
  return t;
}
}  // namespace

PTO_ORCHESTRATION(graph, args) {
  if (args.num_tensors() != 3) {
    graph.fail(
        "bgemm expects tensors A, B (groups, grid_k, tile_loop, T, T) and C (groups, tile_loop, T, T)");
    return;
  }
  const pto::Tensor &a = args.tensor(0), &b = args.tensor(1), &c = args.tensor(2);
  if (a.ndim != 5 || b.ndim != 5 || c.ndim != 4) {
    graph.fail(
        "bgemm: A and B must be 5-D (groups, grid_k, tile_loop, T, T), C 4-D (groups, tile_loop, T, T)");
    return;
  }
  const int64_t groups = a.shape[0], grid_k = a.shape[1], tile_loop = a.shape[2], t = a.shape[3];
  for (uint32_t d = 0; d < 5; ++d) {
    if (b.shape[d] != a.shape[d]) {
      graph.fail("bgemm: A and B must have the same shape");
      return;
    }
  }
  if (a.shape[4] != t || c.shape[0] != groups || c.shape[1] != tile_loop || c.shape[2] != t ||
      c.shape[3] != t) {
    graph.fail("bgemm: tiles must be square and C must be (groups, tile_loop, T, T)");
    return;
  }
  if (c.dtype != PTO_DTYPE_F32 || b.dtype != a.dtype) {
    graph.fail("bgemm: C must be float32 and A, B of one type");
    return;
  }

  const int64_t tiles_shape[3] = {tile_loop, t, t};
  const uint64_t block_elems = static_cast<uint64_t>(tile_loop * t * t);
  pto::Tensor slots[kSlots];
  pto::TaskId slot_reader[kSlots];  // the add that last read each slot
  for (int s = 0; s < kSlots; ++s) {
    const pto::Tensor flat = graph.alloc_tensor(PTO_DTYPE_F32, block_elems);
    slots[s] = block(flat, 0, block_elems, 3, tiles_shape);
    slot_reader[s] = pto::kInvalidTask;
  }

  using pto::TaskArg;
  int next_slot = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const pto::Tensor c_group = block(c, static_cast<uint64_t>(g) * block_elems, block_elems, 3, tiles_shape);
    pto::TaskId prev_add = pto::kInvalidTask;
    for (int64_t k = 0; k < grid_k; ++k) {
      const uint64_t ab_first = static_cast<uint64_t>(g * grid_k + k) * block_elems;
      const int s = next_slot;
      next_slot = (next_slot + 1) % kSlots;
      const pto::TaskId gemm = graph.add_task(
          kGemm, PTO_CORE_AIC,
          {TaskArg::of(block(a, ab_first, block_elems, 3, tiles_shape)),
           TaskArg::of(block(b, ab_first, block_elems, 3, tiles_shape)), TaskArg::of(slots[s])});
      if (slot_reader[s] != pto::kInvalidTask) graph.add_dependency(slot_reader[s], gemm);
      const pto::TaskId add =
          graph.add_task(kAdd, PTO_CORE_AIV, {TaskArg::of(c_group), TaskArg::of(slots[s])});
      graph.add_dependency(gemm, add);
      if (prev_add != pto::kInvalidTask) graph.add_dependency(prev_add, add);
      slot_reader[s] = add;
      prev_add = add;
    }
  }
}
