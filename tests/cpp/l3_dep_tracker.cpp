// tests/cpp/l3_dep_tracker.cpp — the L3 dependency tracker on hand-made tasks.
//
// Claim: whether a task gets an edge to an earlier task never depends on whether that task has
// finished yet, except that a task which finished successfully no longer needs one. A failed or
// skipped task keeps its entries for the rest of its run (so a later task of the run that reads
// its output is skipped, as it would be had it been submitted earlier), and a new run starts clean.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "hierarchical/dep_tracker.h"

namespace {

using pto::l3::DepTracker;
using pto::l3::Task;
using pto::l3::TaskState;

std::shared_ptr<Task> task(uint64_t id, uint64_t run_id) {
  auto t = std::make_shared<Task>();
  t->id = id;
  t->run_id = run_id;
  return t;
}

void finish(Task &t, TaskState s) {
  t.state = s;
  t.finished.store(true, std::memory_order_release);
}

std::vector<std::shared_ptr<Task>> add(DepTracker &d, const std::shared_ptr<Task> &t, const void *p,
                                       bool write) {
  std::vector<std::shared_ptr<Task>> preds;
  d.add(t, {DepTracker::Access{p, 64, !write, write}}, &preds);
  return preds;
}

TEST(L3DepTracker, ReaderGetsAnEdgeToAnUnfinishedWriterOnly) {
  DepTracker d;
  char buf[64];
  auto w = task(1, 1);
  EXPECT_TRUE(add(d, w, buf, true).empty());
  auto r1 = task(2, 1);
  const auto p1 = add(d, r1, buf, false);
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_EQ(p1[0], w);
  finish(*w, TaskState::kDone);
  finish(*r1, TaskState::kDone);
  EXPECT_TRUE(add(d, task(3, 1), buf, false).empty()) << "a writer that succeeded orders nothing";
}

TEST(L3DepTracker, FailedOrSkippedWriterStillReachesLaterReadersOfItsRun) {
  for (TaskState s : {TaskState::kFailed, TaskState::kSkipped}) {
    DepTracker d;
    char buf[64];
    auto w = task(1, 1);
    add(d, w, buf, true);
    finish(*w, s);
    const auto p = add(d, task(2, 1), buf, false);
    ASSERT_EQ(p.size(), 1u) << "a reader of a finished, failed writer must still see it";
    EXPECT_EQ(p[0], w);
    EXPECT_TRUE(add(d, task(3, 2), buf, false).empty()) << "the next run starts clean";
  }
}

TEST(L3DepTracker, FailedReaderStillOrdersALaterWriterOfItsRun) {
  DepTracker d;
  char buf[64];
  auto r = task(1, 1);
  add(d, r, buf, false);
  finish(*r, TaskState::kFailed);
  const auto p = add(d, task(2, 1), buf, true);
  ASSERT_EQ(p.size(), 1u);  // write-after-read, as before the reader finished
  EXPECT_EQ(p[0], r);
}

}  // namespace
