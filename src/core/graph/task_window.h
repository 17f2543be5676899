// src/core/graph/task_window.h — the sliding window of task slots: id → slot, live_from, overflow.
//
// Task ids grow without bound; task t lives in slot t & (size - 1) while
// live_from <= t < next id, where live_from is last_task_alive: the oldest task not yet retired.
// Retirement is in id order (advance(), called by whichever scheduler finishes a task), so
// every id below live_from has finished and its slot — and whatever is indexed by slot
// (dependency-pool ends, dedup stamps) — may be reused. The orchestrator asks admit(id) before
// it fills task id's slot, and the run's task_window_overflow (pto/schedule_config.h) decides
// what a full window does:
//   stall            wait; resume once a quarter of the window is free (one wake-up per batch
//                    of retirements, not one per task)
//   evict_completed  wait; resume at the first slot retirement frees
//   error            no slot is ever reused: task `limit` (task_window as configured) and later
//                    are refused with the capacity error
// TaskWindow is a view: the counter lives in the run's shared header; copies are cheap and
// every thread may hold one. Nothing here allocates or throws: it is built into the AICPU program.
//
// last_task_alive — writers: schedulers (advance(), seq_cst CAS); readers: the orchestrator
// (live_from(), acquire: what a retired task wrote — its slot, its fanout list's close — is
// visible before the slot is refilled) and schedulers (advance(), seq_cst; see there).
#ifndef PTO_CORE_GRAPH_TASK_WINDOW_H
#define PTO_CORE_GRAPH_TASK_WINDOW_H

#include <atomic>
#include <cstdint>

#include "pto/schedule_config.h"

namespace pto {
namespace graph {

// Task id → slot of a window of `size` slots (a power of two).
constexpr uint64_t window_slot(int64_t id, uint64_t size) {
  return static_cast<uint64_t>(id) & (size - 1);
}

class TaskWindow {
 public:
  enum class Verdict : uint8_t {
    kFits,    // the slot is free now
    kWait,    // full: wait until live_from reaches wake_at, then ask again (has_room)
    kReject,  // overflow=error and id is past the configured window: PTO_CAPACITY_EXCEEDED
  };
  struct Admission {
    Verdict verdict;
    int64_t wake_at;  // kWait: the live_from to be woken at (resume point of the overflow policy)
  };

  // size: slots, a power of two (task_window rounded up); limit: task_window as configured
  // (overflow=error's capacity); last_alive: the run's last_task_alive.
  TaskWindow(uint32_t size, uint32_t limit, WindowOverflow overflow, std::atomic<int64_t> *last_alive)
      : size_(size), limit_(limit), overflow_(overflow), last_alive_(last_alive) {}

  uint32_t size() const { return size_; }
  uint32_t limit() const { return limit_; }
  WindowOverflow overflow() const { return overflow_; }
  uint64_t slot(int64_t id) const { return window_slot(id, size_); }

  // The oldest task not yet retired (last_task_alive), acquire.
  int64_t live_from() const { return last_alive_->load(std::memory_order_acquire); }
  // Task id's slot is free: every task that held it has retired. `live`: a live_from() read
  // by the caller (one that is older than the truth only makes the answer more cautious).
  bool has_room(int64_t id, int64_t live) const { return static_cast<uint64_t>(id - live) < size_; }
  bool has_room(int64_t id) const { return has_room(id, live_from()); }
  // Slots in use once task id is admitted (the window's high-water mark).
  uint64_t held_with(int64_t id, int64_t live) const { return static_cast<uint64_t>(id - live) + 1; }
  uint64_t held_with(int64_t id) const { return held_with(id, live_from()); }

  // May task id take its slot now? The next id to submit only (ids are admitted in order).
  Admission admit(int64_t id) const { return admit(id, live_from()); }
  Admission admit(int64_t id, int64_t live) const {
    if (overflow_ == WindowOverflow::kError && static_cast<uint64_t>(id) >= limit_) return {Verdict::kReject, 0};
    if (has_room(id, live)) return {Verdict::kFits, 0};
    const int64_t batch =
        overflow_ == WindowOverflow::kEvictCompleted ? 1 : static_cast<int64_t>(size_ / 4 > 0 ? size_ / 4 : 1);
    return {Verdict::kWait, id - static_cast<int64_t>(size_) + batch};
  }

  // Scheduler side, after task ids are marked retired: moves last_task_alive over every retired
  // task below next_task(), in id order. `retired(t)` tells whether task t (t < next_task()) is
  // retired. Returns the new live_from when this call moved it, else -1.
  // seq_cst throughout: two threads finishing t and t + 1 each mark theirs retired and then read
  // the other's; with acquire/release alone both could miss (store buffering) and retirement
  // would stop at t forever. In a single total order at least one of them sees both. The caller
  // follows a move with a seq_cst load of what the orchestrator waits for (wake_at).
  //
  // `published`: ids below it are known to be published (a bound the caller keeps: next_task()
  // only grows), so next_task() — whose cache line the orchestrator writes at every submit — is
  // read only for a task at or past it; a read moves the bound up. A slot past next_task() may
  // still say "retired" from an earlier run, so it is never read before the bound passes it.
  template <typename NextTask, typename Retired>
  int64_t advance(int64_t &published, NextTask &&next_task, Retired &&retired) const {
    int64_t moved_to = -1;
    for (;;) {
      int64_t t = last_alive_->load(std::memory_order_seq_cst);
      if (t >= published) {
        published = next_task();
        if (t >= published) break;
      }
      if (!retired(t)) break;
      if (last_alive_->compare_exchange_weak(t, t + 1, std::memory_order_seq_cst)) moved_to = t + 1;
    }
    return moved_to;
  }

 private:
  uint32_t size_;
  uint32_t limit_;
  WindowOverflow overflow_;
  std::atomic<int64_t> *last_alive_;
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_TASK_WINDOW_H
