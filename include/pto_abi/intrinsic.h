/* include/pto_abi/intrinsic.h — what a descriptor-ABI kernel can ask about its dispatch.
 *
 * Besides its tensors (args[0 .. T-1], ChipTensor addresses) and scalars (args[T .. T+S-1]),
 * a kernel_entry kernel finds two context pointers at fixed slots of its argument array,
 * filled by the runtime at every dispatch:
 *   args[PTO_ABI_LOCAL_CONTEXT_INDEX]  -> LocalContext:  this dispatch (block index and count)
 *   args[PTO_ABI_GLOBAL_CONTEXT_INDEX] -> GlobalContext: the core (its AIV lane in a cluster)
 * Read them through the accessors below, never through the indices. The runtime allocates
 * PTO_ABI_ARGS_LEN argument slots for such a kernel, so the slots exist whatever T and S are. */
#ifndef PTO_ABI_INTRINSIC_H
#define PTO_ABI_INTRINSIC_H

#include <stdint.h>

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif

/* At most this many tensor and scalar arguments per task (the descriptor ABI's limits). */
constexpr int32_t PTO_ABI_MAX_TENSOR_ARGS = 32;
constexpr int32_t PTO_ABI_MAX_SCALAR_ARGS = 16;
/* The context slots follow the largest argument list. */
constexpr int32_t SPMD_LOCAL_CONTEXT_INDEX = PTO_ABI_MAX_TENSOR_ARGS + PTO_ABI_MAX_SCALAR_ARGS;  // 48
constexpr int32_t SPMD_GLOBAL_CONTEXT_INDEX = SPMD_LOCAL_CONTEXT_INDEX + 1;                      // 49
constexpr int32_t PTO_ABI_LOCAL_CONTEXT_INDEX = SPMD_LOCAL_CONTEXT_INDEX;
constexpr int32_t PTO_ABI_GLOBAL_CONTEXT_INDEX = SPMD_GLOBAL_CONTEXT_INDEX;
constexpr int32_t PTO2_EXT_PARAMS_COUNT = 2;
constexpr int32_t PTO_ABI_ARGS_LEN = SPMD_GLOBAL_CONTEXT_INDEX + 1;  // 50

/* One dispatch of a task. A task runs as one block today: block_idx 0, block_num 1 (each
 * part of a MIX task is its own dispatch, with the same values). */
struct LocalContext {
  int32_t block_idx;
  int32_t block_num;
};

/* The core a dispatch runs on. sub_block_id: which AIV core of its cluster runs a MIX task's
 * vector part (0 for the first, 1 for the second); 0 for AIC parts and single-core tasks. */
struct GlobalContext {
  int32_t sub_block_id;
  int32_t reserved;
};

static __aicore__ inline int32_t get_block_idx(__gm__ int64_t *args) {
  return reinterpret_cast<__gm__ const LocalContext *>(
             static_cast<uintptr_t>(args[PTO_ABI_LOCAL_CONTEXT_INDEX]))
      ->block_idx;
}
static __aicore__ inline int32_t get_block_num(__gm__ int64_t *args) {
  return reinterpret_cast<__gm__ const LocalContext *>(
             static_cast<uintptr_t>(args[PTO_ABI_LOCAL_CONTEXT_INDEX]))
      ->block_num;
}
static __aicore__ inline int32_t get_sub_block_id(__gm__ int64_t *args) {
  return reinterpret_cast<__gm__ const GlobalContext *>(
             static_cast<uintptr_t>(args[PTO_ABI_GLOBAL_CONTEXT_INDEX]))
      ->sub_block_id;
}

#endif /* PTO_ABI_INTRINSIC_H */
