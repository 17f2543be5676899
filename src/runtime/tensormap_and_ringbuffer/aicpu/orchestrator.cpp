// src/runtime/tensormap_and_ringbuffer/aicpu/orchestrator.cpp — submit, scopes, back-pressure (the heap
// ring's arithmetic is heap_ring.h).
#include "orchestrator.h"

#include "core/align.h"
#include "core/profiling.h"

#include <algorithm>
#include <cstring>

namespace pto {
namespace tmr {
namespace {

const char *const kStallNames[] = {"task window", "heap ring", "dependency pool", "TensorMap"};

std::string task_name(int64_t id, uint32_t func_id) {
  return "task " + std::to_string(id) + " (kernel " + std::to_string(func_id) + ")";
}

}  // namespace

DeviceOrchestrator::DeviceOrchestrator(Header *h, Scheduler *poller)
    : h_(h),
      poller_(poller),
      wait_bell_(poller ? &poller->bell() : &h->orch_bell),
      waker_(sched_of(h), h->sched_threads, h->sched_threads),
      tmap_(h->tensormap_entries),
      dep_end_(h->window, 0),
      heap_(h->heap_bytes) {
  producers_.reserve(64);
}

void DeviceOrchestrator::error(pto_status code, std::string message) {
  if (status_ != PTO_OK) return;
  status_ = code;
  message_ = std::move(message);
}

void DeviceOrchestrator::fail(const char *message) {
  error(PTO_ORCHESTRATION_FAILED,
        std::string("orchestration failed: ") + (message ? message : "(no message)"));
}

TensorView DeviceOrchestrator::tensor(uint32_t i) const {
  return i < h_->num_tensors ? tensors_of(h_)[i] : TensorView{};
}

int64_t DeviceOrchestrator::scalar(uint32_t i) const {
  return i < h_->num_scalars ? scalars_of(h_)[i] : 0;
}

// Back-pressure: re-checks `ready` each time the schedulers retire something (or, when this
// thread schedules too, after each scheduling pass). Gives up only when the run is aborted.
template <typename Ready>
bool DeviceOrchestrator::wait_until(Stall what, Ready ready, int64_t wake_at) {
  if (ready()) return true;
  const uint64_t t0 = platform_now_ns();
  h_->stalls[what].fetch_add(1, std::memory_order_relaxed);
  h_->waiting_for.store(what + 1, std::memory_order_relaxed);
  h_->orch_wake_at.store(wake_at, std::memory_order_seq_cst);
  bool ok = true;
  for (;;) {
    const uint32_t seen = doorbell_prepare(*wait_bell_);
    const bool progress = poller_ && poller_->poll();
    if (ready()) break;
    if (h_->abort.load(std::memory_order_acquire) != 0) {
      error(PTO_RUN_TIMEOUT,
            std::string("the run was aborted while the orchestrator waited for the ") + kStallNames[what]);
      ok = false;
      break;
    }
    if (!progress) doorbell_wait(*wait_bell_, seen);
  }
  h_->orch_wake_at.store(INT64_MAX, std::memory_order_relaxed);  // not waiting: schedulers stop ringing
  h_->waiting_for.store(0, std::memory_order_relaxed);
  h_->stall_ns[what].fetch_add(platform_now_ns() - t0, std::memory_order_relaxed);
  return ok;
}

// Keeps the most a ring held (orchestrator-private maxima, published at the end of run()).
void DeviceOrchestrator::note_use(Stall ring, uint64_t used) {
  if (used > high_water_[ring]) high_water_[ring] = used;
}

// Messages are built only on failure: this runs for every tensor argument of every submit.
bool DeviceOrchestrator::check_view(const TensorView &v, int64_t id, uint32_t func_id, uint32_t index) {
  auto who = [&] { return task_name(id, func_id) + ": argument " + std::to_string(index); };
  const uint32_t esize = pto_dtype_size(v.dtype);
  if (esize == 0) return error(PTO_BAD_TENSOR, who() + " has no valid dtype"), false;
  if (v.ndim == 0 || v.ndim > static_cast<uint32_t>(kMaxViewDims)) {
    return error(PTO_BAD_TENSOR,
                 who() + " has " + std::to_string(v.ndim) + " dimensions (1..8 are supported)"),
           false;
  }
  int64_t last = 0;
  bool empty = false;
  for (uint32_t d = 0; d < v.ndim; ++d) {
    if (v.shape[d] < 0 || v.strides[d] < 0) {
      return error(PTO_BAD_TENSOR,
                   who() + " has a negative extent or stride in dimension " + std::to_string(d)),
             false;
    }
    empty |= v.shape[d] == 0;
    if (v.shape[d] > 0) last += (v.shape[d] - 1) * v.strides[d];
  }
  // The buffer must be one the runtime handed out, whole: a run tensor or a live heap-ring
  // allocation. (The TensorMap keys on the buffer, so a made-up one would hide overlaps.)
  bool known = false;
  for (uint32_t i = 0; !known && i < h_->num_tensors; ++i) {
    known = tensors_of(h_)[i].buffer == v.buffer && tensors_of(h_)[i].buffer_bytes == v.buffer_bytes;
  }
  known = known || heap_.holds(v.buffer - h_->heap_addr, v.buffer_bytes);
  if (!known) {
    return error(PTO_BAD_TENSOR, who() + " does not view a run tensor or an alloc_tensor buffer"), false;
  }
  if (!empty && (v.offset < 0 || static_cast<uint64_t>((v.offset + last + 1) * esize) > v.buffer_bytes)) {
    return error(PTO_BAD_TENSOR, who() + " reaches outside its buffer of " + std::to_string(v.buffer_bytes) +
                                     " bytes (offset " + std::to_string(v.offset) + ", last element " +
                                     std::to_string(v.offset + last) + ")"),
           false;
  }
  return true;
}

bool DeviceOrchestrator::check_task(uint32_t func_id, pto_core_type core_type, const Arg *args, uint32_t n,
                                    const TaskHandle *after, uint32_t num_after) {
  const int64_t id = next_id_;
  auto who = [&] { return task_name(id, func_id); };  // built only for a message
  const KernelSlot *k = func_id < h_->num_kernels ? &kernels_of(h_)[func_id] : nullptr;
  if (!k || k->entry == 0) {
    std::string known;
    for (uint32_t i = 0; i < h_->num_kernels; ++i) {
      if (kernels_of(h_)[i].entry) known += (known.empty() ? "" : ", ") + std::to_string(i);
    }
    return error(PTO_UNKNOWN_KERNEL, who() + ": the callable defines no kernel " + std::to_string(func_id) +
                                         " (defined: " + (known.empty() ? "none" : known) + ")"),
           false;
  }
  if (core_type == PTO_CORE_MIX && h_->block_dim == 0) {
    return error(PTO_INVALID_ARGUMENT, who() + ": a MIX task needs at least one cluster"), false;
  }
  if (core_type != static_cast<pto_core_type>(k->core_type)) {
    return error(PTO_INVALID_ARGUMENT, who() + " asks for a " + pto_core_type_name(core_type) +
                                           " core but the kernel was registered for " +
                                           pto_core_type_name(static_cast<pto_core_type>(k->core_type))),
           false;
  }
  if (n > h_->max_args) {
    return error(PTO_TOO_MANY_ARGS, who() + " has " + std::to_string(n) +
                                        " arguments; max_args_per_task is " + std::to_string(h_->max_args)),
           false;
  }
  if (n > 0 && !args) return error(PTO_INVALID_ARGUMENT, who() + ": args is null"), false;
  uint32_t tensors = 0;
  for (uint32_t i = 0; i < n; ++i) {
    auto arg = [&] { return who() + ": argument " + std::to_string(i); };
    if (args[i].kind == PTO_ARG_SCALAR) continue;
    if (args[i].kind != PTO_ARG_TENSOR)
      return error(PTO_INVALID_ARGUMENT, arg() + " has an unknown kind"), false;
    if (static_cast<uint32_t>(args[i].access) > static_cast<uint32_t>(Access::NO_DEP)) {
      return error(PTO_INVALID_ARGUMENT, arg() + " has an unknown access mode"), false;
    }
    if (!check_view(args[i].view, id, func_id, i)) return false;
    ++tensors;
  }
  if (tensors > h_->tensormap_entries) {
    return error(PTO_RING_CAPACITY,
                 who() + " has " + std::to_string(tensors) + " tensor arguments but the TensorMap holds " +
                     std::to_string(h_->tensormap_entries) + " entries; raise tensormap_entries"),
           false;
  }
  const auto *sig = reinterpret_cast<const pto_kernel_signature_t *>(k->signature);
  if (sig) {
    if (sig->num_args != n) {
      return error(PTO_INVALID_ARGUMENT, who() + " has " + std::to_string(n) +
                                             " arguments but the kernel's signature declares " +
                                             std::to_string(sig->num_args)),
             false;
    }
    for (uint32_t i = 0; i < n; ++i) {
      const pto_arg_spec &s = sig->args[i];
      auto arg = [&] { return who() + ": argument " + std::to_string(i); };
      if (s.kind != static_cast<uint32_t>(args[i].kind)) {
        return error(PTO_INVALID_ARGUMENT,
                     arg() + " does not match the kernel's signature (tensor vs scalar)"),
               false;
      }
      if (s.kind != PTO_ARG_TENSOR) continue;
      const TensorView &v = args[i].view;
      if (s.dtype != PTO_DTYPE_ANY && s.dtype != static_cast<uint32_t>(v.dtype)) {
        return error(PTO_BAD_TENSOR, arg() + " has dtype " + pto_dtype_name(v.dtype) +
                                         " but the kernel takes " +
                                         pto_dtype_name(static_cast<pto_dtype>(s.dtype))),
               false;
      }
      if (s.min_elems_arg >= 0) {
        const auto ref = static_cast<uint32_t>(s.min_elems_arg);
        if (ref >= n || args[ref].kind != PTO_ARG_SCALAR || args[ref].scalar < 0 ||
            args[ref].scalar > v.numel()) {
          return error(PTO_BAD_TENSOR, arg() + " holds " + std::to_string(v.numel()) +
                                           " elements, fewer than the kernel uses (argument " +
                                           std::to_string(ref) + ")"),
                 false;
        }
      }
    }
  }
  for (uint32_t i = 0; i < num_after; ++i) {
    if (!after || after[i].id < 0 || after[i].id >= id) {
      return error(PTO_INVALID_ARGUMENT,
                   who() + ": dependency " + std::to_string(i) +
                       " is not a task submitted before it (use a handle submit_task returned)"),
             false;
    }
  }
  return true;
}

uint64_t DeviceOrchestrator::dep_tail() const {
  const int64_t la = live_from();
  return la == 0 ? 0 : dep_end_[static_cast<uint64_t>(la - 1) & (h_->window - 1)];
}

// Puts the task on the fanout list of every producer still running; a producer that already
// finished (list closed, or retired) needs no edge.
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

void DeviceOrchestrator::wire(TaskSlot &task, int64_t id) {
  DepEntry *deps = deps_of(h_);
  const int64_t la = live_from();
  for (int64_t p : producers_) {
    if (p < la) continue;
    TaskSlot &ps = slot_of(h_, p);
    const uint32_t e = static_cast<uint32_t>(dep_head_++ % h_->dep_capacity);
    deps[e].consumer = id;
    task.fanin_remaining.fetch_add(1, std::memory_order_relaxed);  // the guard keeps it above 0
    uint32_t head = ps.fanout_head.load(std::memory_order_acquire);
    for (;;) {
      if (head == kListClosed) {
        task.fanin_remaining.fetch_sub(1, std::memory_order_relaxed);
        break;
      }
      deps[e].next = head;
      if (ps.fanout_head.compare_exchange_weak(head, e, std::memory_order_release, std::memory_order_acquire))
        break;
    }
  }
}

// Each tensor access of task `id`: looked up (producers_, and edge_kinds_ when tracing) and
// recorded in one TensorMap walk, or only recorded inside a manual scope.
// When tracing, the walk also sees entries of producers that already retired (and does not drop
// them): the trace then holds every inferred edge whatever the timing, not only those the task
// had to wait for; submit_task drops retired producers from producers_ before wiring. Retired
// entries still go when the pool is full (reclaim), so only a long-past producer can miss.
bool DeviceOrchestrator::record_accesses(const Arg *args, uint32_t n, int64_t id, bool manual, bool tracing) {
  const int64_t seen_from = tracing ? 0 : live_from();
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind != PTO_ARG_TENSOR || args[i].access == Access::NO_DEP) continue;
    const TensorView &v = args[i].view;
    const Region r = make_region(v.buffer, v.offset, v.elem_size(), v.ndim, v.shape, v.strides);
    const bool write = args[i].access != Access::INPUT;
    bool recorded =
        manual ? tmap_.insert(r, write, id, live_from())
               : tmap_.access(r, write, id, seen_from, &producers_, tracing ? &edge_kinds_ : nullptr);
    while (!recorded) {  // the pool is full: the walk is done, only the new entry is missing
      if (tmap_.reclaim(live_from()) == 0 &&
          !wait_until(kStallTensorMap, [&] { return tmap_.reclaim(live_from()) > 0; }))
        return false;
      recorded = tmap_.add(r, write, id);
    }
  }
  return true;
}

TaskHandle DeviceOrchestrator::submit_task(uint32_t func_id, pto_core_type core_type, const Arg *args,
                                           uint32_t num_args, const TaskHandle *after, uint32_t num_after) {
  if (!ok()) return TaskHandle{};
  if (h_->abort.load(std::memory_order_acquire) != 0) {
    error(PTO_RUN_TIMEOUT, "the run was aborted while the orchestration was submitting");
    return TaskHandle{};
  }
  if (!check_task(func_id, core_type, args, num_args, after, num_after)) return TaskHandle{};
  const int64_t id = next_id_;
  const uint64_t window = h_->window;
  // Resume when a quarter of the window is free, not at the first free slot: one wake-up per
  // batch of retirements.
  const int64_t batch = static_cast<int64_t>(window / 4 > 0 ? window / 4 : 1);
  if (!wait_until(
          kStallWindow, [&] { return static_cast<uint64_t>(id - live_from()) < window; },
          id - static_cast<int64_t>(window) + batch)) {
    return {};
  }

  note_use(kStallWindow, static_cast<uint64_t>(id - live_from()) + 1);

  // Fill the slot, every field: the host neither zeroes nor initialises slots, and a slot may
  // hold a task of an earlier run (retired_id equal to this very id among them). Nothing here
  // is visible to schedulers before publication below.
  TaskSlot &t = slot_of(h_, id);
  const KernelSlot &k = kernels_of(h_)[func_id];
  t.payload.call_addr = reinterpret_cast<uint64_t>(call_of(h_, id, 0));
  t.mix_payload[0].call_addr = reinterpret_cast<uint64_t>(call_of(h_, id, 1));
  t.mix_payload[1].call_addr = reinterpret_cast<uint64_t>(call_of(h_, id, 2));
  t.payload.kernel_addr = k.entry;
  t.mix_payload[0].kernel_addr = t.mix_payload[1].kernel_addr = k.entry;
  t.retired_id.store(-1, std::memory_order_relaxed);
  t.id = id;
  t.func_id = func_id;
  t.core_type = static_cast<uint32_t>(core_type);
  t.fanin_remaining.store(1, std::memory_order_relaxed);
  t.fanout_head.store(kListEmpty, std::memory_order_relaxed);
  t.poisoned.store(0, std::memory_order_relaxed);
  t.state.store(kPending, std::memory_order_relaxed);
  t.core.store(-1, std::memory_order_relaxed);
  t.dump = -1;
  if (h_->dump_addr) select_for_dump(t, id, func_id, args, num_args);
  const uint32_t parts = core_type == PTO_CORE_MIX ? 3 : 1;  // a MIX task runs on a whole cluster
  for (uint32_t p = 0; p < parts; ++p) {
    pto_kernel_call *call = call_of(h_, id, p);
    call->status = 0;
    call->num_args = static_cast<uint16_t>(num_args);
    call->mix_part = static_cast<uint8_t>(p);
    call->is_mix = parts == 3;
    call->log = h_->log_addr;
    call->mix_sync = call->mix_ops = 0;  // MIX: the scheduler and the core fill them at dispatch
    for (uint32_t i = 0; i < num_args; ++i) {
      call->args[i] =
          args[i].kind == PTO_ARG_TENSOR ? static_cast<int64_t>(args[i].view.addr()) : args[i].scalar;
    }
  }

  // Producers: inferred (unless a manual scope is open; the accesses are recorded either way)
  // plus the explicit ones.
  const bool manual = scopes_.back().manual;
  producers_.clear();
  const bool tracing = kProfilingBuilt && h_->trace_addr != 0;
  edge_kinds_.clear();
  if (!record_accesses(args, num_args, id, manual, tracing)) return TaskHandle{};
  for (uint32_t i = 0; i < num_after; ++i) {
    producers_.push_back(after[i].id);
    if (tracing) edge_kinds_.emplace_back(after[i].id, kEdgeExplicit);
  }
  if (tracing) record_trace(id, func_id, core_type);
  if (producers_.size() > 1) {  // most tasks have zero or one
    std::sort(producers_.begin(), producers_.end());
    producers_.erase(std::unique(producers_.begin(), producers_.end()), producers_.end());
  }
  if (tracing) {  // retired producers were looked up for the trace's edges only
    const int64_t la = live_from();
    producers_.erase(producers_.begin(), std::lower_bound(producers_.begin(), producers_.end(), la));
  }

  const uint64_t need = producers_.size();
  if (need > h_->dep_capacity) {
    error(PTO_RING_CAPACITY, task_name(id, func_id) + " depends on " + std::to_string(need) +
                                 " running tasks but the dependency pool holds " +
                                 std::to_string(h_->dep_capacity) +
                                 " entries; raise ChipCallConfig.dep_pool_entries");
    return TaskHandle{};
  }
  if (!wait_until(kStallDeps, [&] { return dep_head_ + need - dep_tail() <= h_->dep_capacity; })) return {};
  wire(t, id);
  note_use(kStallDeps, dep_head_ - dep_tail());
  dep_end_[static_cast<uint64_t>(id) & (window - 1)] = dep_head_;
  note_use(kStallTensorMap, tmap_.used());

  // A task already failed: its dependents must not run, and whether this task is one of them
  // cannot be told for producers that finished before they were looked at. Stop submitting;
  // run() reports the failure. (The failure is recorded before the failed task's fanout list
  // closes and before it retires, so it is visible here whenever it could matter.)
  if (h_->failed_task.load(std::memory_order_acquire) >= 0) {
    stopped_ = true;
    return TaskHandle{};
  }
  // Publish: count the task first, so it cannot finish before it is counted; then drop the guard.
  ++next_id_;
  h_->next_task.store(next_id_, std::memory_order_seq_cst);
  if (t.fanin_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Scheduler::make_ready(h_, id);
    if (!poller_) waker_.wake_one();  // with one AICPU thread, the poll below dispatches it
  }
  if (poller_) poller_->poll();
  return TaskHandle{id};
}

// Profiling: the submit time and the task's incoming edges with their kinds (each distinct
// (producer, kind) once). Written before publication, so schedulers never race with it.
void DeviceOrchestrator::record_trace(int64_t id, uint32_t func_id, pto_core_type core_type) {
  if (static_cast<uint64_t>(id) < h_->trace_capacity) {
    // The whole record: the trace block is not zeroed by the host (tmr_runtime_host.cpp).
    reinterpret_cast<TaskTrace *>(h_->trace_addr)[id] = TaskTrace{
        id, func_id, static_cast<uint16_t>(core_type), kTraceNone, -1, -1, platform_ticks(), 0, 0, 0, 0};
  }
  std::sort(edge_kinds_.begin(), edge_kinds_.end());
  edge_kinds_.erase(std::unique(edge_kinds_.begin(), edge_kinds_.end()), edge_kinds_.end());
  auto *edges = reinterpret_cast<EdgeTrace *>(h_->edges_addr);
  uint64_t n = h_->edges_count.load(std::memory_order_relaxed);
  for (const auto &[from, kind] : edge_kinds_) {
    if (n < h_->edge_capacity) edges[n] = EdgeTrace{from, id, kind, 0};
    ++n;
  }
  h_->edges_count.store(n, std::memory_order_relaxed);
}

void DeviceOrchestrator::reclaim_heap() {
  heap_.reclaim(live_from());
  h_->heap_tail.store(heap_.tail(), std::memory_order_relaxed);
}

TensorView DeviceOrchestrator::alloc_tensor(pto_dtype dtype, uint32_t ndim, const int64_t *shape) {
  TensorView v;
  if (!ok()) return v;
  const uint32_t esize = pto_dtype_size(dtype);
  if (esize == 0 || ndim == 0 || ndim > static_cast<uint32_t>(kMaxViewDims) || !shape) {
    error(PTO_INVALID_ARGUMENT, "alloc_tensor: needs a concrete dtype and 1..8 dimensions");
    return v;
  }
  int64_t numel = 1;
  for (uint32_t d = 0; d < ndim; ++d) {
    if (shape[d] < 0) {
      error(PTO_INVALID_ARGUMENT, "alloc_tensor: shape[" + std::to_string(d) + "] is " +
                                      std::to_string(shape[d]) + "; extents must be 0 or more");
      return v;
    }
    // The byte size must fit in 63 bits; an overflowing product would wrap to a small buffer.
    if (shape[d] != 0 && numel > INT64_MAX / esize / shape[d]) {
      error(PTO_INVALID_ARGUMENT, "alloc_tensor: shape[" + std::to_string(d) + "] = " +
                                      std::to_string(shape[d]) + " makes the tensor larger than 2^63 bytes");
      return v;
    }
    numel *= shape[d];
  }
  const uint64_t bytes = align_up(std::max<uint64_t>(static_cast<uint64_t>(numel) * esize, 1), 64);
  // Could it ever fit? Only allocations of closed scopes come back; the first one of a still
  // open scope blocks everything after it (the ring frees in order).
  if (!heap_.could_fit(bytes)) {
    error(PTO_RING_CAPACITY,
          "heap ring: alloc_tensor needs " + std::to_string(bytes) + " bytes but heap_bytes is " +
              std::to_string(heap_.size()) + " and the open scopes hold " +
              std::to_string(heap_.top() - heap_.best_tail()) +
              " bytes that cannot be freed before they end; raise ChipCallConfig.heap_bytes or "
              "end scopes sooner");
    return v;
  }
  if (!wait_until(kStallHeap, [&] {
        reclaim_heap();
        return heap_.fits(bytes);
      })) {
    return v;
  }
  const uint64_t offset = heap_.allocate(bytes);
  note_use(kStallHeap, heap_.used());
  h_->heap_top.store(heap_.top(), std::memory_order_relaxed);
  v.buffer = h_->heap_addr + offset;
  v.buffer_bytes = static_cast<uint64_t>(numel) * esize;
  v.dtype = dtype;
  v.ndim = ndim;
  int64_t stride = 1;
  for (uint32_t d = ndim; d-- > 0;) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

void DeviceOrchestrator::scope_begin(bool manual) {
  if (!ok()) return;
  scopes_.push_back(ScopeRec{heap_.next_index(), manual || scopes_.back().manual});
}

void DeviceOrchestrator::scope_end() {
  if (!ok()) return;
  if (scopes_.size() <= 1) {
    error(PTO_INVALID_ARGUMENT, "scope_end without a matching scope_begin");
    return;
  }
  heap_.close_scope(scopes_.back().first_alloc, next_id_);
  scopes_.pop_back();
}

void DeviceOrchestrator::run() {
  scopes_.push_back(ScopeRec{0, false});  // the root scope: the whole orchestration
  using Entry = void (*)(Orchestrator &);
  const uint64_t t0 = platform_now_ns();
  reinterpret_cast<Entry>(h_->orch_entry)(*this);
  h_->orch_ns.store(platform_now_ns() - t0, std::memory_order_relaxed);
  if (status_ == PTO_OK && scopes_.size() != 1) {
    error(PTO_INVALID_ARGUMENT,
          std::to_string(scopes_.size() - 1) +
              " scope(s) still open when the orchestration returned; end every scope_begin "
              "with scope_end (or use pto::Scope)");
  }
  h_->orch_status.store(status_, std::memory_order_relaxed);
  for (int r = 0; r < 4; ++r) h_->high_water[r].store(high_water_[r], std::memory_order_relaxed);
  h_->orch_stopped.store(stopped_ ? 1 : 0, std::memory_order_relaxed);
  const size_t n = std::min(message_.size(), sizeof(h_->orch_message) - 1);
  memcpy(h_->orch_message, message_.data(), n);
  h_->orch_message[n] = '\0';
  h_->orch_done.store(1, std::memory_order_seq_cst);  // see Scheduler::done
  waker_.wake_all();                                  // not a scheduler itself: rings every one
}

}  // namespace tmr
}  // namespace pto
