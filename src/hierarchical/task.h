// src/hierarchical/task.h — one L3 task (chip or SUB) and the state the scheduler keeps for it.
//
// Ownership: the run (RunState::tasks) and the dependency tracker hold shared_ptrs; successor
// lists hold raw pointers (a successor cannot finish before its predecessors released it, and
// its run keeps it alive until then); pred lists hold shared_ptrs so a pending task can always
// say what it waits for. Fields under "graph" are guarded by WorkerCore::mu; the atomics say who
// writes them.
#ifndef PTO_HIERARCHICAL_TASK_H
#define PTO_HIERARCHICAL_TASK_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hierarchical/host_heap.h"
#include "pto/worker.h"

namespace pto {
namespace l3 {

enum class TaskKind : uint8_t { kChip, kSub };

// Task::sub_worker of an inline_body SUB task: its body runs on the thread that released it.
constexpr int kInlineBody = -2;

enum class TaskState : uint8_t {
  kPending,   // waits for predecessors
  kReady,     // in a ready queue
  kRunning,   // dispatched (chip parts in flight, or SUB body running)
  kDeferred,  // SUB body returned; waits for external events
  kDone,
  kFailed,
  kSkipped,  // not run: a predecessor failed or was skipped
};

const char *task_state_name(TaskState s);

struct Task : std::enable_shared_from_this<Task> {
  // --- immutable after submit (written by the orchestrating thread before publication) ---
  uint64_t id = 0;
  std::string name;
  TaskKind kind = TaskKind::kSub;
  RunState *run = nullptr;  // the run that owns this task (alive while the task is unfinished)
  uint64_t run_id = 0;      // RunState::id of that run (comparable after the run is gone)
  // chip tasks: one part per chip; parts.size() > 1 only for groups
  std::shared_ptr<const ChipCallable> callable;
  ChipCallConfig config;
  std::vector<ChipStorageTaskArgs> parts;
  std::vector<int> part_chips;  // chip index per part, or kAnyChip
  bool group = false;
  // SUB tasks
  SubFn fn;  // reset by the SUB worker after the body ran
  bool always_run = false;  // runs even if a predecessor failed or was skipped (not if cancelled)
  bool inline_body = false;  // the body runs on the thread that releases the task (submit_sub)
  ChipStorageTaskArgs sub_args;
  std::shared_ptr<void> keepalive;
  std::vector<HostHeap::Block *> heap_refs;  // host-heap blocks this task is a user of

  // --- graph (guarded by WorkerCore::mu) ---
  TaskState state = TaskState::kPending;
  uint32_t fanin = 0;  // unfinished predecessors
  std::vector<Task *> successors;
  std::vector<std::shared_ptr<Task>> preds;  // every predecessor (for reports)
  std::string poisoned_by;                   // label of the first failed/skipped predecessor
  // The root cause's message: set with poisoned_by (the failed task's error, or what a skipped
  // predecessor inherited). Read by an always_run body (SubContext::upstream_error): written
  // under mu before the task is pushed to the SUB queue, whose mutex orders it for the worker.
  std::string upstream_error;
  std::string error;                         // why it failed or was skipped
  pto_status error_code = PTO_OK;
  uint32_t parts_left = 0;      // chip parts not yet finished
  std::vector<int> running_on;  // chip index per part once dispatched
  // SUB worker running the body (kInlineBody for an inline body, -1 before); written by that
  // worker under SubQueue::mu when it takes the task (under WorkerCore::mu for an inline body),
  // read by reports and close() (under those mutexes, or relaxed for a report).
  std::atomic<int> sub_worker{-1};
  uint64_t t_ready_ns = 0, t_start_ns = 0;

  // --- cross-thread ---
  // Writers: whoever finishes the task under WorkerCore::mu (release ordering: `state` is final
  // before it is set);
  // readers: the dependency tracker (acquire), which then reads `state` without the lock.
  std::atomic<bool> finished{false};
  // OmpSs-2 external-event counter: 1 for the body plus one per deferred Event. Writers: the
  // thread that ran the body (body return, -1, under WorkerCore::mu), SubContext::defer (+1,
  // while the body runs), Event::fulfill (-1, any thread). Whoever brings it to 0 completes the
  // task (retire_sub).
  std::atomic<int32_t> events{1};
  // Which deferred events are still unfulfilled (index = order of the SubContext::defer calls),
  // for reports. Writers: defer (push_back), Event::fulfill (clear); readers: reports.
  mutable std::mutex events_mu;
  std::vector<bool> event_pending;  // guarded by events_mu (taken after WorkerCore::mu, or alone)
  std::string event_error;          // first Event::fail message; guarded by events_mu
  // Set once by whoever completes the task (exchange): a failed body and a late fulfill cannot
  // both complete it.
  std::atomic<bool> completion_posted{false};
  // Failure reported by the thread that ran the body (written before it takes WorkerCore::mu to
  // retire the task, read under mu).
  bool body_failed = false;
  std::string body_error;

  bool is_finished_state() const {
    return state == TaskState::kDone || state == TaskState::kFailed || state == TaskState::kSkipped;
  }
  std::string label() const;  // "task 7 'shard2'"
};

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_TASK_H
