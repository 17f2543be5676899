// src/core/graph/scheduler_loop.h — the one AICPU scheduler loop every L2 runtime runs: dispatch, completion,
// release, abort.
//
// One file of ~630 lines on purpose: it is the hot path, one documented loop that every runtime
// instantiates inline; its helpers (dispatch, completion, abort, timing slots) read the same
// members and keep its invariants, so they stay beside it.
//
// Scheduler thread idx of count owns the clusters c with c % count == idx (core/core_pool.h).
// One pass of its loop: collect the tasks its cores finished (record, dump, note a failure,
// release the consumers whose fan-in reached zero, retire the task), then, unless the run is
// being aborted, feed its idle cores from the ReadyQueueSet and wake a peer when work is left
// that it has no place for. With nothing moved it parks on its doorbell, which its cores ring
// on completion, peers and the orchestrator when they enqueue work, the host on abort.
//
// A consumer this thread made ready starts at once on one of its own idle cores (the warm one
// if possible: a chain stays on one hot core instead of crossing to a peer's parked core), else
// goes to its pool's queue for whoever has a core free. Abort (the host's time-out, abort() or
// Ctrl-C) stops both ways of starting work: nothing is fed from the queues and nothing is
// started on release; a released task waits in its queue. The loop ends when the policy says
// the run is done, or once aborting with none of its cores busy.
//
// pipeline_depth (core/graph/pipeline_gates.h): when the run has token gates, a task takes a
// token just before it is dispatched (start / start_mix), or is deferred at its gate; a
// completion returns the token and releases the gate's oldest deferred task. Without gates
// each of the two costs one predictable branch.
//
// Task timing slots (pto::Launch::timing_slot, TaskRecord::timing_tag): a tagged task's dispatch
// (each block's; a MIX task's one) and finish (each block's) are folded into this thread's
// TaskTimingSlots (core/run_counters.h) with platform_ticks(), the device clock the timing
// model drives: virtual time in a timed run, the measured counter otherwise. The finish is
// stamped when this thread collects the completion, before it releases any consumer, so a
// consumer's dispatch is never stamped before its producer's finish. An untagged task costs
// one predictable branch at each.
//
// dispatch_threshold (core/graph/dispatch_threshold.h): when the run has a dispatch metric,
// each release and each feed pass first measures it and takes the policy and active core set
// it selects (release_by_policy, CorePool::feed_by_pool); the decision travels with the task
// to the trace. Without a metric each of the two costs one predictable branch.
//
// What is runtime-specific is a Policy (static: every hook inlines into the loop):
//   TaskRecord &task(int64_t id)                 the record of a task id
//   template <F> void for_each_consumer(id, F)   walk id's fan-out (once, when id finishes)
//   int32_t status_of(int64_t id)                its kernel's status (MIX: first non-zero part)
//   void on_failed(int64_t id, int32_t status)   first failure record, before the fan-out walk
//   void on_ran(int64_t id)                      a task ran successfully (per-type counters)
//   bool retire(int64_t id)                      count it finished, free its slot; true when
//                                                it was the run's last: every peer is woken
//   bool done()                                  every task of the run has finished
//   void end()                                   the loop is over (per-thread counts go out)
//   void mix_parts(id, const DispatchPayload *[3])  MIX tasks' three parts (kHasMix only)
//   DispatchPredicate predicate(int64_t id)      its dispatch predicate (asked only when
//                                                TaskRecord::pred_op is set)
//   static constexpr bool kHasMix                the runtime has MIX tasks
//   static constexpr bool kZeroSubmit            the scheduler writes the trace's submit field
// Tasks that take no core (kPoolInline: dependency-only tasks, and tasks whose dispatch predicate
// is false when they become ready) go to the inline pool wherever they became ready; each pass
// of a scheduler thread retires what is there (retire_inline): records it, releases its
// consumers and retires it, as if it had run. A chain of them costs queue operations on one
// thread, no core hand-off, and no recursion however long it is.
//
// Sync-start SPMD tasks (pto::Launch::sync_start: every block starts together) wait in
// kPoolGang and go through the run's one GangSlot (core/graph/ready_queue_set.h), oldest first
// (gang_pass, each pass before the other pools are fed). A thread that finds the slot free
// takes the next task into it. Then every thread claims idle places of the task's shape (cores;
// whole clusters for MIX) up to the blocks still unclaimed, with a CAS on the slot's word, and
// holds them: nothing else starts there. While blocks are unclaimed, each thread also stops
// starting new work where the gang could use it (no task queued behind a running one on a
// core of its type; for a MIX gang, no single task at all), so its busy places drain into the
// gang. The thread whose claim completes the count sets the task running and posts `go`; each
// holder then starts its blocks, and the last one frees the slot.
// Why this cannot deadlock (docs/design/sync_start.md): a task is admitted only if its blocks
// fit in the run's places of its shape (launch_check.h); the gang's task is ready, so nothing
// it waits for is running; every place not yet claimed is busy with a task that started
// before the drain and finishes on its own (or the run times out), after which its thread
// claims it before feeding anything else; and one gang at a time means two gangs never hold
// parts of the places each other needs.
// Nothing here allocates or throws: it is built into the AICPU program.
//
// Over 600 lines because it is the one loop both runtimes run: dispatch, completion, release
// and abort read and write the same per-thread state, and splitting them across files would
// spread one protocol. Its helpers that touch no loop state (predicates, dump, trace records)
// are what would move out first.
#ifndef PTO_CORE_GRAPH_SCHEDULER_LOOP_H
#define PTO_CORE_GRAPH_SCHEDULER_LOOP_H

#include <atomic>
#include <cstdint>

#include "core/core_pool.h"
#include "core/graph/dispatch_threshold.h"
#include "core/graph/pipeline_gates.h"
#include "core/graph/ready_queue_set.h"
#include "core/graph/task_record.h"
#include "core/run_counters.h"
#include "core/scheduler_bell.h"
#include "core/tensor_dump.h"
#include "core/trace.h"
#include "pto/device_log.h"
#include "pto/dispatch_predicate.h"
#include "pto_platform/clock.h"
#include "pto_platform/doorbell.h"

namespace pto {
namespace graph {

// What a scheduler thread reads from its run's header, gathered once by the runtime.
struct SchedulerEnv {
  Handshake *handshakes;      // the device's handshake block
  SchedulerSlot *sched;       // every scheduler thread's doorbell slot
  uint32_t sched_threads;     // scheduler threads of the run (peers)
  uint32_t counter_threads;   // SchedulerCounters entries in the counters region
  ClusterLayout layout;       // of the chip: the handshake block's
  uint32_t block_dim;         // clusters the run uses
  uint64_t short_task_ticks;  // core/core_pool.h
  uint64_t pipeline_ticks;    // core/core_pool.h
  uint64_t trace_addr;        // TaskTrace[trace_capacity] by task id, or 0
  uint64_t trace_capacity;
  uint64_t pmu_addr;       // PmuTrace[trace_capacity] by task id, or 0
  uint64_t price_addr;     // sim timing mode with profiling: KernelPrice[trace_capacity] by task id, or 0
  uint64_t counters_addr;  // the run counters (core/run_counters.h)
  const pto_device_log *log;
  DumpRegion *dump;  // enable_dump_tensor, else null
  MixSync *mix;      // MixSync[block_dim] when the runtime has MIX tasks, else null
  ReadyQueueSet *ready;
  const std::atomic<uint32_t> *abort;  // host-written: stop starting work, drain, quit
  PipelineGates gates;                 // pipeline_depth's token gates; off (null) by default
  ScheduleConfig schedule;             // the run's schedule primitives (dispatch_threshold's)
};

// The fields every runtime's run header names alike (handshakes_addr, sched_addr, ...); the
// caller gives the ones that differ.
template <typename Header>
SchedulerEnv env_from_header(Header *h, uint32_t sched_threads, uint32_t counter_threads,
                             uint64_t trace_capacity, MixSync *mix) {
  SchedulerEnv e{};
  e.handshakes = reinterpret_cast<Handshake *>(h->handshakes_addr);
  e.sched = reinterpret_cast<SchedulerSlot *>(h->sched_addr);
  e.sched_threads = sched_threads;
  e.counter_threads = counter_threads;
  e.layout = ClusterLayout{h->num_clusters, h->aic_per_cluster, h->aiv_per_cluster};
  e.block_dim = h->block_dim;
  e.short_task_ticks = h->short_task_ticks;
  e.pipeline_ticks = h->pipeline_ticks;
  e.trace_addr = h->trace_addr;
  e.trace_capacity = trace_capacity;
  e.pmu_addr = h->pmu_addr;
  e.price_addr = h->price_addr;
  e.counters_addr = h->counters_addr;
  e.log = reinterpret_cast<const pto_device_log *>(h->log_addr);
  e.dump = reinterpret_cast<DumpRegion *>(h->dump_addr);
  e.mix = mix;
  e.ready = &h->ready;
  e.abort = &h->abort;
  e.gates = PipelineGates(reinterpret_cast<PipelineGate *>(h->gates_addr), h->sched.pipeline_depth,
                          h->sched.pipeline_scope);
  e.schedule = h->sched;
  return e;
}

// Puts a task whose fan-in reached zero into the queue of `pool` (ready_pool). Callable from
// any thread (the orchestrator too); the push releases the record's contents to the popper.
inline void make_ready(TaskRecord &t, ReadyQueueSet &ready, int64_t id, uint32_t pool) {
  t.state.store(kReady, std::memory_order_relaxed);
  ready.push(pool, static_cast<uint64_t>(id));  // never full: runtimes size the queues
}

template <typename Policy>
class SchedulerLoop {
 public:
  SchedulerLoop(const SchedulerEnv &env, const Policy &policy, uint32_t idx, uint32_t count)
      : env_(env),
        policy_(policy),
        idx_(idx),
        bell_(&env.sched[idx].bell),
        peers_(env.sched, env.sched_threads, idx),
        dispatch_(env.schedule) {
    cores_.init(env.handshakes, env.layout, env.block_dim, idx, count, bell_, env.trace_addr != 0,
                env.pmu_addr != 0, env.short_task_ticks, env.pipeline_ticks, env.mix, env.price_addr != 0);
    counters_.start = platform_clock_pair();
  }

  Policy &policy() { return policy_; }
  const Policy &policy() const { return policy_; }
  Doorbell &bell() { return *bell_; }
  uint32_t cores() const { return cores_.size(); }

  // One pass: collect finished tasks, then (unless aborting) feed idle cores. Whether anything
  // moved.
  bool poll() {
    bool collected =
        cores_.collect([this](int64_t id, const CoreTiming &timing) { completed(id, timing); }) != 0;
    if (aborting()) return collected;
    collected |= retire_inline();
    collected |= gang_pass();
    const bool dispatched = dispatch_ready();
    if (dispatch_.on() ? cores_.needs_help_any(*env_.ready) : cores_.needs_help(*env_.ready))
      peers_.ask_for_help(dispatched || collected);
    return dispatched || collected;
  }

  // Loops until the run is done, or aborted with none of this thread's cores busy; then
  // writes this thread's counters.
  void run() {
    if (idx_ == 0) {  // the reference's AICPU executor says the same ("AicpuExecutor: Initializing")
      DEV_INFO(env_.log, "AicpuExecutor: Initializing run: %u scheduler thread(s), %u cluster(s)", env_.sched_threads,
               env_.block_dim);
    }
    for (;;) {
      const uint32_t seen = doorbell_prepare(*bell_);
      const bool progress = poll();
      if (policy_.done()) break;
      if (aborting() && cores_.busy() == 0) break;
      if (!progress) {
        const uint64_t t = platform_ticks();
        doorbell_wait(*bell_, seen);
        counters_.parked_ticks += platform_ticks() - t;
      }
    }
    counters_.end = platform_clock_pair();
    policy_.end();
    if (env_.abort->load(std::memory_order_relaxed) != 0)
      DEV_WARN(env_.log, "scheduler %u: run aborted by the host", idx_);
    DEV_DEBUG(env_.log, "scheduler %u: done on %u core(s), parked %llu of %llu ticks", idx_, cores_.size(),
              static_cast<unsigned long long>(counters_.parked_ticks),
              static_cast<unsigned long long>(counters_.end.ticks - counters_.start.ticks));
    if (dispatch_.on()) dispatch_.write_counters(&counters_);
    scheduler_counters(env_.counters_addr)[idx_] = counters_;
    cores_.write_counters(core_counters(env_.counters_addr, env_.counter_threads));
    task_timing_slots(env_.counters_addr, env_.counter_threads, env_.layout.cores())[idx_] = slots_;
  }

 private:
  // acquire: pairs with the host's release store; the doorbell ring that follows it wakes us.
  bool aborting() const { return env_.abort->load(std::memory_order_acquire) != 0; }

  // A task whose cores all finished (an SPMD task: one of its blocks; the last one finishes it).
  void completed(int64_t id, const CoreTiming &timing) {
    TaskRecord &t = policy_.task(id);
    if (__builtin_expect(t.timing_tag != 0, 0)) slots_.finished(t.timing_tag, platform_ticks());
    platform_device_work(DeviceWork::kCompletion);  // timing mode: the AICPU's time for it
    if (t.block_num > 1 && t.blocks_done.fetch_add(1, std::memory_order_acq_rel) + 1 != t.block_num) return;
    const int32_t status = policy_.status_of(id);
    // pipeline_depth: its token back (before retire() may free the record), and the oldest
    // task deferred at its gate goes the way of a released one.
    if (env_.gates.on()) {
      const int64_t next =
          env_.gates.release(t, [this](int64_t i) -> TaskRecord & { return policy_.task(i); });
      if (next >= 0) release(next);
    }
    if (status != 0) {
      DEV_ERROR(env_.log, "task %lld (kernel %u) failed with status %d", static_cast<long long>(id),
                t.func_id, status);
    }
    record(id, status != 0 ? kTraceFailed : kTraceDone, timing);
    if (t.dump >= 0) dump_views(t, kDumpAfter);  // its outputs, before any consumer runs
    if (status != 0) {
      policy_.on_failed(id, status);  // ordered before the fan-out walk that publishes it
      finish(id, kFailed);
    } else {
      policy_.on_ran(id);
      finish(id, kDone);
    }
  }

  // Marks id finished, releases its consumers (poisoning them if it did not succeed), retires it.
  void finish(int64_t id, TaskState state) {
    policy_.task(id).state.store(state, std::memory_order_relaxed);
    const bool poison = state != kDone;
    policy_.for_each_consumer(id, [this, poison](int64_t c) {
      if (fanin_release(policy_.task(c), poison)) release(c);
    });
    if (policy_.retire(id)) peers_.wake_all();  // the run is over: peers stop waiting
  }

  // A consumer this thread made ready: on one of its own idle cores now, else into the queue
  // (a task that takes no core: into the inline pool, which this thread's pass drains).
  void release(int64_t id) {
    TaskRecord &t = policy_.task(id);
    if (t.pred_op != 0 || t.core_type == kPoolInline || t.flags != 0) {
      const uint32_t pool = ready_pool(t, [this, id] { return policy_.predicate(id); });
      if (pool == kPoolInline || pool == kPoolGang) {
        make_ready(t, *env_.ready, id, pool);  // this thread's pass takes it from there
        return;
      }
    }
    if (dispatch_.on()) {
      release_by_policy(id, t);
      return;
    }
    const int32_t core =
        t.poisoned.load(std::memory_order_relaxed) != 0 || aborting() ? -1 : cores_.core_for(t.core_type);
    if (core >= 0) {
      (void)start(id, static_cast<uint32_t>(core));  // false: deferred at its gate, promoted later
    } else {
      make_ready(t, *env_.ready, id, t.core_type);
    }
  }

  // dispatch_threshold's release: the metric picks the policy; locality and round_robin start
  // the task on one of this thread's active cores if one has room, work_stealing (or no room)
  // queues it, and work_stealing wakes a peer to come and take it.
  void release_by_policy(int64_t id, TaskRecord &t) {
    if (t.poisoned.load(std::memory_order_relaxed) != 0 || aborting()) {
      make_ready(t, *env_.ready, id, t.core_type);
      return;
    }
    const DispatchChoice ch = dispatch_.choose(t.core_type, *env_.ready, 1);
    const bool steal = ch.policy == DispatchPolicy::kWorkStealing;
    const int32_t core =
        steal ? -1 : cores_.core_for(t.core_type, ch.policy == DispatchPolicy::kRoundRobin, ch.active);
    if (core >= 0) {
      if (start(id, static_cast<uint32_t>(core), ch.tag)) dispatch_.dispatched(ch.tag);
      return;
    }
    make_ready(t, *env_.ready, id, t.core_type);
    if (steal) peers_.wake_one();
  }

  // pipeline_depth: takes a token for the task, or defers it at its gate (false: not started).
  bool admit(TaskRecord &t, int64_t id) {
    if (!env_.gates.on()) return true;
    if (env_.gates.acquire(t, id, [this](int64_t i) -> TaskRecord & { return policy_.task(i); })) return true;
    t.state.store(kReady, std::memory_order_relaxed);  // reports: ready, waiting for a token
    return false;
  }

  // Starts the task on core `core`, unless pipeline_depth defers it (false).
  bool start(int64_t id, uint32_t core, DispatchTag tag = 0) {
    TaskRecord &t = policy_.task(id);
    if (t.block_num > 1) return start_blocks(id, t, core, tag);
    if (!admit(t, id)) return false;
    t.core.store(static_cast<int16_t>(cores_.slot(core)), std::memory_order_relaxed);
    t.state.store(kRunning, std::memory_order_relaxed);
    if (t.dump >= 0) dump_views(t, kDumpBefore);  // its inputs
    // Profiling: fetch the task's record line for writing while the core runs it.
    if (kProfilingBuilt && env_.trace_addr && static_cast<uint64_t>(id) < env_.trace_capacity)
      __builtin_prefetch(reinterpret_cast<TaskTrace *>(env_.trace_addr) + id, 1);
    cores_.dispatch(core, id, &t.payload, tag);
    note_dispatch(t.timing_tag);
    return true;
  }

  // An SPMD task (block_num > 1): its next block on core `core`, then more on this thread's other
  // places for its core type; the blocks left go back to the pool's queue for any thread's cores
  // (start_each_block).
  bool start_blocks(int64_t id, TaskRecord &t, uint32_t core, DispatchTag tag) {
    return start_each_block(
        id, t, core, cores_.slot(core),
        [&](uint32_t c, uint32_t block) { cores_.dispatch_block(c, id, &t.payload, block, t.block_num, tag); },
        [&] { return cores_.core_for(t.core_type); });
  }

  bool start_mix(int64_t id, uint32_t cluster, DispatchTag tag = 0) {
    TaskRecord &t = policy_.task(id);
    if (t.block_num > 1) return start_mix_blocks(id, t, cluster, tag);
    if (!admit(t, id)) return false;
    t.core.store(static_cast<int16_t>(cores_.cluster_aic_slot(cluster)), std::memory_order_relaxed);
    t.state.store(kRunning, std::memory_order_relaxed);
    if (t.dump >= 0) dump_views(t, kDumpBefore);
    const DispatchPayload *parts[kMaxCoresPerCluster];
    policy_.mix_parts(id, parts);
    cores_.dispatch_mix(cluster, id, parts, tag);
    note_dispatch(t.timing_tag);
    return true;
  }

  // An SPMD MIX task: start_blocks with a whole cluster per block.
  bool start_mix_blocks(int64_t id, TaskRecord &t, uint32_t cluster, DispatchTag tag) {
    const DispatchPayload *parts[kMaxCoresPerCluster];
    policy_.mix_parts(id, parts);
    return start_each_block(
        id, t, cluster, cores_.cluster_aic_slot(cluster),
        [&](uint32_t c, uint32_t block) { cores_.dispatch_mix(c, id, parts, tag, block, t.block_num); },
        [&] { return cores_.idle_cluster(); });
  }

  // The blocks of an SPMD task from its next one: dispatch_at(place, block) on `place`, then on
  // each place next_place() finds (-1: none) until every block is out; the rest go back to the
  // pool's queue, and a peer is woken to look. The first block takes the task's token and dumps
  // its inputs; `slot` is what the task's record reports as its core.
  template <typename DispatchAt, typename NextPlace>
  bool start_each_block(int64_t id, TaskRecord &t, uint32_t place, uint32_t slot, DispatchAt &&dispatch_at,
                        NextPlace &&next_place) {
    uint32_t next = t.blocks_started.load(std::memory_order_relaxed);
    if (next == 0) {
      if (!admit(t, id)) return false;
      t.state.store(kRunning, std::memory_order_relaxed);
      if (t.dump >= 0) dump_views(t, kDumpBefore);
    }
    t.core.store(static_cast<int16_t>(slot), std::memory_order_relaxed);
    for (;;) {
      dispatch_at(place, next);
      note_dispatch(t.timing_tag);
      if (++next == t.block_num) break;
      const int32_t more = next_place();
      if (more < 0) break;
      place = static_cast<uint32_t>(more);
    }
    t.blocks_started.store(static_cast<uint16_t>(next), std::memory_order_relaxed);
    if (next < t.block_num) {
      env_.ready->push(t.core_type, static_cast<uint64_t>(id));  // never full: the task was in it
      peers_.wake_one();
    }
    return true;
  }

  // Task timing slots: a tagged task (block, MIX task) was just handed to its core(s).
  void note_dispatch(uint8_t timing_tag) {
    if (__builtin_expect(timing_tag != 0, 0)) slots_.dispatched(timing_tag, platform_ticks());
  }

  // A popped task whose producer failed is finished unrun (false: the place takes the next).
  bool skip_if_poisoned(int64_t id) {
    if (policy_.task(id).poisoned.load(std::memory_order_relaxed) == 0) return false;
    record(id, kTraceSkipped, CoreTiming{});
    finish(id, kSkipped);
    return true;
  }

  // Sync-start tasks (see the top of this file): open the slot to the next one if it is free,
  // claim and hold this thread's idle places for the one in it, drain the rest while blocks are
  // unclaimed, and start the held blocks once `go` names the task (whether anything moved).
  bool gang_pass() {
    if (!env_.ready->has(kPoolGang)) return false;  // a run without sync-start tasks (host_build_graph)
    GangSlot &g = env_.ready->gang();
    bool moved = false;
    uint64_t w = g.word.load(std::memory_order_acquire);
    if (w == 0 && !env_.ready->probably_empty(pool_bit(kPoolGang))) {
      moved = open_gang(g);
      w = g.word.load(std::memory_order_acquire);
    }
    if (w == 0 || w == GangSlot::kOpening) {
      cores_.drain_for_gang(0, false);
      return moved;
    }
    const int64_t id = GangSlot::task_of(w);
    TaskRecord &t = policy_.task(id);
    const uint32_t type = t.core_type, blocks = t.block_num;
    uint32_t claimed = GangSlot::claimed_of(w);
    if (claimed < blocks) {
      uint32_t places[CorePool::kMaxCores];
      const uint32_t found = cores_.gang_places(type, blocks - claimed, places);
      while (found != 0) {
        const uint32_t take = found < blocks - claimed ? found : blocks - claimed;
        if (g.word.compare_exchange_weak(w, w + take, std::memory_order_acq_rel, std::memory_order_acquire)) {
          for (uint32_t k = 0; k < take; ++k) {
            cores_.hold(type, places[k]);
            gang_place_[gang_held_] = places[k];
            gang_block_[gang_held_++] = claimed + k;
          }
          claimed += take;
          moved = true;
          if (claimed == blocks) start_gang(g, id, t);
          break;
        }
        if (GangSlot::task_of(w) != id) break;  // not this task's slot any more
        claimed = GangSlot::claimed_of(w);
        if (claimed >= blocks) break;
      }
    }
    cores_.drain_for_gang(type, claimed < blocks);
    if (gang_held_ != 0 && g.go.load(std::memory_order_acquire) == static_cast<uint64_t>(id) + 1) {
      launch_gang(g, id, t);
      moved = true;
    }
    return moved;
  }

  // The slot is free: takes the oldest sync-start task into it (true if one was taken or
  // finished unrun). Opening is a CAS to kOpening, so one thread pops at a time.
  bool open_gang(GangSlot &g) {
    uint64_t expect = 0;
    if (!g.word.compare_exchange_strong(expect, GangSlot::kOpening, std::memory_order_acq_rel)) return false;
    bool any = false;
    uint64_t popped;
    while (env_.ready->try_pop(kPoolGang, &popped)) {
      any = true;
      const auto id = static_cast<int64_t>(popped);
      if (skip_if_poisoned(id)) continue;
      if (!admit(policy_.task(id), id)) continue;  // deferred at its gate; released here again later
      g.launched.store(0, std::memory_order_relaxed);
      g.go.store(0, std::memory_order_relaxed);
      g.word.store(GangSlot::task_word(id), std::memory_order_release);
      peers_.wake_all();  // every thread claims its idle places
      return true;
    }
    g.word.store(0, std::memory_order_release);
    return any;
  }

  // Every block is claimed (by this thread's claim): the task runs from here; `go` lets every
  // holder start its blocks.
  void start_gang(GangSlot &g, int64_t id, TaskRecord &t) {
    t.state.store(kRunning, std::memory_order_relaxed);
    t.blocks_started.store(t.block_num, std::memory_order_relaxed);
    const uint32_t place = gang_place_[0];
    t.core.store(static_cast<int16_t>(t.core_type == PTO_CORE_MIX ? cores_.cluster_aic_slot(place)
                                                                  : cores_.slot(place)),
                 std::memory_order_relaxed);
    if (t.dump >= 0) dump_views(t, kDumpBefore);
    g.go.store(static_cast<uint64_t>(id) + 1, std::memory_order_release);
    peers_.wake_all();
  }

  // Starts this thread's held blocks of the gang's task; the thread that starts the last block
  // frees the slot for the next sync-start task.
  void launch_gang(GangSlot &g, int64_t id, TaskRecord &t) {
    const uint32_t blocks = t.block_num, held = gang_held_;  // t may finish once its blocks run
    const uint8_t timing_tag = t.timing_tag;
    if (t.core_type == PTO_CORE_MIX) {
      if constexpr (Policy::kHasMix) {
        const DispatchPayload *parts[kMaxCoresPerCluster];
        policy_.mix_parts(id, parts);
        for (uint32_t k = 0; k < held; ++k) cores_.dispatch_mix(gang_place_[k], id, parts, 0, gang_block_[k], blocks);
      }
    } else {
      for (uint32_t k = 0; k < held; ++k)
        cores_.dispatch_block(gang_place_[k], id, &t.payload, gang_block_[k], blocks);
    }
    if (held != 0) note_dispatch(timing_tag);
    gang_held_ = 0;
    if (g.launched.fetch_add(held, std::memory_order_acq_rel) + held == blocks) {
      g.launched.store(0, std::memory_order_relaxed);
      g.go.store(0, std::memory_order_relaxed);
      g.word.store(0, std::memory_order_release);
    }
  }

  // Retires every task in the inline pool, including those this retires make ready (whether
  // anything was there).
  bool retire_inline() {
    uint64_t id;
    bool any = false;
    while (env_.ready->try_pop(kPoolInline, &id)) {
      any = true;
      const auto task = static_cast<int64_t>(id);
      if (skip_if_poisoned(task)) continue;
      CoreTiming timing;
      timing.dispatch = timing.start = timing.end = timing.complete = platform_ticks();
      record(task, kTraceRetired, timing);
      ++counters_.retired_inline;
      finish(task, kDone);
    }
    return any;
  }

  bool dispatch_ready() {
    if (dispatch_.on()) return dispatch_ready_by_policy();
    return cores_.feed(
        *env_.ready,
        [this](int64_t id, uint32_t core) {
          if (skip_if_poisoned(id)) return false;
          return start(id, core);
        },
        [this](int64_t id, uint32_t cluster) {
          if constexpr (Policy::kHasMix) {
            if (skip_if_poisoned(id)) return false;
            return start_mix(id, cluster);
          } else {
            (void)id;
            (void)cluster;
            return false;  // never called: the runtime attaches no MIX pool
          }
        });
  }

  bool dispatch_ready_by_policy() {
    return cores_.feed_by_pool(
        *env_.ready,
        [this](int64_t id, uint32_t core, DispatchTag tag) {
          if (skip_if_poisoned(id) || !start(id, core, tag)) return false;
          dispatch_.dispatched(tag);
          return true;
        },
        [this](int64_t id, uint32_t cluster, DispatchTag tag) {
          if constexpr (Policy::kHasMix) {
            if (skip_if_poisoned(id) || !start_mix(id, cluster, tag)) return false;
            dispatch_.dispatched(tag);
            return true;
          } else {
            (void)id;
            (void)cluster;
            (void)tag;
            return false;  // never called: the runtime attaches no MIX pool
          }
        },
        [this](uint32_t pool) { return dispatch_.choose(pool, *env_.ready, 0); });
  }

  void dump_views(const TaskRecord &t, uint32_t phase) {
    dump_task_views(env_.dump, dump_tasks(env_.dump)[t.dump], phase);
  }

  // Profiling: the task's trace record, written once, by the thread that finishes it.
  void record(int64_t id, uint16_t status, const CoreTiming &timing) {
    if (!kProfilingBuilt || env_.trace_addr == 0 || static_cast<uint64_t>(id) >= env_.trace_capacity) return;
    TaskTrace &r = reinterpret_cast<TaskTrace *>(env_.trace_addr)[id];
    const TaskRecord &t = policy_.task(id);
    r.id = id;
    r.func = t.func_id;
    r.shape = static_cast<uint8_t>(t.core_type);
    r.status = static_cast<uint8_t>(status);
    r.stream = t.stream;
    r.target = t.target;
    r.core = static_cast<int16_t>(timing.core);
    r.thread = static_cast<int8_t>(status == kTraceSkipped ? -1 : static_cast<int32_t>(idx_));  // retired: this thread
    r.dispatch_policy = dispatch_tag_policy(timing.dispatch_tag);
    r.dispatch_metric = dispatch_tag_metric(timing.dispatch_tag);
    if (Policy::kZeroSubmit) r.submit = 0;
    r.dispatch = timing.dispatch;
    r.start = timing.start;
    r.end = timing.end;
    r.complete = timing.complete;
    if (env_.pmu_addr) reinterpret_cast<PmuTrace *>(env_.pmu_addr)[id] = timing.pmu;
    if (env_.price_addr) {
      reinterpret_cast<KernelPrice *>(env_.price_addr)[id] = timing.price ? *timing.price : KernelPrice{};
    }
  }

  SchedulerEnv env_;
  Policy policy_;
  uint32_t idx_;
  Doorbell *bell_;
  PeerWaker peers_;
  CorePool cores_;
  DispatchThreshold dispatch_;  // dispatch_threshold's config and this thread's decisions
  SchedulerCounters counters_;  // written to the run's counters when run() ends
  TaskTimingSlots slots_;       // this thread's task timing slots, written out with counters_
  // The places this thread holds for the sync-start task in the GangSlot, and their blocks.
  uint32_t gang_place_[CorePool::kMaxCores];
  uint32_t gang_block_[CorePool::kMaxCores];
  uint32_t gang_held_ = 0;
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_SCHEDULER_LOOP_H
