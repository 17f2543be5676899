/* include/pto/types.h — vocabulary types shared by kernels, orchestrations, the host and Python. */
#ifndef PTO_TYPES_H
#define PTO_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which kind of compute core runs a kernel. An a2a3/a5 cluster is 1 AIC + 2 AIV. */
typedef enum pto_core_type {
  PTO_CORE_AIC = 0, /* cube core */
  PTO_CORE_AIV = 1, /* vector core */
  PTO_CORE_TYPE_COUNT = 2,
  /* A task shape, not a core: one task on a whole cluster (its AIC and both AIV cores at once;
   * the kernel runs on all three, pto::mix_part tells them apart). tensormap_and_ringbuffer. */
  PTO_CORE_MIX = 2,
  PTO_TASK_SHAPE_COUNT = 3
} pto_core_type;

/* Task timing slots a task may be tagged with (pto::Launch::timing_slot): 0 .. 15. */
#define PTO_TASK_TIMING_SLOTS 16

/* Element types a tensor argument can carry (the NumPy dtypes the Python API accepts). */
typedef enum pto_dtype {
  PTO_DTYPE_ANY = 0, /* in a kernel signature: any dtype */
  PTO_DTYPE_F32,
  PTO_DTYPE_F16,
  PTO_DTYPE_BF16,
  PTO_DTYPE_F64,
  PTO_DTYPE_I8,
  PTO_DTYPE_I16,
  PTO_DTYPE_I32,
  PTO_DTYPE_I64,
  PTO_DTYPE_U8,
  PTO_DTYPE_U16,
  PTO_DTYPE_U32,
  PTO_DTYPE_U64,
  PTO_DTYPE_BOOL,
  PTO_DTYPE_COUNT
} pto_dtype;

/* How a task uses a tensor argument. host_build_graph uses it for copy-in/copy-out of run
 * arguments; the tensormap runtime also infers dependencies from it. */
/* sim_timing: what set a kernel invocation's virtual duration (docs/design/sim_execution.md). */
typedef enum pto_price_source {
  PTO_PRICE_NONE = 0,      /* not a timed run */
  PTO_PRICE_HOST_TIME = 1, /* its measured host time x sim_kernel_time_pct / 100 */
  PTO_PRICE_TABLE = 2,     /* PTO_SIM_KERNEL_COSTS */
  PTO_PRICE_ISA_MODEL = 3, /* PTO-ISA's cost model, through the kernel's cost-model twin */
  PTO_PRICE_SOURCE_COUNT = 4
} pto_price_source;

typedef enum pto_direction { PTO_DIR_INPUT = 0, PTO_DIR_OUTPUT = 1, PTO_DIR_INOUT = 2 } pto_direction;

/* A task or run argument: a tensor (device address) or a 64-bit scalar. A run's argument may
 * also be PTO_ARG_DEVICE_TENSOR: its address is already in the chip's device memory (a
 * communication domain's window), so the run uses it in place and copies nothing either way; or
 * PTO_ARG_SHARED_TENSOR: host memory the chip reaches (an L3 worker's host heap), used in place
 * like a device tensor, except that an OUTPUT one is zeroed first, as a staged output is. */
typedef enum pto_arg_kind {
  PTO_ARG_TENSOR = 0,
  PTO_ARG_SCALAR = 1,
  PTO_ARG_DEVICE_TENSOR = 2,
  PTO_ARG_SHARED_TENSOR = 3
} pto_arg_kind;

static inline uint32_t pto_dtype_size(pto_dtype t) {
  switch (t) {
    case PTO_DTYPE_F64:
    case PTO_DTYPE_I64:
    case PTO_DTYPE_U64:
      return 8;
    case PTO_DTYPE_F32:
    case PTO_DTYPE_I32:
    case PTO_DTYPE_U32:
      return 4;
    case PTO_DTYPE_F16:
    case PTO_DTYPE_BF16:
    case PTO_DTYPE_I16:
    case PTO_DTYPE_U16:
      return 2;
    case PTO_DTYPE_I8:
    case PTO_DTYPE_U8:
    case PTO_DTYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

static inline const char *pto_dtype_name(pto_dtype t) {
  static const char *const kNames[PTO_DTYPE_COUNT] = {"any",    "float32", "float16", "bfloat16", "float64",
                                                      "int8",   "int16",   "int32",   "int64",    "uint8",
                                                      "uint16", "uint32",  "uint64",  "bool"};
  return ((unsigned)t < PTO_DTYPE_COUNT) ? kNames[t] : "invalid";
}

static inline const char *pto_core_type_name(pto_core_type t) {
  return t == PTO_CORE_AIC ? "AIC" : t == PTO_CORE_AIV ? "AIV" : t == PTO_CORE_MIX ? "MIX" : "invalid";
}

/* The names RunStats and the trace use: "none", "host_time", "table", "isa_model". */
static inline const char *pto_price_source_name(uint32_t s) {
  static const char *const kNames[PTO_PRICE_SOURCE_COUNT] = {"none", "host_time", "table", "isa_model"};
  return s < PTO_PRICE_SOURCE_COUNT ? kNames[s] : "invalid";
}

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* PTO_TYPES_H */
