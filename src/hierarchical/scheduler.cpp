// src/hierarchical/scheduler.cpp — the L3 scheduler: one polling service thread (seed 003's TACL).
//
// Each pass: poll the chips with a run in flight, then under `mu` retire the chip tasks that
// finished (release or poison successors) and pick work for idle chips; the hand-offs
// (ChipEndpoint::start, inline SUB bodies) happen after `mu` is dropped so the orchestrating
// thread is never held up by a launch. SUB tasks are not the scheduler's: their threads retire
// them (sub_workers.cpp). With nothing to do it waits on its bell: spin briefly, then park. Only
// THREAD-mode chips with a run in flight need waking up to be polled (backoff 20 us .. 1 ms);
// in PROCESS mode the chip processes and the zygote ring the bell, and the 100 ms time-out only
// bounds how late a stuck chip start is noticed.
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "hierarchical/worker_core.h"

namespace pto {
namespace l3 {
namespace {

struct Launch {  // a chip part to start once mu is dropped
  Task *task;
  int chip;
  int part;
};

struct ChipDone {
  int chip;
  ChipResult result;
};

}  // namespace

std::string pending_events_text(const Task *t) {
  std::lock_guard<std::mutex> lock(t->events_mu);
  std::string which;
  size_t n = 0;
  for (size_t i = 0; i < t->event_pending.size(); ++i) {
    if (t->event_pending[i]) which += (n++ ? ", " : " ") + std::to_string(i);
  }
  return std::to_string(n) + " external event(s) to be fulfilled (Event.fulfill): event" + which +
         " of the " + std::to_string(t->event_pending.size()) + " its body deferred (Event.index)";
}

double WorkerCore::scheduler_cpu_us() const {
  if (!scheduler_started.load(std::memory_order_acquire)) return 0;
  clockid_t cid;
  if (pthread_getcpuclockid(scheduler_handle, &cid) != 0) return 0;
  timespec ts;
  if (clock_gettime(cid, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void WorkerCore::make_ready_locked(Task *t, std::vector<std::shared_ptr<void>> *graveyard) {
  if (t->run->cancelled && t->poisoned_by.empty()) t->poisoned_by = "the run's cancellation";
  if (!t->poisoned_by.empty() && !(t->always_run && !t->run->cancelled)) {
    finish_locked(t, TaskState::kSkipped, PTO_TASK_FAILED,
                  t->label() + " was not run: it depends on " + t->poisoned_by, graveyard);
    return;
  }
  t->state = TaskState::kReady;
  t->t_ready_ns = platform_now_ns();
  if (t->kind == TaskKind::kSub && t->inline_body) {
    inline_ready.push_back(t);  // run by the releasing thread once it drops mu, else by the scheduler
    if (drains_inline_here != this) bell->ring();
  } else if (t->kind == TaskKind::kSub) {
    bool was_empty;
    {
      std::lock_guard<std::mutex> lock(sub_queue.mu);
      was_empty = sub_queue.tasks.empty();
      sub_queue.tasks.push_back(t);
    }
    if (was_empty && takes_next_sub_here == this)
      takes_next_sub_here = nullptr;  // the SUB worker retiring its task here takes it next
    else
      sub_queue.bell.ring_one();  // one task, one SUB worker woken
  } else {
    if (t->group) {
      group_ready.push_back(t);
    } else if (t->part_chips[0] == kAnyChip) {
      any_ready.push_back(t);
    } else {
      pinned_ready[static_cast<size_t>(t->part_chips[0])].push_back(t);
    }
    bell->ring();  // released by a SUB worker or an Event: the scheduler dispatches chip tasks
  }
}

void WorkerCore::finish_locked(Task *first, TaskState first_state, pto_status first_code,
                               const std::string &first_err, std::vector<std::shared_ptr<void>> *graveyard) {
  // Worklist, not recursion: a failure can skip a long chain of dependents.
  struct Item {
    Task *t;
    TaskState st;
    pto_status code;
    std::string err;
  };
  std::vector<Item> work{{first, first_state, first_code, first_err}};
  while (!work.empty()) {
    Item it = std::move(work.back());
    work.pop_back();
    Task *t = it.t;
    if (t->is_finished_state()) continue;
    t->state = it.st;
    t->error = it.err;
    t->error_code = it.code;
    RunState *r = t->run;
    if (it.st == TaskState::kDone || it.st == TaskState::kFailed) {
      (t->kind == TaskKind::kChip ? r->stats.chip_tasks : r->stats.sub_tasks) += 1;
    }
    if (it.st == TaskState::kFailed) {
      r->stats.failed_tasks += 1;
      if (r->error_code == PTO_OK) {
        r->error_code = it.code == PTO_OK ? PTO_TASK_FAILED : it.code;
        r->error = it.err;
      }
    } else if (it.st == TaskState::kSkipped) {
      r->stats.skipped_tasks += 1;
      if (r->skipped.size() < 8) r->skipped.push_back(t->label());
    }
    for (HostHeap::Block *b : t->heap_refs) heap->drop_user(b);
    t->heap_refs.clear();
    if (t->keepalive) graveyard->push_back(std::move(t->keepalive));
    if (t->fn) {
      // Never destroy a body's captures under mu: they may be anything.
      auto fn = std::make_shared<SubFn>(std::move(t->fn));
      graveyard->push_back(std::move(fn));
      t->fn = nullptr;
    }
    t->preds.clear();
    t->finished.store(true, std::memory_order_release);
    for (Task *s : t->successors) {
      if (it.st != TaskState::kDone && s->poisoned_by.empty()) {
        s->poisoned_by =
            t->label() + (it.st == TaskState::kFailed ? ", which failed" : ", which was not run");
        // The root cause travels down a chain of skipped tasks (an always_run body reports it).
        s->upstream_error =
            it.st == TaskState::kFailed || t->upstream_error.empty() ? it.err : t->upstream_error;
      }
      if (--s->fanin == 0) {
        if (!s->poisoned_by.empty() && !s->always_run) {
          work.push_back({s, TaskState::kSkipped, PTO_TASK_FAILED,
                          s->label() + " was not run: it depends on " + s->poisoned_by});
        } else {
          make_ready_locked(s, graveyard);
        }
      }
    }
    t->successors.clear();
    if (--r->outstanding == 0) complete_run_locked(r);
  }
}

void WorkerCore::cancel_run_locked(RunState *r, std::vector<std::shared_ptr<void>> *graveyard) {
  if (r->done || r->cancelled) return;
  r->cancelled = true;
  if (r->error_code == PTO_OK) {
    r->error_code = PTO_ABORTED;
    r->error =
        "run " + std::to_string(r->id) + " was cancelled (Ctrl-C or RunHandle.cancel) before it finished";
  }
  auto of_run = [r](const Task *t) { return t->run == r; };
  auto drop = [&](std::deque<Task *> &q) { q.erase(std::remove_if(q.begin(), q.end(), of_run), q.end()); };
  drop(any_ready);
  drop(group_ready);
  drop(inline_ready);
  for (auto &q : pinned_ready) drop(q);
  {
    std::lock_guard<std::mutex> lock(sub_queue.mu);
    drop(sub_queue.tasks);
  }
  // Copy: finishing tasks may complete the run, which then drops its last task references.
  const std::vector<std::shared_ptr<Task>> tasks = r->tasks;
  for (const auto &t : tasks) {
    if (t->is_finished_state()) continue;
    const bool sub_running = t->kind == TaskKind::kSub && t->sub_worker.load(std::memory_order_relaxed) != -1;
    if (t->state == TaskState::kPending) {
      if (t->poisoned_by.empty()) t->poisoned_by = "the run's cancellation";  // skipped once released
    } else if ((t->state == TaskState::kReady && !sub_running) || t->state == TaskState::kDeferred) {
      // Taken out of its queue above, or a SUB body that returned and waits for events.
      finish_locked(t.get(), TaskState::kSkipped, PTO_ABORTED,
                    t->label() + " was not run: the run was cancelled", graveyard);
    }
    // kRunning chip tasks: the scheduler aborts them (abort_sent); a running SUB body returns
    // on its own.
  }
}

void WorkerCore::complete_run_locked(RunState *r) {
  for (HostHeap::Block *b : r->domains) heap->release(b);
  r->domains.clear();
  r->done = true;
  r->stats.wall_us = static_cast<double>(platform_now_ns() - r->t_submit_ns) / 1e3;
  r->stats.host_cpu_us = process_cpu_us() - r->cpu_at_submit_us;
  r->stats.scheduler_cpu_us = scheduler_cpu_us() - r->sched_cpu_at_submit_us;
  if (r->stats.scheduler_cpu_us < 0) r->stats.scheduler_cpu_us = 0;
  for (auto it = live_runs.begin(); it != live_runs.end(); ++it) {
    if (it->get() == r) {
      // The handle (or submit) still holds the run; dropping our reference here never frees it
      // under mu while a task of it is referenced by a notice in flight: it has no unfinished
      // task left.
      live_runs.erase(it);
      break;
    }
  }
  run_cv.notify_all();
}

void WorkerCore::scheduler_main() {
  std::vector<ChipDone> chip_done;
  std::vector<Launch> launches;
  std::vector<std::shared_ptr<void>> graveyard;
  std::vector<char> reserved(chips.size(), 0);
  std::vector<int> aborts;  // chips whose task's run was cancelled, told to abort after mu
  std::vector<std::shared_ptr<Task>> bodies;  // inline SUB bodies, run after mu
  uint64_t backoff_ns = 20000;
  for (;;) {
    const uint32_t seen = bell->prepare();
    bool must_poll = false;
    for (size_t c = 0; c < chips.size(); ++c) {
      if (chip_slots[c].task == nullptr) continue;  // written only by this thread
      ChipResult res;
      if (chips[c]->poll(&res)) {
        chip_done.push_back({static_cast<int>(c), std::move(res)});
      } else if (chips[c]->needs_polling()) {
        must_poll = true;
      }
    }
    bool progress = !chip_done.empty();
    bool exit_now = false;
    launches.clear();
    {
      std::lock_guard<std::mutex> lock(mu);
      for (ChipDone &d : chip_done) {
        ChipSlot &slot = chip_slots[static_cast<size_t>(d.chip)];
        Task *t = slot.task;
        slot.task = nullptr;
        slot.part = -1;
        if (t == nullptr || t->is_finished_state()) continue;
        t->run->stats.tasks_per_chip[static_cast<size_t>(d.chip)] += 1;
        t->run->stats.chip_device_us += d.result.stats.device_us;
        if (d.result.code != PTO_OK && t->error.empty()) {
          const std::string why = name_addresses(d.result.message, t->run->named_ranges);
          t->error = t->label() + " failed on " + d.result.where + ": " + why;
          if (d.result.context_lost) t->error = t->label() + " failed: " + why;
          t->error_code = d.result.code;
        }
        if (--t->parts_left == 0) {
          if (t->error.empty()) {
            finish_locked(t, TaskState::kDone, PTO_OK, "", &graveyard);
          } else {
            const std::string err = t->error;
            t->error.clear();  // finish_locked sets it
            finish_locked(t, TaskState::kFailed, t->error_code, err, &graveyard);
          }
        }
      }
      chip_done.clear();
      aborts.clear();
      for (size_t c = 0; c < chip_slots.size(); ++c) {
        ChipSlot &slot = chip_slots[c];
        // A cancelled run's chip tasks stop; so do the other parts of a group whose part failed:
        // a collective whose rank is gone would wait for it until the time limit.
        if (slot.task && !slot.abort_sent &&
            (slot.task->run->cancelled || (slot.task->group && !slot.task->error.empty()))) {
          slot.abort_sent = true;
          aborts.push_back(static_cast<int>(c));
        }
      }
      if (stopping) {
        exit_now = true;
      } else {
        take_inline_locked(&bodies);
        // --- dispatch: groups first; the head group reserves the chips it waits for ---
        std::fill(reserved.begin(), reserved.end(), 0);
        const uint64_t now = platform_now_ns();
        auto chip_free = [&](size_t c) { return chip_slots[c].task == nullptr && chips[c]->available(); };
        auto launch_chip = [&](Task *t, size_t c, int part) {
          chip_slots[c].task = t;
          chip_slots[c].part = part;
          chip_slots[c].t_start_ns = now;
          chip_slots[c].abort_sent = false;
          t->running_on[static_cast<size_t>(part)] = static_cast<int>(c);
          t->state = TaskState::kRunning;
          if (t->t_start_ns == 0) t->t_start_ns = now;
          launches.push_back({t, static_cast<int>(c), part});
        };
        std::string why;
        while (!group_ready.empty()) {
          Task *g = group_ready.front();
          std::vector<size_t> use;
          bool broken_chip = false;
          if (g->part_chips[0] != kAnyChip) {
            bool all = true;
            for (int c : g->part_chips) {
              if (chips[static_cast<size_t>(c)]->broken(&why)) broken_chip = true;
              if (!chip_free(static_cast<size_t>(c))) all = false;
            }
            if (broken_chip) {
              group_ready.pop_front();
              finish_locked(g, TaskState::kFailed, PTO_TASK_FAILED,
                            g->label() + " cannot run: a chip of its group is broken (" + why + ")",
                            &graveyard);
              continue;
            }
            if (all) {
              for (size_t p = 0; p < g->part_chips.size(); ++p)
                use.push_back(static_cast<size_t>(g->part_chips[p]));
            } else {
              for (int c : g->part_chips) reserved[static_cast<size_t>(c)] = 1;
            }
          } else {
            size_t usable = 0;
            for (size_t c = 0; c < chips.size(); ++c) {
              if (!chips[c]->broken(nullptr)) ++usable;
              if (chip_free(c) && use.size() < g->parts.size()) use.push_back(c);
            }
            if (usable < g->parts.size()) {
              group_ready.pop_front();
              finish_locked(g, TaskState::kFailed, PTO_TASK_FAILED,
                            g->label() + " needs " + std::to_string(g->parts.size()) + " chips but only " +
                                std::to_string(usable) + " can run tasks",
                            &graveyard);
              continue;
            }
            if (use.size() < g->parts.size()) {
              for (size_t c : use) reserved[c] = 1;
              use.clear();
            }
          }
          if (use.empty()) break;  // the head group waits; later groups wait behind it
          group_ready.pop_front();
          for (size_t p = 0; p < use.size(); ++p) launch_chip(g, use[p], static_cast<int>(p));
        }
        for (size_t c = 0; c < chips.size(); ++c) {
          if (chips[c]->broken(&why)) {
            while (!pinned_ready[c].empty()) {
              Task *t = pinned_ready[c].front();
              pinned_ready[c].pop_front();
              finish_locked(t, TaskState::kFailed, PTO_TASK_FAILED,
                            t->label() + " cannot run: " + chips[c]->describe() + " is broken (" + why + ")",
                            &graveyard);
            }
            continue;
          }
          if (reserved[c] || !chip_free(c)) continue;
          std::deque<Task *> &q = !pinned_ready[c].empty() ? pinned_ready[c] : any_ready;
          if (q.empty()) continue;
          Task *t = q.front();
          q.pop_front();
          launch_chip(t, c, 0);
        }
        if (!any_ready.empty()) {
          bool any_usable = false;
          for (size_t c = 0; c < chips.size(); ++c) any_usable = any_usable || !chips[c]->broken(nullptr);
          while (!any_usable && !any_ready.empty()) {
            Task *t = any_ready.front();
            any_ready.pop_front();
            finish_locked(t, TaskState::kFailed, PTO_TASK_FAILED,
                          t->label() + " cannot run: every chip is broken", &graveyard);
          }
        }
      }
    }
    graveyard.clear();  // outside mu
    for (int c : aborts) chips[static_cast<size_t>(c)]->abort();
    progress = progress || !launches.empty() || !aborts.empty() || !bodies.empty();
    run_inline(&bodies);
    for (const Launch &l : launches) {
      try {
        chips[static_cast<size_t>(l.chip)]->start(*l.task->callable,
                                                  l.task->parts[static_cast<size_t>(l.part)], l.task->config);
      } catch (const Error &e) {
        ChipResult r;
        r.code = e.code();
        r.message = std::string("could not start: ") + e.what();
        r.where = chips[static_cast<size_t>(l.chip)]->describe();
        chip_done.push_back({l.chip, std::move(r)});
      } catch (const std::exception &e) {
        ChipResult r;
        r.code = PTO_INTERNAL;
        r.message = std::string("could not start: ") + e.what();
        r.where = chips[static_cast<size_t>(l.chip)]->describe();
        chip_done.push_back({l.chip, std::move(r)});
      }
      if (chips[static_cast<size_t>(l.chip)]->needs_polling()) must_poll = true;
    }
    if (exit_now) break;
    if (progress || !chip_done.empty()) {
      backoff_ns = 20000;
      continue;
    }
    if (must_poll) {
      // Polling a chip: spin only on the first short wait; at the 1 ms cap a wake-up costs a
      // few microseconds, so an idle scheduler polling busy chips stays well under 1% CPU.
      const bool first = backoff_ns == 20000;
      bell->wait(seen, backoff_ns, first ? 256 : 0, first ? idle_yields.load(std::memory_order_relaxed) : 0);
      backoff_ns = std::min<uint64_t>(backoff_ns * 2, 1000000);
    } else {
      // process mode: chip starts and zygote health
      bell->wait(seen, procs ? 100000000 : 0, 256, idle_yields.load(std::memory_order_relaxed));
    }
  }
}

std::string WorkerCore::describe_task_locked(const Task *t) const {
  const uint64_t now = platform_now_ns();
  const char *kind = t->kind == TaskKind::kSub ? "SUB" : (t->group ? "chip group" : "chip");
  std::string s = t->label() + " (" + kind + "): ";
  switch (t->state) {
    case TaskState::kPending: {
      s += "waits for " + std::to_string(t->fanin) + " earlier task(s):";
      int shown = 0;
      for (const auto &p : t->preds) {
        if (p->is_finished_state()) continue;
        if (shown++ == 4) {
          s += " ...";
          break;
        }
        s += " " + p->label() + " [" + task_state_name(p->state) + "]";
      }
      break;
    }
    case TaskState::kReady:
      if (t->kind == TaskKind::kSub && t->sub_worker.load(std::memory_order_relaxed) >= 0) {
        s += "body running on SUB worker " + std::to_string(t->sub_worker.load(std::memory_order_relaxed));
      } else if (t->kind == TaskKind::kSub && t->inline_body) {
        s += t->sub_worker.load(std::memory_order_relaxed) == kInlineBody ? "inline body running"
                                                                          : "ready; its inline body runs next";
      } else if (t->kind == TaskKind::kSub) {
        s += "ready; queued for a SUB worker (all " + std::to_string(num_subs()) + " busy)";
      } else if (t->group) {
        s += "ready; waits for " + std::to_string(t->parts.size()) + " chips to be idle together";
      } else if (t->part_chips[0] == kAnyChip) {
        s += "ready; queued for any idle chip (all " + std::to_string(chips.size()) + " busy or restarting)";
      } else {
        const auto c = static_cast<size_t>(t->part_chips[0]);
        s += "ready; queued for " + chips[c]->describe();
        if (chip_slots[c].task) s += ", busy with " + chip_slots[c].task->label();
      }
      break;
    case TaskState::kRunning: {
      s += "running on";
      for (size_t c = 0; c < chip_slots.size(); ++c) {
        if (chip_slots[c].task == t) s += " " + chips[c]->describe();
      }
      s += " for " + fmt_seconds(now - t->t_start_ns);
    } break;
    case TaskState::kDeferred:
      s += "body returned; waits for " + pending_events_text(t);
      break;
    default:
      s += task_state_name(t->state);
  }
  return s;
}

std::string WorkerCore::pending_report_locked(const RunState *r) const {
  std::string s;
  size_t pending = 0;
  for (const auto &t : r->tasks) pending += t->is_finished_state() ? 0 : 1;
  if (r->outstanding > pending) s += "  the orchestration function has not returned yet\n";
  size_t shown = 0;
  for (const auto &t : r->tasks) {
    if (t->is_finished_state()) continue;
    if (shown++ == 16) {
      s += "  ... and " + std::to_string(pending - 16) + " more\n";
      break;
    }
    s += "  " + describe_task_locked(t.get()) + "\n";
  }
  return s;
}

}  // namespace l3
}  // namespace pto
