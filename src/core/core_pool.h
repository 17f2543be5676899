// src/core/core_pool.h — the clusters one AICPU scheduler thread owns: dispatch and completion.
//
// One file of ~700 lines on purpose: dispatch (single, SPMD block, MIX), the ring and the
// completion poll share the per-core slot state and its ordering rules, and all of it is inlined
// into the scheduler's hot loop; split apart, the ordering argument would be split with it.
//
// Shared by every runtime's scheduler. The device's handshake block holds every core of the
// chip, laid out as core/cluster_layout.h says; a run uses clusters 0 .. block_dim - 1.
// Scheduler thread i of S owns the clusters c with c % S == i, whole, so it can give a MIX task
// (one task on every core of a cluster) a cluster of its own. During a run only the owner writes the
// scheduler half of its slots (protocol and orders in core/handshake.h); the slots outlive
// the run, so the next run's owner picks up their sequence numbers where this one left them.
//
// Over 600 lines because a thread's cores, its MIX clusters and its sync-start gangs share one
// set of masks and counters that every dispatch and completion updates together. The gang
// reservation (hold, drain, launch) is the separable part: it is the piece to move into a header
// of its own, with the masks passed in, when it next changes.
#ifndef PTO_CORE_CORE_POOL_H
#define PTO_CORE_CORE_POOL_H

#include <cstdint>
#include <new>
#include <type_traits>

#include "core/bit_walk.h"
#include "core/geometry.h"
#include "core/graph/dispatch_threshold.h"
#include "core/graph/ready_queue_set.h"
#include "core/handshake.h"
#include "core/mix_sync.h"
#include "core/profiling.h"
#include "core/run_counters.h"
#include "core/trace.h"
#include "pto/types.h"
#include "pto_platform/clock.h"

namespace pto {

// Kernels shorter than this on average are queued behind a running one (CorePool::init);
// PTO_PIPELINE_NS overrides it on the host (0: never queue).
constexpr uint32_t kPipelineNs = 10000;

class CorePool {
 public:
  // One scheduler may own every cluster of the largest chip (a run with one scheduler thread).
  static constexpr uint32_t kMaxClusters = kMaxChipClusters;
  static constexpr uint32_t kMaxCores = kMaxChipCores;
  static constexpr uint32_t kDepth = Handshake::kDepth;

  // Takes clusters idx, idx + stride, ... below block_dim of a chip laid out as `layout` (at
  // most kMaxCoresPerCluster cores a cluster: the geometry table checks) and points their
  // completions at `bell`. Every core must be idle (the previous run's
  // scheduler waited for its cores; the host's launch orders that before this). With
  // `profiling`, collect() reports CoreTiming.
  //
  // `short_task_ticks` (non-zero only when the device threads outnumber the CPUs that run them:
  // the sim on a small host): while this pool's kernels take less than that on average, it
  // keeps one core busy at a time — the warm one, still spinning — instead of handing each
  // ready task to another, parked core, whose wake-up costs tens of microseconds there. Peers
  // take what this thread leaves in the queue (needs_help). Longer kernels spread over every
  // idle core as usual.
  //
  // `pipeline_ticks`: while kernels average less than that, a core that is running a task is
  // also handed the next one (up to kDepth in all), so it starts it without waiting for this
  // thread to see the completion and dispatch again; idle cores are still served first. A task
  // queued so waits at most kDepth - 1 short kernels; 0 turns queueing off. Nothing is queued
  // until this run has timed a kernel.
  //
  // `mix`: the run's MixSync blocks, one per cluster below block_dim (core/mix_sync.h), for
  // runtimes with MIX tasks; dispatch_mix hands cluster c's block to the task it starts there.
  // `price` (profiling in sim timing mode): timings carry each kernel's KernelPrice too.
  void init(Handshake *slots, const ClusterLayout &layout, uint32_t block_dim, uint32_t idx, uint32_t stride,
            Doorbell *bell, bool profiling = false, bool pmu = false, uint64_t short_task_ticks = 0,
            uint64_t pipeline_ticks = 0, MixSync *mix = nullptr, bool price = false) {
    mix_ = mix;
    count_ = nclusters_ = busy_ = warm_ = gang_drain_ = 0;
    for (uint64_t &w : busy_mask_) w = 0;
    for (auto &type : idle_mask_)
      for (uint64_t &w : type) w = 0;
    short_ticks_ = static_cast<int64_t>(short_task_ticks);
    pipe_ticks_ = static_cast<int64_t>(pipeline_ticks);
    task_ticks_ = 0;
    timed_ = 0;
    profiling_ = kProfilingBuilt && (profiling || pmu);
    pmu_ = kProfilingBuilt && pmu;
    price_ = profiling_ && price;
    idle_by_type_[0] = idle_by_type_[1] = 0;
    rr_[0] = rr_[1] = 0;
    per_cluster_ = layout.cores_per_cluster();
    for (uint32_t c = idx; c < block_dim && nclusters_ < kMaxClusters; c += stride) {
      Cluster &cl = *new (&clusters_[nclusters_]) Cluster();
      cl.id = c;
      if (mix_) mix_sync_init(mix_[c]);  // no core has it before this thread dispatches a MIX task
      for (uint32_t k = 0; k < per_cluster_; ++k) {
        const uint32_t slot = layout.slot(c, k);
        Handshake &hs = slots[slot];
        hs.owner_bell.store(reinterpret_cast<uint64_t>(bell), std::memory_order_relaxed);
        hs.pmu.store(pmu_ ? 1 : 0, std::memory_order_relaxed);  // published by the dispatch ring
        cl.core[k] = count_;
        Core &core = *new (&cores_[count_++]) Core();
        core.hs = &hs;
        core.slot = slot;
        core.core_type = hs.core_type;
        core.cluster = nclusters_;
        core.pool_index = layout.type_index(c, k);
        core.seq = core.collected = hs.dispatch.seq.load(std::memory_order_relaxed);
        ++idle_by_type_[hs.core_type & 1];
        set_idle(count_ - 1, true);
      }
      ++nclusters_;
    }
  }

  uint32_t size() const { return count_; }
  uint32_t busy() const { return busy_; }  // tasks dispatched and not yet collected
  uint32_t slot(uint32_t i) const { return cores_[i].slot; }

  // Calls on_done(task, timing) once for every task whose cores all finished (all of its
  // cluster's for a MIX task), in each core's dispatch order; returns how many. `timing` is filled only when
  // profiling.
  // Visits only the cores with work in flight (busy_mask_), in index order: a scan of every
  // core's state was half of a scheduler's time per task when few cores are busy.
  template <typename OnDone>
  uint32_t collect(OnDone &&on_done) {
    uint32_t n = 0;
    uint64_t seen = 0;  // profiling: when this pass saw completions (a tick read per pass, mostly)
    for (uint32_t word = 0; word < kMaskWords; ++word) {
      for (uint64_t bits = busy_mask_[word]; bits != 0; bits &= bits - 1) {
        const uint32_t i = word * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
        n += collect_core(i, on_done, &seen);
      }
    }
    return n;
  }

 private:
  template <typename OnDone>
  uint32_t collect_core(uint32_t i, OnDone &on_done, uint64_t *seen_ticks) {
    uint32_t n = 0;
    uint64_t &seen = *seen_ticks;
    Core &c = cores_[i];
    {
      const uint32_t done = c.hs->done_seq.load(std::memory_order_acquire);
      while (c.collected != done) {
        const uint32_t e = ++c.collected % kDepth;
        const int64_t t = c.task[e];
        --busy_;
        if (c.collected == c.seq) {
          ++idle_by_type_[c.core_type & 1];
          set_idle(i, true);
        }
        warm_ = i;
        Cluster &cl = clusters_[c.cluster];
        --cl.busy;
        const CoreReport &r = c.hs->report[e];  // published by done_seq
        const uint64_t start = r.kernel_start, end = r.kernel_end;
        c.counters.busy_ticks += end - start;
        ++c.counters.tasks;
        if (c.counters.first_start == 0) c.counters.first_start = start;
        c.counters.last_end = end;
        const auto ticks = static_cast<int64_t>(end - start);
        task_ticks_ = timed_++ ? task_ticks_ + (ticks - task_ticks_) / 8 : ticks;  // moving average
        CoreTiming timing;
        if (profiling()) {
          if (seen < end) seen = platform_ticks();  // never before the kernel's end
          timing = CoreTiming{c.dispatch[e], start, end, seen, static_cast<int32_t>(c.slot)};
          timing.dispatch_tag = c.tag[e];
          if (price_) timing.price = &c.hs->price[e];
          if (pmu_on()) {
            timing.pmu =
                PmuTrace{r.pmu_cycles, r.pmu_instructions, r.pmu_cache_misses, r.pmu_valid, r.pmu_error};
          }
        }
        if (c.mix_part[e]) {  // a part of the cluster's MIX task: report it when the last part is done
          c.mix_part[e] = false;
          --c.mix_parts;
          if (profiling()) merge_mix_part(cl, &timing);
          if (--cl.parts_left != 0) continue;
          cl.mix_task = -1;
        }
        ++n;
        on_done(t, timing);
      }
    }
    if (c.collected == c.seq) busy_mask_[i / 64] &= ~(uint64_t{1} << (i % 64));
    return n;
  }

 public:
  // Hands `payload` (task id `task`, reported back by collect) to core i, which has room
  // (core_for or feed chose it).
  // `tag`: dispatch_threshold's decision, for the trace (profiling only).
  // Timing mode charges the AICPU's time for each dispatch (one per task, block or MIX task).
  void dispatch(uint32_t i, int64_t task, const DispatchPayload *payload, graph::DispatchTag tag = 0) {
    platform_device_work(DeviceWork::kDispatch);
    push(i, task, reinterpret_cast<uint64_t>(payload), false, tag);
  }

  // Block `idx` of `num` of an SPMD task to core i (as dispatch); its BlockDispatch is this
  // core's for the handshake place it goes to, reused only after that place is collected.
  void dispatch_block(uint32_t i, int64_t task, const DispatchPayload *payload, uint32_t idx, uint32_t num,
                      graph::DispatchTag tag = 0) {
    platform_device_work(DeviceWork::kDispatch);
    Core &c = cores_[i];
    BlockDispatch &b = c.block[(c.seq + 1) % kDepth];
    b.payload = *payload;
    b.mix_sync = 0;
    b.block_idx = static_cast<int32_t>(idx);
    b.block_num = static_cast<int32_t>(num);
    push(i, task, reinterpret_cast<uint64_t>(&b) | kBlockDispatch, false, tag);
  }

  // An idle cluster not reserved for a waiting MIX task (for an SPMD MIX task's next block), or
  // -1.
  int32_t idle_cluster() const {
    if (gang_drain_ != 0) return -1;
    for (uint32_t c = 0; c < nclusters_; ++c) {
      if (clusters_[c].busy == 0 && clusters_[c].held == 0 && !clusters_[c].reserved)
        return static_cast<int32_t>(c);
    }
    return -1;
  }

  // Sync-start SPMD tasks (core/graph/scheduler_loop.h, GangSlot). A gang's place is a core for
  // an AIC or AIV task, a whole cluster for a MIX task. gang_places: up to `want` idle places
  // for a task of `core_type` into places[] (indices; clusters for MIX), how many; a cluster
  // draining for an ordinary MIX task does not keep its idle cores from the gang.
  uint32_t gang_places(uint32_t core_type, uint32_t want, uint32_t *places) const {
    uint32_t n = 0;
    if (core_type == PTO_CORE_MIX) {
      for (uint32_t c = 0; c < nclusters_ && n < want; ++c) {
        if (clusters_[c].busy == 0 && clusters_[c].held == 0) places[n++] = c;
      }
    } else if (core_type < PTO_CORE_TYPE_COUNT) {
      for_idle_from(1u << core_type, 0, [&](uint32_t i) {
        places[n++] = i;
        return n < want;
      });
    }
    return n;
  }
  // Holds a place gang_places found for the gang: nothing else starts there until the gang's
  // block is dispatched to it (dispatch_block / dispatch_mix).
  void hold(uint32_t core_type, uint32_t place) {
    if (core_type != PTO_CORE_MIX) {
      hold_core(place);
      return;
    }
    for (uint32_t k = 0; k < per_cluster_; ++k) hold_core(clusters_[place].core[k]);
  }
  // While a gang of `core_type` still lacks places (`on`), this pool starts nothing new where
  // the gang could use it: no task is queued behind a running one on a core of that type, and
  // for a MIX gang no single task starts at all, so that clusters drain whole.
  void drain_for_gang(uint32_t core_type, bool on) {
    gang_drain_ = !on ? 0 : core_type == PTO_CORE_MIX ? 3u : 1u << (core_type & 1);
  }

  // A core for a task of `core_type` that this thread just released, to run it right here (no
  // trip through the shared queue, where an idle peer would take it to a cold, parked core):
  // an idle core outside reserved clusters, the warm one if it qualifies, unless at the
  // short-task cap; else, while kernels are short, a busy core with room (warm first); -1 if
  // none.
  int32_t core_for(uint32_t core_type) const { return find_core<false>(core_type, warm_, 0); }

  // dispatch_threshold's core_for: the same places, among the pool's first `active` cores only,
  // scanned from the warm core (locality) or from the pool's round-robin cursor, which moves
  // past the core chosen (round_robin).
  int32_t core_for(uint32_t core_type, bool round_robin, uint32_t active) {
    if (core_type >= PTO_CORE_TYPE_COUNT) return -1;
    const int32_t found = find_core<true>(core_type, round_robin ? rr_[core_type] : warm_, active);
    if (found >= 0 && round_robin) rr_[core_type] = (static_cast<uint32_t>(found) + 1) % count_;
    return found;
  }

  // dispatch_threshold's feed: the same places as feed(), in two stages. First the pool (MIX,
  // then AIC, then AIV, each only when its queue holds work), and choose(pool) decides once
  // for it (DispatchChoice: policy, active core set, tag); then within the pool, idle cores
  // whose pool index is below `active`, from the warm core or the round-robin cursor. A cube
  // or vector core also takes `any` tasks under its own pool's decision. take / take_mix get
  // the decision's tag.
  template <typename Take, typename TakeMix, typename Choose>
  bool feed_by_pool(graph::ReadyQueueSet &ready, Take &&take, TakeMix &&take_mix, Choose &&choose) {
    using graph::pool_bit;
    bool progress = false;
    if (!ready.probably_empty(pool_bit(graph::kPoolMix))) {
      const graph::DispatchChoice ch = choose(graph::kPoolMix);
      progress = feed_mix<true>(
          ready, [&](int64_t t, uint32_t c) { return take_mix(t, c, ch.tag); }, ch.active);
    } else {
      unreserve_all();
    }
    for (uint32_t type = 0; type < PTO_CORE_TYPE_COUNT; ++type) {
      if (ready.probably_empty(pool_bit(type) | pool_bit(graph::kPoolAny))) continue;
      const graph::DispatchChoice ch = choose(type);
      const bool rr = ch.policy == DispatchPolicy::kRoundRobin;
      const uint32_t from = rr ? rr_[type] : warm_;
      auto tagged = [&](int64_t t, uint32_t i) { return take(t, i, ch.tag); };
      auto in_set = [&](uint32_t i) { return cores_[i].pool_index < ch.active; };
      if (!at_cap()) {
        auto take_idle = [&](int64_t t, uint32_t i) {  // the round-robin cursor moves past it
          if (!tagged(t, i)) return false;
          if (rr) rr_[type] = (i + 1) % count_;
          return true;
        };
        for_idle_from(1u << type, from, [&](uint32_t i) {
          if (!in_set(i) || closed(cores_[i]) || !still_idle(i)) return true;
          return pop_into(ready, i, take_idle, &progress) && !at_cap();
        });
      }
      if (!pipelining()) continue;
      for_busy_from(from, [&](uint32_t i) {
        if (cores_[i].core_type != type || !in_set(i)) return true;
        while (can_queue(cores_[i])) {
          if (!pop_into(ready, i, tagged, &progress)) return false;
        }
        return true;
      });
    }
    return progress;
  }

  // Feeds cores from the ready queues (core/graph/ready_queue_set.h): a core takes from its
  // own pool (cube or vector), then steals from the `any` pool (try_pop_any); an idle cluster
  // takes whole-cluster tasks from the mix pool. Idle cores first, then, while kernels are
  // short, the second place of busy ones. For each task popped, take(task, core) or, for MIX,
  // take_mix(task, cluster) dispatches it and returns true, or finishes it without running it
  // (poisoned) and returns false, so the same place gets the next one. A MIX task waiting for
  // a cluster reserves one: no new single tasks go there until it drains.
  template <typename Take, typename TakeMix>
  bool feed(graph::ReadyQueueSet &ready, Take &&take, TakeMix &&take_mix) {
    bool progress = false;
    if (!ready.probably_empty(graph::pool_bit(graph::kPoolMix))) {
      progress = feed_mix<false>(ready, take_mix, graph::DispatchThreshold::kAllCores);
    } else {
      unreserve_all();
    }
    if (ready.probably_empty(graph::kSingleCorePools)) return progress;
    // Idle cores are found through their bits (idle_mask_), from the warm core on, and once a
    // core of one type finds its pools empty no other core of that type tries them again in
    // this pass (each failed pop reads the queues' shared lines).
    uint32_t drained = 0;  // bit t: the pools cores of type t take from came up empty
    if (!at_cap()) {
      for_idle_from(3, warm_, [&](uint32_t i) {
        const uint32_t type_bit = 1u << (cores_[i].core_type & 1);
        if ((drained & type_bit) != 0 || closed(cores_[i]) || !still_idle(i)) return true;
        if (!pop_into(ready, i, take, &progress)) drained |= type_bit;
        return !at_cap() && drained != 3;
      });
    }
    if (pipelining()) {
      drained = 0;
      for_busy_from(warm_, [&](uint32_t i) {
        const uint32_t type_bit = 1u << (cores_[i].core_type & 1);
        while ((drained & type_bit) == 0 && can_queue(cores_[i])) {
          if (!pop_into(ready, i, take, &progress)) drained |= type_bit;
        }
        return drained != 3;
      });
    }
    return progress;
  }

 private:
  void set_idle(uint32_t i, bool idle) {
    const uint64_t bit = uint64_t{1} << (i % 64);
    uint64_t &w = idle_mask_[cores_[i].core_type & 1][i / 64];
    w = idle ? (w | bit) : (w & ~bit);
  }
  // The idle cores of the types in `types` (bit t: type t).
  template <typename Fn>
  void for_idle_from(uint32_t types, uint32_t from, Fn &&fn) const {
    for_bits_from<kMaskWords>(
        [&](uint32_t w) {
          return ((types & 1) ? idle_mask_[0][w] : 0) | ((types & 2) ? idle_mask_[1][w] : 0);
        },
        from, fn);
  }
  // The cores with work in flight (the only ones can_queue may accept).
  template <typename Fn>
  void for_busy_from(uint32_t from, Fn &&fn) const {
    for_bits_from<kMaskWords>([&](uint32_t w) { return busy_mask_[w]; }, from, fn);
  }
  // feed(): pops tasks for core i (its own pool, then `any`) until one is taken (true) or the
  // pools are empty (false).
  template <typename Take>
  bool pop_into(graph::ReadyQueueSet &ready, uint32_t i, Take &take, bool *progress) {
    const uint32_t mask = graph::pool_bit(cores_[i].core_type) | graph::pool_bit(graph::kPoolAny);
    uint64_t t;
    while (ready.try_pop_any(mask, &t)) {
      *progress = true;
      if (take(static_cast<int64_t>(t), i)) return true;
    }
    return false;
  }

  // The MIX pool (not empty): idle clusters take whole-cluster tasks, take_mix(task, cluster)
  // as take in feed(); a MIX task still waiting for a cluster reserves one, so no new single
  // tasks go there until it drains. kActiveSet: only clusters whose chip index is below `active`.
  template <bool kActiveSet, typename TakeMix>
  bool feed_mix(graph::ReadyQueueSet &ready, TakeMix &&take_mix, uint32_t active) {
    bool progress = false;
    bool waiting = true;
    for (uint32_t c = 0; c < nclusters_ && waiting; ++c) {
      Cluster &cl = clusters_[c];
      if (kActiveSet && cl.id >= active) continue;
      uint64_t t;
      while (cl.busy == 0 && cl.held == 0 && ready.try_pop(graph::kPoolMix, &t)) {
        progress = true;
        cl.reserved = false;
        if (take_mix(static_cast<int64_t>(t), c)) break;
      }
      waiting = !ready.probably_empty(graph::pool_bit(graph::kPoolMix));
    }
    if (waiting) reserve_one(active);
    return progress;
  }
  void unreserve_all() {
    for (uint32_t c = 0; c < nclusters_; ++c) clusters_[c].reserved = false;
  }

  // core_for's places, scanned from core `from`. kActiveSet: only cores whose pool index is
  // below `active` (if constexpr: without it, the walks' closures stay as small as before).
  template <bool kActiveSet>
  int32_t find_core(uint32_t core_type, uint32_t from, uint32_t active) const {
    (void)active;  // read only with kActiveSet
    if (core_type >= PTO_CORE_TYPE_COUNT) return -1;
    if (idle_by_type_[core_type] != 0 && !at_cap()) {
      int32_t found = -1;
      for_idle_from(1u << core_type, from, [&](uint32_t i) {
        if (closed(cores_[i])) return true;
        if constexpr (kActiveSet) {
          if (cores_[i].pool_index >= active) return true;
        }
        found = static_cast<int32_t>(i);
        return false;
      });
      if (found >= 0) return found;
    }
    if (!pipelining()) return -1;
    int32_t found = -1;
    for_busy_from(from, [&](uint32_t i) {
      if (cores_[i].core_type != core_type || !can_queue(cores_[i])) return true;
      if constexpr (kActiveSet) {
        if (cores_[i].pool_index >= active) return true;
      }
      found = static_cast<int32_t>(i);
      return false;
    });
    return found;
  }

 public:
  // Starts a MIX task on every core of idle cluster c: payloads[k] to its member k (AIC cores
  // first, then AIV: core/cluster_layout.h). collect reports it once all finished. The
  // cluster's MixSync block, reset, becomes the task's (the parts' call blocks point at it);
  // the dispatch rings publish both.
  // An SPMD MIX task (block_num > 1) gives the block it starts there (block_idx of block_num):
  // its cores get BlockDispatches naming the cluster's sync block, since the task's call blocks
  // are shared by blocks running on other clusters.
  void dispatch_mix(uint32_t c, int64_t task, const DispatchPayload *const payloads[kMaxCoresPerCluster],
                    graph::DispatchTag tag = 0, uint32_t block_idx = 0, uint32_t block_num = 1) {
    platform_device_work(DeviceWork::kDispatch);  // the cluster's parts in one pass
    Cluster &cl = clusters_[c];
    uint64_t words[kMaxCoresPerCluster];
    MixSync *m = mix_ ? &mix_[cl.id] : nullptr;
    if (m) mix_sync_reset(*m, task);
    for (uint32_t k = 0; k < per_cluster_; ++k) {
      if (block_num > 1) {
        Core &core = cores_[cl.core[k]];
        BlockDispatch &b = core.block[(core.seq + 1) % kDepth];
        b.payload = *payloads[k];
        b.mix_sync = reinterpret_cast<uint64_t>(m);
        b.block_idx = static_cast<int32_t>(block_idx);
        b.block_num = static_cast<int32_t>(block_num);
        words[k] = reinterpret_cast<uint64_t>(&b) | kBlockDispatch;
      } else {
        if (m)
          reinterpret_cast<pto_kernel_call *>(payloads[k]->call_addr)->mix_sync =
              reinterpret_cast<uint64_t>(m);
        words[k] = reinterpret_cast<uint64_t>(payloads[k]);
      }
    }
    cl.mix_task = task;
    cl.parts_left = per_cluster_;
    if (profiling()) {
      cl.mix_timing = CoreTiming{platform_ticks(), 0, 0, 0, -1};
      cl.mix_timing.dispatch_tag = tag;
      cl.mix_price = KernelPrice{};
    }
    for (uint32_t k = 0; k < per_cluster_; ++k) push(cl.core[k], task, words[k], true, tag);
  }
  uint32_t cluster_aic_slot(uint32_t c) const { return cores_[clusters_[c].core[0]].slot; }

  // The run's counters of every core this thread owns, into by_slot[handshake slot].
  void write_counters(CoreCounters *by_slot) const {
    for (uint32_t i = 0; i < count_; ++i) by_slot[cores_[i].slot] = cores_[i].counters;
  }

  // dispatch_threshold: a queue still holds work after this thread fed what its decisions let
  // it (an inactive core of this thread may be an active one of a peer's, and a peer parked
  // with idle cores must hear that the metric crossed), so ask for help whenever any does.
  bool needs_help_any(const graph::ReadyQueueSet &ready) const { return !ready.probably_empty(~0u); }

  // True when a queue still holds work that this thread has no place for: time to wake a peer
  // (a hint: the queue may drain meanwhile, which only costs a spurious wake-up).
  bool needs_help(const graph::ReadyQueueSet &ready) const {
    using graph::pool_bit;
    for (uint32_t t = 0; t < PTO_CORE_TYPE_COUNT; ++t) {
      if (!ready.probably_empty(pool_bit(t)) && (idle_by_type_[t] == 0 || at_cap()) && !room_for(t))
        return true;
    }
    if (!ready.probably_empty(pool_bit(graph::kPoolAny)) &&
        ((idle_by_type_[0] == 0 && idle_by_type_[1] == 0) || at_cap()) && !room_for(0) && !room_for(1))
      return true;
    if (!ready.probably_empty(pool_bit(graph::kPoolMix))) {
      for (uint32_t c = 0; c < nclusters_; ++c) {
        if (clusters_[c].busy == 0) return false;
      }
      return true;
    }
    return false;
  }

 private:
  struct Core {
    Handshake *hs = nullptr;
    uint32_t slot = 0;
    uint32_t core_type = 0;
    uint32_t cluster = 0;
    uint32_t pool_index = 0;         // its index among the chip's cores of its type (active_cores_below)
    uint32_t seq = 0;                // hs->dispatch.seq after our last ring (we are its only writer)
    uint32_t collected = 0;          // last seq whose completion was reported; == seq when idle
    uint32_t mix_parts = 0;          // MIX task parts among the tasks in flight
    bool held = false;               // idle, held for a sync-start gang's block (hold)
    int64_t task[kDepth] = {};       // by seq % kDepth: the task (or MIX task part) dispatched
    bool mix_part[kDepth] = {};      // that entry is a part of the cluster's MIX task (a freed part's
                                     // core may meanwhile run single tasks, which must not count)
    uint64_t dispatch[kDepth] = {};  // profiling only: ticks
    uint32_t tag[kDepth] = {};       // profiling only: dispatch_threshold's decision (graph::DispatchTag)
    BlockDispatch block[kDepth];     // SPMD blocks dispatched here, by seq % kDepth (dispatch_block)
    CoreCounters counters;           // this run's, always collected
  };
  struct Cluster {
    uint32_t core[kMaxCoresPerCluster] = {};  // indices into cores_, in the layout's member order
    uint32_t id = 0;                          // the chip's cluster index
    uint32_t busy = 0;                        // tasks in flight on its cores
    int64_t mix_task = -1;                    // the MIX task on it, if any (until its last part finishes)
    uint32_t parts_left = 0;                  // parts of mix_task still running
    bool reserved = false;                    // draining for a MIX task: no new single tasks
    uint32_t held = 0;                        // its cores held for a sync-start gang (hold)
    CoreTiming mix_timing;  // profiling: the MIX task's dispatch, earliest start, latest end
    KernelPrice mix_price;  // profiled timed runs: its parts' prices merged (merge_price)
  };

  // `word`: the payload's address, or a BlockDispatch's with kBlockDispatch set.
  void push(uint32_t i, int64_t task, uint64_t word, bool mix, graph::DispatchTag tag) {
    Core &c = cores_[i];
    const uint32_t e = (c.seq + 1) % kDepth;
    if (c.collected == c.seq) {
      if (c.held) {  // a gang's place: hold() took it out of the idle set
        c.held = false;
        --clusters_[c.cluster].held;
      } else {
        --idle_by_type_[c.core_type & 1];
        set_idle(i, false);
      }
      busy_mask_[i / 64] |= uint64_t{1} << (i % 64);
    }
    c.task[e] = task;
    c.mix_part[e] = mix;
    c.mix_parts += mix;
    if (profiling()) {
      c.dispatch[e] = platform_ticks();
      c.tag[e] = tag;
    }
    ++busy_;
    ++clusters_[c.cluster].busy;
    c.hs->payload[e].store(word, std::memory_order_relaxed);
    c.hs->task_id[e].store(task, std::memory_order_relaxed);  // what a crash report names
    ++c.seq;
    doorbell_ring(c.hs->dispatch);  // seq_cst RMW: releases the payload and its arguments
  }

  // A MIX part's timing folded into its cluster's; *timing becomes the whole task's.
  void merge_mix_part(Cluster &cl, CoreTiming *timing) {
    CoreTiming &m = cl.mix_timing;
    m.start = m.start ? (timing->start < m.start ? timing->start : m.start) : timing->start;
    m.end = timing->end > m.end ? timing->end : m.end;
    m.pmu.cycles += timing->pmu.cycles;
    m.pmu.instructions += timing->pmu.instructions;
    m.pmu.cache_misses += timing->pmu.cache_misses;
    m.pmu.valid = m.pmu.valid ? (m.pmu.valid & timing->pmu.valid) : timing->pmu.valid;
    m.pmu.error = m.pmu.error ? m.pmu.error : timing->pmu.error;
    if (timing->price != nullptr) merge_price(&cl.mix_price, *timing->price);
    CoreTiming whole{
        m.dispatch, m.start, m.end, timing->complete, static_cast<int32_t>(cores_[cl.core[0]].slot), m.pmu};
    whole.dispatch_tag = m.dispatch_tag;
    if (timing->price != nullptr) whole.price = &cl.mix_price;
    *timing = whole;
  }

  // A MIX task's parts run at once on their cores: the longest part's cycles, every part's pipes
  // (a pipe name means one pipe per core), the least informed source.
  static void merge_price(KernelPrice *m, const KernelPrice &part) {
    if (m->source == PTO_PRICE_NONE) {
      *m = part;
      return;
    }
    m->source = part.source < m->source ? part.source : m->source;
    m->stuck += part.stuck;
    m->cycles = part.cycles > m->cycles ? part.cycles : m->cycles;
    for (uint32_t p = 0; p < kPricePipes; ++p) {
      const uint64_t sum = uint64_t{m->pipe_ns[p]} + part.pipe_ns[p];
      m->pipe_ns[p] = sum > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(sum);
    }
  }

  bool at_cap() const { return busy_ != 0 && task_ticks_ < short_ticks_; }
  // Core i is idle now. A walk over the idle cores visits the mask word as it was when the walk
  // reached it, and a task taken for one core of the walk may fill others (an SPMD task's
  // blocks go to every place with room): such a core is busy, maybe full, when the walk gets
  // to it, and a dispatch there would overwrite a place the core has not run yet.
  bool still_idle(uint32_t i) const { return (idle_mask_[cores_[i].core_type & 1][i / 64] >> (i % 64)) & 1; }
  // No new single task starts on c: its cluster drains for a MIX task, or a gang drains c's type.
  bool closed(const Core &c) const {
    return clusters_[c.cluster].reserved || (gang_drain_ & (1u << (c.core_type & 1))) != 0;
  }
  void hold_core(uint32_t i) {
    Core &c = cores_[i];
    c.held = true;
    --idle_by_type_[c.core_type & 1];
    set_idle(i, false);
    ++clusters_[c.cluster].held;
  }
  // Not before a kernel was timed: queueing behind a long first kernel would serialise the start.
  bool pipelining() const { return timed_ != 0 && task_ticks_ < pipe_ticks_; }
  // A busy core that may be handed one more task: room left, no MIX part in flight (a MIX task
  // has its cluster to itself), cluster not reserved.
  bool can_queue(const Core &c) const {
    const uint32_t in_flight = c.seq - c.collected;
    return in_flight != 0 && in_flight < kDepth && c.mix_parts == 0 && !closed(c);
  }
  bool room_for(uint32_t core_type) const {
    if (!pipelining()) return false;
    bool room = false;
    for_busy_from(0, [&](uint32_t i) {
      room = cores_[i].core_type == core_type && can_queue(cores_[i]);
      return !room;
    });
    return room;
  }

  // `active`: only clusters whose chip index is below it (dispatch_threshold's active set).
  void reserve_one(uint32_t active) {
    uint32_t best = nclusters_;
    for (uint32_t c = 0; c < nclusters_; ++c) {
      if (clusters_[c].reserved) return;  // one at a time
      if (clusters_[c].mix_task < 0 && clusters_[c].id < active &&
          (best == nclusters_ || clusters_[c].busy < clusters_[best].busy))
        best = c;
    }
    if (best < nclusters_) clusters_[best].reserved = true;
  }

  // Room for the most a scheduler can own, constructed by init() only as far as it owns: a
  // scheduler is built at every run, and zeroing every core and cluster of the largest chip
  // (~21 KB when that was 96 cores and 32 clusters) was most of its construction.
  template <typename T, uint32_t N>
  struct Unbuilt {
    static_assert(std::is_trivially_destructible<T>::value, "never destroyed");
    alignas(T) unsigned char bytes[sizeof(T) * N];
    T &operator[](uint32_t i) { return reinterpret_cast<T *>(bytes)[i]; }
    const T &operator[](uint32_t i) const { return reinterpret_cast<const T *>(bytes)[i]; }
  };
  static constexpr uint32_t kMaskWords = (kMaxCores + 63) / 64;
  Unbuilt<Core, kMaxCores> cores_;           // [0, count_) built by init()
  Unbuilt<Cluster, kMaxClusters> clusters_;  // [0, nclusters_) built by init()
  uint64_t busy_mask_[kMaskWords] = {};      // bit i: cores_[i] has work in flight (collected != seq)
  // [type][word], bit i: cores_[i], of that type, is idle (collected == seq)
  uint64_t idle_mask_[PTO_CORE_TYPE_COUNT][kMaskWords] = {};
  MixSync *mix_ = nullptr;  // by chip cluster index (init)
  uint32_t count_ = 0, nclusters_ = 0;
  uint32_t per_cluster_ = 0;  // cores a cluster (init's layout)
  uint32_t busy_ = 0;
  uint32_t gang_drain_ = 0;  // bit t: a gang drains cores of type t (drain_for_gang)
  uint32_t idle_by_type_[PTO_CORE_TYPE_COUNT] = {0, 0};
  uint32_t warm_ = 0;
  // dispatch_threshold's round_robin: per pool, the core after the last one chosen.
  uint32_t rr_[PTO_CORE_TYPE_COUNT] = {0, 0};
  int64_t short_ticks_ = 0;  // see init
  int64_t pipe_ticks_ = 0;   // see init
  int64_t task_ticks_ = 0;   // moving average of this pool's kernel durations
  uint64_t timed_ = 0;       // kernels that went into it
  bool profiling_ = false;   // profiling or enable_pmu: per-task timings for the trace
  bool pmu_ = false;
  bool price_ = false;  // profiling a sim timing run: each kernel's KernelPrice for the trace
  bool profiling() const { return kProfilingBuilt && profiling_; }  // false at compile time without
  bool pmu_on() const { return kProfilingBuilt && pmu_; }           // the profiling code
};

}  // namespace pto
#endif  // PTO_CORE_CORE_POOL_H
