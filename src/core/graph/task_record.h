// src/core/graph/task_record.h — the portable task record every runtime extends, its fan-in counter and flat
// fan-out.
//
// A runtime's task type derives from TaskRecord and adds how its graph is stored: a flat
// FanoutRange into one successor array when the host builds the graph ahead of launch
// (host_build_graph), a lock-free consumer list when the device builds it while it runs
// (tensormap_and_ringbuffer). The shared scheduler loop (core/graph/scheduler_loop.h) reads and
// writes only the fields here. Plain data and std::atomic only: the record lives in device
// memory and is built into the AICPU program (no STL containers, no exceptions).
#ifndef PTO_CORE_GRAPH_TASK_RECORD_H
#define PTO_CORE_GRAPH_TASK_RECORD_H

#include <atomic>
#include <cstdint>

#include "core/graph/ready_queue_set.h"  // Pool
#include "core/handshake.h"              // DispatchPayload
#include "pto/dispatch_predicate.h"

namespace pto {
namespace graph {

// In an inline namespace so a runtime's layout can take the names whole
// (`using namespace graph::task_states;`) and spell them hbg::kDone / tmr::kDone.
inline namespace task_states {
enum TaskState : uint32_t {
  kPending = 0,  // waiting for producers (or, tensormap, not yet published)
  kReady = 1,    // in a ready queue
  kRunning = 2,  // dispatched to a core
  kDone = 3,
  kFailed = 4,   // its kernel reported failure
  kSkipped = 5,  // a producer failed: never run
};
}  // namespace task_states

// TaskRecord::flags: an SPMD task whose blocks start together (pto::Launch::sync_start): it
// waits in kPoolGang, not its core type's pool.
constexpr uint8_t kTaskSyncStart = 1;

// The func_id of a dependency-only task (it runs no kernel).
constexpr uint32_t kNoKernel = 0xFFFFFFFFu;

inline bool is_final(uint32_t state) {
  return state == kDone || state == kFailed || state == kSkipped;
}

struct TaskRecord {
  // --- Written by whoever builds the graph (host image / orchestrator) before the task is
  //     published; read-only afterwards. ---
  DispatchPayload payload;
  uint32_t func_id;
  // Its pool (core/graph/ready_queue_set.h): AIC, AIV, MIX, or kPoolInline for a
  // dependency-only task, which takes no core.
  uint8_t core_type;
  // Its dispatch predicate's comparison (pto::PredicateOp; 0 = NONE: always dispatched) and
  // element size; the runtime keeps the operand's address and target (Policy::predicate).
  uint8_t pred_op;
  uint8_t pred_size;
  uint8_t flags;  // kTaskSyncStart
  // --- Shared during the run. ---
  // Producers still unfinished (plus the builder's guard where the graph grows during the
  // run). Scheduler threads finishing a producer decrement it (fanin_release, acq_rel); the
  // decrement that takes it to zero acquires every producer's results and makes the task
  // ready, so it is enqueued exactly once.
  std::atomic<int32_t> fanin_remaining;
  // TaskState. Scheduler threads (relaxed): read for reports only, never to synchronise.
  std::atomic<uint8_t> state;
  // Scheduler threads finishing a failed or skipped producer (relaxed; published to the
  // consumer's scheduler by the release half of the fanin decrement that follows it).
  std::atomic<uint8_t> poisoned;
  // The dispatching scheduler thread (relaxed): the core's handshake slot, for reports.
  std::atomic<int16_t> core;
  int32_t dump;  // builder-written: its DumpTask index (enable_dump_tensor), else -1
  // Builder-written: the stream and target affinity it was submitted with (pipeline_depth's
  // per_stream / per_target gates, core/graph/pipeline_gates.h; kNoTarget = none).
  uint16_t stream;
  uint16_t target;
  // SPMD (pto::Launch::block_num): builder-written block count (1 for an ordinary task); the
  // blocks handed to cores so far, by the scheduler thread holding the task (relaxed: the ready
  // queue's push and pop order the holders); the blocks finished, by the scheduler threads
  // collecting them (acq_rel: the last one sees every block's results).
  uint16_t block_num;
  std::atomic<uint16_t> blocks_started;
  std::atomic<uint16_t> blocks_done;
  // Builder-written: its task timing slot + 1 (pto::Launch::timing_slot), 0 when untagged (a
  // zeroed record is untagged). The scheduler folds a tagged task's dispatch and finish into
  // its own TaskTimingSlots (core/run_counters.h).
  uint8_t timing_tag;
  uint8_t reserved2;
  // pipeline_depth only: the next task deferred at the same gate, written and read under that
  // gate's lock (core/graph/pipeline_gates.h).
  int64_t next_deferred;
};

// TaskRecord::timing_tag of a task launched with `timing_slot` (-1: untagged; the launch check
// admitted only -1 .. PTO_TASK_TIMING_SLOTS - 1).
inline uint8_t timing_tag_of(int32_t timing_slot) {
  return timing_slot >= 0 ? static_cast<uint8_t>(timing_slot + 1) : 0;
}

// One finished producer of `consumer`: poisons it when the producer did not succeed and counts
// it off. True for exactly one caller, the one whose decrement reached zero: it must make the
// consumer ready.
inline bool fanin_release(TaskRecord &consumer, bool poison) {
  if (poison) consumer.poisoned.store(1, std::memory_order_relaxed);  // before the release below
  return consumer.fanin_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

// The pool a task that just became ready goes to: its own, kPoolGang for a sync-start task, or
// kPoolInline when its dispatch predicate is false (read now: its producers have finished).
// predicate_of() gives the task's DispatchPredicate and is asked only when it has one.
// (Dependency-only tasks are in kPoolInline from the start.)
template <typename PredicateOf>
inline uint32_t ready_pool(const TaskRecord &t, PredicateOf &&predicate_of) {
  if (t.pred_op != 0 && !predicate_of().pass()) return kPoolInline;
  return (t.flags & kTaskSyncStart) != 0 ? static_cast<uint32_t>(kPoolGang) : t.core_type;
}

// Flat fan-out storage: all successors of a graph in one array of task indices, task i's in
// [begin, begin + count). Written on the host before launch, read-only during the run.
struct FanoutRange {
  uint32_t begin;
  uint32_t count;
};

class FlatFanout {
 public:
  explicit FlatFanout(const uint32_t *edges) : edges_(edges) {}
  template <typename Each>
  void for_each(FanoutRange r, Each &&each) const {
    for (uint32_t k = 0; k < r.count; ++k) each(edges_[r.begin + k]);
  }

 private:
  const uint32_t *edges_;
};

// Host side: appends successor lists into the flat array, checking its capacity.
class FlatFanoutWriter {
 public:
  FlatFanoutWriter(uint32_t *edges, uint32_t capacity) : edges_(edges), capacity_(capacity) {}
  // False (nothing written) when the array has no room for n more.
  bool append(const uint32_t *succ, uint32_t n, FanoutRange *out) {
    if (n > capacity_ - used_) return false;
    for (uint32_t k = 0; k < n; ++k) edges_[used_ + k] = succ[k];
    *out = FanoutRange{used_, n};
    used_ += n;
    return true;
  }
  uint32_t used() const { return used_; }

 private:
  uint32_t *edges_;
  uint32_t capacity_;
  uint32_t used_ = 0;
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_TASK_RECORD_H
