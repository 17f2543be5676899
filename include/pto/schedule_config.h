// include/pto/schedule_config.h — the extended schedule primitives (seed 004), lowered into one compact
// struct.
//
// ScheduleConfig is what both L2 runtimes read the same way: the host copies it into the run's
// header and the shared scheduler loop (src/core/graph/scheduler_loop.h) and the tensormap
// orchestrator read it from there. It is plain data with no STL, so device code includes this
// header too. Users set it as pto::backend::CompileOptions::sched (lowered by make_call_config)
// or as the ChipCallConfig fields task_window_overflow, pipeline_depth, pipeline_scope and
// batch_deps (pto/call_config.h). Semantics per runtime: docs/architecture.md, "Schedule primitives".
//
//   task_window + overflow   what a full task window does: stall | evict_completed | error
//   pipeline_depth + scope   at most `depth` tasks in flight (dispatched, not yet completed) per
//                            gate; gates are global | per_stream | per_pool | per_target
//   batch_deps               dependency inference over a local map of the last `batch_deps`
//                            submits first, then the TensorMap (tensormap runtime only)
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

// Stream ids and target affinities a task may carry: 0 .. kMaxStreams - 1 (one gate each).
constexpr uint32_t kMaxStreams = 256;
constexpr uint32_t kMaxTargets = 256;
constexpr uint16_t kNoTarget = 0xFFFF;  // a task without a target affinity
constexpr uint32_t kMaxPipelineDepth = 65535;
// batch_deps: tasks per batch at most (the batch map holds batch_deps x max_args_per_task entries).
constexpr uint32_t kMaxBatchDeps = 256;

inline const char *window_overflow_name(WindowOverflow o) {
  switch (o) {
    case WindowOverflow::kStall:
      return "stall";
    case WindowOverflow::kEvictCompleted:
      return "evict_completed";
    case WindowOverflow::kError:
      return "error";
  }
  return "?";
}
inline const char *pipeline_scope_name(PipelineScope s) {
  switch (s) {
    case PipelineScope::kGlobal:
      return "global";
    case PipelineScope::kPerStream:
      return "per_stream";
    case PipelineScope::kPerPool:
      return "per_pool";
    case PipelineScope::kPerTarget:
      return "per_target";
  }
  return "?";
}
// Parses a name; false (and *out unchanged) for anything else.
inline bool parse_window_overflow(const char *name, WindowOverflow *out) {
  for (uint32_t i = 0; i < kWindowOverflowCount; ++i) {
    if (name && strcmp(name, window_overflow_name(static_cast<WindowOverflow>(i))) == 0) {
      *out = static_cast<WindowOverflow>(i);
      return true;
    }
  }
  return false;
}
inline bool parse_pipeline_scope(const char *name, PipelineScope *out) {
  for (uint32_t i = 0; i < kPipelineScopeCount; ++i) {
    if (name && strcmp(name, pipeline_scope_name(static_cast<PipelineScope>(i))) == 0) {
      *out = static_cast<PipelineScope>(i);
      return true;
    }
  }
  return false;
}

// The lowered primitives, 20 bytes. task_window == 0 keeps the ChipCallConfig's window
// (make_call_config); pipeline_depth == 0 turns the token gates off (the default path: no gate
// memory, one predictable branch per dispatch and per completion); batch_deps == 0 turns the
// dependency batch off (no batch map, one predictable branch per tensor access).
struct ScheduleConfig {
  uint32_t task_window = 0;
  WindowOverflow window_overflow = WindowOverflow::kStall;
  uint32_t pipeline_depth = 0;
  PipelineScope pipeline_scope = PipelineScope::kGlobal;
  uint32_t batch_deps = 0;  // 0 = off; 1 .. kMaxBatchDeps submits per dependency batch

  bool gated() const { return pipeline_depth != 0; }
  bool operator==(const ScheduleConfig &o) const {
    return task_window == o.task_window && window_overflow == o.window_overflow &&
           pipeline_depth == o.pipeline_depth && pipeline_scope == o.pipeline_scope &&
           batch_deps == o.batch_deps;
  }
  bool operator!=(const ScheduleConfig &o) const { return !(*this == o); }
};
static_assert(sizeof(ScheduleConfig) == 20, "compact: copied into every run's header");

}  // namespace pto
#endif  // PTO_SCHEDULE_CONFIG_H
