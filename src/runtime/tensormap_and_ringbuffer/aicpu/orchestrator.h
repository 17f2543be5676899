// src/runtime/tensormap_and_ringbuffer/aicpu/orchestrator.h — the device-side orchestrator (one AICPU
// thread).
//
// Implements pto::Orchestrator for the orchestration function: validates each task, waits for
// ring space (back-pressure), infers producers through the TensorMap (core/graph/tensor_map.h),
// wires the task into their fanout lists and publishes it. It owns three rings whose space
// comes back as the schedulers retire tasks (last_task_alive): the task window
// (core/graph/task_window.h: slots and the overflow policy), the dependency-entry pool and
// the heap ring. A request that could never be satisfied fails at once (RING_CAPACITY)
// instead of waiting forever.
//
// One concept per file: orchestrator.cpp (run, scopes, submit_task: fill the slot, publish),
// submit_validation.cpp (what a task may ask for), back_pressure.h (waiting for ring space),
// dependencies.cpp (TensorMap look-ups, the dependency pool, wiring into fanout lists),
// heap_alloc.cpp (alloc_tensor on the heap ring), task_records.cpp (profiling trace and tensor
// dump selection). See docs/design/tensormap_runtime.md, "Submitting a task".
#ifndef PTO_TMR_ORCHESTRATOR_H
#define PTO_TMR_ORCHESTRATOR_H

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "buffer_index.h"
#include "core/descriptor_call.h"
#include "core/first_error.h"
#include "core/graph/arena.h"
#include "core/graph/id_list.h"
#include "core/graph/task_window.h"
#include "core/graph/tensor_map.h"
#include "dep_batch.h"
#include "heap_ring.h"
#include "pto/error.h"
#include "pto/orchestration.h"
#include "tmr_layout.h"
#include "tmr_scheduler.h"

namespace pto {
namespace tmr {

class DeviceOrchestrator final : public Orchestrator {
 public:
  // `poller`: when the orchestrator thread also schedules (one AICPU thread), the scheduler it
  // drives between submissions and while it waits; otherwise null.
  DeviceOrchestrator(Header *h, Scheduler *poller);

  // Runs the orchestration function, closes the root scope and publishes the outcome.
  void run();

  uint32_t num_tensors() const override { return h_->num_tensors; }
  uint32_t num_scalars() const override { return h_->num_scalars; }
  TensorView tensor(uint32_t i) const override;
  int64_t scalar(uint32_t i) const override;
  TaskHandle submit_task(uint32_t func_id, pto_core_type core_type, const Arg *args, uint32_t num_args,
                         const TaskHandle *after, uint32_t num_after, const Launch *launch) override;
  TaskHandle submit_mixed(const int32_t funcs[3], const Arg *args, uint32_t num_args, const TaskHandle *after,
                          uint32_t num_after, const Launch *launch) override;
  TaskHandle submit_dummy(const Arg *args, uint32_t num_args, const TaskHandle *after,
                          uint32_t num_after) override;
  TensorView alloc_tensor(pto_dtype dtype, uint32_t ndim, const int64_t *shape) override;
  void set_stream(uint32_t stream, uint32_t target) override;
  void scope_begin(bool manual) override;
  void scope_end() override;
  void fail(const char *message) override;
  void fail_with(pto_status code, const char *message) override;
  bool ok() const override { return err_.ok() && !stopped_; }
  const pto_device_log *log() const override {
    return reinterpret_cast<const pto_device_log *>(h_->log_addr);
  }
  bool wait_for_tasks_using(const TensorView &v, bool write) override;
  uint32_t num_clusters() const override { return h_->block_dim; }
  void progress() override;

 private:
  struct ScopeRec {
    uint64_t first_alloc;  // absolute index of the scope's first allocation
    bool manual;
  };

  static std::string task_name(int64_t id, uint32_t func_id) {  // for messages only
    return "task " + std::to_string(id) + " (kernel " + std::to_string(func_id) + ")";
  }
  void error(pto_status code, std::string message) { err_.set(code, std::move(message)); }
  // last_task_alive as last read: the schedulers write that cache line at every retirement, so
  // a submit reads it once — just before it decides which producers are still running, where
  // a stale value costs most (each finished producer taken for a running one costs a failed
  // push onto its closed fanout list) — and a wait reads it before each check. An older value
  // is safe everywhere else it is used (a slot, a TensorMap entry or dependency entries are
  // then kept a little longer).
  int64_t live_from() const { return live_; }
  int64_t refresh_live() { return live_ = window_.live_from(); }
  // back_pressure.h: waits until ready(); asks to be woken once last_task_alive reaches
  // wake_at (default: on any retirement).
  template <typename Ready>
  bool wait_until(Stall what, Ready ready, int64_t wake_at = 0);
  // submit_validation.cpp
  bool check_task(uint32_t func_id, pto_core_type core_type, const Arg *args, uint32_t n,
                  const TaskHandle *after, uint32_t num_after);
  [[gnu::cold, gnu::noinline]] bool report_task(uint32_t func_id, pto_core_type core_type, const Arg *args,
                                                uint32_t n, const TaskHandle *after, uint32_t num_after);
  bool view_ok(const TensorView &v);
  // A dependency-only task's arguments (submit_dummy), every check with its message.
  bool check_dummy(const Arg *args, uint32_t n, const TaskHandle *after, uint32_t num_after);
  // A non-default Launch: what this runtime runs of it (false: the error is recorded).
  // funcs: the task's kernel per part (-1: none), as submit_checked takes them; after
  // check_task accepted each.
  bool check_launch(const Launch &launch, const int32_t funcs[3], uint32_t shape);
  [[gnu::noinline]] bool view_ok_checked(const TensorView &v, uint32_t esize);  // large or negative values
  bool may_submit();
  static DescriptorFault descriptor_arg_fault(const Arg *args, uint32_t n, uint32_t *at = nullptr);
  // A descriptor-ABI task's call blocks (core/descriptor_call.h), after check_task accepted it.
  void write_descriptor_calls(int64_t id, const Arg *args, uint32_t n, uint32_t parts_mask);
  // submit_task / submit_mixed / submit_dummy after their checks: part p of the task runs
  // kernel funcs[p] (-1: nothing, for a mixed task's idle core); `shape` is its pool (AIC, AIV,
  // MIX, or graph::kPoolInline for a dependency-only task, which has no parts); `launch` (null:
  // the defaults) was checked by check_launch.
  // Inlined into all: the single-core submit is the hot path and pays no call for the split.
  [[gnu::always_inline]] TaskHandle submit_checked(const int32_t funcs[3], uint32_t shape, const Arg *args,
                                                   uint32_t num_args, const TaskHandle *after,
                                                   uint32_t num_after, const Launch *launch);
  bool check_view(const TensorView &v, int64_t id, uint32_t func_id, uint32_t index);  // reports
  bool buffer_known(const TensorView &v);
  [[gnu::noinline]] bool buffer_looked_up(const TensorView &v);  // buffer_known past the last run tensor
  void check_by_scan(const TensorView &v, bool known) const;
  // dependencies.cpp: the task's producers (looked up and recorded, plus the explicit ones),
  // live and distinct, into producers_; then room in the dependency pool and the wiring.
  // `call_args` (null: already written): the call block's argument array, filled by the same pass.
  bool find_producers(const Arg *args, uint32_t n, const TaskHandle *after, uint32_t num_after, int64_t id,
                      uint32_t func_id, uint32_t shape, int64_t *call_args);
  // A kernel call's arguments: a tensor's device address (view_region.h: call_arg), a scalar as is.
  static void fill_call_args(int64_t *call_args, const Arg *args, uint32_t n);
  bool wire_producers(TaskSlot &task, int64_t id, uint32_t func_id);
  // Keeps producers_[from, size) that are live and not listed yet (stamping seen_), drops the rest.
  void distinct_live_producers(int64_t id);
  // Profiling (task_records.cpp): room in edge_kinds_ (duplicates sorted out, else flushed);
  // the task's edges written to the trace.
  void make_edge_room(uint32_t need, int64_t id);
  void flush_edges(int64_t id);
  void wire(TaskSlot &task, int64_t id);
  // enable_dump_tensor: picks the task for dumping (per the run's selection) and describes its
  // tensors: inputs copied before it runs, outputs after.
  void select_for_dump(TaskSlot &task, int64_t id, uint32_t func_id, const Arg *args, uint32_t n);
  bool record_accesses(const Arg *args, uint32_t n, int64_t id, bool manual, bool tracing,
                       int64_t *call_args);
  // batch_deps (dependencies.cpp): the accesses looked up in the batch first, then (unless a
  // batch write covers them) in the TensorMap; flush_batch files the deferred ones.
  bool record_batched(const Arg *args, uint32_t n, int64_t id, bool tracing);
  bool flush_batch();
  uint64_t dep_tail() const;
  void reclaim_heap();
  void record_trace(int64_t id, uint32_t func_id, uint32_t shape);
  void note_use(Stall ring, uint64_t used);
  // Tasks ready at submit, held for the schedulers in batches (orchestrator.cpp).
  void hold_ready(TaskSlot &t, int64_t id);
  void flush_ready();

  Header *h_;
  Scheduler *poller_;
  Doorbell *wait_bell_;
  PeerWaker waker_;       // rings one scheduler per task made ready here
  FirstError err_;        // the orchestration's first error
  bool stopped_ = false;  // a task failed: submit nothing more (not an orchestration error)
  int64_t next_id_ = 0;
  int64_t live_ = 0;                          // live_from(): last_task_alive at the last refresh_live()
  uint16_t stream_ = 0, target_ = kNoTarget;  // set_stream: what the next tasks carry
  graph::TaskWindow window_;
  graph::TensorMap tmap_;
  RunBuffers run_buffers_;
  bool have_last_run_buffer_ = false;
  std::pair<uint64_t, uint64_t> last_run_buffer_{0, 0};  // the run tensor buffer_known() found last
  // Validation mode (debug builds, or PTO_TMR_FULL_VALIDATION=1 in the environment of the sim's
  // AICPU program): every view is also checked by scanning all run tensors and live heap
  // buffers, and the indexed answer must agree (PTO_CHECK).
  bool full_validation_;
  // One allocation at construction for the per-slot arrays and the producer lists (below).
  graph::Arena arena_;
  // The task's producers: [0, producers_kept_) distinct and live (stamped in seen_), the rest
  // as look-ups returned them. Capacity window + tensormap_entries: after a compaction at most
  // window - 1 remain, and one look-up adds at most used() <= tensormap_entries.
  graph::IdList producers_;
  uint32_t producers_kept_ = 0;
  int64_t *seen_;                   // per slot: the last task that listed it as a producer
  graph::EdgeKindList edge_kinds_;  // profiling only (else capacity 0): (producer, kind, source)
  uint64_t *dep_end_;               // per slot: dependency-pool head after wiring its task
  uint64_t dep_head_ = 0;           // dependency entries ever handed out
  uint32_t dep_slot_ = 0;           // dep_head_ % dep_capacity: the next entry's index
  HeapRing heap_;
  // batch_deps (null when off: the default path tests this pointer once per submit). Flushed at
  // a kernel change, a stream change, scope_begin(manual) and scope_end, after batch_deps
  // submits, and before the orchestrator waits for any ring (back_pressure.h).
  std::unique_ptr<DepBatch> batch_;
  uint32_t batch_tasks_ = 0;       // submits in the current batch
  uint32_t batch_func_ = 0;        // their kernel
  bool flushing_ = false;          // flush_batch is filing (its own waits do not flush again)
  uint64_t batch_flushes_ = 0;     // RunStats.batch_flushes
  uint64_t batch_local_hits_ = 0;  // RunStats.batch_local_hits
  // Ready tasks not yet handed to the schedulers, by pool (hold_ready): at most kReadyBatch per
  // pool, for at most hold_ticks_ (~1 us) after the first.
  static constexpr uint32_t kReadyBatch = 8;
  uint64_t held_[graph::kPoolCount][kReadyBatch];
  uint32_t held_n_[graph::kPoolCount] = {};
  uint32_t held_total_ = 0;
  uint64_t held_since_ = 0;  // platform_ticks() when the oldest held task was made ready
  uint64_t hold_ticks_;
  std::vector<ScopeRec> scopes_;
  uint64_t high_water_[4] = {};  // per Stall ring
};

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_ORCHESTRATOR_H
