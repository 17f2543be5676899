// src/hierarchical/worker_core.h — what a pto::Worker is made of: scheduler, SUB workers, chips, heap.
//
// Threads: the orchestrating thread (the caller of Worker::submit), ONE scheduler thread (the
// polling service of seed 003: it notices chip completions, releases their dependents and
// dispatches chip tasks), and num_sub_workers SUB threads. A SUB task is retired by the thread
// that completes it (its SUB worker, or whoever settles its last Event), which releases its
// dependents at once. Chips never have a host thread of their own waiting on them: THREAD mode
// polls ChipWorker::poll, PROCESS mode is rung by the chip process. Locks: `mu` guards the task
// graph, ready queues, chip/SUB slots and runs; the heap, the SUB queue and each task's
// events_mu have their own (always taken after mu, or alone). No Python object is ever
// referenced here: bindings keep those alive on the Python side.
#ifndef PTO_HIERARCHICAL_WORKER_CORE_H
#define PTO_HIERARCHICAL_WORKER_CORE_H

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hierarchical/chip_endpoint.h"
#include "hierarchical/chip_process.h"
#include "hierarchical/dep_tracker.h"
#include "hierarchical/host_heap.h"
#include "hierarchical/run_state.h"
#include "hierarchical/shm_bell.h"
#include "hierarchical/task.h"
#include "pto/worker.h"

namespace pto {
namespace l3 {

// The ready queue SUB workers pull from. Idle SUB workers take the next task themselves, so
// a stream of SUB tasks costs no scheduler round trip per task (measured: 13-16 us per no-op
// task with a per-worker hand-off slot, ~1-2 us with the shared queue; bench/l3). Completion
// is the completing thread's too: it retires the task under mu (sub_workers.cpp), so a chain of
// SUB tasks needs no thread hand-off at all.
struct alignas(64) SubQueue {
  std::mutex mu;
  std::deque<Task *> tasks;  // writers: whoever makes a SUB task ready (holding WorkerCore::mu)
                             // pushes; SUB workers pop
  ShmBell bell;              // rung after a push; idle SUB workers park on it
};
struct ChipSlot {  // guarded by mu; written by the scheduler thread only
  Task *task = nullptr;
  int part = -1;
  uint64_t t_start_ns = 0;
  bool abort_sent = false;  // the task's run was cancelled and the chip was told to abort
};

struct WorkerCore : std::enable_shared_from_this<WorkerCore> {
  explicit WorkerCore(const WorkerOptions &o);
  ~WorkerCore();
  void start_threads();
  // Waits up to timeout_ms for the runs in flight, fails what is left, stops everything. Throws
  // RUN_TIMEOUT naming the tasks it failed (after closing); idempotent.
  void close(uint32_t timeout_ms);
  // NOT_INITIALIZED "<call>: the worker is closed ..." once close() was called.
  void check_open(const char *call) const;

  // --- configuration (immutable) ---
  WorkerOptions opt;
  std::shared_ptr<HostHeap> heap;
  std::unique_ptr<ProcessChipSet> procs;  // process mode
  ShmBell own_bell;                       // thread mode: the scheduler's bell
  ShmBell *bell = nullptr;                // the scheduler's bell (in shared memory in process mode)
  std::vector<std::unique_ptr<ChipEndpoint>> chips;
  SubQueue sub_queue;
  std::vector<std::thread> sub_threads;
  // --- graph, queues, slots, runs: guarded by mu ---
  std::mutex mu;
  std::condition_variable run_cv;  // a run finished
  std::deque<Task *> any_ready, group_ready;
  // inline_body SUB tasks made ready, run by the thread that released them once it dropped mu
  // (a SUB worker, an Event's settler, the orchestrating thread in publish), or by the
  // scheduler's next pass.
  std::deque<Task *> inline_ready;
  // The core whose inline_ready this thread takes before it drops mu (set by retire_sub): a
  // release there needs no scheduler wake-up, which on a CPU shared with the critical path
  // costs more than the body.
  static inline thread_local const WorkerCore *drains_inline_here = nullptr;
  // Under mu, for one scope that ends before mu is dropped: this thread takes the inline bodies
  // it releases there (take_inline_locked) and runs them once mu is dropped; none while stopping
  // (the scheduler drops them). The scopes never nest (each takes mu).
  struct DrainInlineHere {
    explicit DrainInlineHere(const WorkerCore *core) { drains_inline_here = core->stopping ? nullptr : core; }
    ~DrainInlineHere() { drains_inline_here = nullptr; }
    DrainInlineHere(const DrainInlineHere &) = delete;
    DrainInlineHere &operator=(const DrainInlineHere &) = delete;
  };
  // The core whose SUB queue this thread pops next (a SUB worker retiring its task: set by
  // run_sub around retire_sub). The first SUB task it releases into an empty queue rings no
  // other worker, so a chain of SUB tasks wakes nobody; make_ready_locked clears it.
  static inline thread_local const WorkerCore *takes_next_sub_here = nullptr;
  std::vector<std::deque<Task *>> pinned_ready;
  std::vector<ChipSlot> chip_slots;
  std::vector<std::shared_ptr<RunState>> live_runs;
  bool stopping = false;

  // --- orchestration: one at a time ---
  std::mutex submit_mu;
  // The thread running an orchestration function (writer: submit(); read by submit() to refuse
  // re-entry from that thread, which would deadlock on submit_mu).
  std::atomic<std::thread::id> orchestrating{};
  DepTracker tracker;  // guarded by submit_mu
  std::atomic<uint64_t> next_task_id{1};
  uint64_t next_run_id = 1;  // guarded by submit_mu

  std::atomic<bool> closed{false};
  std::atomic<bool> subs_stop{false};
  // How often an idle SUB worker or the scheduler yields its CPU (checking for work in between)
  // before it parks: on a CPU shared with the thread that hands it work, the hand-off then costs
  // no wake-up. Where more threads than CPUs are idle at once (L4 ranks sharing a node), the
  // yields take the CPU from the one thread with work, so L4 sets 0 there (src/l4/worker.cpp).
  std::atomic<uint32_t> idle_yields{64};
  static WorkerCore &of(Worker &w) { return *w.core_; }
  std::thread scheduler;
  pthread_t scheduler_handle{};
  std::atomic<bool> scheduler_started{false};

  // --- orchestrator side (orchestrator.cpp) ---
  uint64_t publish(RunState *run, const std::shared_ptr<Task> &t, const std::vector<DepTracker::Access> &acc,
                   const std::vector<uint64_t> &after);
  void *alloc_in_run(RunState *run, uint64_t nbytes);
  HostHeap::Block *alloc_block(uint64_t nbytes, const char *who);
  RunHandle submit(const std::shared_ptr<WorkerCore> &self, const Worker::OrchFn &orch);

  // --- scheduler side (scheduler.cpp); the *_locked functions need mu ---
  void scheduler_main();
  void make_ready_locked(Task *t, std::vector<std::shared_ptr<void>> *graveyard);
  void finish_locked(Task *t, TaskState st, pto_status code, const std::string &err,
                     std::vector<std::shared_ptr<void>> *graveyard);
  void complete_run_locked(RunState *r);
  // RunHandle::cancel: queued tasks of `r` are skipped, pending ones will be, running chip
  // tasks are aborted by the scheduler (ChipEndpoint::abort); SUB bodies already running
  // finish on their own. Needs mu.
  void cancel_run_locked(RunState *r, std::vector<std::shared_ptr<void>> *graveyard);
  std::string describe_task_locked(const Task *t) const;
  std::string pending_report_locked(const RunState *r) const;
  double scheduler_cpu_us() const;

  // --- SUB workers (sub_workers.cpp) ---
  int num_subs() const { return opt.num_sub_workers; }
  void sub_main(int w);
  // Runs the body of `t` on this thread (w: the SUB worker, or kInlineBody) and retires it.
  // inline_out: where inline bodies it releases go (null: run them here, now).
  void run_sub(int w, Task *t, std::vector<std::shared_ptr<Task>> *inline_out = nullptr);
  // A SUB task's body returned (w: the SUB worker or kInlineBody; the body's event count is
  // dropped here, under mu) or, w = -1, its last Event was settled: records it and, when the task
  // is complete, finishes it and releases its dependents, all on the calling thread. `complete`:
  // completed already (a failed body, or the last settle). Inline bodies that became ready go to
  // inline_out, or run here once mu is dropped.
  void retire_sub(Task *t, int w, bool complete, std::vector<std::shared_ptr<Task>> *inline_out = nullptr);
  // Under mu: moves the ready inline bodies to `out`, marked as running (sub_worker = kInlineBody).
  void take_inline_locked(std::vector<std::shared_ptr<Task>> *out);
  void run_inline(std::vector<std::shared_ptr<Task>> *bodies);
};

double process_cpu_us();
// "2 external event(s) to be fulfilled (Event.fulfill): event 0, 2 of the 3 its body deferred":
// what a deferred task waits for.
std::string pending_events_text(const Task *t);

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_WORKER_CORE_H
