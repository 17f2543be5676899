// src/runtime/tensormap_and_ringbuffer/tmr_layout.h — shared memory of the tensormap runtime (seed 002).
//
// One device allocation, in this order (Layout in host/tmr_runtime_host.cpp), each part
// cache-line aligned: Header, KernelSlot[max func id + 1], TensorView[run tensors],
// int64_t[run scalars], the run counters, the dump region (enable_dump_tensor) -- the host
// builds all of that as an image and copies it in -- then TaskSlot[window], pto_kernel_call[3 x window] (three blocks
// per slot: a MIX task's parts) and DepEntry[dep_pool_entries], which the orchestrator writes
// before anyone reads them (a slot whole, at submit), so they are neither zeroed nor copied
// in; a slot may hold an earlier run's task until then; last MixSync[block_dim] (core/mix_sync.h:
// the sync block of the MIX task running on each cluster), reset by the scheduler that starts
// a MIX task there, likewise not copied in. Separate allocations:
// the heap ring (heap_bytes), the ready queues' cells (kept from run to run: kReadyPools) and,
// with profiling or PMU, TaskTrace / EdgeTrace / PmuTrace.
// Not the run's but the device's: the cores' Handshake slots and the schedulers'
// SchedulerSlot doorbells (cores ring them after the run may be gone). Task ids grow without
// bound; task t lives in slot t % window while last_task_alive <= t < next_task.
//
// Who writes what during a run:
//   orchestrator (one AICPU thread): slot contents before publication, next_task, heap_top,
//     heap_tail, orch_done, orch_status/message, stall counters, orch_wake_at, dependency
//     entries
//   scheduler threads: task state, fanin decrements, fanout-list closing, retired_id,
//     finished, last_task_alive, failure record, per-type run counters
//   scheduler threads ring orch_bell (only once last_task_alive reaches orch_wake_at)
//   cores: the status word and mix_ops of their task's kernel-call block, handshake core
//     half, the MixSync block of the MIX task they run (under its lock)
//   scheduler threads also: mix_sync of a MIX task's call blocks and the cluster's MixSync
//     reset, at dispatch
//   host: everything before launch, `abort` during it
#ifndef PTO_TMR_LAYOUT_H
#define PTO_TMR_LAYOUT_H

#include <atomic>
#include <cstdint>

#include "core/graph/ready_queue_set.h"
#include "core/graph/task_record.h"
#include "core/graph/task_window.h"
#include "core/handshake.h"
#include "core/run_counters.h"
#include "core/scheduler_bell.h"
#include "core/tensor_dump.h"
#include "core/trace.h"
#include "pto/kernel.h"
#include "pto/orchestration.h"
#include "pto/schedule_config.h"
#include "pto/types.h"

namespace pto {
namespace tmr {

using namespace graph::task_states;  // TaskState, kPending .. kSkipped (core/graph/task_record.h)

// Fanout list heads: an index into the dependency pool, or one of these.
constexpr uint32_t kListEmpty = 0xFFFFFFFEu;
constexpr uint32_t kListClosed = 0xFFFFFFFFu;  // the producer finished: push no more

// The portable record (core/graph/task_record.h: payload, func_id, core_type, fanin_remaining,
// state, poisoned, core, dump; the orchestrator writes every field before the task is
// published -- the release in the publishing fanin decrement / queue push orders them for
// schedulers) plus what a graph growing on the device needs. fanin_remaining here: the
// orchestrator starts it at 1 (a guard), adds 1 per producer still running and drops the guard
// at publication; schedulers subtract 1 per finished producer; whoever takes it to 0 enqueues
// the task. payload.call_addr is the slot's call block (call_of); state is written by the
// orchestrator at publication, then by schedulers.
struct alignas(kCacheLine) TaskSlot : graph::TaskRecord {
  DispatchPayload mix_payload[2];  // orchestrator: a MIX task's two AIV parts (call blocks 1 and 2)
  int64_t id;                      // orchestrator
  // Treiber stack of consumers (dependency-pool indices). Orchestrator pushes with CAS
  // (release); the scheduler finishing the task swaps in kListClosed (acq_rel) and walks it.
  std::atomic<uint32_t> fanout_head;
  // The scheduler finishing the task stores id here (seq_cst) after walking its fanout list;
  // TmrPolicy::try_retire loads it (seq_cst) to advance last_task_alive with a seq_cst CAS.
  // seq_cst, not release/acquire: when t and t + 1 finish at once, one thread stores t + 1's
  // retired_id and then loads last_task_alive, while the other CASes last_task_alive to t + 1
  // and then loads that retired_id (store buffering). Only in a single total order does at
  // least one of them see the other's write, so retirement never stops at t + 1. The store
  // is also the release that orders the fanout walk before the slot's reuse: the load that
  // sees it precedes the CAS on last_task_alive, which the orchestrator reads (acquire)
  // before it refills the slot or reuses dependency entries.
  std::atomic<int64_t> retired_id;
  // Orchestrator: the dispatch predicate's element address and target (its comparison and
  // size are TaskRecord::pred_op / pred_size; unused while pred_op is 0).
  uint64_t pred_addr;
  int64_t pred_target;
};
static_assert(sizeof(TaskSlot) == 2 * kCacheLine, "two lines per slot");

// A slot's dispatch predicate (meaningful when pred_op is set).
inline DispatchPredicate predicate_of(const TaskSlot &t) {
  DispatchPredicate p;
  p.addr = t.pred_addr;
  p.target = t.pred_target;
  p.elem_size = t.pred_size;
  p.op = static_cast<PredicateOp>(t.pred_op);
  return p;
}

// The ready queues the runtime attaches, in the order of their cells in the kept block: one per
// task shape, the inline pool (tasks that take no core) and the sync-start tasks' pool.
constexpr uint32_t kReadyPools[] = {graph::kPoolCube, graph::kPoolVector, graph::kPoolMix, graph::kPoolInline,
                                    graph::kPoolGang};
constexpr int kNumReadyPools = 5;

struct DepEntry {  // orchestrator-written before the CAS that publishes it
  int64_t consumer;
  uint32_t next;
  uint32_t reserved;
};

struct KernelSlot {    // host-written
  uint64_t entry;      // 0 = no kernel with this func_id
  uint64_t signature;  // const pto_kernel_signature_t * (sim: valid in the AICPU program)
  uint32_t core_type;
  uint32_t abi;        // KernelAbi (core/descriptor_call.h): how its call block is laid out
};

using pto::SchedulerSlot;  // core/handshake.h

struct alignas(kCacheLine) Header {
  // --- Host-written before launch. ---
  uint32_t window;                                                 // power of two
  uint32_t block_dim, num_clusters, aicpu_threads, sched_threads;  // num_clusters: of the chip
  uint32_t aic_per_cluster, aiv_per_cluster;  // the chip's cluster layout (core/cluster_layout.h)
  uint64_t short_task_ticks;  // Device::short_task_ns() in ticks (core/core_pool.h)
  uint64_t pipeline_ticks;    // queue behind running kernels shorter than this (core/core_pool.h)
  uint64_t ready_hold_ticks;  // the orchestrator holds ready tasks at most this long (0: never)
  uint32_t max_args, dep_capacity, tensormap_entries, num_kernels, num_tensors, num_scalars;
  uint64_t call_stride;  // bytes per kernel-call block (room for a descriptor block when a kernel
                         // of the callable uses the descriptor ABI: core/descriptor_call.h)
  uint64_t slots_addr, calls_addr, deps_addr, kernels_addr, tensors_addr, scalars_addr;
  uint64_t handshakes_addr, sched_addr, heap_addr, heap_bytes, orch_entry;
  // Profiling (0 when off): TaskTrace[trace_capacity] by task id, EdgeTrace[edge_capacity].
  uint64_t trace_addr, edges_addr;
  uint64_t pmu_addr;       // enable_pmu: PmuTrace[trace_capacity] by task id, else 0
  uint64_t price_addr;     // profiling in sim timing mode: KernelPrice[trace_capacity] by task id, else 0
  uint64_t counters_addr;  // the run counters (core/run_counters.h), always
  uint64_t log_addr;       // the device's pto_device_log (pto/device_log.h)
  uint64_t dump_addr;      // enable_dump_tensor: the DumpRegion (core/tensor_dump.h), else 0
  uint64_t mix_addr;       // MixSync[block_dim] (core/mix_sync.h)
  uint32_t trace_capacity, edge_capacity;
  uint64_t gates_addr;   // pipeline_depth: PipelineGate[kPipelineGates] (core/graph/pipeline_gates.h), else 0
  ScheduleConfig sched;  // the lowered schedule primitives (pto/schedule_config.h)
  uint32_t task_limit;   // task_window as configured (window is it rounded up): overflow=error's capacity
  // Cube, vector and mix pools (core/graph/ready_queue_set.h), capacity `window` each;
  // pushers: orchestrator, schedulers.
  graph::ReadyQueueSet ready;

  // --- Orchestrator-written. ---
  alignas(kCacheLine) std::atomic<int64_t> next_task;  // published tasks (release)
  std::atomic<uint64_t> heap_top;                      // bytes ever allocated from the heap ring
  std::atomic<uint64_t> heap_tail;                     // bytes ever reclaimed (derived from last_task_alive)
  std::atomic<int32_t> orch_status;     // pto_status of the orchestration
  std::atomic<uint32_t> orch_stopped;   // it stopped submitting because a task had failed
  std::atomic<uint64_t> stalls[5];      // window, heap, dependency pool, TensorMap, tensor data (Stall)
  std::atomic<uint64_t> stall_ns[5];    // time spent waiting for each
  std::atomic<uint64_t> high_water[4];  // the most each held
  std::atomic<uint32_t> waiting_for;    // which of the four the orchestrator waits on now (+1)
  std::atomic<uint64_t> orch_ns;        // time spent in the orchestration function
  std::atomic<uint64_t> edges_count;    // profiling: edges recorded (may exceed edge_capacity)
  // batch_deps, written once at the end of the orchestration: batches flushed, TensorMap
  // look-ups skipped, accesses never filed (RunStats.batch_*).
  std::atomic<uint64_t> batch_stats[3];
  char orch_message[480];

  // --- Written once, at the end of the orchestration; read by every scheduler after each pass
  //     (done()): a line of its own, so those reads hit while next_task's line moves. ---
  alignas(kCacheLine) std::atomic<uint32_t> orch_done;  // next_task is final, orch_status/message valid

  // --- Scheduler-written at each retirement (both on the line one retirement moves anyway);
  //     the orchestrator reads last_task_alive once per submit. ---
  alignas(kCacheLine) std::atomic<int64_t> last_task_alive;  // oldest unfinished task (CAS)
  std::atomic<int64_t> finished;                             // tasks done, failed or skipped
  // --- Scheduler-written on a failure (read by the orchestrator at every submit: it stays
  //     shared while nothing fails) and when a scheduler ends (its counts of tasks run). ---
  alignas(kCacheLine) std::atomic<int64_t> failed_task;  // first failed task, -1 if none (CAS)
  std::atomic<int32_t> failed_status;
  std::atomic<uint32_t> failed_func;
  std::atomic<uint64_t> run_by_type[PTO_TASK_SHAPE_COUNT];  // tasks actually run: AIC, AIV, MIX

  // --- The orchestrator's wait: it sets orch_wake_at (seq_cst) to the last_task_alive it needs
  //     and waits on orch_bell; schedulers ring the bell only when retirement reaches that
  //     value, so a full window costs one wake-up per batch of retirements, not one per task.
  //     INT64_MAX while the orchestrator is not waiting. ---
  alignas(kCacheLine) Doorbell orch_bell;
  std::atomic<int64_t> orch_wake_at;
  // --- Host-written during the run (time-out): stop submitting and dispatching, drain. ---
  alignas(kCacheLine) std::atomic<uint32_t> abort;
};

inline TaskSlot *slots_of(const Header *h) {
  return reinterpret_cast<TaskSlot *>(h->slots_addr);
}
inline TaskSlot &slot_of(const Header *h, int64_t id) {
  return slots_of(h)[graph::window_slot(id, h->window)];
}
// Three kernel-call blocks per slot: part 0 for every task, parts 1 and 2 for a MIX task's AIV cores.
inline pto_kernel_call *call_of(const Header *h, int64_t id, uint32_t part = 0) {
  return reinterpret_cast<pto_kernel_call *>(
      h->calls_addr + (graph::window_slot(id, h->window) * 3 + part) * h->call_stride);
}
// The run's task window (core/graph/task_window.h) over last_task_alive.
inline graph::TaskWindow window_of(Header *h) {
  return graph::TaskWindow(h->window, h->task_limit, h->sched.window_overflow, &h->last_task_alive);
}
inline DepEntry *deps_of(const Header *h) {
  return reinterpret_cast<DepEntry *>(h->deps_addr);
}
inline const KernelSlot *kernels_of(const Header *h) {
  return reinterpret_cast<const KernelSlot *>(h->kernels_addr);
}
inline const TensorView *tensors_of(const Header *h) {
  return reinterpret_cast<const TensorView *>(h->tensors_addr);
}
inline const int64_t *scalars_of(const Header *h) {
  return reinterpret_cast<const int64_t *>(h->scalars_addr);
}
inline Handshake *handshakes_of(const Header *h) {
  return reinterpret_cast<Handshake *>(h->handshakes_addr);
}
inline SchedulerSlot *sched_of(const Header *h) {
  return reinterpret_cast<SchedulerSlot *>(h->sched_addr);
}

// What the orchestrator waits for: ring space (the first four, with capacities and high-water
// marks in RunStats), or the tasks using a view it reads or writes itself (wait_for_tasks_using).
enum Stall : uint32_t { kStallWindow = 0, kStallHeap = 1, kStallDeps = 2, kStallTensorMap = 3, kStallData = 4 };

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_LAYOUT_H
