// src/core/graph/ready_queue_set.h — the ready tasks of a run, one bounded MPMC queue per execution pool.
//
// A task waits in the queue of the pool it runs in: cube (AIC cores), vector (AIV cores), mix
// (a whole cluster: one AIC and two AIV cores at once) or any (whichever single core is idle
// first). Every queue is a Vyukov MpmcQueue (core/mpmc_queue.h) over cells in device memory,
// so the set is a plain view: the host attaches the pools its runtime uses before launch and
// copies the set in with the run header; pushers (the host pre-filling, the orchestrator,
// scheduler threads) and poppers (scheduler threads) then only touch the queues' positions and
// cells. A pool that was never attached is always empty and refuses pushes.
//
// try_pop_any takes from the first non-empty pool of a mask, lowest pool first: an idle AIV
// core asks for mask {vector, any}, so it takes its own pool's work before it steals work that
// any core may run. No runtime submits `any` tasks yet (pto_core_type has no such value); the
// pool is there so the dispatch loop already serves it (docs/design/architecture.md).
#ifndef PTO_CORE_GRAPH_READY_QUEUE_SET_H
#define PTO_CORE_GRAPH_READY_QUEUE_SET_H

#include <atomic>
#include <cstdint>

#include "core/mpmc_queue.h"
#include "pto/types.h"

namespace pto {
namespace graph {

// Execution pools. The first three equal pto_core_type (AIC, AIV, MIX), so a task's core type
// is its pool.
// How long a producer that submits in bulk (the tensormap orchestrator) may hold ready tasks
// to push them as one batch (push_many) and wake a scheduler once for all of them.
constexpr uint32_t kReadyHoldNs = 1000;

enum Pool : uint32_t {
  kPoolCube = PTO_CORE_AIC,
  kPoolVector = PTO_CORE_AIV,
  kPoolMix = PTO_CORE_MIX,
  kPoolAny = 3,
  // Ready tasks that take no core: dependency-only tasks and tasks whose dispatch predicate is
  // false. Scheduler threads retire them inline (core/graph/scheduler_loop.h).
  kPoolInline = 4,
  // Ready sync-start SPMD tasks (pto::Launch::sync_start), oldest first: each waits here until
  // the gang slot below is free, then gathers its cores there (core/graph/scheduler_loop.h).
  kPoolGang = 5,
  kPoolCount = 6,
};
constexpr uint32_t pool_bit(uint32_t pool) {
  return 1u << pool;
}
constexpr uint32_t kSingleCorePools = pool_bit(kPoolCube) | pool_bit(kPoolVector) | pool_bit(kPoolAny);

// The one sync-start task gathering cores, shared by the scheduler threads of a run. `word` is
// (task id + 1) << 16 | blocks claimed so far (a claimed block is an idle core, or an idle
// cluster for MIX, that its scheduler holds for the task and starts nothing else on); 0 when
// free, kGangOpening while a thread takes the next task from kPoolGang. The id in the word
// makes a claim for one task fail once the slot has moved on to the next. `go` is the task's
// id + 1 once every block is claimed and the task is set up: then each holder starts its
// blocks; the one that starts the last frees the slot. Zero (free) at the start of a run.
struct GangSlot {
  static constexpr uint64_t kOpening = 1;
  static constexpr uint32_t kClaimBits = 16;  // block_num <= 65535
  std::atomic<uint64_t> word{0};
  std::atomic<uint64_t> go{0};
  std::atomic<uint32_t> launched{0};
  static uint64_t task_word(int64_t id) { return static_cast<uint64_t>(id + 1) << kClaimBits; }
  static int64_t task_of(uint64_t w) { return static_cast<int64_t>(w >> kClaimBits) - 1; }
  static uint32_t claimed_of(uint64_t w) { return static_cast<uint32_t>(w & ((1u << kClaimBits) - 1)); }
};

class ReadyQueueSet {
 public:
  GangSlot &gang() { return gang_; }

  // Host, before launch: pool `pool` uses `capacity` (a power of two) cells laid out by
  // MpmcQueue::format with n tasks already in them.
  void attach(uint32_t pool, MpmcCell *cells, uint64_t capacity, uint64_t n) {
    q_[pool].attach(cells, capacity, n);
    attached_ |= pool_bit(pool);
  }
  // Host, before launch: pool `pool` uses cells an earlier run left empty at position `pos`
  // (MpmcQueue::attach_at).
  void attach_at(uint32_t pool, MpmcCell *cells, uint64_t capacity, uint64_t pos) {
    q_[pool].attach_at(cells, capacity, pos);
    attached_ |= pool_bit(pool);
  }
  // Host, after the run: pool `pool` is empty, at *pos (false: it still holds tasks).
  bool empty_at(uint32_t pool, uint64_t *pos) const {
    *pos = q_[pool].tail();
    return q_[pool].head() == *pos;
  }
  uint32_t attached() const { return attached_; }  // bit p: pool p has cells
  bool has(uint32_t pool) const { return (attached_ & pool_bit(pool)) != 0; }

  // False when the pool is full or not attached (runtimes size their queues so that a push
  // never fails: capacity >= the tasks that can be ready at once).
  bool push(uint32_t pool, uint64_t id) { return pool < kPoolCount && has(pool) && q_[pool].try_push(id); }

  // ids[0..n) into pool `pool` in order, with one CAS (MpmcQueue::try_push_many).
  bool push_many(uint32_t pool, const uint64_t *ids, uint64_t n) {
    return pool < kPoolCount && has(pool) && q_[pool].try_push_many(ids, n);
  }

  bool try_pop(uint32_t pool, uint64_t *id) { return has(pool) && q_[pool].try_pop(id); }

  // Pops from the lowest pool in `mask` that has a task; *from (if given) says which.
  bool try_pop_any(uint32_t mask, uint64_t *id, uint32_t *from = nullptr) {
    for (uint32_t m = mask & attached_; m != 0; m &= m - 1) {
      const auto p = static_cast<uint32_t>(__builtin_ctz(m));
      if (q_[p].try_pop(id)) {
        if (from) *from = p;
        return true;
      }
    }
    return false;
  }

  // A hint (may be stale by the time the caller acts on it): no pool in `mask` holds a task.
  bool probably_empty(uint32_t mask) const {
    for (uint32_t m = mask & attached_; m != 0; m &= m - 1) {
      if (!q_[__builtin_ctz(m)].probably_empty()) return false;
    }
    return true;
  }

  // dispatch_threshold's `ready` metric: the tasks in the queues of `mask` (a hint, two loads a
  // pool, no writes).
  uint64_t size_hint(uint32_t mask) const {
    uint64_t n = 0;
    for (uint32_t m = mask & attached_; m != 0; m &= m - 1) n += q_[__builtin_ctz(m)].size_hint();
    return n;
  }

 private:
  MpmcQueue q_[kPoolCount];
  uint32_t attached_ = 0;  // host-written before launch, read-only during the run
  GangSlot gang_;
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_READY_QUEUE_SET_H
