// src/hierarchical/orchestrator.cpp — the submit path: validate, infer dependencies, publish.
//
// Runs on the orchestrating thread (the caller of Worker::submit); one orchestration at a time
// (submit_mu). Dependencies come from DepTracker; the edges are wired under `mu`, re-checking
// each predecessor's state there because it may have finished since the tracker saw it.
#include <algorithm>

#include "hierarchical/worker_core.h"

namespace pto {
namespace l3 {
// L3 does not hand per-chip traces, PMU counters or tensor dumps back yet: say so rather than
// drop the request.
void check_chip_config(const ChipCallConfig &config) {
  const char *what = config.enable_profiling     ? "enable_profiling"
                     : config.enable_pmu         ? "enable_pmu"
                     : config.enable_dump_tensor ? "enable_dump_tensor"
                                                 : nullptr;
  if (what) {
    throw Error(PTO_NOT_SUPPORTED, std::string("ChipCallConfig.") + what +
                                       " on an L3 chip task: per-chip traces, counters and dumps are not "
                                       "collected at L3 yet (docs/guide/l3.md); use a level-2 ChipWorker for "
                                       "that");
  }
}

// Whether an argument is a tracker access: a tensor of some bytes (scalars carry no dependency).
bool is_access(const pto_arg_desc &d) {
  return d.kind != PTO_ARG_SCALAR && d.nbytes != 0;
}

// Tensor arguments as tracker accesses.
void add_accesses(const ChipStorageTaskArgs &args, std::vector<DepTracker::Access> *out) {
  for (const pto_arg_desc &d : args.descs()) {
    if (!is_access(d)) continue;
    const bool read = d.direction == PTO_DIR_INPUT || d.direction == PTO_DIR_INOUT;
    const bool write = d.direction == PTO_DIR_OUTPUT || d.direction == PTO_DIR_INOUT;
    out->push_back({d.host_ptr, d.nbytes, read, write});
  }
}

// A chip task's tensors in the host heap reach the chip as they are: every chip maps the heap
// (thread mode: the one address space; process mode: the shared mapping), so they are shared, not
// staged into the chip's memory and back. Others (thread mode only) are staged. `in_heap[k]`:
// whether access k lies in the heap, the accesses being add_accesses' over the parts in order.
void share_heap_tensors(Task *t, const std::vector<bool> &in_heap) {
  size_t k = 0;
  for (ChipStorageTaskArgs &part : t->parts) {
    const std::vector<pto_arg_desc> &d = part.descs();
    for (size_t i = 0; i < d.size(); ++i) {
      if (!is_access(d[i])) continue;
      if (in_heap.at(k++) && d[i].kind == PTO_ARG_TENSOR) part.share_tensor(i);
    }
  }
}

HostHeap::Block *WorkerCore::alloc_block(uint64_t nbytes, const char *who) {
  HostHeap::Block *b = heap->alloc_wait(nbytes, platform_now_ns() + uint64_t{opt.heap_wait_ms} * 1000000ull);
  if (!b) {
    throw Error(PTO_OUT_OF_MEMORY,
                std::string(who) + ": the host heap (" + std::to_string(heap->capacity()) +
                    " bytes) cannot fit " + std::to_string(nbytes) + " more bytes (" +
                    std::to_string(heap->in_use()) + " in use, " + std::to_string(heap->awaiting_users()) +
                    " waiting for their tasks, waited " + fmt_seconds_ms(opt.heap_wait_ms) +
                    "); raise heap_bytes = " + std::to_string(opt.heap_bytes) +
                    " (a Worker option), free buffers, or end scopes sooner");
  }
  return b;
}

void *WorkerCore::alloc_in_run(RunState *run, uint64_t nbytes) {
  HostHeap::Block *b = alloc_block(nbytes, "Orchestrator.alloc");
  run->scopes.back().push_back(b);
  return heap->address(b);
}

uint64_t WorkerCore::publish(RunState *run, const std::shared_ptr<Task> &t,
                             const std::vector<DepTracker::Access> &acc, const std::vector<uint64_t> &after) {
  // Validation first: nothing below may fail half-way.
  const bool chip = t->kind == TaskKind::kChip;
  std::vector<HostHeap::Block *> refs;
  std::vector<bool> in_heap;  // chip tasks: per access
  for (const auto &a : acc) {
    HostHeap::Block *b = heap->find(a.ptr, a.nbytes);  // throws for a range across blocks
    if (!b && chip && opt.mode == ChipMode::kProcess) {
      throw Error(PTO_INVALID_ARGUMENT,
                  "submit_chip: a tensor argument is not in the worker's host heap; in process mode chip "
                  "processes only see host-heap memory: allocate it with Worker.alloc or Orchestrator.alloc");
    }
    if (chip) in_heap.push_back(b != nullptr);
    if (b && std::find(refs.begin(), refs.end(), b) == refs.end()) refs.push_back(b);
  }
  if (chip) l3::share_heap_tensors(t.get(), in_heap);
  std::vector<std::shared_ptr<Task>> preds;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (uint64_t id : after) {
      // One orchestration at a time: a run's task ids are consecutive.
      std::shared_ptr<Task> found;
      if (!run->tasks.empty() && id >= run->tasks.front()->id &&
          id - run->tasks.front()->id < run->tasks.size())
        found = run->tasks[id - run->tasks.front()->id];
      if (!found) {
        throw Error(PTO_INVALID_ARGUMENT,
                    "after: task id " + std::to_string(id) + " is not a task submitted earlier in this run");
      }
      preds.push_back(found);
    }
  }
  t->id = next_task_id.fetch_add(1, std::memory_order_relaxed);
  t->run = run;
  t->run_id = run->id;
  tracker.add(t, acc, &preds);
  for (HostHeap::Block *b : refs) heap->add_user(b);
  t->heap_refs = std::move(refs);
  std::vector<std::shared_ptr<void>> graveyard;
  std::vector<std::shared_ptr<Task>> bodies;  // inline bodies it made ready: run here, below
  bool wake_scheduler = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    // A ready inline body is run by this thread once mu is dropped, not handed to the scheduler
    // (a wake-up per task: L4 submits a receive per transfer, ready at once).
    const DrainInlineHere drain(this);
    run->tasks.push_back(t);
    run->outstanding += 1;
    for (const auto &p : preds) {
      if (p.get() == t.get()) continue;
      if (!p->is_finished_state()) {
        p->successors.push_back(t.get());
        t->fanin += 1;
        t->preds.push_back(p);
      } else if (p->state != TaskState::kDone && t->poisoned_by.empty()) {
        t->poisoned_by =
            p->label() + (p->state == TaskState::kFailed ? ", which failed" : ", which was not run");
        t->upstream_error =
            p->state == TaskState::kFailed || p->upstream_error.empty() ? p->error : p->upstream_error;
      }
    }
    if (t->fanin == 0) {
      make_ready_locked(t.get(), &graveyard);
      // The scheduler dispatches chip tasks and settles skipped ones' runs; a ready SUB task
      // rang its queue (an inline one, the scheduler) in make_ready_locked; a pending task
      // needs nobody until a predecessor releases it.
      wake_scheduler = t->kind != TaskKind::kSub || t->is_finished_state();
    }
    if (!stopping) take_inline_locked(&bodies);
  }
  if (wake_scheduler) bell->ring();
  const uint64_t id = t->id;
  graveyard.clear();  // outside mu: a body's captures may be anything
  run_inline(&bodies);
  return id;
}

}  // namespace l3

using l3::DepTracker;
using l3::HostHeap;
using l3::Task;
using l3::TaskKind;

void HostOrchestrator::check_active() const {
  if (!active_) {
    throw Error(PTO_NOT_INITIALIZED,
                "this Orchestrator is only valid inside the orchestration function it was given to");
  }
}

uint64_t HostOrchestrator::submit_chip(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                                       const ChipCallConfig &config, int chip, const std::string &name,
                                       const std::vector<uint64_t> &after, std::shared_ptr<void> keepalive) {
  check_active();
  const int n = static_cast<int>(core_->chips.size());
  if (chip != kAnyChip && (chip < 0 || chip >= n)) {
    throw Error(PTO_INVALID_ARGUMENT, "submit_chip: chip " + std::to_string(chip) +
                                          " is out of range; this worker has " + std::to_string(n) +
                                          " chips (0.." + std::to_string(n - 1) +
                                          ") or use kAnyChip (-1 / None)");
  }
  if (n == 0)
    throw Error(PTO_INVALID_ARGUMENT, "submit_chip: this worker has no chips (device_ids is empty)");
  l3::check_chip_config(config);
  auto t = std::make_shared<Task>();
  t->kind = TaskKind::kChip;
  t->name = name;
  t->callable = std::make_shared<const ChipCallable>(callable);
  t->config = config;
  t->parts.push_back(args);
  t->part_chips.push_back(chip);
  t->running_on.assign(1, -1);
  t->parts_left = 1;
  t->keepalive = std::move(keepalive);
  std::vector<DepTracker::Access> acc;
  l3::add_accesses(args, &acc);
  return core_->publish(run_.get(), t, acc, after);
}

uint64_t HostOrchestrator::submit_chip_group(const ChipCallable &callable,
                                             const std::vector<ChipStorageTaskArgs> &args,
                                             const ChipCallConfig &config, const std::vector<int> &chips,
                                             const std::string &name, const std::vector<uint64_t> &after,
                                             std::shared_ptr<void> keepalive) {
  check_active();
  const int n = static_cast<int>(core_->chips.size());
  if (args.empty() || static_cast<int>(args.size()) > n) {
    throw Error(PTO_INVALID_ARGUMENT, "submit_chip_group: " + std::to_string(args.size()) +
                                          " parts; a group needs 1.." + std::to_string(n) +
                                          " parts (one per chip of this worker)");
  }
  if (!chips.empty()) {
    if (chips.size() != args.size()) {
      throw Error(PTO_INVALID_ARGUMENT, "submit_chip_group: " + std::to_string(chips.size()) + " chips for " +
                                            std::to_string(args.size()) +
                                            " argument sets; give one chip per part");
    }
    for (size_t i = 0; i < chips.size(); ++i) {
      if (chips[i] < 0 || chips[i] >= n) {
        throw Error(PTO_INVALID_ARGUMENT, "submit_chip_group: chip " + std::to_string(chips[i]) +
                                              " is out of range 0.." + std::to_string(n - 1));
      }
      for (size_t j = 0; j < i; ++j) {
        if (chips[j] == chips[i]) {
          throw Error(PTO_INVALID_ARGUMENT, "submit_chip_group: chip " + std::to_string(chips[i]) +
                                                " is listed twice; a group's chips are distinct");
        }
      }
    }
  }
  l3::check_chip_config(config);
  auto t = std::make_shared<Task>();
  t->kind = TaskKind::kChip;
  t->group = true;
  t->name = name;
  t->callable = std::make_shared<const ChipCallable>(callable);
  t->config = config;
  t->parts = args;
  t->part_chips = chips.empty() ? std::vector<int>(args.size(), kAnyChip) : chips;
  t->running_on.assign(args.size(), -1);
  t->parts_left = static_cast<uint32_t>(args.size());
  t->keepalive = std::move(keepalive);
  std::vector<DepTracker::Access> acc;
  for (const auto &a : args) l3::add_accesses(a, &acc);
  return core_->publish(run_.get(), t, acc, after);
}

uint64_t HostOrchestrator::submit_sub(SubFn fn, const ChipStorageTaskArgs &args, const std::string &name,
                                      const std::vector<uint64_t> &after, std::shared_ptr<void> keepalive,
                                      bool always_run, bool inline_body) {
  check_active();
  if (core_->num_subs() == 0) {
    throw Error(PTO_INVALID_ARGUMENT,
                "submit_sub: this worker has no SUB workers; create it with num_sub_workers >= 1");
  }
  if (!fn) throw Error(PTO_INVALID_ARGUMENT, "submit_sub: the function is empty");
  auto t = std::make_shared<Task>();
  t->kind = TaskKind::kSub;
  t->name = name;
  t->fn = std::move(fn);
  t->always_run = always_run;
  t->inline_body = inline_body;
  t->sub_args = args;
  t->keepalive = std::move(keepalive);
  std::vector<DepTracker::Access> acc;
  l3::add_accesses(args, &acc);
  return core_->publish(run_.get(), t, acc, after);
}

void HostOrchestrator::scope_begin() {
  check_active();
  run_->scopes.emplace_back();
}

void HostOrchestrator::scope_end() {
  check_active();
  if (run_->scopes.size() <= 1) {
    throw Error(PTO_INVALID_ARGUMENT, "scope_end without a matching scope_begin");
  }
  for (HostHeap::Block *b : run_->scopes.back()) core_->heap->release(b);
  run_->scopes.pop_back();
}

void *HostOrchestrator::alloc(uint64_t nbytes) {
  check_active();
  return core_->alloc_in_run(run_.get(), nbytes);
}

int HostOrchestrator::num_chips() const {
  return static_cast<int>(core_->chips.size());
}
int HostOrchestrator::num_sub_workers() const {
  return core_->num_subs();
}
ChipMode HostOrchestrator::mode() const {
  return core_->opt.mode;
}

namespace l3 {

RunHandle WorkerCore::submit(const std::shared_ptr<WorkerCore> &self, const Worker::OrchFn &orch) {
  check_open("Worker.submit");
  if (!orch) throw Error(PTO_INVALID_ARGUMENT, "Worker.submit: the orchestration function is empty");
  if (orchestrating.load(std::memory_order_acquire) == std::this_thread::get_id()) {
    throw Error(
        PTO_INVALID_ARGUMENT,
        "Worker.submit/run called from inside an orchestration function: submit the tasks through the "
        "Orchestrator it was given (a nested run would wait for itself)");
  }
  std::lock_guard<std::mutex> serial(submit_mu);
  orchestrating.store(std::this_thread::get_id(), std::memory_order_release);
  auto run = std::make_shared<RunState>();
  run->id = next_run_id++;
  run->stats.tasks_per_chip.assign(chips.size(), 0);
  run->stats.tasks_per_sub_worker.assign(static_cast<size_t>(num_subs()), 0);
  run->t_submit_ns = platform_now_ns();
  run->cpu_at_submit_us = process_cpu_us();
  run->sched_cpu_at_submit_us = scheduler_cpu_us();
  run->scopes.emplace_back();
  {
    std::lock_guard<std::mutex> lock(mu);
    live_runs.push_back(run);
  }
  HostOrchestrator o(this, run);
  pto_status code = PTO_OK;
  std::string msg;
  try {
    orch(o);
  } catch (const Error &e) {
    code = e.code();
    msg = e.what();
  } catch (const std::exception &e) {
    code = PTO_ORCHESTRATION_FAILED;
    msg = e.what();
  } catch (...) {
    code = PTO_ORCHESTRATION_FAILED;
    msg = "unknown exception";
  }
  o.active_ = false;
  orchestrating.store(std::thread::id{}, std::memory_order_release);
  while (!run->scopes.empty()) {
    for (HostHeap::Block *b : run->scopes.back()) heap->release(b);
    run->scopes.pop_back();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    if (code != PTO_OK) {
      // The orchestration's own error names the cause better than what followed from it.
      run->error_code = code;
      run->error = "run " + std::to_string(run->id) + ": the orchestration function failed: " + msg;
    }
    if (--run->outstanding == 0) complete_run_locked(run.get());
  }
  RunHandle h;
  h.core_ = self;
  h.run_ = run;
  return h;
}

}  // namespace l3
}  // namespace pto
