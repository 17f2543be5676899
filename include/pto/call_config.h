// include/pto/call_config.h — every field of a run's configuration, with its default and the
// values it may take. One list feeds ChipCallConfig (pto/chip_worker.h), its conversion to the C
// API's pto_call_config, the check every run makes (DeviceRunner::check_config) and the Python
// binding (init, properties, repr, equality, pickling), so a range is written once.
#ifndef PTO_CALL_CONFIG_H
#define PTO_CALL_CONFIG_H

#include <cstdint>
#include <string>

#include "pto/device_log.h"

// X(type, name, default, min, max, doc). min..max is what the field may hold on any platform;
// block_dim and aicpu_thread_num are also checked against the platform's geometry at run.
#define PTO_CHIP_CALL_CONFIG_FIELDS(X)                                                                     \
  X(int, block_dim, 1, 1, INT32_MAX, "clusters used by the run: 1 .. the platform's cluster count")        \
  X(int, aicpu_thread_num, 1, 1, INT32_MAX,                                                                \
    "AICPU threads: schedulers (+1 orchestrator in tensormap_and_ringbuffer), 1 .. the platform's")        \
  X(bool, enable_profiling, false, 0, 1, "record a trace of the run (ChipWorker.last_trace)")              \
  X(bool, enable_dump_tensor, false, 0, 1, "write selected tasks' tensors as .npy (RunStats.dump_dir)")    \
  X(bool, enable_pmu, false, 0, 1,                                                                         \
    "per-task cycles (+ instructions, cache misses where allowed) in the trace")                           \
  X(uint32_t, max_tasks, 65536, 1, 1u << 26, "host_build_graph: task capacity of the graph")               \
  X(uint32_t, max_args_per_task, 16, 1, 4096, "arguments per task")                                        \
  X(uint32_t, max_successors, 1024, 1, UINT32_MAX, "host_build_graph: successors per task")                \
  X(uint32_t, timeout_ms, 60000, 0, UINT32_MAX, "run time limit in ms; 0 = no limit")                      \
  X(uint32_t, task_window, 1024, 1, 1u << 24, "tensormap_and_ringbuffer: task ring slots (live tasks)")    \
  X(uint32_t, task_window_overflow, 0, 0, 2,                                                               \
    "a full task window: 0 stall, 1 evict_completed, 2 error (pto/schedule_config.h)")                     \
  X(uint32_t, pipeline_depth, 0, 0, 65535, "tasks in flight per pipeline gate; 0 = no gates")              \
  X(uint32_t, pipeline_scope, 0, 0, 3,                                                                     \
    "pipeline_depth's gates: 0 global, 1 per_stream, 2 per_pool, 3 per_target")                            \
  X(uint32_t, batch_deps, 0, 0, 256,                                                                       \
    "tensormap_and_ringbuffer: submits per dependency batch (local map before the TensorMap); 0 = off")    \
  X(uint32_t, dispatch_metric, 0, 0, 1, "dispatch_threshold's metric: 0 none (off), 1 ready")              \
  X(uint32_t, dispatch_threshold, 0, 0, 65535,                                                             \
    "metric < this: dispatch_below's policy, else dispatch_above's (dispatch_metric on)")                  \
  X(uint32_t, dispatch_scope, 0, 0, 1, "dispatch_threshold's metric over: 0 global, 1 per_pool")           \
  X(uint32_t, dispatch_below, 0, 0, 2,                                                                     \
    "policy below the threshold: 0 locality, 1 round_robin, 2 work_stealing")                              \
  X(uint32_t, dispatch_above, 0, 0, 2, "policy otherwise: 0 locality, 1 round_robin, 2 work_stealing")     \
  X(uint32_t, active_cores_below, 0, 0, 65535,                                                             \
    "below the threshold only cores 0..n-1 of each pool get work; 0 = all")                                \
  X(uint64_t, heap_bytes, 64ull << 20, 64, UINT64_MAX,                                                     \
    "tensormap_and_ringbuffer: heap ring bytes for alloc_tensor")                                          \
  X(uint32_t, dep_pool_entries, 16384, 1, UINT32_MAX,                                                      \
    "tensormap_and_ringbuffer: dependency-list pool entries")                                              \
  X(uint32_t, tensormap_entries, 16384, 1, UINT32_MAX, "tensormap_and_ringbuffer: TensorMap pool entries") \
  X(uint32_t, trace_tasks, 65536, 0, UINT32_MAX,                                                           \
    "tensormap_and_ringbuffer with profiling: tasks traced (ids beyond are not)")                          \
  X(int32_t, log_level, PTO_LOG_WARN, PTO_LOG_DEBUG, PTO_LOG_OFF,                                          \
    "device logs (DEV_DEBUG..DEV_ERROR): least level written; 0 debug, 1 info, 2 warn, 3 error, 4 off")    \
  X(int32_t, dump_kernel, -1, -1, INT32_MAX,                                                               \
    "enable_dump_tensor: only tasks of this func_id; -1 = every kernel")                                   \
  X(uint32_t, dump_first_task, 0, 0, UINT32_MAX,                                                           \
    "enable_dump_tensor: tasks with a smaller id are not dumped")                                          \
  X(uint32_t, dump_max_tasks, 16, 1, 65536, "enable_dump_tensor: at most this many tasks are dumped")      \
  X(uint64_t, dump_bytes, 16ull << 20, 1, 16ull << 30,                                                     \
    "enable_dump_tensor: device memory for the copies (more: dropped)")                                    \
  X(int64_t, sim_seed, -1, -1, INT64_MAX,                                                                  \
    "sim: >= 0 runs reproducibly, one simulated thread at a time in a seeded order; -1 = PTO_SIM_SEED or " \
    "off")                                                                                                 \
  X(bool, sim_timing, false, 0, 1,                                                                         \
    "sim, seeded runs: run in virtual time, predict the device makespan (False: PTO_SIM_TIMING=1 or off)") \
  X(int32_t, sim_kernel_time_pct, 100, 0, 1000000,                                                         \
    "sim_timing: a kernel without a cost (PTO_SIM_KERNEL_COSTS, a cost-model twin) takes its host time x " \
    "this / 100")

namespace pto {

// "timeout_ms=-5 is outside 0..4294967295 (run time limit in ms; 0 = no limit)": the one wording
// of an out-of-range field, whoever finds it. `value` is as the caller's language writes it.
inline std::string config_field_range_message(const char *name, const std::string &value, long long min,
                                              unsigned long long max, const char *doc) {
  return std::string(name) + "=" + value + " is outside " + std::to_string(min) + ".." + std::to_string(max) +
         " (" + doc + ")";
}

// Whether v is within [min, max], for any integer type v has (no sign or width surprises).
template <typename T>
constexpr bool config_field_in_range(T v, long long min, unsigned long long max) {
  if constexpr (static_cast<T>(-1) < static_cast<T>(0)) {  // signed
    const long long s = static_cast<long long>(v);
    return s >= min && (s < 0 || static_cast<unsigned long long>(s) <= max);
  } else {
    const unsigned long long u = static_cast<unsigned long long>(v);
    return (min <= 0 || u >= static_cast<unsigned long long>(min)) && u <= max;
  }
}

}  // namespace pto
#endif  // PTO_CALL_CONFIG_H
