// src/hierarchical/sub_workers.cpp — SUB worker threads, OmpSs-2-style deferred completion, and retiring
// SUB tasks on the thread that completes them.
//
// A SUB worker takes the next task from the shared SUB ready queue (rung when one is pushed) and
// runs the body. When the body returns it retires the task itself, under mu: the task is done
// unless the body deferred events, and its dependents are released on this thread, so the next
// SUB task of a chain is usually taken by this same worker with no wake-up in between. A task
// whose body deferred events is completed by whoever settles the last one (Event::settle, any
// thread), the same way. The event counter is decremented for the body under mu, so the body's
// statistics are recorded before any settle can finish the task.
#include "hierarchical/worker_core.h"

namespace pto {
namespace l3 {

void WorkerCore::take_inline_locked(std::vector<std::shared_ptr<Task>> *out) {
  for (Task *t : inline_ready) {
    t->sub_worker.store(kInlineBody, std::memory_order_relaxed);  // stays kReady, as SUB tasks do
    out->push_back(t->shared_from_this());
  }
  inline_ready.clear();
}

void WorkerCore::run_inline(std::vector<std::shared_ptr<Task>> *bodies) {
  // A worklist, not recursion: retiring an inline body may release more of them.
  while (!bodies->empty()) {
    std::shared_ptr<Task> t = std::move(bodies->back());
    bodies->pop_back();
    run_sub(kInlineBody, t.get(), bodies);
  }
}

void WorkerCore::retire_sub(Task *t, int w, bool complete, std::vector<std::shared_ptr<Task>> *inline_out) {
  std::vector<std::shared_ptr<void>> graveyard;
  std::vector<std::shared_ptr<Task>> own;
  std::vector<std::shared_ptr<Task>> &bodies = inline_out ? *inline_out : own;
  {
    std::lock_guard<std::mutex> lock(mu);
    const DrainInlineHere drain(this);  // this thread takes inline_ready below
    if (w != -1) {  // the body returned
      if (!t->is_finished_state() && w >= 0)
        t->run->stats.tasks_per_sub_worker[static_cast<size_t>(w)] += 1;
      // The body's own count, under mu: a settle that brings the counter to 0 after this must
      // take mu, so it finds the statistics recorded and the task deferred.
      if (!t->body_failed && t->events.fetch_sub(1, std::memory_order_acq_rel) == 1)
        complete = !t->completion_posted.exchange(true, std::memory_order_acq_rel);
    }
    if (!t->is_finished_state()) {
      if (!complete) {
        t->state = TaskState::kDeferred;
      } else if (t->body_failed) {
        finish_locked(t, TaskState::kFailed, PTO_TASK_FAILED, t->body_error, &graveyard);
      } else {
        std::string event_error;
        {
          std::lock_guard<std::mutex> events_lock(t->events_mu);  // after mu: the documented order
          event_error = t->event_error;
        }
        if (!event_error.empty()) {
          finish_locked(t, TaskState::kFailed, PTO_TASK_FAILED, t->label() + " (SUB) failed: " + event_error,
                        &graveyard);
        } else {
          finish_locked(t, TaskState::kDone, PTO_OK, "", &graveyard);
        }
      }
    }
    if (!stopping) take_inline_locked(&bodies);
  }
  graveyard.clear();  // outside mu: a body's captures may be anything
  if (!inline_out) run_inline(&own);
}

void WorkerCore::run_sub(int w, Task *t, std::vector<std::shared_ptr<Task>> *inline_out) {
  SubContext ctx(t->shared_from_this(), this, w);
  auto on = [w] { return w >= 0 ? "SUB worker " + std::to_string(w) : std::string("the thread releasing it"); };
  try {
    t->fn(ctx);
  } catch (const Error &e) {
    t->body_failed = true;
    t->body_error = t->label() + " (SUB) failed on " + on() + ": " + e.what();
  } catch (const std::exception &e) {
    t->body_failed = true;
    t->body_error = t->label() + " (SUB) failed on " + on() + ": " + e.what();
  } catch (...) {
    t->body_failed = true;
    t->body_error = t->label() + " (SUB) failed on " + on() + ": unknown exception";
  }
  ctx.active_ = false;
  t->fn = nullptr;  // the body's captures die here, on this thread
  // A failure completes at once (later settles are ignored); otherwise retire_sub drops the
  // body's count and completes the task if no event is left.
  const bool complete = t->body_failed && !t->completion_posted.exchange(true, std::memory_order_acq_rel);
  if (w >= 0) takes_next_sub_here = this;  // it pops the queue as soon as this returns
  retire_sub(t, w, complete, inline_out);
  takes_next_sub_here = nullptr;
}

void WorkerCore::sub_main(int w) {
  for (;;) {
    const uint32_t seen = sub_queue.bell.prepare();
    Task *t = nullptr;
    {
      std::lock_guard<std::mutex> lock(sub_queue.mu);
      if (!sub_queue.tasks.empty()) {
        t = sub_queue.tasks.front();
        sub_queue.tasks.pop_front();
        t->sub_worker.store(w, std::memory_order_relaxed);
      }
    }
    if (t) {
      run_sub(w, t);
      continue;
    }
    if (subs_stop.load(std::memory_order_acquire)) return;
    sub_queue.bell.wait(seen, 0, 256, idle_yields.load(std::memory_order_relaxed));
  }
}

}  // namespace l3
}  // namespace pto
