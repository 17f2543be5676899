// src/runtime/tensormap_and_ringbuffer/aicpu/dependencies.cpp — a task's producers: TensorMap look-ups,
// the dependency pool, wiring into the producers' fanout lists.
//
// Per submit: one TensorMap walk per tracked argument (look-up and record together), then the
// producers are made distinct and live in one pass (no sort: a live producer owns its window
// slot alone, so a per-slot stamp tells whether this task listed it already), room for that
// many dependency entries, and one entry per producer pushed onto its fanout list.
// With batch_deps, each access is first scanned against the current batch (dep_batch.h); the
// TensorMap walk is skipped when an earlier write of the batch covers the access.
#include "back_pressure.h"
#include "core/profiling.h"
#include "orchestrator.h"
#include "view_region.h"

namespace pto {
namespace tmr {

uint64_t DeviceOrchestrator::dep_tail() const {
  const int64_t la = live_from();
  return la == 0 ? 0 : dep_end_[window_.slot(la - 1)];
}

// Puts the task on the fanout list of every producer still running; a producer that already
// finished (list closed, or retired) needs no edge.
void DeviceOrchestrator::wire(TaskSlot &task, int64_t id) {
  DepEntry *deps = deps_of(h_);
  const int64_t la = live_from();
  for (int64_t p : producers_) {
    if (p < la) continue;
    TaskSlot &ps = slot_of(h_, p);
    const uint32_t e = dep_slot_;  // dep_head_ % dep_capacity, without a division per edge
    ++dep_head_;
    if (++dep_slot_ == h_->dep_capacity) dep_slot_ = 0;
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
// `call_args` (not null): the call block's arguments are written in the same pass.
bool DeviceOrchestrator::record_accesses(const Arg *args, uint32_t n, int64_t id, bool manual, bool tracing,
                                         int64_t *call_args) {
  const int64_t seen_from = tracing ? 0 : live_from();
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind != PTO_ARG_TENSOR) {
      if (call_args) call_args[i] = args[i].scalar;
      continue;
    }
    const TensorView &v = args[i].view;
    if (call_args) call_args[i] = call_arg(v);
    if (args[i].access == Access::NO_DEP) continue;
    const Region r = region_of(v);
    const bool write = args[i].access != Access::INPUT;
    // Room for what one look-up can return (TensorMap::access): rarely short, then compacted.
    if (producers_.room() < tmap_.used()) distinct_live_producers(id);
    if (tracing) make_edge_room(tmap_.used(), id);
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

// batch_deps: the batch first; the TensorMap only when no earlier batch write covers the
// access. A looked-up access is recorded in the TensorMap by that same walk (there is no
// look-up without recording) and mirrored in the batch; a covered one waits in the batch for
// flush_batch. Dependencies are therefore complete at submit, as without batching.
//
// Room: a deferred access must never wait for TensorMap room behind an entry of the task being
// submitted (that entry retires only after the task is published: a deadlock). So a task joins
// the batch only while the TensorMap has room for everything the batch could file plus all of
// this task's accesses (used + deferred + arguments <= capacity); otherwise the batch is flushed first,
// at the task boundary, where waiting for room is safe. Within the task neither access() nor a
// flush then ever finds the pool full.
bool DeviceOrchestrator::record_batched(const Arg *args, uint32_t n, int64_t id, bool tracing) {
  // (n, every argument, bounds the task's accesses: no pass over the arguments to count them.)
  if (!batch_->empty() && static_cast<uint64_t>(tmap_.used()) + batch_->deferred() + n > tmap_.capacity() &&
      !flush_batch())
    return false;
  const int64_t seen_from = tracing ? 0 : live_from();
  graph::EdgeKindList *kinds = tracing ? &edge_kinds_ : nullptr;
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i].kind != PTO_ARG_TENSOR || args[i].access == Access::NO_DEP) continue;
    const Region r = region_of(args[i].view);
    if (r.empty()) continue;
    const bool write = args[i].access != Access::INPUT;
    // Room for what the batch scan and one look-up can return: the batch's entries and the
    // TensorMap's (the list has room for both past the window once compacted).
    const uint32_t most = tmap_.used() + batch_->size();
    if (producers_.room() < most) distinct_live_producers(id);
    if (tracing) make_edge_room(most, id);
    const bool covered = batch_->scan(r, write, id, &producers_, kinds);
    if (covered) {
      ++batch_local_hits_;
    } else {
      bool recorded = tmap_.access(r, write, id, seen_from, &producers_, kinds);
      while (!recorded) {  // only when the batch was empty at the task's start (see above)
        if (tmap_.reclaim(live_from()) == 0 &&
            !wait_until(kStallTensorMap, [&] { return tmap_.reclaim(live_from()) > 0; }))
          return false;
        recorded = tmap_.add(r, write, id);
      }
    }
    // Full only when a wait flushed in the middle of a batch's last task: never more than one
    // batch of accesses.
    if (!batch_->add(r, write, id, !covered) && (!flush_batch() || !batch_->add(r, write, id, !covered)))
      return false;
  }
  return true;
}

// Files the batch's deferred accesses into the TensorMap, in task order. Accesses of tasks
// already retired are not filed (nobody waits for a retired task); with tracing they are, so
// the trace still sees their edges.
bool DeviceOrchestrator::flush_batch() {
  batch_tasks_ = 0;
  if (batch_->empty()) return true;
  const bool tracing = kProfilingBuilt && h_->trace_addr != 0;
  flushing_ = true;
  const bool filed = batch_->flush([&](const Region &r, bool write, int64_t task) {
    if (!tracing && task < live_from()) return true;
    while (!tmap_.add(r, write, task)) {
      if (tmap_.reclaim(live_from()) == 0 &&
          !wait_until(kStallTensorMap, [&] { return tmap_.reclaim(live_from()) > 0; }))
        return false;
    }
    return true;
  });
  flushing_ = false;
  batch_flushes_ += filed ? 1 : 0;
  return filed;
}

void DeviceOrchestrator::fill_call_args(int64_t *call_args, const Arg *args, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    call_args[i] = args[i].kind == PTO_ARG_TENSOR ? call_arg(args[i].view) : args[i].scalar;
}

bool DeviceOrchestrator::find_producers(const Arg *args, uint32_t n, const TaskHandle *after,
                                        uint32_t num_after, int64_t id, uint32_t func_id,
                                        uint32_t shape, int64_t *call_args) {
  // Inferred (unless a manual scope is open; the accesses are recorded either way) plus the
  // explicit ones.
  const bool manual = scopes_.back().manual;
  const bool tracing = kProfilingBuilt && h_->trace_addr != 0;
  producers_.clear();
  producers_kept_ = 0;
  edge_kinds_.clear();
  const bool batching = batch_ != nullptr && !manual;  // batch_deps; no batch in a manual scope
  if (batching) {
    if (call_args) fill_call_args(call_args, args, n);
    if (batch_tasks_ != 0 && func_id != batch_func_ && !flush_batch()) return false;  // kernel change
    batch_func_ = func_id;
    if (!record_batched(args, n, id, tracing)) return false;
    if (++batch_tasks_ >= h_->sched.batch_deps && !flush_batch()) return false;
  } else if (!record_accesses(args, n, id, manual, tracing, call_args)) {
    return false;
  }
  for (uint32_t i = 0; i < num_after; ++i) {
    if (producers_.room() == 0) distinct_live_producers(id);
    producers_.push_back(after[i].id);
    if (tracing) {
      make_edge_room(1, id);
      edge_kinds_.push_back(graph::EdgeKind{after[i].id, kEdgeExplicit});
    }
  }
  // Once per submit, always on: the room kept above means no producer was refused.
  PTO_CHECK(!producers_.overflowed() && !edge_kinds_.overflowed(), "orchestrator: a producer list overflowed");
  if (tracing) record_trace(id, func_id, shape);
  distinct_live_producers(id);
  return true;
}

// Each live producer once. Retired ones (looked up only for the trace, or explicit handles of
// finished tasks) need no edge. A live producer p (last_task_alive <= p < id) is the only
// task in slot p % window, so seen_ by slot holds the last consumer that listed it. Called
// once per submit, and before a look-up that might not fit (the kept prefix is then only
// re-checked for liveness).
// Inlined into find_producers (its one call per submit; the others are rare): callgrind counted
// the call and its prologue on every submit otherwise.
[[gnu::always_inline]] inline void DeviceOrchestrator::distinct_live_producers(int64_t id) {
  const int64_t la = refresh_live();  // the one fresh read of a submit (orchestrator.h, live_from)
  uint32_t kept = 0;
  for (uint32_t i = 0; i < producers_kept_; ++i) {
    if (producers_[i] >= la) producers_[kept++] = producers_[i];
  }
  for (uint32_t i = producers_kept_; i < producers_.size(); ++i) {
    const int64_t p = producers_[i];
    if (p < la) continue;
    int64_t &seen = seen_[window_.slot(p)];
    if (seen == id) continue;
    seen = id;
    producers_[kept++] = p;
  }
  producers_.resize(kept);
  producers_kept_ = kept;
}

bool DeviceOrchestrator::wire_producers(TaskSlot &task, int64_t id, uint32_t func_id) {
  const uint64_t need = producers_.size();
  if (need > h_->dep_capacity) {
    error(PTO_RING_CAPACITY, task_name(id, func_id) + " depends on " + std::to_string(need) +
                                 " running tasks but the dependency pool holds " +
                                 std::to_string(h_->dep_capacity) +
                                 " entries; raise ChipCallConfig.dep_pool_entries");
    return false;
  }
  if (!wait_until(kStallDeps, [&] { return dep_head_ + need - dep_tail() <= h_->dep_capacity; }))
    return false;
  wire(task, id);
  note_use(kStallDeps, dep_head_ - dep_tail());
  dep_end_[window_.slot(id)] = dep_head_;
  note_use(kStallTensorMap, tmap_.used());
  return true;
}

}  // namespace tmr
}  // namespace pto
