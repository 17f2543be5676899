// include/pto/worker.h — the one-host, many-chips (L3) user API in C++: Worker, HostOrchestrator, RunHandle.
//
//   pto::WorkerOptions o;  o.device_ids = {0, 1, 2, 3};  o.num_sub_workers = 2;
//   o.mode = pto::ChipMode::kProcess;            // or kThread (default)
//   pto::Worker w(o);
//   float *x = static_cast<float *>(w.alloc(n * 4));   // host heap: visible to every chip
//   pto::WorkerRunStats s = w.run([&](pto::HostOrchestrator &orch) {
//     uint64_t a = orch.submit_chip(callable, args_a, cfg, /*chip=*/0, "shard0");
//     orch.submit_sub([&](pto::SubContext &) { reduce(); }, sub_args, "reduce");
//   });
// The orchestration function runs on the caller's thread; tasks start as soon as they are
// submitted. Dependencies are inferred from the byte ranges of the tensor arguments (INPUT
// reads, OUTPUT writes, INOUT both): read-after-write, write-after-write and write-after-read.
// Design: docs/guide/l3.md.
#ifndef PTO_WORKER_H
#define PTO_WORKER_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pto/chip_worker.h"
#include "pto/comm_domain.h"

namespace pto {

namespace l3 {
struct Task;
struct WorkerCore;
struct RunState;
struct EventState;
}  // namespace l3

// Where the chips run: one ChipWorker per chip in this process, or one forked process per chip.
enum class ChipMode { kThread = 0, kProcess = 1 };

// Any idle chip may run the task.
constexpr int kAnyChip = -1;

// Limits WorkerOptions is checked against (INVALID_ARGUMENT naming the option otherwise).
constexpr int kMaxSubWorkers = 256;
constexpr uint64_t kMinHeapBytes = 4096;        // one page
constexpr uint64_t kMaxHeapBytes = 1ull << 40;  // 1 TiB of address space (pages are backed when touched)

// Each field has the name of the matching keyword argument of Python's
// pto_runtime.Worker(level=3, ...), except the time limits: *_ms here, seconds in Python.
struct WorkerOptions {
  std::vector<int> device_ids{0};  // one chip per entry, non-empty, distinct, >= 0; chip i runs device_ids[i]
  int num_sub_workers = 1;         // host threads running SUB tasks (0..kMaxSubWorkers)
  std::string platform = "a2a3sim";
  std::string runtime = "host_build_graph";
  ChipMode mode = ChipMode::kThread;
  uint64_t heap_bytes = 256ull << 20;  // host heap (shared with the chip processes), kMin..kMaxHeapBytes
  uint32_t spawn_timeout_ms = 30000;   // process mode: a chip process must be ready within this
  uint32_t heap_wait_ms = 10000;       // alloc waits this long for buffers still in use
  uint32_t close_timeout_ms = 10000;   // close() waits this long for tasks in flight
};

// Statistics of one run (one orchestration function and every task it submitted).
struct WorkerRunStats {
  uint64_t chip_tasks = 0;  // chip tasks finished (a group counts once)
  uint64_t sub_tasks = 0;
  uint64_t failed_tasks = 0;                   // ran and failed
  uint64_t skipped_tasks = 0;                  // not run: an earlier task they depend on failed
  std::vector<uint64_t> tasks_per_chip;        // chip runs per chip index (group parts count)
  std::vector<uint64_t> tasks_per_sub_worker;  // SUB bodies per SUB worker
  double wall_us = 0;                          // submit() to the last task's completion
  double host_cpu_us = 0;       // CPU time of this process over the same interval (all threads)
  double scheduler_cpu_us = 0;  // CPU time of the scheduler thread over the same interval
  double chip_device_us = 0;    // sum of the chip runs' device time
  std::string table() const;
};

// One external event a SUB task's completion waits for (OmpSs-2 external events, seed 003):
// the task's dependents are released once its body has returned and every event it deferred
// has been fulfilled. Copyable handle; fulfill() from any thread, exactly once.
class Event {
 public:
  Event() = default;
  // Throws INVALID_ARGUMENT if already fulfilled, NOT_INITIALIZED for a default-constructed Event.
  void fulfill();
  // Settles the event as failed: once the body has returned and every other event is settled,
  // the task fails with TASK_FAILED "<task> (SUB) failed: <why>" and its dependents are skipped
  // (an L4 receive whose sender reported a failure, or whose sender died, uses this). Exactly
  // once per event, fulfill or fail (INVALID_ARGUMENT otherwise); the first failure is kept.
  void fail(const std::string &why);
  bool fulfilled() const;
  uint64_t task_id() const;
  // Which of its task's defer() calls made it: 0, 1, ... (reports name unfulfilled events so).
  uint32_t index() const;

 private:
  friend class SubContext;
  void settle(const char *call, const std::string *failure);
  std::shared_ptr<l3::EventState> state_;
};

// What a SUB task's body is given; valid only while the body runs.
class SubContext {
 public:
  uint64_t task_id() const;
  const std::string &name() const;
  const std::vector<pto_arg_desc> &args() const;  // as passed to submit_sub
  int sub_worker() const;  // which SUB worker runs the body; -1 for an inline body
  // For a task submitted with always_run: why a task it depends on failed or was not run (the
  // root cause's message), or "" when every predecessor succeeded. Always "" otherwise.
  const std::string &upstream_error() const;
  // Adds one external event the task's completion waits for. Only while the body runs and only
  // on the body's thread (INVALID_ARGUMENT otherwise); hand the Event to other threads instead.
  Event defer();

 private:
  friend struct l3::WorkerCore;
  SubContext(const std::shared_ptr<l3::Task> &task, l3::WorkerCore *core, int worker)
      : task_(task), core_(core), worker_(worker), thread_(std::this_thread::get_id()) {}
  std::shared_ptr<l3::Task> task_;
  l3::WorkerCore *core_;
  int worker_;
  std::thread::id thread_;  // the SUB worker thread running the body
  bool active_ = true;
};

using SubFn = std::function<void(SubContext &)>;

// Submits tasks for one run; handed to the orchestration function and valid only during it.
// (The L3 Orchestrator of docs/guide/l3.md; "Host" because pto::Orchestrator is the device-side
// orchestration API of include/pto/orchestration.h. Python calls it pto_runtime.Orchestrator.)
class HostOrchestrator {
 public:
  // A chip task: `callable` with `args` on chip `chip` (an index into device_ids) or any idle
  // chip. Returns the task id. `after`: extra task ids of this run to wait for. `keepalive` is
  // held until the task finished (bindings use it for the argument arrays).
  uint64_t submit_chip(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                       const ChipCallConfig &config = ChipCallConfig{}, int chip = kAnyChip,
                       const std::string &name = "", const std::vector<uint64_t> &after = {},
                       std::shared_ptr<void> keepalive = nullptr);
  // One task run as a group: args[i] on chips[i] at the same time (all chips idle together);
  // chips empty = any args.size() distinct idle chips. Done when every part is done; fails if any
  // part fails.
  uint64_t submit_chip_group(const ChipCallable &callable, const std::vector<ChipStorageTaskArgs> &args,
                             const ChipCallConfig &config = ChipCallConfig{},
                             const std::vector<int> &chips = {}, const std::string &name = "",
                             const std::vector<uint64_t> &after = {},
                             std::shared_ptr<void> keepalive = nullptr);
  // A SUB task: `fn` on a host SUB worker thread. `args` names the tensors it reads and writes
  // (their directions drive the dependencies); scalars are passed through. `always_run`: the
  // task runs even if a task it depends on failed or was not run (it still waits for them all;
  // SubContext::upstream_error() says why), like a `finally` block; L4 uses it for the sends
  // that must tell another host about a failure. A cancelled run still skips it.
  // `inline_body`: the body runs, with no hand-off to a SUB worker, on the thread that releases
  // the task (the SUB worker that completed its last predecessor, the thread settling that
  // predecessor's last Event, this thread inside submit_sub when the task is ready at once, or
  // the scheduler); for bodies that only hand work to another thread (typically deferring an
  // Event) and return within microseconds, as L4's transfer posts do. Such a body must not
  // block (it holds up the thread that released it) nor submit.
  uint64_t submit_sub(SubFn fn, const ChipStorageTaskArgs &args = ChipStorageTaskArgs{},
                      const std::string &name = "", const std::vector<uint64_t> &after = {},
                      std::shared_ptr<void> keepalive = nullptr, bool always_run = false,
                      bool inline_body = false);

  // Scopes bound the lifetime of alloc()ed buffers: a buffer is freed once its scope has ended
  // and every task using it has finished. The run itself is the outermost scope.
  void scope_begin();
  void scope_end();
  // nbytes from the host heap (64-byte aligned), owned by the innermost open scope. Waits up to
  // WorkerOptions.heap_wait_ms for buffers still in use; OUT_OF_MEMORY if they do not come back.
  void *alloc(uint64_t nbytes);

  // A communication domain over chips `workers` (their order gives the ranks): a zeroed window of
  // window_size bytes per chip, `buffers` carved from each in order, and per chip a CommContext
  // naming every rank's window (include/pto/comm_domain.h). INVALID_ARGUMENT, before anything
  // is allocated, when the buffers do not fit in window_size or a chip is not this worker's.
  // The windows live until the run has finished.
  CommDomain allocate_domain(const std::string &name, const std::vector<int> &workers, uint64_t window_size,
                             const std::vector<CommBufferSpec> &buffers = {});

  int num_chips() const;
  int num_sub_workers() const;
  ChipMode mode() const;

 private:
  friend struct l3::WorkerCore;
  explicit HostOrchestrator(l3::WorkerCore *core, const std::shared_ptr<l3::RunState> &run)
      : core_(core), run_(run) {}
  void check_active() const;
  l3::WorkerCore *core_;
  std::shared_ptr<l3::RunState> run_;
  bool active_ = true;
};

// RAII scope: HostScope s(orch);
class HostScope {
 public:
  explicit HostScope(HostOrchestrator &o) : o_(o) { o_.scope_begin(); }
  ~HostScope() {
    try {
      o_.scope_end();
    } catch (...) {
    }
  }
  HostScope(const HostScope &) = delete;
  HostScope &operator=(const HostScope &) = delete;

 private:
  HostOrchestrator &o_;
};

// One submitted run. Copyable handle.
class RunHandle {
 public:
  RunHandle() = default;
  bool done() const;
  // Waits for every task of the run. timeout_ms < 0 waits forever. Throws RUN_TIMEOUT naming the
  // tasks still pending and what each waits for; TASK_FAILED (or the orchestration's error)
  // naming the failed task once the run has finished with a failure.
  WorkerRunStats wait(int64_t timeout_ms = -1) const;
  // Waits up to timeout_ms (< 0: no limit) for every task of the run to finish; true once
  // done(). Unlike wait() it never throws for the run's outcome: a caller can wait in short
  // slices (the Python binding does, to notice Ctrl-C) and then call wait(0).
  bool wait_done(int64_t timeout_ms) const;
  // Stops the run: queued tasks are skipped, tasks still waiting for earlier ones will be,
  // running chip tasks are aborted (ChipWorker::abort; in process mode the chip process aborts
  // its run). A SUB body already running is not interrupted: the run is done once it returns.
  // wait() then throws ABORTED (unless a task had failed first). No effect on a finished run.
  void cancel() const;
  // Statistics so far (final once done()).
  WorkerRunStats stats() const;
  // The tasks not yet finished and what each waits for (empty once done()).
  std::string pending_report() const;

 private:
  friend struct l3::WorkerCore;
  std::shared_ptr<l3::WorkerCore> core_;
  std::shared_ptr<l3::RunState> run_;
};

// L3: one host, many chips and SUB workers (seed 001's Worker(level=3)).
class Worker {
 public:
  explicit Worker(const WorkerOptions &options);
  ~Worker();
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  using OrchFn = std::function<void(HostOrchestrator &)>;
  // Runs `orch` on this thread (tasks start as it submits them) and returns once it returned.
  // Errors of the orchestration function are reported by the handle's wait().
  RunHandle submit(const OrchFn &orch);
  WorkerRunStats run(const OrchFn &orch, int64_t timeout_ms = -1) { return submit(orch).wait(timeout_ms); }

  // Host-heap memory outside any run (inputs and results); free() returns it once the tasks
  // using it have finished. In process mode chip tasks may only use host-heap tensors.
  void *alloc(uint64_t nbytes);
  void free(void *ptr);
  bool in_heap(const void *ptr, uint64_t nbytes = 1) const;
  uint64_t heap_bytes_in_use() const;

  // Waits up to close_timeout_ms (or timeout_ms) for the runs in flight, then fails what is left
  // and stops the threads and chip processes. If it had to fail tasks it throws RUN_TIMEOUT
  // naming each and what it waited for (e.g. which deferred events), after closing. Afterwards
  // submit, run, alloc, in_heap, heap_bytes_in_use, num_chips, num_sub_workers and chip_pid
  // throw NOT_INITIALIZED "Worker.<call>: the worker is closed ..."; free() still works.
  // Idempotent.
  void close();
  void close(uint32_t timeout_ms);
  bool closed() const;

  int level() const { return 3; }
  int num_chips() const;
  int num_sub_workers() const;
  ChipMode mode() const;
  const WorkerOptions &options() const;
  // Process mode: the pid of chip `chip`'s current process (tests kill it); -1 in thread mode.
  // While the chip's process is being (re)started, waits for it (at most spawn_timeout_ms, then
  // RUN_TIMEOUT): the result is never 0, which a caller passing it to kill() would regret.
  int chip_pid(int chip) const;
  // Keeps the heap mapping alive after the worker is gone (bindings hand out views of it).
  std::shared_ptr<void> heap_keepalive() const;
  // free() through a heap_keepalive() handle: works after the worker is closed or destroyed
  // (bindings call it when the last view of an alloc()ed buffer is garbage-collected).
  static void release_heap_buffer(const std::shared_ptr<void> &heap, void *ptr) noexcept;

 private:
  friend struct l3::WorkerCore;  // WorkerCore::of: the L4 worker tunes its L3 core
  std::shared_ptr<l3::WorkerCore> core_;
};

}  // namespace pto
#endif  // PTO_WORKER_H
