// src/hierarchical/worker.cpp — pto::Worker (L3): building and closing the parts; handles and events.
#include "pto/worker.h"

#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "hierarchical/thread_chip.h"
#include "hierarchical/worker_core.h"

namespace pto {
namespace l3 {

const char *task_state_name(TaskState s) {
  switch (s) {
    case TaskState::kPending:
      return "pending";
    case TaskState::kReady:
      return "ready";
    case TaskState::kRunning:
      return "running";
    case TaskState::kDeferred:
      return "waiting for external events";
    case TaskState::kDone:
      return "done";
    case TaskState::kFailed:
      return "failed";
    case TaskState::kSkipped:
      return "skipped";
  }
  return "?";
}

std::string Task::label() const {
  std::string s = "task " + std::to_string(id);
  if (!name.empty()) s += " '" + name + "'";
  return s;
}

double process_cpu_us() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

struct EventState {
  std::shared_ptr<Task> task;
  std::weak_ptr<WorkerCore> core;  // a settle after the worker is gone changes nothing
  uint32_t index = 0;                  // position in task->event_pending
  std::atomic<bool> fulfilled{false};  // writer: the first fulfill() (exchange)
};

namespace {

std::string list_text(const std::vector<int> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Messages name each option by the name the C++ WorkerOptions field and the Python keyword
// argument of pto_runtime.Worker(level=3, ...) share, so they read right from both APIs. (The
// time limits differ in unit, *_ms here and seconds in Python; Python checks those itself.)
void validate(const WorkerOptions &o) {
  if (o.device_ids.empty()) {
    throw Error(PTO_INVALID_ARGUMENT,
                "Worker(level=3): device_ids = [] is empty; give a non-empty list of distinct device ids "
                ">= 0, one per chip, e.g. [0] or [0, 1, 2, 3]");
  }
  for (size_t i = 0; i < o.device_ids.size(); ++i) {
    if (o.device_ids[i] < 0) {
      throw Error(PTO_INVALID_ARGUMENT, "Worker(level=3): device_ids = " + list_text(o.device_ids) +
                                            " has the negative id " + std::to_string(o.device_ids[i]) +
                                            "; device ids are >= 0");
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.device_ids[j] == o.device_ids[i]) {
        throw Error(PTO_INVALID_ARGUMENT, "Worker(level=3): device_ids = " + list_text(o.device_ids) +
                                              " lists device " + std::to_string(o.device_ids[i]) +
                                              " twice; list each device once (one chip per device)");
      }
    }
  }
  if (o.num_sub_workers < 0 || o.num_sub_workers > kMaxSubWorkers) {
    throw Error(PTO_INVALID_ARGUMENT,
                "Worker(level=3): num_sub_workers = " + std::to_string(o.num_sub_workers) +
                    " is out of range; allowed 0.." + std::to_string(kMaxSubWorkers));
  }
  if (o.mode != ChipMode::kThread && o.mode != ChipMode::kProcess) {
    throw Error(PTO_INVALID_ARGUMENT, "Worker(level=3): mode = " + std::to_string(static_cast<int>(o.mode)) +
                                          " is not a mode; use thread or process");
  }
  if (o.heap_bytes < kMinHeapBytes || o.heap_bytes > kMaxHeapBytes) {
    throw Error(PTO_INVALID_ARGUMENT, "Worker(level=3): heap_bytes = " + std::to_string(o.heap_bytes) +
                                          " is out of range; allowed " + std::to_string(kMinHeapBytes) +
                                          ".." + std::to_string(kMaxHeapBytes) + " bytes (default 256 MiB)");
  }
}

}  // namespace

WorkerCore::WorkerCore(const WorkerOptions &o) : opt(o) {
  validate(o);
  heap = std::make_shared<HostHeap>(o.heap_bytes);
  const size_t n = o.device_ids.size();
  if (o.mode == ChipMode::kProcess) {
    // Before any thread of ours exists: the zygote is forked here (chip_process.h).
    procs = std::make_unique<ProcessChipSet>(o.device_ids, o.platform, o.runtime);
    bell = procs->bell();
    for (size_t c = 0; c < n; ++c) {
      chips.push_back(std::make_unique<ProcessChip>(procs.get(), static_cast<int>(c), o.device_ids[c],
                                                    o.spawn_timeout_ms));
    }
    for (;;) {
      const uint32_t seen = bell->prepare();
      size_t settled = 0;
      for (size_t c = 0; c < n; ++c) {
        std::string why;
        if (chips[c]->broken(&why)) {
          throw Error(PTO_LOAD_FAILED, "Worker: " + chips[c]->describe() + " could not start: " + why);
        }
        if (chips[c]->available()) ++settled;
      }
      if (settled == n) break;
      bell->wait(seen, 50000000ull);
    }
  } else {
    bell = &own_bell;
    for (size_t c = 0; c < n; ++c) {
      chips.push_back(
          std::make_unique<ThreadChip>(static_cast<int>(c), o.device_ids[c], o.platform, o.runtime));
    }
  }
  pinned_ready.resize(n);
  chip_slots.resize(n);
}

void WorkerCore::start_threads() {
  scheduler = std::thread([this] {
    pthread_setname_np(pthread_self(), "pto-l3-sched");  // named for top -H, perf and gdb
    scheduler_main();
  });
  scheduler_handle = scheduler.native_handle();
  scheduler_started.store(true, std::memory_order_release);
  for (int w = 0; w < num_subs(); ++w) sub_threads.emplace_back([this, w] {
    pthread_setname_np(pthread_self(), ("pto-l3-sub" + std::to_string(w)).substr(0, 15).c_str());
    sub_main(w);
  });
}

void WorkerCore::check_open(const char *call) const {
  if (closed.load(std::memory_order_acquire)) {
    throw Error(PTO_NOT_INITIALIZED,
                std::string(call) + ": the worker is closed (close() was called); create a new Worker");
  }
}

void WorkerCore::close(uint32_t timeout_ms) {
  if (closed.exchange(true, std::memory_order_acq_rel)) return;
  std::vector<std::shared_ptr<void>> graveyard;
  std::vector<std::shared_ptr<RunState>> abandoned;
  std::string failed;  // what close() had to fail, for its own error
  size_t num_failed = 0;
  {
    std::unique_lock<std::mutex> lock(mu);
    run_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return live_runs.empty(); });
    stopping = true;
    abandoned = live_runs;                            // keeps their tasks alive until the threads are gone
    std::unique_lock<std::mutex> subq(sub_queue.mu);  // no worker takes a task from here on
    sub_queue.tasks.clear();
    any_ready.clear();
    group_ready.clear();
    for (auto &q : pinned_ready) q.clear();
    const std::string waited = "waited " + fmt_seconds_ms(timeout_ms);
    for (const auto &r : abandoned) {
      for (const auto &t : r->tasks) {
        if (t->is_finished_state()) continue;
        // What it waited for, before failing it changes its state.
        const std::string what = describe_task_locked(t.get());
        if (num_failed++ < 16) failed += "\n  " + what;
        const std::string err = t->label() + " did not finish before the worker was closed (" + waited +
                                "): " + what.substr(what.find("): ", t->label().size()) + 3);
        if (t->kind == TaskKind::kSub && t->sub_worker.load(std::memory_order_relaxed) != -1 &&
            t->state != TaskState::kDeferred) {
          // The body is still running on its SUB worker: it owns fn until it returns.
          SubFn keep = std::move(t->fn);
          finish_locked(t.get(), TaskState::kFailed, PTO_RUN_TIMEOUT, err, &graveyard);
          t->fn = std::move(keep);
          continue;
        }
        finish_locked(t.get(), TaskState::kFailed, PTO_RUN_TIMEOUT, err, &graveyard);
      }
    }
    if (num_failed > 16) failed += "\n  ... and " + std::to_string(num_failed - 16) + " more";
  }
  graveyard.clear();
  bell->ring();
  if (scheduler.joinable()) scheduler.join();
  subs_stop.store(true, std::memory_order_release);
  sub_queue.bell.ring();
  for (auto &t : sub_threads)
    if (t.joinable()) t.join();
  for (auto &c : chips) c->shutdown();
  if (procs) procs->shutdown();
  if (num_failed) {
    throw Error(PTO_RUN_TIMEOUT, "Worker.close: waited " + fmt_seconds_ms(timeout_ms) + " for " +
                                     std::to_string(num_failed) +
                                     " unfinished task(s), then closed the worker and failed them:" + failed +
                                     "\nfulfill every deferred event and wait for the runs before closing, "
                                     "or close with a shorter timeout");
  }
}

WorkerCore::~WorkerCore() {
  try {
    close(opt.close_timeout_ms);
  } catch (...) {
  }
}

}  // namespace l3

// ---------------------------------------------------------------------------------------------

std::string WorkerRunStats::table() const {
  char buf[256];
  std::string t;
  std::snprintf(buf, sizeof buf, "tasks            chip %llu, SUB %llu, failed %llu, skipped %llu\n",
                static_cast<unsigned long long>(chip_tasks), static_cast<unsigned long long>(sub_tasks),
                static_cast<unsigned long long>(failed_tasks),
                static_cast<unsigned long long>(skipped_tasks));
  t += buf;
  t += "per chip        ";
  for (uint64_t n : tasks_per_chip) t += " " + std::to_string(n);
  t += "\nper SUB worker  ";
  for (uint64_t n : tasks_per_sub_worker) t += " " + std::to_string(n);
  std::snprintf(
      buf, sizeof buf,
      "\nwall             %.1f us\nhost CPU         %.1f us (scheduler thread %.1f us)\nchip device "
      "time %.1f us\n",
      wall_us, host_cpu_us, scheduler_cpu_us, chip_device_us);
  t += buf;
  return t;
}

void Event::fulfill() {
  settle("Event.fulfill", nullptr);
}

void Event::fail(const std::string &why) {
  settle("Event.fail", &why);
}

void Event::settle(const char *call, const std::string *failure) {
  if (!state_)
    throw Error(PTO_NOT_INITIALIZED, std::string(call) + " on an empty Event; get one from SubContext.defer()");
  if (state_->fulfilled.exchange(true, std::memory_order_acq_rel)) {
    throw Error(PTO_INVALID_ARGUMENT, std::string(call) + ": the event of " + state_->task->label() +
                                          " was already fulfilled or failed; settle each event exactly "
                                          "once (fulfill or fail)");
  }
  l3::Task *t = state_->task.get();
  {
    // Written before the counter drops (acq_rel below): whoever posts the completion, and so the
    // scheduler reading event_error after it, sees the failure.
    std::lock_guard<std::mutex> lock(t->events_mu);
    t->event_pending[state_->index] = false;
    if (failure && t->event_error.empty()) {
      t->event_error = failure->empty() ? "event " + std::to_string(state_->index) + " failed" : *failure;
    }
  }
  if (t->events.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (!t->completion_posted.exchange(true, std::memory_order_acq_rel)) {
      // Retired here, on the settling thread: the dependents are released at once.
      if (std::shared_ptr<l3::WorkerCore> core = state_->core.lock()) core->retire_sub(t, -1, true);
    }
  }
}

uint32_t Event::index() const {
  return state_ ? state_->index : 0;
}

bool Event::fulfilled() const {
  return state_ && state_->fulfilled.load(std::memory_order_acquire);
}

uint64_t Event::task_id() const {
  return state_ ? state_->task->id : 0;
}

uint64_t SubContext::task_id() const {
  return task_->id;
}
const std::string &SubContext::name() const {
  return task_->name;
}
const std::vector<pto_arg_desc> &SubContext::args() const {
  return task_->sub_args.descs();
}
int SubContext::sub_worker() const {
  return worker_ >= 0 ? worker_ : -1;
}
const std::string &SubContext::upstream_error() const {
  return task_->upstream_error;
}

Event SubContext::defer() {
  // The thread first: `active_` belongs to the body's thread. A defer from elsewhere could also
  // race with the body's return, which reads the event count once (sub_workers.cpp).
  if (std::this_thread::get_id() != thread_) {
    throw Error(PTO_INVALID_ARGUMENT,
                "SubContext.defer called from another thread than the one running the body of " +
                    task_->label() +
                    ": call ctx.defer() in the body itself and hand the Event to the other "
                    "thread (Event.fulfill may be called from any thread)");
  }
  if (!active_) {
    throw Error(PTO_INVALID_ARGUMENT, "SubContext.defer after the body of " + task_->label() +
                                          " returned: call ctx.defer() inside the body");
  }
  Event e;
  e.state_ = std::make_shared<l3::EventState>();
  e.state_->task = task_;
  e.state_->core = core_->weak_from_this();
  {
    std::lock_guard<std::mutex> lock(task_->events_mu);
    e.state_->index = static_cast<uint32_t>(task_->event_pending.size());
    task_->event_pending.push_back(true);
  }
  task_->events.fetch_add(1, std::memory_order_acq_rel);
  return e;
}

bool RunHandle::done() const {
  if (!run_) return true;
  std::lock_guard<std::mutex> lock(core_->mu);
  return run_->done;
}

WorkerRunStats RunHandle::wait(int64_t timeout_ms) const {
  if (!run_)
    throw Error(PTO_NOT_INITIALIZED, "RunHandle.wait on an empty handle; use the one submit() returned");
  std::unique_lock<std::mutex> lock(core_->mu);
  if (timeout_ms < 0) {
    core_->run_cv.wait(lock, [&] { return run_->done; });
  } else if (!core_->run_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                     [&] { return run_->done; })) {
    throw Error(PTO_RUN_TIMEOUT, "run " + std::to_string(run_->id) + " did not finish within " +
                                     std::to_string(timeout_ms) + " ms; still pending:\n" +
                                     core_->pending_report_locked(run_.get()));
  }
  if (run_->error_code != PTO_OK) {
    std::string msg = run_->error;
    if (!run_->skipped.empty()) {
      msg += "; " + std::to_string(run_->stats.skipped_tasks) + " dependent task(s) were not run:";
      for (const auto &s : run_->skipped) msg += " " + s + ",";
      msg.pop_back();
      if (run_->stats.skipped_tasks > run_->skipped.size()) msg += " ...";
    }
    throw Error(run_->error_code, msg);
  }
  return run_->stats;
}

bool RunHandle::wait_done(int64_t timeout_ms) const {
  if (!run_) return true;
  std::unique_lock<std::mutex> lock(core_->mu);
  if (timeout_ms < 0) {
    core_->run_cv.wait(lock, [&] { return run_->done; });
    return true;
  }
  return core_->run_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return run_->done; });
}

void RunHandle::cancel() const {
  if (!run_) return;
  std::vector<std::shared_ptr<void>> graveyard;  // task captures die outside mu
  bool live;
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    live = !run_->done && !core_->stopping;
    if (live) core_->cancel_run_locked(run_.get(), &graveyard);
  }
  graveyard.clear();
  if (live) core_->bell->ring();  // the scheduler aborts the running chip tasks
}

WorkerRunStats RunHandle::stats() const {
  if (!run_) return WorkerRunStats{};
  std::lock_guard<std::mutex> lock(core_->mu);
  WorkerRunStats s = run_->stats;
  if (!run_->done) s.wall_us = static_cast<double>(platform_now_ns() - run_->t_submit_ns) / 1e3;
  return s;
}

std::string RunHandle::pending_report() const {
  if (!run_) return "";
  std::lock_guard<std::mutex> lock(core_->mu);
  return core_->pending_report_locked(run_.get());
}

Worker::Worker(const WorkerOptions &options) : core_(std::make_shared<l3::WorkerCore>(options)) {
  core_->start_threads();
}

Worker::~Worker() {
  try {
    close();
  } catch (...) {
  }
}

RunHandle Worker::submit(const OrchFn &orch) {
  return core_->submit(core_, orch);
}

void *Worker::alloc(uint64_t nbytes) {
  core_->check_open("Worker.alloc");
  return core_->heap->address(core_->alloc_block(nbytes, "Worker.alloc"));
}

void Worker::free(void *ptr) {
  core_->heap->release_ptr(ptr);
}

bool Worker::in_heap(const void *ptr, uint64_t nbytes) const {
  core_->check_open("Worker.in_heap");
  return core_->heap->contains(ptr, nbytes);
}

uint64_t Worker::heap_bytes_in_use() const {
  core_->check_open("Worker.heap_bytes_in_use");
  return core_->heap->in_use();
}

void Worker::close() {
  core_->close(core_->opt.close_timeout_ms);
}

void Worker::close(uint32_t timeout_ms) {
  core_->close(timeout_ms);
}

bool Worker::closed() const {
  return core_->closed.load(std::memory_order_acquire);
}

int Worker::num_chips() const {
  core_->check_open("Worker.num_chips");
  return static_cast<int>(core_->chips.size());
}
int Worker::num_sub_workers() const {
  core_->check_open("Worker.num_sub_workers");
  return core_->num_subs();
}
ChipMode Worker::mode() const {
  return core_->opt.mode;
}
const WorkerOptions &Worker::options() const {
  return core_->opt;
}

int Worker::chip_pid(int chip) const {
  core_->check_open("Worker.chip_pid");
  if (chip < 0 || chip >= num_chips()) {
    throw Error(PTO_INVALID_ARGUMENT, "chip_pid: chip " + std::to_string(chip) + " is out of range");
  }
  if (core_->opt.mode != ChipMode::kProcess) return -1;
  return static_cast<const l3::ProcessChip *>(core_->chips[static_cast<size_t>(chip)].get())->wait_pid();
}

std::shared_ptr<void> Worker::heap_keepalive() const {
  return core_->heap;
}

void Worker::release_heap_buffer(const std::shared_ptr<void> &heap, void *ptr) noexcept {
  try {
    static_cast<l3::HostHeap *>(heap.get())->release_ptr(ptr);
  } catch (...) {
  }
}

}  // namespace pto
