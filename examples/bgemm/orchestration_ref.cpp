// examples/bgemm/orchestration_ref.cpp — batched tiled GEMM written against the reference orchestration API.
//
// The same graph as orchestration_tmr.cpp, in the style of an orchestration written for the
// reference implementation (pto_abi/pto_orchestration_api.h: aicpu_orchestration_entry,
// ChipTensor views, CoreTaskArgs, TensorCreateInfo outputs, PTO2_SCOPE_GUARD). It runs on the
// tensormap_and_ringbuffer runtime through that header's layer over pto::Orchestrator, so the
// dependencies are inferred exactly as there. Run arguments as orchestration_tmr.cpp: A, B
// (groups, grid_k, tile_loop, T, T), C (groups, tile_loop, T, T); no scalars.
#include "pto_orchestration_api.h"

namespace {
constexpr int32_t kGemm = 0, kAdd = 1;
}

extern "C" PTO_EXPORT PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &) {
  return PTO2OrchestrationConfig{3};
}

extern "C" PTO_EXPORT void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &c = args.tensor(2).ref();
  if (a.ndims != 5 || b.ndims != 5 || c.ndims != 4 || c.dtype != DataType::FLOAT32 || b.dtype != a.dtype) {
    rt_report_fatal(
        PTO_INVALID_ARGUMENT,
        "bgemm: A and B must be 5-D (groups, grid_k, tile_loop, T, T) of one type, C 4-D float32");
    return;
  }
  const uint32_t groups = a.shapes[0], grid_k = a.shapes[1], tile_loop = a.shapes[2], t = a.shapes[3];
  bool shapes_ok = a.shapes[4] == t && c.shapes[0] == groups && c.shapes[1] == tile_loop &&
                   c.shapes[2] == t && c.shapes[3] == t;
  for (uint32_t d = 0; d < 5; ++d) shapes_ok = shapes_ok && b.shapes[d] == a.shapes[d];
  if (!shapes_ok) {
    rt_report_fatal(PTO_INVALID_ARGUMENT, "bgemm: square tiles, B shaped as A, C (groups, tile_loop, T, T)");
    return;
  }
  LOG_INFO("bgemm (reference API): %u groups, grid_k %u, %u tiles of %ux%u per task", groups, grid_k,
           tile_loop, t, t);

  const uint32_t product_shape[3] = {tile_loop, t, t};
  const TensorCreateInfo product(product_shape, 3, DataType::FLOAT32);
  const uint32_t c_extent[4] = {1, tile_loop, t, t};
  const uint32_t ab_extent[5] = {1, 1, tile_loop, t, t};
  for (uint32_t g = 0; g < groups; ++g) {
    PTO2_SCOPE_GUARD();
    const uint32_t c_at[4] = {g, 0, 0, 0};
    const ChipTensor c_group = c.view(c_extent, c_at);
    for (uint32_t k = 0; k < grid_k; ++k) {
      const uint32_t ab_at[5] = {g, k, 0, 0, 0};
      const ChipTensor a_tiles = a.view(ab_extent, ab_at), b_tiles = b.view(ab_extent, ab_at);
      CoreTaskArgs gemm;  // keeps pointers to its tensors until the submit: pass named ones
      gemm.add_input(a_tiles, b_tiles);
      gemm.add_output(product);
      const TaskOutputTensors outs = rt_submit_aic_task(kGemm, gemm);

      CoreTaskArgs add;
      add.add_inout(c_group);
      add.add_input(outs.get_ref(0));
      rt_submit_aiv_task(kAdd, add);
    }
  }
}
