// src/runtime/tensormap_and_ringbuffer/aicpu/task_records.cpp — what the orchestrator records beside a
// task for the host: its profiling trace (submit time, inferred edges) and, with
// enable_dump_tensor, which of its tensors to dump.
#include <algorithm>

#include "core/profiling.h"
#include "orchestrator.h"

namespace pto {
namespace tmr {

// enable_dump_tensor: picks the task for dumping (per the run's selection) and describes its
// tensors: inputs copied before it runs, outputs after.
void DeviceOrchestrator::select_for_dump(TaskSlot &task, int64_t id, uint32_t func_id, const Arg *args,
                                         uint32_t n) {
  auto *d = reinterpret_cast<DumpRegion *>(h_->dump_addr);
  task.dump = dump_select(d, dump_tasks(d), id, func_id);
  if (task.dump < 0) return;
  DumpTask *t = dump_tasks(d) + task.dump;
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind != PTO_ARG_TENSOR) continue;
    const TensorView &v = args[i].view;
    const Access a = args[i].access;
    const uint32_t when = a == Access::INPUT                                    ? kDumpBefore
                          : a == Access::OUTPUT || a == Access::OUTPUT_EXISTING ? kDumpAfter
                                                                                : kDumpBefore | kDumpAfter;
    dump_add_view(t, i, v.addr(), v.dtype, v.ndim, v.shape, v.strides, when);
  }
}

// Profiling: the submit time and the task's incoming edges with their kinds (each distinct
// (producer, kind) once). Written before publication, so schedulers never race with it.
void DeviceOrchestrator::record_trace(int64_t id, uint32_t func_id, uint32_t shape) {
  if (static_cast<uint64_t>(id) < h_->trace_capacity) {
    // The whole record: the trace block is not zeroed by the host (tmr_runtime_host.cpp).
    // Field by field: the record's layout packs the dispatch decision next to core and thread.
    TaskTrace r{};
    r.id = id;
    r.func = func_id;
    r.shape = static_cast<uint8_t>(shape);
    r.status = kTraceNone;
    r.stream = stream_;
    r.core = -1;
    r.thread = -1;
    r.target = target_;
    r.submit = platform_ticks();
    reinterpret_cast<TaskTrace *>(h_->trace_addr)[id] = r;
  }
  flush_edges(id);
}

// Profiling: room for `need` more edges of task id. A full list first sorts out duplicates;
// one still short (a task with more distinct edges than the list holds: thousands of explicit
// handles) is flushed to the trace early, so an edge may then be recorded twice, never lost.
void DeviceOrchestrator::make_edge_room(uint32_t need, int64_t id) {
  if (edge_kinds_.room() >= need) return;
  std::sort(edge_kinds_.begin(), edge_kinds_.end());
  const graph::EdgeKind *end =
      std::unique(edge_kinds_.begin(), edge_kinds_.end(), graph::EdgeKind::same_edge);
  edge_kinds_.resize(static_cast<uint32_t>(end - edge_kinds_.begin()));
  if (edge_kinds_.room() < need) flush_edges(id);
}

// Writes the task's edges (each distinct (producer, kind) once) and empties the list. An edge the
// TensorMap and the batch map both found is written as the TensorMap's (the sort puts it first):
// "batch" in the trace means the batch map alone found it.
void DeviceOrchestrator::flush_edges(int64_t id) {
  std::sort(edge_kinds_.begin(), edge_kinds_.end());
  const graph::EdgeKind *end =
      std::unique(edge_kinds_.begin(), edge_kinds_.end(), graph::EdgeKind::same_edge);
  auto *edges = reinterpret_cast<EdgeTrace *>(h_->edges_addr);
  uint64_t n = h_->edges_count.load(std::memory_order_relaxed);
  for (const graph::EdgeKind *e = edge_kinds_.begin(); e != end; ++e) {
    if (n < h_->edge_capacity) edges[n] = EdgeTrace{e->task, id, e->kind, e->source};
    ++n;
  }
  h_->edges_count.store(n, std::memory_order_relaxed);
  edge_kinds_.clear();
}

}  // namespace tmr
}  // namespace pto
