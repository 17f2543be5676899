/* include/pto/c_api.h — the host program's pure C API (seed 001), resolved by ChipWorker with dlsym.
 *
 * Every function returns a pto_status code; on failure get_last_error_message(ctx) gives the
 * full message (what was wrong, and where). Structs carry no pointers the callee keeps. */
#ifndef PTO_C_API_H
#define PTO_C_API_H

#include <stddef.h>
#include <stdint.h>

#include "pto/error.h"
#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 4: pto_call_config has task_window_overflow, pipeline_depth, pipeline_scope after task_window;
 * pto_run_stats ends with pipeline_deferred, pipeline_max_in_flight, window_overflow.
 * 5: pto_call_config has batch_deps, then dispatch_metric .. active_cores_below, after
 * pipeline_scope; pto_run_stats ends with batch_flushes, batch_local_hits, batch_unfiled, then
 * dispatch_tasks[3], dispatch_switches.
 * 6: pto_kernel_desc ends with cost_model_path, cost_model_note; pto_run_stats ends with
 * priced[4] .. price_note.
 * 7: pto_run_stats ends with load_ns.
 * 8: pto_arg_desc.kind may be PTO_ARG_DEVICE_TENSOR (host_ptr is a device address, used in place).
 * 9: pto_arg_desc.kind may be PTO_ARG_SHARED_TENSOR (host memory the chip reaches, used in place;
 * an OUTPUT one is zeroed first).
 * 10: pto_run_stats ends with task_slot_mask, task_slot_dispatch_ns[], task_slot_finish_ns[].
 * 11: prewarm_runtime. */
#define PTO_C_API_VERSION 11
#define PTO_MAX_DIMS 8

typedef struct pto_device_context pto_device_context;

typedef struct pto_kernel_desc {
  uint32_t func_id;
  uint32_t core_type;      /* pto_core_type */
  const char *binary_path; /* shared object built by KernelCompiler */
  /* sim_timing: the kernel's PTO-ISA cost-model twin (KernelCompiler::compile_incore_cost_model),
   * which prices each invocation; null: none. cost_model_note: why a twin was asked for and
   * could not be built (the run says it and prices the kernel otherwise); null: none. */
  const char *cost_model_path;
  const char *cost_model_note;
} pto_kernel_desc;

typedef struct pto_callable_desc {
  const char *orchestration_path; /* shared object built by KernelCompiler */
  const pto_kernel_desc *kernels;
  uint32_t num_kernels;
} pto_callable_desc;

typedef struct pto_arg_desc {
  uint32_t kind;      /* pto_arg_kind */
  uint32_t dtype;     /* pto_dtype, tensors only */
  uint32_t direction; /* pto_direction, tensors only: INPUT copies in, OUTPUT copies out */
  uint32_t ndim;
  void *host_ptr; /* tensors: C-contiguous host buffer of nbytes (PTO_ARG_DEVICE_TENSOR: device memory) */
  uint64_t nbytes;
  int64_t shape[PTO_MAX_DIMS];
  int64_t scalar; /* scalars: the 64-bit value (floats bit-cast) */
} pto_arg_desc;

typedef struct pto_call_config {
  int32_t block_dim;        /* clusters used: 1 .. geometry cluster count */
  int32_t aicpu_thread_num; /* scheduler threads: 1 .. geometry AICPU threads */
  int32_t enable_profiling;
  int32_t enable_dump_tensor;
  int32_t enable_pmu;
  uint32_t max_tasks; /* graph capacity */
  uint32_t max_args_per_task;
  uint32_t max_successors;       /* per task */
  uint32_t timeout_ms;           /* 0 = no limit */
  uint32_t task_window;          /* tensormap_and_ringbuffer: task ring slots */
  uint32_t task_window_overflow; /* pto::WindowOverflow: 0 stall, 1 evict_completed, 2 error */
  uint32_t pipeline_depth;       /* tasks in flight per pipeline gate; 0 = no gates */
  uint32_t pipeline_scope;       /* pto::PipelineScope: 0 global, 1 per_stream, 2 per_pool, 3 per_target */
  uint32_t batch_deps;           /* tensormap_and_ringbuffer: submits per dependency batch; 0 = off */
  uint32_t dispatch_metric;      /* pto::DispatchMetric: 0 none (dispatch_threshold off), 1 ready */
  uint32_t dispatch_threshold;   /* metric < this: dispatch_below, else dispatch_above; 0..65535 */
  uint32_t dispatch_scope;       /* pto::DispatchScope: 0 global, 1 per_pool */
  uint32_t dispatch_below;       /* pto::DispatchPolicy: 0 locality, 1 round_robin, 2 work_stealing */
  uint32_t dispatch_above;       /* pto::DispatchPolicy */
  uint32_t active_cores_below;   /* below the threshold: cores 0..n-1 of each pool; 0 = all */
  uint64_t heap_bytes;           /* tensormap_and_ringbuffer: heap ring size */
  uint32_t dep_pool_entries;     /* tensormap_and_ringbuffer: dependency-list pool */
  uint32_t tensormap_entries;    /* tensormap_and_ringbuffer: TensorMap pool */
  uint32_t trace_tasks;          /* tensormap_and_ringbuffer with profiling: tasks traced */
  int32_t log_level;             /* device logs: pto_log_level threshold (pto/device_log.h) */
  int32_t dump_kernel;           /* enable_dump_tensor: dump tasks of this func_id only; -1 = all */
  uint32_t dump_first_task;      /* enable_dump_tensor: first task id dumped */
  uint32_t dump_max_tasks;       /* enable_dump_tensor: tasks dumped at most */
  uint64_t dump_bytes;           /* enable_dump_tensor: device memory for the copies */
  int64_t sim_seed;              /* sim: >= 0 a reproducible (seeded) schedule; -1 = PTO_SIM_SEED or off */
  int32_t sim_timing;            /* sim, seeded runs: in virtual time (docs/design/sim_execution.md) */
  int32_t sim_kernel_time_pct;   /* sim_timing: uncosted kernels take host time x this / 100 */
} pto_call_config;

/* The most cores of any platform (a5: 36 clusters x 3 cores); src/core/geometry.cpp checks it
 * against the geometry table at compile time. */
#define PTO_STATS_MAX_CORES 108
#define PTO_STATS_MAX_KERNELS 64


typedef struct pto_run_stats {
  uint64_t tasks_run;
  uint64_t tasks_per_core_type[PTO_TASK_SHAPE_COUNT]; /* AIC, AIV, MIX */
  uint64_t orchestration_ns;                          /* building the graph on the host */
  uint64_t launch_to_done_ns;
  uint64_t total_ns; /* run_runtime from entry to return */
  uint32_t cores_used;
  uint32_t aicpu_threads_used;
  /* tensormap_and_ringbuffer: each ring (0 task window, 1 heap bytes, 2 dependency pool,
   * 3 TensorMap): its size, the most it held, how often and how long the orchestrator
   * waited for space */
  uint64_t ring_capacity[4], ring_high_water[4], ring_stalls[4], ring_stall_ns[4];
  /* Always collected (cheap counters): */
  uint64_t effective_ns;  /* earliest kernel start to latest kernel end */
  uint64_t scheduling_ns; /* AICPU scheduler threads' time not parked, summed over threads */
  uint32_t num_cores;     /* entries below: every core of the chip, by handshake slot (AIC cores
                             0..C-1, then AIV: cluster c has C+2c and C+2c+1) */
  uint32_t num_clusters;  /* C */
  uint32_t block_dim;     /* clusters 0..block_dim-1 were used */
  uint64_t core_busy_ns[PTO_STATS_MAX_CORES]; /* time running kernels */
  uint32_t core_tasks[PTO_STATS_MAX_CORES];   /* kernels run */
  char pmu_note[320];             /* enable_pmu: counters that could not be counted and why ("" if none) */
  char dump_dir[512];             /* enable_dump_tensor: where this run's .npy files and index.json are */
  uint64_t predicted_makespan_ns; /* sim_timing: the device makespan in virtual time; 0 otherwise */
  /* Schedule primitives (pto/schedule_config.h): pipeline_depth's gates -- tasks that waited
   * for a token (deferred), the most in flight in any one gate; the task window's mode. */
  uint64_t pipeline_deferred;
  uint32_t pipeline_max_in_flight;
  uint32_t window_overflow;
  /* batch_deps (tensormap_and_ringbuffer; 0 otherwise): batches filed into the TensorMap,
   * TensorMap look-ups skipped because the batch held a covering write, and accesses never
   * filed because a later write in the same batch covered them. */
  uint64_t batch_flushes;
  uint64_t batch_local_hits;
  uint64_t batch_unfiled;
  /* dispatch_threshold (0 when off): tasks dispatched under each pto::DispatchPolicy, and how
   * often a scheduler's decision flipped between below and above the threshold. */
  uint64_t dispatch_tasks[3];
  uint64_t dispatch_switches;
  /* sim_timing (zeros otherwise): kernel invocations by what priced them, indexed by
   * pto_price_source; what priced each kernel of the callable (at most PTO_STATS_MAX_KERNELS,
   * by func_id order); kernels a cost model was given for and not used, and why. */
  uint64_t priced[PTO_PRICE_SOURCE_COUNT];
  uint32_t num_kernel_prices;
  uint32_t kernel_price_func[PTO_STATS_MAX_KERNELS];
  uint32_t kernel_price_source[PTO_STATS_MAX_KERNELS]; /* pto_price_source */
  char price_note[512];
  /* Of total_ns: opening programs (kernel binaries, the orchestration) on their first use in
   * this context; 0 once they are loaded. */
  uint64_t load_ns;
  /* Tasks finished without a core: dependency-only tasks, and tasks whose dispatch predicate
   * was false (not counted in tasks_run). */
  uint64_t tasks_retired_inline;
  /* sim_timing (0 otherwise): the predicted device time of the whole AICPU run, the makespan
   * plus the platform profile's device preamble and teardown (the reference's "Device"). */
  uint64_t predicted_device_ns;
  /* Task timing slots (pto::Launch::timing_slot; the reference API's set_task_timing_slot):
   * bit s of task_slot_mask is set when a task tagged s was dispatched and finished; its
   * entries are then the earliest dispatch and latest finish of every task tagged s (each
   * block, each MIX part, every scheduler thread), in ns since the launch (sim_timing: virtual
   * ns, the launch at 0). */
  uint32_t task_slot_mask;
  uint64_t task_slot_dispatch_ns[PTO_TASK_TIMING_SLOTS];
  uint64_t task_slot_finish_ns[PTO_TASK_TIMING_SLOTS];
} pto_run_stats;

/* Defaults for every field (the same as pto::ChipCallConfig's). */
void pto_default_call_config(pto_call_config *cfg);

/* platform: a geometry name ("a2a3sim", "a5sim"); aicpu_path / aicore_path: the device programs
 * built for this host program (RuntimeBuilder finds them). They are loaded by set_device. */
int create_device_context(const char *platform, const char *aicpu_path, const char *aicore_path,
                          pto_device_context **out);
int set_device(pto_device_context *ctx, int device_id);
/* One more warm-up run like set_device's, with cfg (its clusters, AICPU threads, ring sizes and
 * options) instead of the defaults: what a first run with cfg touches is touched now. cfg is
 * checked as a run's is. Since version 11. */
int prewarm_runtime(pto_device_context *ctx, const pto_call_config *cfg);
/* Bytes of device memory the runtime's own structures take for a run with this config. */
uint64_t get_runtime_size(const pto_call_config *cfg);
int run_runtime(pto_device_context *ctx, const pto_callable_desc *callable, const pto_arg_desc *args,
                uint32_t num_args, const pto_call_config *cfg, pto_run_stats *stats);
/* run_runtime in two halves. start_runtime returns once the device programs are launched; the
 * host buffers of args must stay valid until the run is finished. poll_runtime never waits when
 * block == 0 (except to drain a run that timed out): *done = 0 while the run is in flight; once
 * *done = 1 it returns what run_runtime would have (outputs copied back, *stats filled). At most
 * one run is in flight per context. */
int start_runtime(pto_device_context *ctx, const pto_callable_desc *callable, const pto_arg_desc *args,
                  uint32_t num_args, const pto_call_config *cfg);
int poll_runtime(pto_device_context *ctx, int block, int *done, pto_run_stats *stats);
/* Waits up to timeout_ns for the started run to end (its device programs returned or its time
 * limit passed): *ended = 1 once poll_runtime would finish it. Lets a caller wait in slices
 * and stay responsive (Ctrl-C). abort_runtime stops the started run (aborts, drains, frees
 * it): PTO_ABORTED, after which the context can run again, or PTO_DEVICE_BROKEN when a kernel
 * did not return (the context is then broken). Since version 3. */
int wait_runtime(pto_device_context *ctx, uint64_t timeout_ns, int *ended);
int abort_runtime(pto_device_context *ctx);
int finalize_device(pto_device_context *ctx);
/* Frees the context (finalizing it first if needed). Afterwards the handle is not live: every
 * call given it returns PTO_INVALID_ARGUMENT (get_last_error_message says so), and destroying it
 * again does nothing; so for null and for a pointer that never was a context. */
void destroy_device_context(pto_device_context *ctx);
/* Message of the last failed call on ctx ("" if none); valid until the next call on ctx. */
const char *get_last_error_message(pto_device_context *ctx);
/* Geometry of the context's platform (valid after create_device_context). */
int get_platform_info(pto_device_context *ctx, int32_t *num_clusters, int32_t *max_aicpu_threads,
                      int32_t *num_devices);
/* The last run's trace as JSON (docs/guide/profiling.md), "" unless it ran with enable_profiling;
 * valid until the next call on ctx. */
const char *get_last_trace_json(pto_device_context *ctx);
int get_c_api_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* PTO_C_API_H */
