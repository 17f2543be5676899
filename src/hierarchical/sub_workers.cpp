// src/hierarchical/sub_workers.cpp — SUB worker threads and OmpSs-2-style deferred completion.
//
// A SUB worker takes the next task from the shared SUB ready queue (rung when one is pushed),
// runs the body, and posts one notice: "body returned" plus, when no event is pending, "task
// complete". A body that deferred events posts "body returned" first and the completion is
// posted by whoever brings the event counter to zero (the worker or an Event::fulfill on any
// thread): posting "body returned" first keeps the notice for a task that may finish in
// between from ever naming freed memory.
#include "hierarchical/worker_core.h"

namespace pto {
namespace l3 {

void WorkerCore::post_complete(Task *t, int sub_worker) {
  if (t->completion_posted.exchange(true, std::memory_order_acq_rel)) {
    if (sub_worker >= 0) inbox->post(Notice{t, sub_worker, false});
    return;
  }
  inbox->post(Notice{t, sub_worker, true});
}

void WorkerCore::run_sub(int w, Task *t) {
  SubContext ctx(t->shared_from_this(), this, w);
  try {
    t->fn(ctx);
  } catch (const Error &e) {
    t->body_failed = true;
    t->body_error = t->label() + " (SUB) failed on SUB worker " + std::to_string(w) + ": " + e.what();
  } catch (const std::exception &e) {
    t->body_failed = true;
    t->body_error = t->label() + " (SUB) failed on SUB worker " + std::to_string(w) + ": " + e.what();
  } catch (...) {
    t->body_failed = true;
    t->body_error = t->label() + " (SUB) failed on SUB worker " + std::to_string(w) + ": unknown exception";
  }
  ctx.active_ = false;
  t->fn = nullptr;  // the body's captures die here, on this thread
  if (t->body_failed) {
    post_complete(t, w);  // a failure completes at once; later fulfills are ignored
    return;
  }
  // Fast path: nothing deferred (only this thread could have added events, while the body ran).
  if (t->events.load(std::memory_order_acquire) == 1) {
    t->events.store(0, std::memory_order_relaxed);
    post_complete(t, w);
    return;
  }
  inbox->post(Notice{t, w, false});
  if (t->events.fetch_sub(1, std::memory_order_acq_rel) == 1) post_complete(t, -1);
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
    sub_queue.bell.wait(seen);
  }
}

}  // namespace l3
}  // namespace pto
