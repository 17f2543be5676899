// src/runtime/tensormap_and_ringbuffer/aicpu/orchestrator.cpp — the orchestrator's run, scopes and
// submit_task: validate, wait for a window slot, fill the slot, find and wire the producers,
// publish. (Validation, waiting, dependencies, heap allocation and records: see orchestrator.h.)
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "back_pressure.h"
#include "core/check.h"
#include "core/mix_parts.h"
#include "core/profiling.h"
#include "core/schedule_messages.h"
#include "core/warm_up_program.h"
#include "orchestrator.h"
#include "pto_platform/doorbell.h"

namespace pto {
namespace tmr {
namespace {

// PTO_TMR_FULL_VALIDATION=1: the sim's AICPU program shares the host process's environment.
bool full_validation_requested() {
#if PTO_DCHECK_IS_ON
  return true;
#else
  const char *v = std::getenv("PTO_TMR_FULL_VALIDATION");
  return v && *v && std::strcmp(v, "0") != 0;
#endif
}

}  // namespace

DeviceOrchestrator::DeviceOrchestrator(Header *h, Scheduler *poller)
    : h_(h),
      poller_(poller),
      wait_bell_(poller ? &poller->bell() : &h->orch_bell),
      waker_(sched_of(h), h->sched_threads, h->sched_threads),
      window_(window_of(h)),
      tmap_(h->tensormap_entries),
      run_buffers_(tensors_of(h), h->num_tensors),
      full_validation_(full_validation_requested()),
      heap_(h->heap_bytes),
      hold_ticks_(h->ready_hold_ticks) {
  // Sizes in 64 bits, capped: a TensorMap that large could not be allocated in the first place.
  auto capped = [](uint64_t n) { return static_cast<uint32_t>(n < UINT32_MAX ? n : UINT32_MAX); };
  // batch_deps: a batch scan lists at most every entry of the batch before the list is compacted.
  const uint64_t batch_entries = uint64_t{h->sched.batch_deps} * std::max<uint32_t>(h->max_args, 1);
  const uint32_t producers = capped(uint64_t{h->window} + h->tensormap_entries + batch_entries);
  // Profiling: one look-up adds at most tensormap_entries edges, and after sorting out
  // duplicates at most two kinds per entry a look-up can meet remain (make_edge_room).
  const bool tracing = kProfilingBuilt && h->trace_addr != 0;
  const uint32_t edges = tracing ? capped(3 * (uint64_t{h->tensormap_entries} + batch_entries) + 64) : 0;
  const size_t p = arena_.reserve<int64_t>(producers), s = arena_.reserve<int64_t>(h->window),
               d = arena_.reserve<uint64_t>(h->window), e = arena_.reserve<graph::EdgeKind>(edges);
  arena_.allocate("orchestrator");
  producers_ = graph::IdList(arena_.at<int64_t>(p), producers);
  seen_ = arena_.at<int64_t>(s);
  dep_end_ = arena_.at<uint64_t>(d);
  edge_kinds_ = graph::EdgeKindList(arena_.at<graph::EdgeKind>(e), edges);
  memset(seen_, 0xFF, h->window * sizeof(int64_t));  // -1: no consumer listed the slot yet
  memset(dep_end_, 0, h->window * sizeof(uint64_t));
  if (h->sched.batch_deps != 0) batch_ = std::make_unique<DepBatch>(static_cast<uint32_t>(batch_entries));
}

void DeviceOrchestrator::fail(const char *message) {
  err_.orchestration_failed(message);
}

void DeviceOrchestrator::fail_with(pto_status code, const char *message) {
  err_.set(code == PTO_OK ? PTO_INTERNAL : code, message ? message : "(no message)");
}

TensorView DeviceOrchestrator::tensor(uint32_t i) const {
  return i < h_->num_tensors ? tensors_of(h_)[i] : TensorView{};
}

int64_t DeviceOrchestrator::scalar(uint32_t i) const {
  return i < h_->num_scalars ? scalars_of(h_)[i] : 0;
}

// Keeps the most a ring held (orchestrator-private maxima, published at the end of run()).
void DeviceOrchestrator::note_use(Stall ring, uint64_t used) {
  if (used > high_water_[ring]) high_water_[ring] = used;
}

inline TaskHandle DeviceOrchestrator::submit_checked(const int32_t funcs[3], uint32_t shape, const Arg *args,
                                                     uint32_t num_args, const TaskHandle *after,
                                                     uint32_t num_after, const Launch *launch) {
  const uint32_t func_id = mix_task_func(funcs);
  const int64_t id = next_id_;
  if (platform_timed_runs()) {  // timing mode: the AICPU's own time for this submit and its tensors
    uint32_t tensors = 0;
    for (uint32_t i = 0; i < num_args; ++i) tensors += args[i].kind != PTO_ARG_SCALAR ? 1 : 0;
    platform_device_work_timed(DeviceWork::kSubmit, tensors);
  }
  // task_window_overflow (docs/design/tensormap_runtime.md, "Task window overflow"): the window
  // decides (core/graph/task_window.h); this waits or reports.
  graph::TaskWindow::Admission a = window_.admit(id, live_);
  if (a.verdict == graph::TaskWindow::Verdict::kWait) a = window_.admit(id, refresh_live());
  if (a.verdict == graph::TaskWindow::Verdict::kReject) {
    error(PTO_CAPACITY_EXCEEDED, window_overflow_message("tensormap_and_ringbuffer", id, window_.limit()));
    return TaskHandle{};
  }
  if (a.verdict == graph::TaskWindow::Verdict::kWait &&
      !wait_until(
          kStallWindow, [&] { return window_.has_room(id, live_); }, a.wake_at)) {
    return {};
  }

  note_use(kStallWindow, window_.held_with(id, live_));

  // Fill the slot, every field: the host neither zeroes nor initialises slots, and a slot may
  // hold a task of an earlier run (retired_id equal to this very id among them). Nothing here
  // is visible to schedulers before publication below.
  TaskSlot &t = slot_of(h_, id);
  // A MIX task runs on a whole cluster; a dependency-only task on nothing.
  const uint32_t parts = shape == PTO_CORE_MIX ? 3 : shape == graph::kPoolInline ? 0 : 1;
  const KernelSlot *kernels = kernels_of(h_);
  // A core without a kernel in a mixed task returns at once (its cluster is still the task's).
  const auto idle = reinterpret_cast<uint64_t>(&idle_mix_part);
  const auto descriptor_abi = static_cast<uint32_t>(KernelAbi::kDescriptor);
  t.payload.call_addr = reinterpret_cast<uint64_t>(call_of(h_, id, 0));
  t.payload.kernel_addr =
      funcs[0] >= 0 ? kernels[funcs[0]].entry : idle;  // (unused by a dependency-only task)
  uint32_t descriptor_parts =
      funcs[0] >= 0 && kernels[funcs[0]].abi == descriptor_abi ? 1u : 0u;  // bit p: part p
  for (uint32_t p = 1; p < parts; ++p) {                                   // a MIX task's AIV parts
    DispatchPayload &m = t.mix_payload[p - 1];
    m.call_addr = reinterpret_cast<uint64_t>(call_of(h_, id, p));
    m.kernel_addr = funcs[p] >= 0 ? kernels[funcs[p]].entry : idle;
    if (funcs[p] >= 0 && kernels[funcs[p]].abi == descriptor_abi) descriptor_parts |= 1u << p;
  }
  t.retired_id.store(-1, std::memory_order_relaxed);
  t.id = id;
  t.func_id = func_id;
  t.core_type = static_cast<uint8_t>(shape);
  const uint32_t blocks = launch ? launch->block_num : 1;  // check_launch: 1 .. 65535, single-core shapes
  t.block_num = static_cast<uint16_t>(blocks);
  t.blocks_started.store(0, std::memory_order_relaxed);
  t.blocks_done.store(0, std::memory_order_relaxed);
  t.flags = launch && launch->sync_start ? graph::kTaskSyncStart : 0;
  t.timing_tag = graph::timing_tag_of(launch ? launch->timing_slot : -1);
  if (launch == nullptr || launch->predicate.op == PredicateOp::NONE) {
    t.pred_op = 0;
  } else {
    t.pred_op = static_cast<uint8_t>(launch->predicate.op);
    t.pred_size = launch->predicate.elem_size;
    t.pred_addr = launch->predicate.addr;
    t.pred_target = launch->predicate.target;
  }
  t.fanin_remaining.store(1, std::memory_order_relaxed);
  t.fanout_head.store(kListEmpty, std::memory_order_relaxed);
  t.poisoned.store(0, std::memory_order_relaxed);
  t.state.store(kPending, std::memory_order_relaxed);
  t.core.store(-1, std::memory_order_relaxed);
  t.dump = -1;
  t.stream = stream_;
  t.target = target_;
  t.next_deferred = -1;
  if (h_->dump_addr && parts != 0) select_for_dump(t, id, func_id, args, num_args);  // a kernel's tensors
  // The usual task (one core, argument-array ABI) has its call block's arguments written by the
  // look-up pass (find_producers): one pass over the arguments, not two.
  int64_t *walk_fills = parts == 1 && descriptor_parts == 0 ? call_of(h_, id, 0)->args : nullptr;
  for (uint32_t p = 0; p < parts; ++p) {
    pto_kernel_call *call = call_of(h_, id, p);
    call->status = 0;
    call->num_args = static_cast<uint16_t>(num_args);
    call->mix_part = static_cast<uint8_t>(p);
    call->is_mix = parts == 3;
    call->log = h_->log_addr;
    call->mix_sync = call->mix_ops = 0;  // MIX: the scheduler and the core fill them at dispatch
    if ((descriptor_parts & (1u << p)) || walk_fills) continue;  // written below
    fill_call_args(call->args, args, num_args);
  }
  if (descriptor_parts) write_descriptor_calls(id, args, num_args, descriptor_parts);

  if (!find_producers(args, num_args, after, num_after, id, func_id, shape, walk_fills)) return TaskHandle{};
  if (!wire_producers(t, id, func_id)) return TaskHandle{};

  // A task already failed: its dependents must not run, and whether this task is one of them
  // cannot be told for producers that finished before they were looked at. Stop submitting;
  // run() reports the failure. (The failure is recorded before the failed task's fanout list
  // closes and before it retires, so it is visible here whenever it could matter.)
  if (h_->failed_task.load(std::memory_order_acquire) >= 0) {
    stopped_ = true;
    return TaskHandle{};
  }
  // Publish: count the task first, so it cannot finish before it is counted; then drop the guard.
  // next_task is a release store: whoever takes the task (through fanin or the ready queue) sees
  // it counted, and done() reads it only after orch_done, which is stored after the last one.
  // The guard: when fanin is down to it (no producer wired, or all of them finished already:
  // none will touch it again), nobody else writes fanin and the acquire load sees what they
  // wrote (poisoned), so the locked decrement — a full barrier that waits for every store of
  // the submit — is needed only while producers are still running.
  ++next_id_;
  h_->next_task.store(next_id_, std::memory_order_release);
  bool ready_now;
  if (t.fanin_remaining.load(std::memory_order_acquire) == 1) {
    t.fanin_remaining.store(0, std::memory_order_relaxed);
    ready_now = true;
  } else {
    ready_now = t.fanin_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  if (ready_now) {
    if (poller_) {
      Scheduler::make_ready(h_, id);  // with one AICPU thread, the poll below dispatches it
    } else {
      hold_ready(t, id);
    }
  }
  if (poller_) poller_->poll();
  return TaskHandle{id};
}

// Tasks ready at submit go to the schedulers in batches: one CAS on a queue's tail and one
// wake-up for up to kReadyBatch tasks, instead of one of each per task (each moves a cache line
// the schedulers use to the orchestrator's CPU and back). A batch goes out when it is full, when
// its oldest task has waited hold_ticks_ (graph::kReadyHoldNs; checked at each submit), before the
// orchestrator waits for anything, and when the orchestration returns.
inline void DeviceOrchestrator::hold_ready(TaskSlot &t, int64_t id) {
  t.state.store(kReady, std::memory_order_relaxed);
  const uint32_t pool = graph::ready_pool(t, [&t] { return predicate_of(t); });
  const uint64_t now = platform_ticks();
  if (held_total_ == 0) held_since_ = now;
  held_[pool][held_n_[pool]++] = static_cast<uint64_t>(id);
  ++held_total_;
  if (held_n_[pool] == kReadyBatch || now - held_since_ >= hold_ticks_) flush_ready();
}

void DeviceOrchestrator::flush_ready() {
  if (held_total_ == 0) return;
  for (uint32_t pool = 0; pool < graph::kPoolCount; ++pool) {
    if (held_n_[pool] == 0) continue;
    // Never full: the queue holds a window of tasks, and these are in the window.
    const bool pushed = h_->ready.push_many(pool, held_[pool], held_n_[pool]);
    PTO_CHECK(pushed, "ready queue full");
    held_n_[pool] = 0;
  }
  held_total_ = 0;
  waker_.wake_one();
}

void DeviceOrchestrator::progress() {
  flush_ready();
  if (poller_) poller_->poll();
  // The orchestration polls memory a kernel writes: on the sim's pool let the cores (and the
  // schedulers) run first, or this fiber would keep its worker while it waits for them.
  platform_fiber_yield();
}

// No earlier error, and the run not aborted (which is recorded as the error).
inline bool DeviceOrchestrator::may_submit() {
  if (!ok()) return false;
  if (h_->abort.load(std::memory_order_acquire) == 0) return true;
  error(PTO_RUN_TIMEOUT, "the run was aborted while the orchestration was submitting");
  return false;
}

TaskHandle DeviceOrchestrator::submit_task(uint32_t func_id, pto_core_type core_type, const Arg *args,
                                           uint32_t num_args, const TaskHandle *after, uint32_t num_after,
                                           const Launch *launch) {
  if (!may_submit()) return TaskHandle{};
  if (!check_task(func_id, core_type, args, num_args, after, num_after)) return TaskHandle{};
  const auto f = static_cast<int32_t>(func_id);
  const int32_t funcs[3] = {f, core_type == PTO_CORE_MIX ? f : -1, core_type == PTO_CORE_MIX ? f : -1};
  if (launch && !launch->is_default() && !check_launch(*launch, funcs, static_cast<uint32_t>(core_type)))
    return TaskHandle{};
  return submit_checked(funcs, static_cast<uint32_t>(core_type), args, num_args, after, num_after, launch);
}

TaskHandle DeviceOrchestrator::submit_mixed(const int32_t funcs[3], const Arg *args, uint32_t num_args,
                                            const TaskHandle *after, uint32_t num_after,
                                            const Launch *launch) {
  if (!may_submit()) return TaskHandle{};
  const std::string fault = mix_funcs_fault(next_id_, funcs);
  if (!fault.empty()) {
    error(PTO_INVALID_ARGUMENT, fault);
    return TaskHandle{};
  }
  for (uint32_t p = 0; p < kMixParts; ++p) {
    if (funcs[p] >= 0 &&
        !check_task(static_cast<uint32_t>(funcs[p]), mix_part_core_type(p), args, num_args, after, num_after))
      return TaskHandle{};
  }
  if (launch && !launch->is_default() && !check_launch(*launch, funcs, PTO_CORE_MIX)) return TaskHandle{};
  return submit_checked(funcs, PTO_CORE_MIX, args, num_args, after, num_after, launch);
}

TaskHandle DeviceOrchestrator::submit_dummy(const Arg *args, uint32_t num_args, const TaskHandle *after,
                                            uint32_t num_after) {
  if (!may_submit()) return TaskHandle{};
  if (!check_dummy(args, num_args, after, num_after)) return TaskHandle{};
  const int32_t none[3] = {-1, -1, -1};
  return submit_checked(none, graph::kPoolInline, args, num_args, after, num_after, nullptr);
}

void DeviceOrchestrator::write_descriptor_calls(int64_t id, const Arg *args, uint32_t n,
                                                uint32_t parts_mask) {
  // The descriptors live in the first descriptor part's block; the other parts point there.
  const uint32_t first = static_cast<uint32_t>(__builtin_ctz(parts_mask));
  ChipTensor *desc = descriptors_of(call_of(h_, id, first));
  int64_t scalars[PTO_ABI_MAX_SCALAR_ARGS];
  uint32_t tensors = 0, num_scalars = 0;  // check_task: tensors first, within the ABI's counts
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind == PTO_ARG_SCALAR) {
      scalars[num_scalars++] = args[i].scalar;
      continue;
    }
    const TensorView &v = args[i].view;
    fill_descriptor(&desc[tensors++], v.buffer, v.buffer_bytes, v.offset, v.dtype, v.ndim, v.shape,
                    v.strides);
  }
  const auto desc_dev = reinterpret_cast<uint64_t>(desc);
  for (uint32_t p = 0; p < 3; ++p) {
    if (!(parts_mask & (1u << p))) continue;
    pto_kernel_call *call = call_of(h_, id, p);
    finish_descriptor_call(call, reinterpret_cast<uint64_t>(call), desc_dev, tensors, scalars, num_scalars,
                           mix_part_lane(p));
  }
}

void DeviceOrchestrator::set_stream(uint32_t stream, uint32_t target) {
  if (!ok()) return;
  const std::string bad = stream_error(stream, target);
  if (!bad.empty()) {
    error(PTO_INVALID_ARGUMENT, bad);
    return;
  }
  if (batch_ && stream != stream_ && !flush_batch()) return;  // batch_deps: a stream change ends a batch
  stream_ = static_cast<uint16_t>(stream);
  target_ = static_cast<uint16_t>(target);
}

void DeviceOrchestrator::scope_begin(bool manual) {
  if (!ok()) return;
  if (batch_ && manual && !flush_batch()) return;  // inside a manual scope nothing is batched
  scopes_.push_back(ScopeRec{heap_.next_index(), manual || scopes_.back().manual});
}

void DeviceOrchestrator::scope_end() {
  if (!ok()) return;
  if (scopes_.size() <= 1) {
    error(PTO_INVALID_ARGUMENT, "scope_end without a matching scope_begin");
    return;
  }
  if (batch_ && !flush_batch()) return;
  heap_.close_scope(scopes_.back().first_alloc, next_id_);
  scopes_.pop_back();
}

void DeviceOrchestrator::run() {
  scopes_.push_back(ScopeRec{0, false});  // the root scope: the whole orchestration
  using Entry = void (*)(Orchestrator &);
  const uint64_t t0 = platform_device_now_ns();  // virtual in a timed run
  if (h_->orch_entry != 0) {
    reinterpret_cast<Entry>(h_->orch_entry)(*this);
  } else {
    warm_up_program(*this);  // set_device's warm-up run (DeviceRunner::warm_up)
  }
  flush_ready();
  h_->orch_ns.store(platform_device_now_ns() - t0, std::memory_order_relaxed);
  if (err_.ok() && scopes_.size() != 1) {
    error(PTO_INVALID_ARGUMENT,
          std::to_string(scopes_.size() - 1) +
              " scope(s) still open when the orchestration returned; end every scope_begin "
              "with scope_end (or use pto::Scope)");
  }
  h_->orch_status.store(err_.code, std::memory_order_relaxed);
  for (int r = 0; r < 4; ++r) h_->high_water[r].store(high_water_[r], std::memory_order_relaxed);
  h_->orch_stopped.store(stopped_ ? 1 : 0, std::memory_order_relaxed);
  if (batch_) {
    // The last batch is not filed: no submit follows to look it up (its deferred accesses count
    // as never filed).
    h_->batch_stats[0].store(batch_flushes_, std::memory_order_relaxed);
    h_->batch_stats[1].store(batch_local_hits_, std::memory_order_relaxed);
    h_->batch_stats[2].store(batch_->unfiled() + batch_->deferred(), std::memory_order_relaxed);
  }
  const size_t n = std::min(err_.message.size(), sizeof(h_->orch_message) - 1);
  memcpy(h_->orch_message, err_.message.data(), n);
  h_->orch_message[n] = '\0';
  h_->orch_done.store(1, std::memory_order_seq_cst);  // see Scheduler::done
  waker_.wake_all();                                  // not a scheduler itself: rings every one
}

}  // namespace tmr
}  // namespace pto
