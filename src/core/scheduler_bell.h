// src/core/scheduler_bell.h — the doorbell of each AICPU scheduler thread, and waking peers one at a time.
#ifndef PTO_CORE_SCHEDULER_BELL_H
#define PTO_CORE_SCHEDULER_BELL_H

#include <atomic>
#include <cstdint>

#include "core/handshake.h"  // kCacheLine
#include "pto_platform/doorbell.h"

namespace pto {

// One per AICPU scheduler thread: rung by its cores on completion, by peers and by the
// orchestrator when work appears, by the host on abort.
struct alignas(kCacheLine) SchedulerSlot {
  Doorbell bell;
  std::atomic<uint32_t> relay_hops{0};  // peers the relay that last woke it may still visit
};

// Wakes scheduler peers one at a time: whoever is woken and cannot take all the queued work
// wakes the next (ask_for_help), so a push costs one doorbell ring instead of a thundering
// herd. A relay goes round the peers in index order and visits each at most once: each ring
// hands the woken peer the hops left (relay_hops, stored before the ring, so the peer reads it
// after waking). Without that bound, schedulers whose cores are all busy would wake each other
// in a circle for as long as the backlog lasts, keeping the kernels' pool workers from running.
// Two relays that meet keep the longer, which covers both (they go the same way).
class PeerWaker {
 public:
  // self: the caller's own slot, or count (or more) for a caller that is not a scheduler.
  PeerWaker(SchedulerSlot *slots, uint32_t count, uint32_t self)
      : slots_(slots), count_(count), self_(self), next_(0) {}

  // Starts a relay: work appeared that the caller does not start itself. From a scheduler it
  // visits the others from self + 1 on; from elsewhere (the orchestrator) all of them, from a
  // rotating first one.
  void wake_one() {
    if (is_scheduler()) {
      if (count_ < 2) return;
      slots_[self_].relay_hops.store(0, std::memory_order_relaxed);  // superseded by this one
      ring((self_ + 1) % count_, count_ - 2);
    } else if (count_ != 0) {
      if (next_ >= count_) next_ = 0;
      ring(next_++, count_ - 1);
    }
  }

  // Work is queued that this scheduler cannot start: a peer may have a core free. `fresh`: this
  // pass changed something (collected or dispatched), so a new relay starts; otherwise this
  // scheduler passes on the relay that woke it, if it has hops left.
  void ask_for_help(bool fresh) {
    if (fresh) {
      wake_one();
      return;
    }
    if (!is_scheduler() || count_ < 2) return;
    const uint32_t hops = slots_[self_].relay_hops.exchange(0, std::memory_order_relaxed);
    if (hops != 0) ring((self_ + 1) % count_, hops - 1);
  }

  void wake_all() {
    for (uint32_t k = 0; k < count_; ++k) {
      if (k != self_) doorbell_ring(slots_[k].bell);
    }
  }

 private:
  bool is_scheduler() const { return self_ < count_; }
  void ring(uint32_t peer_index, uint32_t hops_after) {
    SchedulerSlot &peer = slots_[peer_index];
    uint32_t h = peer.relay_hops.load(std::memory_order_relaxed);  // keep the longer of two relays
    while (h < hops_after && !peer.relay_hops.compare_exchange_weak(h, hops_after, std::memory_order_relaxed)) {
    }
    doorbell_ring(peer.bell);  // seq_cst: the peer that wakes on it reads the hops stored above
  }

  SchedulerSlot *slots_;
  uint32_t count_, self_, next_;
};

}  // namespace pto
#endif  // PTO_CORE_SCHEDULER_BELL_H
