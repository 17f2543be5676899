// src/core/trace.h — what a run records when profiling is on (enable_profiling), in device memory.
//
// The cost when profiling is off is one predictable branch per dispatch and per completion
// (a member of the scheduler's core pool); kernel timestamps are always taken for the run
// counters (core/run_counters.h). Times are platform ticks (pto_platform/clock.h); the host
// converts them when it exports the trace (core/tick_clock.h).
// Records are indexed by task id, so each is written once, by one thread, without atomics;
// the host reads them after every device thread has returned.
#ifndef PTO_CORE_TRACE_H
#define PTO_CORE_TRACE_H

#include <cstdint>

#include "pto_platform/clock.h"

namespace pto {

// kTraceRetired: finished without a core (a dependency-only task, or its dispatch predicate was
// false): its consumers were released as if it had run.
enum TraceStatus : uint8_t { kTraceNone = 0, kTraceDone = 1, kTraceFailed = 2, kTraceSkipped = 3, kTraceRetired = 4 };
enum TraceEdgeKind : uint32_t { kEdgeRaw = 0, kEdgeWaw = 1, kEdgeWar = 2, kEdgeExplicit = 3 };
// Where an inferred edge was found: the TensorMap, or batch_deps' local batch map (tmr/dep_batch.h).
// An edge both found for one task is traced once, as kEdgeFromTensorMap (task_records.cpp): so
// kEdgeFromBatch means only the batch map reported it. Explicit edges carry kEdgeFromTensorMap
// and the host does not write a source for them.
enum TraceEdgeSource : uint32_t { kEdgeFromTensorMap = 0, kEdgeFromBatch = 1 };

struct TaskTrace {
  int64_t id;
  uint32_t func;
  uint8_t shape;             // pto_core_type: AIC, AIV or MIX
  uint8_t status;            // TraceStatus; kTraceNone until the record is written
  uint16_t stream;           // the stream it was submitted on (0 unless set_stream)
  int16_t core;              // handshake slot (a MIX task: its cluster's AIC slot); slots < 96
  uint16_t dispatch_metric;  // dispatch_threshold: the metric when it was placed (0 when off)
  int8_t thread;             // AICPU thread that dispatched it
  uint8_t dispatch_policy;   // pto::DispatchPolicy it was placed under (locality when off)
  uint16_t target;           // its target affinity (kNoTarget = none, pto/schedule_config.h)
  uint64_t submit;           // orchestrator (tensormap runtime), 0 otherwise
  uint64_t dispatch;         // scheduler, when it handed the task to a core
  uint64_t start;            // core, just before the kernel
  uint64_t end;              // core, just after the kernel
  uint64_t complete;         // scheduler, when it saw the completion
};
static_assert(sizeof(TaskTrace) == 64, "one cache line per record");

struct EdgeTrace {
  int64_t from, to;
  uint32_t kind;    // TraceEdgeKind
  uint32_t source;  // TraceEdgeSource (inferred edges only)
};
static_assert(sizeof(EdgeTrace) == 24, "the host copies the device's edge records as they are");

// enable_pmu: a task's counters (pto_platform/pmu.h), by task id next to its TaskTrace. A MIX
// task's are the sums over its three cores.
struct PmuTrace {
  uint64_t cycles, instructions, cache_misses;
  uint32_t valid;  // kPmu* bits: which of the three were counted
  int32_t error;   // errno of a refused counter, 0 if none
};

// What a scheduler learns about a finished task from its core(s) when profiling.
struct CoreTiming {
  uint64_t dispatch = 0, start = 0, end = 0, complete = 0;  // ticks
  int32_t core = -1;
  PmuTrace pmu{};             // enable_pmu only
  // Profiled sim timing runs: what priced the kernel (valid while the completion is handled);
  // null otherwise. A pointer: a completion builds one CoreTiming per task.
  const KernelPrice *price = nullptr;
  uint32_t dispatch_tag = 0;  // dispatch_threshold's decision (graph::DispatchTag), profiling only
};

}  // namespace pto
#endif  // PTO_CORE_TRACE_H
