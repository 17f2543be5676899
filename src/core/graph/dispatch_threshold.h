// src/core/graph/dispatch_threshold.h — dispatch_threshold: a metric per scope picks how a scheduler places a
// task.
//
// With dispatch_metric = ready (pto/schedule_config.h) a scheduler thread measures, each time
// it places work, the tasks ready in the scope's queue(s) — the placed task's pool
// (per_pool) or every pool (global) — counting the task being placed: a task this thread just
// released is not queued yet (+1), a pass that feeds idle cores measures before it pops. The
// metric below dispatch_threshold selects dispatch_below's policy and the active core set
// (cores 0 .. active_cores_below - 1 of each pool, by their index in the pool); at or above
// it, dispatch_above's policy and every core. SchedulerLoop and CorePool apply the choice:
//   locality       a released task starts on this thread's warm core (today's path); a feed
//                  pass serves idle cores from the warm one on.
//   round_robin    a released task starts on the next idle core of its pool after the last
//                  one this thread chose (a cursor per pool), with no warm preference; feed
//                  passes start at that cursor too.
//   work_stealing  a released task goes to the shared queue and a peer is woken: whichever
//                  scheduler has an idle core first takes it (this one included).
// A feed pass decides once per pool (two stages: the pool, then the policy within it) and
// gives every task it pops from that pool the same decision; a released task gets its own.
// MIX tasks (a whole cluster) keep to the active set by cluster index; clusters are scanned in
// order whatever the policy, which is only recorded for them.
//
// Metric reads are two relaxed loads a pool (the queue's positions): no shared writes. Each
// decision is recorded per task (DispatchTag, in the trace) and counted per thread
// (SchedulerCounters: dispatches per policy, switches between below and above against this
// thread's previous decision in the same scope). Off (dispatch_metric = none) the loop tests
// on() once per release and once per feed pass, and none of this runs.
// Nothing here allocates or throws: it is built into the AICPU program.
#ifndef PTO_CORE_GRAPH_DISPATCH_THRESHOLD_H
#define PTO_CORE_GRAPH_DISPATCH_THRESHOLD_H

#include <cstdint>

#include "core/graph/ready_queue_set.h"
#include "core/run_counters.h"
#include "pto/schedule_config.h"

namespace pto {
namespace graph {

// A decision as the core pool carries it to the trace: the DispatchPolicy in bits 0..7, the
// metric (saturated to 16 bits: thresholds stop at kMaxDispatchThreshold, so the comparison
// survives) in bits 16..31. 0 is locality with metric 0: what every task of a run without
// dispatch_threshold records.
using DispatchTag = uint32_t;
constexpr DispatchTag dispatch_tag(DispatchPolicy p, uint64_t metric) {
  return static_cast<uint32_t>(p) | static_cast<uint32_t>((metric > 0xFFFF ? 0xFFFF : metric) << 16);
}
constexpr uint8_t dispatch_tag_policy(DispatchTag t) {
  return static_cast<uint8_t>(t & 0xFF);
}
constexpr uint16_t dispatch_tag_metric(DispatchTag t) {
  return static_cast<uint16_t>(t >> 16);
}

struct DispatchChoice {
  DispatchPolicy policy;
  uint32_t active;  // cores of each pool that may take work: pool index < active
  DispatchTag tag;
};

class DispatchThreshold {
 public:
  static constexpr uint32_t kAllCores = 0xFFFFFFFFu;

  DispatchThreshold() = default;
  explicit DispatchThreshold(const ScheduleConfig &c)
      : on_(c.dispatching()),
        per_pool_(c.dispatch_scope == DispatchScope::kPerPool),
        threshold_(c.dispatch_threshold),
        active_below_(c.active_cores_below ? c.active_cores_below : kAllCores),
        below_(c.dispatch_below),
        above_(c.dispatch_above) {}

  bool on() const { return on_; }

  // The decision for a task of `pool`; `placing` is 1 when that task is in no queue (released
  // by this thread), 0 when it is still in its queue (a feed pass is about to pop it).
  DispatchChoice choose(uint32_t pool, const ReadyQueueSet &ready, uint32_t placing) {
    const uint32_t mask = per_pool_ ? pool_bit(pool) : ~0u;
    const uint64_t metric = ready.size_hint(mask) + placing;
    const bool below = metric < threshold_;
    uint8_t &last = last_side_[per_pool_ && pool < kPoolCount ? pool : 0];
    const uint8_t side = below ? kBelow : kAbove;
    if (last != side) {
      switches_ += last != kNoSide;
      last = side;
    }
    const DispatchPolicy p = below ? below_ : above_;
    return DispatchChoice{p, below ? active_below_ : kAllCores, dispatch_tag(p, metric)};
  }

  // A task started under decision `tag`.
  void dispatched(DispatchTag tag) { ++dispatched_[dispatch_tag_policy(tag) % kDispatchPolicyCount]; }

  void write_counters(SchedulerCounters *c) const {
    for (uint32_t p = 0; p < kDispatchPolicyCount; ++p) c->dispatched[p] = dispatched_[p];
    c->dispatch_switches = switches_;
  }

 private:
  static constexpr uint8_t kNoSide = 0, kBelow = 1, kAbove = 2;

  bool on_ = false;
  bool per_pool_ = false;
  uint32_t threshold_ = 0;
  uint32_t active_below_ = kAllCores;
  DispatchPolicy below_ = DispatchPolicy::kLocality;
  DispatchPolicy above_ = DispatchPolicy::kLocality;
  // This thread's own (one writer, no sharing): the side of its last decision per scope key.
  uint8_t last_side_[kPoolCount] = {};
  uint32_t dispatched_[kDispatchPolicyCount] = {};
  uint32_t switches_ = 0;
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_DISPATCH_THRESHOLD_H
