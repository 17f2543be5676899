// include/pto/schedule_config.h — the extended schedule primitives (seed 004), lowered into one compact
// struct.
//
// ScheduleConfig is what both L2 runtimes read the same way: the host copies it into the run's
// header and the shared scheduler loop (src/core/graph/scheduler_loop.h) and the tensormap
// orchestrator read it from there. It is plain data with no STL, so device code includes this
// header too. Users set it as pto::BackendOptions::sched (lowered by make_call_config)
// or as the ChipCallConfig fields task_window_overflow, pipeline_depth, pipeline_scope and
// batch_deps, dispatch_* and active_cores_below (pto/call_config.h). Semantics per runtime:
// docs/design/architecture.md, "Schedule primitives".
//
//   task_window + overflow   what a full task window does: stall | evict_completed | error
//   pipeline_depth + scope   at most `depth` tasks in flight (dispatched, not yet completed) per
//                            gate; gates are global | per_stream | per_pool | per_target
//   batch_deps               dependency inference over a local map of the last `batch_deps`
//                            submits first, then the TensorMap (tensormap runtime only)
//   dispatch_threshold       a metric (ready) per scope (global | per_pool) picks the dispatch
//                            policy: metric < threshold -> dispatch_below, else dispatch_above;
//                            policies locality | round_robin | work_stealing; below the
//                            threshold only the first active_cores_below cores of a pool run work
#ifndef PTO_SCHEDULE_CONFIG_H
#define PTO_SCHEDULE_CONFIG_H

#include <stdint.h>
#include <string.h>

namespace pto {

// What a submit does when the task window is full.
enum class WindowOverflow : uint32_t {
  kStall = 0,  // wait until the oldest tasks are evicted; resume once a quarter of the window is free
  kEvictCompleted = 1,  // wait until the oldest task is evicted; resume at the first free slot
  kError = 2,           // the window is a capacity: a program of more tasks fails (CAPACITY_EXCEEDED)
};
constexpr uint32_t kWindowOverflowCount = 3;

// Which tasks share a pipeline_depth token gate.
enum class PipelineScope : uint32_t {
  kGlobal = 0,     // one gate for the whole run
  kPerStream = 1,  // one gate per stream id (set_stream)
  kPerPool = 2,    // one gate per execution pool: AIC, AIV, MIX
  kPerTarget = 3,  // one gate per target affinity; tasks without a target are not gated
};
constexpr uint32_t kPipelineScopeCount = 4;

// dispatch_threshold: what is measured, per scope, each time a scheduler places a task.
enum class DispatchMetric : uint8_t {
  kNone = 0,   // off: every task goes the locality way (the default path)
  kReady = 1,  // tasks ready in the scope's queue(s), the task being placed included
};
constexpr uint32_t kDispatchMetricCount = 2;

// dispatch_threshold: over which tasks the metric is taken.
enum class DispatchScope : uint8_t {
  kGlobal = 0,   // every pool's queue together
  kPerPool = 1,  // the placed task's own pool (AIC, AIV, MIX): two stages, pool then policy
};
constexpr uint32_t kDispatchScopeCount = 2;

// dispatch_threshold: how a scheduler thread places a task (core/graph/dispatch_threshold.h).
enum class DispatchPolicy : uint8_t {
  kLocality = 0,      // a released task starts on this thread's warm core: chains stay hot
  kRoundRobin = 1,    // rotate over the pool's cores, no warm preference
  kWorkStealing = 2,  // a released task goes to the shared queue and a peer is woken to take it
};
constexpr uint32_t kDispatchPolicyCount = 3;
constexpr uint32_t kMaxDispatchThreshold = 65535;  // the trace records the metric in 16 bits

// Stream ids and target affinities a task may carry: 0 .. kMaxStreams - 1 (one gate each).
constexpr uint32_t kMaxStreams = 256;
constexpr uint32_t kMaxTargets = 256;
constexpr uint16_t kNoTarget = 0xFFFF;  // a task without a target affinity
constexpr uint32_t kMaxPipelineDepth = 65535;
// batch_deps: tasks per batch at most (the batch map holds batch_deps x max_args_per_task entries).
constexpr uint32_t kMaxBatchDeps = 256;

// Each mode's name, by value: what Python spells, messages print and parse_* accept.
constexpr const char *kWindowOverflowNames[kWindowOverflowCount] = {"stall", "evict_completed", "error"};
constexpr const char *kPipelineScopeNames[kPipelineScopeCount] = {"global", "per_stream", "per_pool",
                                                                  "per_target"};
constexpr const char *kDispatchMetricNames[kDispatchMetricCount] = {"none", "ready"};
constexpr const char *kDispatchScopeNames[kDispatchScopeCount] = {"global", "per_pool"};
constexpr const char *kDispatchPolicyNames[kDispatchPolicyCount] = {"locality", "round_robin",
                                                                    "work_stealing"};

// names[value], or "?" for a value past the table.
template <typename E, uint32_t N>
inline const char *schedule_name(const char *const (&names)[N], E value) {
  const auto i = static_cast<uint32_t>(value);
  return i < N ? names[i] : "?";
}
// The value whose name is `name`; false (and *out unchanged) for anything else.
template <typename E, uint32_t N>
inline bool parse_schedule_name(const char *const (&names)[N], const char *name, E *out) {
  for (uint32_t i = 0; i < N; ++i) {
    if (name && strcmp(name, names[i]) == 0) {
      *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

inline const char *window_overflow_name(WindowOverflow o) {
  return schedule_name(kWindowOverflowNames, o);
}
inline const char *pipeline_scope_name(PipelineScope s) {
  return schedule_name(kPipelineScopeNames, s);
}
inline const char *dispatch_metric_name(DispatchMetric m) {
  return schedule_name(kDispatchMetricNames, m);
}
inline const char *dispatch_scope_name(DispatchScope s) {
  return schedule_name(kDispatchScopeNames, s);
}
inline const char *dispatch_policy_name(DispatchPolicy p) {
  return schedule_name(kDispatchPolicyNames, p);
}
inline bool parse_window_overflow(const char *name, WindowOverflow *out) {
  return parse_schedule_name(kWindowOverflowNames, name, out);
}
inline bool parse_pipeline_scope(const char *name, PipelineScope *out) {
  return parse_schedule_name(kPipelineScopeNames, name, out);
}
inline bool parse_dispatch_metric(const char *name, DispatchMetric *out) {
  return parse_schedule_name(kDispatchMetricNames, name, out);
}
inline bool parse_dispatch_scope(const char *name, DispatchScope *out) {
  return parse_schedule_name(kDispatchScopeNames, name, out);
}
inline bool parse_dispatch_policy(const char *name, DispatchPolicy *out) {
  return parse_schedule_name(kDispatchPolicyNames, name, out);
}

// The lowered primitives, 28 bytes. task_window == 0 keeps the ChipCallConfig's window
// (make_call_config); pipeline_depth == 0 turns the token gates off (the default path: no gate
// memory, one predictable branch per dispatch and per completion); batch_deps == 0 turns the
// dependency batch off (no batch map, one predictable branch per tensor access);
// dispatch_metric == kNone turns dispatch_threshold off (every other dispatch_* field must then
// keep its default): one predictable branch per release and per feeding pass.
struct ScheduleConfig {
  uint32_t task_window = 0;
  WindowOverflow window_overflow = WindowOverflow::kStall;
  uint32_t pipeline_depth = 0;
  PipelineScope pipeline_scope = PipelineScope::kGlobal;
  uint32_t batch_deps = 0;          // 0 = off; 1 .. kMaxBatchDeps submits per dependency batch
  uint16_t dispatch_threshold = 0;  // metric < threshold: dispatch_below, else dispatch_above
  uint16_t active_cores_below = 0;  // below the threshold: cores 0..n-1 of each pool; 0 = all
  DispatchMetric dispatch_metric = DispatchMetric::kNone;
  DispatchScope dispatch_scope = DispatchScope::kGlobal;
  DispatchPolicy dispatch_below = DispatchPolicy::kLocality;
  DispatchPolicy dispatch_above = DispatchPolicy::kLocality;

  bool gated() const { return pipeline_depth != 0; }
  bool dispatching() const { return dispatch_metric != DispatchMetric::kNone; }
  bool operator==(const ScheduleConfig &o) const {
    return task_window == o.task_window && window_overflow == o.window_overflow &&
           pipeline_depth == o.pipeline_depth && pipeline_scope == o.pipeline_scope &&
           batch_deps == o.batch_deps && dispatch_threshold == o.dispatch_threshold &&
           active_cores_below == o.active_cores_below && dispatch_metric == o.dispatch_metric &&
           dispatch_scope == o.dispatch_scope && dispatch_below == o.dispatch_below &&
           dispatch_above == o.dispatch_above;
  }
  bool operator!=(const ScheduleConfig &o) const { return !(*this == o); }
};
static_assert(sizeof(ScheduleConfig) == 28, "compact: copied into every run's header");

}  // namespace pto
#endif  // PTO_SCHEDULE_CONFIG_H
