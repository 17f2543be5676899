// src/runtime/host_build_graph/hbg_layout.h — the runtime's shared memory, as all three programs see it.
//
// One device allocation holds, in this order (Layout in host/hbg_runtime_host.cpp), each part
// cache-line aligned: the RuntimeHeader, Task[num_tasks], the successor array (task indices;
// task i's are its FanoutRange: core/graph/task_record.h), one pto_kernel_call block per task
// (sized by its argument count; three for a MIX task, one per part: core/mix_parts.h), the cells
// of the ReadyQueueSet's pools (core/graph/ready_queue_set.h; each a power of two at least the
// tasks that can wait there), the run counters, the dump region (enable_dump_tensor), with
// pipeline_depth the token gates (core/graph/pipeline_gates.h), with a dispatch predicate
// DispatchPredicate[num_tasks] and with a MIX task the MIX payloads (mix_addr). The host builds
// all of that as one image and copies it in before launch. After the image, with
// enable_profiling or enable_pmu: TaskTrace[num_tasks], and with enable_pmu PmuTrace[num_tasks];
// schedulers write every record whole, so these are not copied in. Last, with a MIX task,
// MixSync[block_dim] (core/mix_sync.h), likewise not copied in: the scheduler starting a MIX task
// on a cluster resets that cluster's block.
// Not in the allocation: the cores' Handshake slots and the scheduler threads' SchedulerSlot
// doorbells live as long as the device (host/device_runner.h; handshakes_addr / sched_addr
// point at them: a core rings its scheduler after reporting completion, when the run's memory
// may already be freed).
// During the run only the atomic fields below change; each comment names the writers and the
// memory order.
#ifndef PTO_HBG_LAYOUT_H
#define PTO_HBG_LAYOUT_H

#include <atomic>
#include <cstdint>

#include "core/graph/ready_queue_set.h"
#include "core/graph/task_record.h"
#include "core/handshake.h"
#include "core/run_counters.h"
#include "core/scheduler_bell.h"
#include "core/tensor_dump.h"
#include "core/trace.h"
#include "pto/schedule_config.h"
#include "pto/types.h"

namespace pto {
namespace hbg {

using namespace graph::task_states;  // TaskState, kPending .. kSkipped (core/graph/task_record.h)

// The portable record (writers and orders in core/graph/task_record.h; fanin_remaining starts
// at the predecessor count) plus where its successors are.
struct alignas(kCacheLine) Task : graph::TaskRecord {
  graph::FanoutRange succ;  // host-written: its successors in the successor array
};
static_assert(sizeof(Task) == kCacheLine, "one line per task");

using pto::SchedulerSlot;  // core/handshake.h

struct alignas(kCacheLine) RuntimeHeader {
  // --- Host-written before launch, read-only during the run. ---
  uint32_t num_tasks;
  uint32_t block_dim;
  uint32_t num_clusters;  // of the chip: the handshake block's layout (core/cluster_layout.h)
  uint32_t aic_per_cluster, aiv_per_cluster;
  uint64_t short_task_ticks;  // Device::short_task_ns() in ticks (core/core_pool.h)
  uint64_t pipeline_ticks;    // queue behind running kernels shorter than this (core/core_pool.h)
  uint32_t aicpu_threads;
  uint64_t tasks_addr;       // Task[num_tasks]
  uint64_t successors_addr;  // uint32_t[]
  uint64_t handshakes_addr;  // the device's handshake block (DeviceRunner's, host/device_runner.h)
  uint64_t sched_addr;       // SchedulerSlot[aicpu_threads]
  uint64_t trace_addr;       // TaskTrace[num_tasks] when profiling or enable_pmu, else 0
  uint64_t pmu_addr;         // PmuTrace[num_tasks] when enable_pmu, else 0
  uint64_t price_addr;       // KernelPrice[num_tasks] when profiling in sim timing mode, else 0
  uint64_t counters_addr;    // the run counters (core/run_counters.h), always
  uint64_t log_addr;         // the device's pto_device_log (pto/device_log.h)
  uint64_t dump_addr;        // enable_dump_tensor: the DumpRegion (core/tensor_dump.h), else 0
  uint64_t gates_addr;       // pipeline_depth: PipelineGate[kPipelineGates], else 0
  uint64_t preds_addr;       // DispatchPredicate[num_tasks] when a task has a predicate, else 0
  // With a MIX task, else 0: DispatchPayload[2 * num_tasks], task i's AIV parts (parts 1 and 2,
  // core/mix_parts.h) at [2i] and [2i + 1] (part 0 is its Task::payload), and MixSync[block_dim].
  uint64_t mix_addr;
  uint64_t mix_sync_addr;
  ScheduleConfig sched;  // the lowered schedule primitives (pto/schedule_config.h)

  // --- Ready queues, cube and vector pools: writers are scheduler threads (and the host,
  //     pre-filling). ---
  graph::ReadyQueueSet ready;

  // --- Written by scheduler threads during the run. ---
  alignas(kCacheLine) std::atomic<uint32_t> finished;  // tasks done, failed or skipped
  std::atomic<int32_t> failed_task;                    // first failed task, -1 if none (CAS)
  std::atomic<int32_t> failed_status;                  // its kernel's status
  // --- Written by the host (time-out): stop dispatching, drain, quit. ---
  alignas(kCacheLine) std::atomic<uint32_t> abort;
};

inline Task *tasks_of(const RuntimeHeader *h) {
  return reinterpret_cast<Task *>(h->tasks_addr);
}
inline const uint32_t *successors_of(const RuntimeHeader *h) {
  return reinterpret_cast<const uint32_t *>(h->successors_addr);
}
inline Handshake *handshakes_of(const RuntimeHeader *h) {
  return reinterpret_cast<Handshake *>(h->handshakes_addr);
}
inline SchedulerSlot *sched_of(const RuntimeHeader *h) {
  return reinterpret_cast<SchedulerSlot *>(h->sched_addr);
}
inline const DispatchPayload *mix_payloads_of(const RuntimeHeader *h) {
  return reinterpret_cast<const DispatchPayload *>(h->mix_addr);
}

}  // namespace hbg
}  // namespace pto
#endif  // PTO_HBG_LAYOUT_H
