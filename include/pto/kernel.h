/* include/pto/kernel.h — the kernel ABI: what a compute-core kernel source includes.
 *
 * A kernel is one function `void kernel(__gm__ int64_t *args)` (seed 002's unified
 * signature). Tensor arguments arrive as device addresses, scalars as 64-bit values
 * (floats bit-cast; use pto::scalar_f32). A kernel source defines it with PTO_KERNEL and may
 * declare what it accepts with PTO_KERNEL_SIGNATURE, which the runtime checks at add_task. */
#ifndef PTO_KERNEL_H
#define PTO_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pto/types.h"

#ifndef __gm__
#define __gm__ /* global-memory qualifier on Ascend; empty on the sim platform */
#endif

#define PTO_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
#define PTO_EXTERN_C extern "C"
#else
#define PTO_EXTERN_C
#endif

/* Symbol names the runtime looks up in a kernel binary. A binary exports one entry, and the
 * entry picks the ABI: pto_kernel_entry (PTO_KERNEL, this header: arguments are addresses and
 * scalars in the order given) or kernel_entry (the descriptor ABI of include/pto_abi/: tensors
 * first, each as a ChipTensor address, then scalars, then the dispatch contexts). */
#define PTO_KERNEL_ENTRY_SYMBOL "pto_kernel_entry"
#define PTO_ABI_KERNEL_ENTRY_SYMBOL "kernel_entry"
#define PTO_KERNEL_SIGNATURE_SYMBOL "pto_kernel_signature"

/* Defines the kernel entry point: PTO_KERNEL(args) { ... } */
#define PTO_KERNEL(args_name) PTO_EXTERN_C PTO_EXPORT void pto_kernel_entry(__gm__ int64_t *args_name)

#ifdef __cplusplus
extern "C" {
#endif

/* What the runtime lays out in device memory for every task it dispatches; `args` is the
 * pointer the kernel receives. Writer of `status`: the core running the kernel (0 = ok). */
typedef struct pto_kernel_call {
  int32_t status;
  uint16_t num_args;
  uint8_t mix_part; /* MIX tasks: 0 on the cluster's AIC core, 1 and 2 on its AIV cores */
  uint8_t is_mix;   /* 1 for the parts of a MIX task, 0 otherwise */
  uint64_t log;     /* device address of the device's pto_device_log (pto/device_log.h) */
  /* MIX tasks only (0 otherwise), see pto/mix_sync.h: */
  uint64_t mix_sync; /* device address of the task's sync block; the scheduler, at dispatch */
  uint64_t mix_ops;  /* the running core's const pto_mix_ops *; the core, before the kernel */
  int64_t args[1];   /* really num_args long */
} pto_kernel_call;

/* One entry of a kernel's declared signature. */
typedef struct pto_arg_spec {
  uint32_t kind;         /* pto_arg_kind */
  uint32_t dtype;        /* pto_dtype; PTO_DTYPE_ANY accepts every dtype */
  int32_t min_elems_arg; /* tensor: index of a scalar argument giving the least element
                            count the tensor must hold, or -1 for no size check */
  uint32_t reserved;
} pto_arg_spec;

typedef struct pto_kernel_signature_t {
  uint32_t num_args;
  const pto_arg_spec *args;
} pto_kernel_signature_t;

#ifdef __cplusplus
} /* extern "C" */

namespace pto {

/* Marks the running task failed with a non-zero code: its dependents are not run and the
 * run reports the task, its kernel and this code. The kernel should return afterwards. */
inline void fail(__gm__ int64_t *args, int32_t code) {
  char *base = reinterpret_cast<char *>(args) - offsetof(pto_kernel_call, args);
  reinterpret_cast<pto_kernel_call *>(base)->status = code == 0 ? -1 : code;
}

/* Number of arguments the task was given. */
inline uint32_t num_args(__gm__ int64_t *args) {
  const char *base = reinterpret_cast<const char *>(args) - offsetof(pto_kernel_call, args);
  return reinterpret_cast<const pto_kernel_call *>(base)->num_args;
}

inline const pto_kernel_call *call_of_args(__gm__ int64_t *args) {
  return reinterpret_cast<const pto_kernel_call *>(reinterpret_cast<const char *>(args) -
                                                   offsetof(pto_kernel_call, args));
}
// A MIX task's kernel runs on all three cores of a cluster at once: part 0 on the AIC core,
// parts 1 and 2 on the AIV cores. For other tasks is_mix is false and mix_part is 0.
inline bool is_mix(__gm__ int64_t *args) {
  return call_of_args(args)->is_mix != 0;
}
inline uint32_t mix_part(__gm__ int64_t *args) {
  return call_of_args(args)->mix_part;
}

template <typename T>
inline __gm__ T *tensor(__gm__ int64_t *args, int i) {
  return reinterpret_cast<__gm__ T *>(static_cast<uintptr_t>(args[i]));
}

inline float scalar_f32(__gm__ int64_t *args, int i) {
  uint32_t bits = static_cast<uint32_t>(args[i]);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

inline int64_t scalar_i64(__gm__ int64_t *args, int i) {
  return args[i];
}

/* Helpers to write PTO_KERNEL_SIGNATURE entries. */
constexpr pto_arg_spec tensor_arg(pto_dtype dtype, int min_elems_arg = -1) {
  return pto_arg_spec{PTO_ARG_TENSOR, static_cast<uint32_t>(dtype), min_elems_arg, 0};
}
constexpr pto_arg_spec scalar_arg() {
  return pto_arg_spec{PTO_ARG_SCALAR, PTO_DTYPE_ANY, -1, 0};
}

}  // namespace pto

/* Declares the arguments a kernel accepts, checked by the runtime when a task is added:
 *   PTO_KERNEL_SIGNATURE(pto::tensor_arg(PTO_DTYPE_F32, 3), pto::tensor_arg(PTO_DTYPE_F32, 3),
 *                        pto::tensor_arg(PTO_DTYPE_F32, 3), pto::scalar_arg());
 * means: three float32 tensors that each hold at least args[3] elements, then one scalar. */
#define PTO_KERNEL_SIGNATURE(...)                                                      \
  static const pto_arg_spec pto_kernel_signature_args_[] = {__VA_ARGS__};              \
  extern "C" PTO_EXPORT const pto_kernel_signature_t pto_kernel_signature = {          \
      static_cast<uint32_t>(sizeof pto_kernel_signature_args_ / sizeof(pto_arg_spec)), \
      pto_kernel_signature_args_}
#endif /* __cplusplus */

#endif /* PTO_KERNEL_H */

/* Sync between the parts of a MIX task (pto::sync_set / sync_wait / pipe_push / pipe_pop). */
#include "pto/mix_sync.h"
