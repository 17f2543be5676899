// src/host/trace_json.h — turns a run's trace records into the JSON document Python reads
// (docs/guide/profiling.md).
#ifndef PTO_HOST_TRACE_JSON_H
#define PTO_HOST_TRACE_JSON_H

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tick_clock.h"
#include "core/trace.h"
#include "host/device_runner.h"

namespace pto {

// A std::allocator that leaves elements default-initialised (for TaskTrace and PmuTrace,
// uninitialised): the buffers below are filled by a copy from the device at once, and
// value-initialising them first would zero every record for nothing.
template <typename T>
struct NoInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <typename U>
  NoInitAllocator(const NoInitAllocator<U> &) noexcept {}
  template <typename U>
  void construct(U *p) noexcept {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};
using TraceRecords = std::vector<TaskTrace, NoInitAllocator<TaskTrace>>;
using PmuRecords = std::vector<PmuTrace, NoInitAllocator<PmuTrace>>;
using PriceRecords = std::vector<KernelPrice, NoInitAllocator<KernelPrice>>;

struct TraceMeta {
  const char *runtime = "";
  uint64_t launch_ns = 0;  // platform clock at launch: times are exported relative to it
  TickClock clock;         // the records' ticks to platform nanoseconds
  uint32_t aicpu_threads = 1;
  int32_t orchestrator_thread = -1;  // tensormap runtime: the AICPU thread that orchestrates
  uint64_t dropped_tasks = 0;        // tasks past the trace capacity
  uint64_t dropped_edges = 0;
  const PmuTrace *pmu = nullptr;  // enable_pmu: one per task record, else null
  std::string pmu_note;           // enable_pmu: pmu_note() of the records
  const KernelPrice *price = nullptr;  // profiling in sim timing mode: one per task record, else null
};

// Keeps a finished run's trace records in `runner` and renders the JSON only when someone asks
// for it (ChipWorker.last_trace_json): formatting costs far more than recording, so a profiled
// run does not pay for it. With `pmu` records, also writes the PMU note into stats->pmu_note.
void keep_trace(DeviceRunner &runner, TraceMeta meta, const RunInputs &in, TraceRecords records,
                std::vector<EdgeTrace> edges, PmuRecords pmu, PriceRecords price, pto_run_stats *stats);

// enable_pmu: "" when every counter of every task that ran was counted, else which ones are
// missing and why. pmu[i] belongs to tasks[i].
std::string pmu_note(const TaskTrace *tasks, const PmuTrace *pmu, size_t num_tasks);

// tasks: records indexed by task id (status kTraceNone = never recorded, skipped).
std::string trace_to_json(const TraceMeta &meta, const RunInputs &in, const ChipGeometry &geometry,
                          const TaskTrace *tasks, size_t num_tasks, const std::vector<EdgeTrace> &edges);

}  // namespace pto
#endif  // PTO_HOST_TRACE_JSON_H
