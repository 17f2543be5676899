// tests/cpp/core_task_window.cpp — white-box tests of the graph core's TaskWindow
// (src/core/graph/task_window.h) on its own: no orchestrator, no device.
//
// Contract under test:
//  - slot(id) is id modulo the window (a power of two), for ids far past the window too.
//  - admit(id): fits while id - live_from < size; when full, stall resumes once a quarter of
//    the window is free and evict_completed at the first freed slot (wake_at); error refuses
//    every id from the configured task_window on, even when the rounded-up window has room.
//  - advance(): moves last_task_alive over retired tasks in id order, stops at the first task
//    not retired or at next_task, says whether it moved; threads retiring out of order and
//    advancing at once leave it at the end, never past an unretired task.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/graph/task_window.h"

namespace {

using pto::WindowOverflow;
using pto::graph::TaskWindow;
using Verdict = TaskWindow::Verdict;

TEST(TaskWindow, SlotIsTheIdModuloTheWindow) {
  std::atomic<int64_t> alive{0};
  const TaskWindow w(8, 8, WindowOverflow::kStall, &alive);
  EXPECT_EQ(w.slot(0), 0u);
  EXPECT_EQ(w.slot(7), 7u);
  EXPECT_EQ(w.slot(8), 0u);
  EXPECT_EQ(w.slot(13), 5u);
  EXPECT_EQ(w.slot((int64_t{1} << 40) + 3), 3u);
  EXPECT_EQ(pto::graph::window_slot(1029, 1024), 5u);
}

TEST(TaskWindow, AFullWindowWaitsAndAFreedSlotFits) {
  std::atomic<int64_t> alive{0};
  const TaskWindow w(8, 8, WindowOverflow::kStall, &alive);
  for (int64_t id = 0; id < 8; ++id) EXPECT_EQ(w.admit(id).verdict, Verdict::kFits) << id;
  EXPECT_EQ(w.held_with(7), 8u);
  EXPECT_FALSE(w.has_room(8));
  EXPECT_EQ(w.admit(8).verdict, Verdict::kWait);
  alive.store(1);  // task 0 retired: its slot is 8's
  EXPECT_EQ(w.live_from(), 1);
  EXPECT_TRUE(w.has_room(8));
  EXPECT_EQ(w.admit(8).verdict, Verdict::kFits);
  EXPECT_EQ(w.admit(9).verdict, Verdict::kWait);
  EXPECT_EQ(w.held_with(8), 8u);
}

TEST(TaskWindow, StallResumesAtAQuarterFreeEvictCompletedAtTheFirstSlot) {
  std::atomic<int64_t> alive{100};
  const TaskWindow stall(64, 64, WindowOverflow::kStall, &alive);
  const TaskWindow evict(64, 64, WindowOverflow::kEvictCompleted, &alive);
  const TaskWindow::Admission s = stall.admit(164), e = evict.admit(164);
  ASSERT_EQ(s.verdict, Verdict::kWait);
  ASSERT_EQ(e.verdict, Verdict::kWait);
  EXPECT_EQ(s.wake_at, 100 + 16);  // 16 of 64 slots free when woken
  EXPECT_EQ(e.wake_at, 100 + 1);   // the oldest task retired
  // A window smaller than 4 still waits for one slot, not zero.
  const TaskWindow tiny(2, 2, WindowOverflow::kStall, &alive);
  EXPECT_EQ(tiny.admit(102).wake_at, 101);
}

TEST(TaskWindow, ErrorRefusesFromTheConfiguredWindowOnWhateverIsFree) {
  std::atomic<int64_t> alive{0};
  const TaskWindow w(8, 6, WindowOverflow::kError, &alive);  // task_window=6, rounded up to 8
  for (int64_t id = 0; id < 6; ++id) EXPECT_EQ(w.admit(id).verdict, Verdict::kFits) << id;
  EXPECT_EQ(w.admit(6).verdict, Verdict::kReject);  // slots 6 and 7 are free: still refused
  alive.store(6);
  EXPECT_EQ(w.admit(7).verdict, Verdict::kReject);
  // The other policies only ever wait.
  const TaskWindow stall(8, 6, WindowOverflow::kStall, &alive);
  EXPECT_EQ(stall.admit(7).verdict, Verdict::kFits);
}

TEST(TaskWindow, AdvanceMovesOverRetiredTasksInIdOrderOnly) {
  std::atomic<int64_t> alive{0};
  const TaskWindow w(8, 8, WindowOverflow::kStall, &alive);
  bool retired[8] = {};
  int64_t next = 5;
  int next_task_reads = 0;
  auto advance = [&](int64_t published = 0) {
    return w.advance(
        published, [&] { ++next_task_reads; return next; }, [&](int64_t t) { return retired[t]; });
  };
  retired[1] = retired[2] = true;
  EXPECT_EQ(advance(), -1);  // task 0 still runs: nothing moves
  EXPECT_EQ(w.live_from(), 0);
  retired[0] = true;
  EXPECT_EQ(advance(), 3);  // over 0, 1, 2; stops at 3
  retired[3] = retired[4] = retired[5] = true;
  EXPECT_EQ(advance(), 5);  // 5 is retired but not yet submitted (next_task is 5)
  EXPECT_EQ(advance(), -1);
  next = 6;
  EXPECT_EQ(advance(), 6);
  // Below `published` nothing reads next_task; the bound moves up with each read.
  retired[6] = true;
  next = 8;
  next_task_reads = 0;
  int64_t published = 7;
  EXPECT_EQ(w.advance(published, [&] { ++next_task_reads; return next; }, [&](int64_t t) { return retired[t]; }),
            7);
  EXPECT_EQ(next_task_reads, 1);  // at 7 (not retired): one read, which moved the bound
  EXPECT_EQ(published, 8);
}

// A slot past next_task may still say "retired" from an earlier run: it is not trusted.
TEST(TaskWindow, AdvanceNeverTrustsASlotPastNextTask) {
  std::atomic<int64_t> alive{2};
  const TaskWindow w(8, 8, WindowOverflow::kStall, &alive);
  int64_t published = 2;
  int reads_of_slot_2 = 0;
  EXPECT_EQ(w.advance(
                published, [] { return int64_t{2}; },
                [&](int64_t t) {
                  reads_of_slot_2 += t == 2;
                  return true;  // every slot says "retired" (an earlier run's state)
                }),
            -1);
  EXPECT_EQ(reads_of_slot_2, 0);
  EXPECT_EQ(w.live_from(), 2);
}

// Threads retire tasks out of order (each its own residue class) and advance at once: the
// window must end at the last task (a lost advance would leave every thread waiting for a slot).
TEST(TaskWindow, ConcurrentRetirersAlwaysReachTheEnd) {
  static constexpr int64_t kTasks = 20000;
  constexpr int kThreads = 4;
  std::atomic<int64_t> alive{0};
  const TaskWindow w(1024, 1024, WindowOverflow::kStall, &alive);
  std::unique_ptr<std::atomic<int64_t>[]> retired_id(new std::atomic<int64_t>[1024]);
  for (int i = 0; i < 1024; ++i) retired_id[i].store(-1);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      for (int64_t t = k; t < kTasks; t += kThreads) {
        while (t - w.live_from() >= 1024) std::this_thread::yield();  // the slot is still held
        retired_id[w.slot(t)].store(t, std::memory_order_seq_cst);
        int64_t published = t + 1;
        w.advance(published, [] { return kTasks; }, [&](int64_t x) { return retired_id[w.slot(x)].load() == x; });
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(w.live_from(), kTasks);
}

}  // namespace
