// examples/bgemm/orchestration_tmr.cpp — batched tiled GEMM for the tensormap_and_ringbuffer runtime.
//
// Run arguments: A, B (groups x grid_k x tile_loop x T x T, float32 or float16), C (groups x
// tile_loop x T x T, float32, zeros); no scalars: every size comes from the shapes. Group g owns
// C[g] and computes C[g][i] = sum_k A[g][k][i] @ B[g][k][i] for its tile_loop tiles: per k, one
// AIC task (all tile_loop tiles) writes the products into a heap temp, one AIV task adds the temp
// into C[g]. No edges are written: the GEMMs only read A and B and write their own temps, so they
// run side by side; each add reads its GEMM's temp (read after write) and updates C[g] (INOUT), so
// the adds of a group chain in submission order. Each group's temps live in its own scope and go
// back to the heap ring once its adds have run.
#include "pto/orchestration.h"

namespace {
constexpr uint32_t kGemm = 0, kAdd = 1;
}

PTO_DEVICE_ORCHESTRATION(orch) {
  if (orch.num_tensors() != 3) {
    orch.fail("bgemm expects tensors A, B (groups, grid_k, tile_loop, T, T) and C (groups, tile_loop, T, T)");
    return;
  }
  using pto::Arg;
  const pto::TensorView a = orch.tensor(0), b = orch.tensor(1), c = orch.tensor(2);
  if (a.ndim != 5 || b.ndim != 5 || c.ndim != 4) {
    orch.fail(
        "bgemm: A and B must be 5-D (groups, grid_k, tile_loop, T, T), C 4-D (groups, tile_loop, T, T)");
    return;
  }
  const int64_t groups = a.shape[0], grid_k = a.shape[1], tile_loop = a.shape[2], t = a.shape[3];
  for (uint32_t d = 0; d < 5; ++d) {
    if (b.shape[d] != a.shape[d]) {
      orch.fail("bgemm: A and B must have the same shape");
      return;
    }
  }
  if (a.shape[4] != t || c.shape[0] != groups || c.shape[1] != tile_loop || c.shape[2] != t ||
      c.shape[3] != t) {
    orch.fail("bgemm: tiles must be square and C must be (groups, tile_loop, T, T)");
    return;
  }
  if (c.dtype != PTO_DTYPE_F32 || b.dtype != a.dtype) {
    orch.fail("bgemm: C must be float32 and A, B of one type");
    return;
  }

  const int64_t tile_shape[3] = {tile_loop, t, t};
  for (int64_t g = 0; g < groups; ++g) {
    pto::Scope scope(orch);
    const int64_t c_start[4] = {g, 0, 0, 0}, c_extent[4] = {1, tile_loop, t, t};
    const pto::TensorView c_group = c.slice(c_start, c_extent);
    for (int64_t k = 0; k < grid_k; ++k) {
      const int64_t ab_start[5] = {g, k, 0, 0, 0}, ab_extent[5] = {1, 1, tile_loop, t, t};
      const pto::TensorView product = orch.alloc_tensor(PTO_DTYPE_F32, 3, tile_shape);
      orch.submit_task(
          kGemm, PTO_CORE_AIC,
          {Arg::in(a.slice(ab_start, ab_extent)), Arg::in(b.slice(ab_start, ab_extent)), Arg::out(product)});
      orch.submit_task(kAdd, PTO_CORE_AIV, {Arg::inout(c_group), Arg::in(product)});
    }
  }
}
