// src/host/schedule_host.h — the host side of the schedule primitives, shared by both runtimes' hosts.
//
// Lowers a run's pto_call_config into the ScheduleConfig both runtimes copy into their header,
// lays out and reads back pipeline_depth's token gates (core/graph/pipeline_gates.h).
#ifndef PTO_HOST_SCHEDULE_HOST_H
#define PTO_HOST_SCHEDULE_HOST_H

#include <cstdint>

#include "core/graph/pipeline_gates.h"
#include "pto/c_api.h"
#include "pto/schedule_config.h"
#include "pto_platform/device.h"

namespace pto {

inline ScheduleConfig schedule_config_of(const pto_call_config &c) {
  ScheduleConfig s;
  s.task_window = c.task_window;
  s.window_overflow = static_cast<WindowOverflow>(c.task_window_overflow);  // range-checked per run
  s.pipeline_depth = c.pipeline_depth;
  s.pipeline_scope = static_cast<PipelineScope>(c.pipeline_scope);
  s.batch_deps = c.batch_deps;
  s.dispatch_threshold = static_cast<uint16_t>(c.dispatch_threshold);  // all range-checked per run
  s.active_cores_below = static_cast<uint16_t>(c.active_cores_below);
  s.dispatch_metric = static_cast<DispatchMetric>(c.dispatch_metric);
  s.dispatch_scope = static_cast<DispatchScope>(c.dispatch_scope);
  s.dispatch_below = static_cast<DispatchPolicy>(c.dispatch_below);
  s.dispatch_above = static_cast<DispatchPolicy>(c.dispatch_above);
  return s;
}

// Bytes of the gate region: none unless pipeline_depth is set.
inline uint64_t pipeline_gates_bytes(const pto_call_config &c) {
  return c.pipeline_depth ? uint64_t{graph::kPipelineGates} * sizeof(graph::PipelineGate) : 0;
}

// After the run: tasks deferred at any gate and the most in flight in one gate.
inline void read_pipeline_stats(Device &d, const void *gates, const pto_call_config &c, pto_run_stats *st) {
  st->window_overflow = c.task_window_overflow;
  if (!gates || !c.pipeline_depth) return;
  graph::PipelineGate g[graph::kPipelineGates];
  d.copy_from_device(g, gates, sizeof g);
  for (const graph::PipelineGate &x : g) {
    st->pipeline_deferred += x.deferred;
    if (x.max_in_flight > st->pipeline_max_in_flight) st->pipeline_max_in_flight = x.max_in_flight;
  }
}

}  // namespace pto
#endif  // PTO_HOST_SCHEDULE_HOST_H
