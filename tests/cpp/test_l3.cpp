// tests/cpp/test_l3.cpp — claims about the L3 Worker: inferred dependencies, deferred completion, handles.
//
// Contract under test: tasks of a run behave as if run one by one in submission order
// (read-after-write, write-after-write and write-after-read between chip and SUB tasks, by
// byte range); a SUB task that deferred events releases its dependents only once the body
// returned AND every event was fulfilled, from any thread; wait(timeout) names what is pending;
// scoped heap buffers come back once the scope ended and their users finished. Every test runs
// in THREAD and PROCESS mode unless it is about one of them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "l3_util.h"
#include "pto/orchestration.h"  // the device-side API must coexist with the L3 one (no name clash)

namespace {

using l3_test::contains;
using pto::ChipMode;

class L3 : public ::testing::TestWithParam<ChipMode> {};

int64_t *heap_i64(pto::Worker &w, int64_t n, int64_t fill) {
  auto *p = static_cast<int64_t *>(w.alloc(static_cast<uint64_t>(n) * 8));
  for (int64_t i = 0; i < n; ++i) p[i] = fill + i;
  return p;
}

// The basic L3 graph (a chip task, then a SUB task reading its output) on `w`: what every
// bad-input test runs afterwards to show the worker (or a fresh one) still works.
void expect_basic_graph_runs(pto::Worker &w) {
  static const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  const int64_t n = 16;
  int64_t *a = heap_i64(w, n, 0), *b = heap_i64(w, n, -1), *c = heap_i64(w, n, -1);
  w.run(
      [&](pto::HostOrchestrator &o) {
        o.submit_chip(add, l3_test::io_args(a, b, n, {n, 1}), {}, 0, "b=a+1");
        pto::ChipStorageTaskArgs sa;
        sa.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
        sa.add_tensor(c, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
        o.submit_sub(
            [=](pto::SubContext &) {
              for (int64_t i = 0; i < n; ++i) c[i] = b[i] * 2;
            },
            sa, "c=2b");
      },
      60000);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], (i + 1) * 2) << "element " << i;
  w.free(a);
  w.free(b);
  w.free(c);
}

TEST_P(L3, ChipThenSubThenChipSeesEachResult) {
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  pto::Worker w(l3_test::options(GetParam(), 2, 1));
  const int64_t n = 1024;
  int64_t *a = heap_i64(w, n, 0), *b = heap_i64(w, n, -1), *c = heap_i64(w, n, -1), *d = heap_i64(w, n, -1);
  pto::WorkerRunStats s = w.run([&](pto::HostOrchestrator &o) {
    o.submit_chip(add, l3_test::io_args(a, b, n, {n, 1}), {}, 0, "b=a+1");
    pto::ChipStorageTaskArgs sa;
    sa.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
    sa.add_tensor(c, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
    o.submit_sub(
        [=](pto::SubContext &) {
          for (int64_t i = 0; i < n; ++i) c[i] = b[i] * 2;
        },
        sa, "c=2b");
    o.submit_chip(add, l3_test::io_args(c, d, n, {n, 1}), {}, 1, "d=c+1");
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(d[i], (i + 1) * 2 + 1) << "element " << i;
  EXPECT_EQ(s.chip_tasks, 2u);
  EXPECT_EQ(s.sub_tasks, 1u);
  EXPECT_EQ(s.tasks_per_chip, (std::vector<uint64_t>{1, 1}));
  EXPECT_EQ(s.failed_tasks, 0u);
}

// A SUB that overwrites the buffer a slow chip task reads must wait for it. The SUB peeks at the
// chip task's output (not declared): without the write-after-read edge it would run while the
// chip task sleeps, and see the output not yet written.
TEST_P(L3, SubOverwritingAChipInputWaitsForTheChipTask) {
  const pto::ChipCallable slow = l3_test::callable(l3_test::kSlowCopyKernel, "l3_slow_copy");
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  const int64_t n = 256;
  int64_t *a = heap_i64(w, n, 100), *b = heap_i64(w, n, -1);
  std::atomic<bool> saw_chip_output{false};
  w.run([&](pto::HostOrchestrator &o) {
    o.submit_chip(slow, l3_test::io_args(a, b, n, {n, 300}), {}, 0, "reads a");
    pto::ChipStorageTaskArgs sa;
    sa.add_tensor(a, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
    o.submit_sub(
        [&, a, b](pto::SubContext &) {
          saw_chip_output.store(b[n - 1] == 100 + n - 1);
          for (int64_t i = 0; i < n; ++i) a[i] = -7;
        },
        sa, "overwrites a");
  });
  EXPECT_TRUE(saw_chip_output.load()) << "the SUB ran before the chip task that reads its buffer finished";
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(b[i], 100 + i) << "the chip task read the overwritten buffer";
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(a[i], -7);
}

TEST_P(L3, WritersOfOneBufferRunInSubmissionOrder) {
  pto::Worker w(l3_test::options(GetParam(), 1, 2));
  int64_t *x = heap_i64(w, 8, 0);
  w.run([&](pto::HostOrchestrator &o) {
    pto::ChipStorageTaskArgs sa;
    sa.add_tensor(x + 2, 16, PTO_DTYPE_I64, {2}, PTO_DIR_OUTPUT);  // overlaps the second one's range
    o.submit_sub(
        [x](pto::SubContext &) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          x[3] = 1;
        },
        sa, "first");
    pto::ChipStorageTaskArgs sb;
    sb.add_tensor(x, 64, PTO_DTYPE_I64, {8}, PTO_DIR_INOUT);
    o.submit_sub([x](pto::SubContext &) { x[3] = x[3] * 10 + 2; }, sb, "second");
  });
  EXPECT_EQ(x[3], 12);
}

TEST_P(L3, DependentsOfADeferredSubWaitForTheEventFulfilledFromAnotherThread) {
  pto::Worker w(l3_test::options(GetParam(), 1, 2));
  int64_t *x = heap_i64(w, 1, 0);
  std::atomic<int64_t> seen{-1};
  std::thread helper;
  std::atomic<bool> fulfilled{false};
  pto::RunHandle h = w.submit([&](pto::HostOrchestrator &o) {
    pto::ChipStorageTaskArgs out;
    out.add_tensor(x, 8, PTO_DTYPE_I64, {1}, PTO_DIR_OUTPUT);
    o.submit_sub(
        [&, x](pto::SubContext &ctx) {
          pto::Event e = ctx.defer();
          helper = std::thread([&, e, x]() mutable {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            x[0] = 42;
            fulfilled.store(true);
            e.fulfill();
          });
        },
        out, "producer (async)");
    pto::ChipStorageTaskArgs in;
    in.add_tensor(x, 8, PTO_DTYPE_I64, {1}, PTO_DIR_INPUT);
    o.submit_sub([&, x](pto::SubContext &) { seen.store(fulfilled.load() ? x[0] : -2); }, in, "consumer");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(h.done()) << "the run finished before the producer's event was fulfilled";
  EXPECT_TRUE(contains(h.pending_report(), "external event")) << h.pending_report();
  h.wait(5000);
  helper.join();
  EXPECT_EQ(seen.load(), 42);
}

TEST_P(L3, WaitTimeOutNamesThePendingTasksAndWhatEachWaitsFor) {
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  int64_t *x = heap_i64(w, 1, 0);
  pto::Event ev;
  pto::RunHandle h = w.submit([&](pto::HostOrchestrator &o) {
    pto::ChipStorageTaskArgs out;
    out.add_tensor(x, 8, PTO_DTYPE_I64, {1}, PTO_DIR_OUTPUT);
    o.submit_sub([&](pto::SubContext &ctx) { ev = ctx.defer(); }, out, "waits-for-event");
    pto::ChipStorageTaskArgs in;
    in.add_tensor(x, 8, PTO_DTYPE_I64, {1}, PTO_DIR_INPUT);
    o.submit_sub([](pto::SubContext &) {}, in, "reader");
  });
  try {
    h.wait(150);
    FAIL() << "wait must time out while the event is pending";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_RUN_TIMEOUT);
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "'waits-for-event' (SUB): body returned; waits for 1 external event")) << m;
    EXPECT_TRUE(contains(m, "'reader' (SUB): waits for 1 earlier task(s):")) << m;
    EXPECT_TRUE(contains(m, "within 150 ms")) << m;
  }
  ev.fulfill();
  EXPECT_THROW(ev.fulfill(), pto::Error) << "an event is fulfilled once";
  const pto::WorkerRunStats s = h.wait(5000);
  EXPECT_EQ(s.sub_tasks, 2u);
}

// docs/guide/l3.md: SubContext.defer only on the body's thread (the body's return reads the event
// count once; a defer racing with it could be lost). From another thread it is refused.
TEST_P(L3, DeferFromAnotherThreadIsRefused) {
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  std::string error;
  pto_status code = PTO_OK;
  w.run(
      [&](pto::HostOrchestrator &o) {
        o.submit_sub(
            [&](pto::SubContext &ctx) {
              std::thread other([&] {
                try {
                  ctx.defer();
                } catch (const pto::Error &e) {
                  code = e.code();
                  error = e.what();
                }
              });
              other.join();
            },
            {}, "defers elsewhere");
      },
      10000);
  EXPECT_EQ(code, PTO_INVALID_ARGUMENT) << "ctx.defer() from another thread was accepted";
  EXPECT_TRUE(contains(error,
                       "SubContext.defer called from another thread than the one running the body of "
                       "task "))
      << error;
  EXPECT_TRUE(contains(error, "'defers elsewhere'")) << error;
  EXPECT_TRUE(contains(error, "Event.fulfill may be called from any thread")) << error;
  expect_basic_graph_runs(w);
}

// close(timeout) with an event never fulfilled: returns after that timeout (not the 10 s
// default), fails the task and says which event of which task it waited for.
TEST_P(L3, CloseWithAnUnfulfilledEventNamesItAndHonoursTheTimeout) {
  auto w = std::make_unique<pto::Worker>(l3_test::options(GetParam(), 1, 1));
  std::vector<pto::Event> events;
  pto::RunHandle h = w->submit([&](pto::HostOrchestrator &o) {
    o.submit_sub(
        [&](pto::SubContext &ctx) {
          events.push_back(ctx.defer());
          events.push_back(ctx.defer());
          events[0].fulfill();
        },
        {}, "never fulfilled");
  });
  while (h.pending_report().find("body returned") == std::string::npos) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    w->close(100);
    FAIL() << "close() abandoned a task without saying so";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_RUN_TIMEOUT);
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "Worker.close: waited 0.100 s for 1 unfinished task(s)")) << m;
    EXPECT_TRUE(contains(m, "'never fulfilled' (SUB): body returned; waits for 1 external event(s)")) << m;
    EXPECT_TRUE(contains(m, "event 1 of the 2 its body deferred")) << m;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "close ignored its timeout";
  EXPECT_TRUE(w->closed());
  try {
    h.wait(0);
    FAIL();
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_RUN_TIMEOUT);
    EXPECT_TRUE(contains(e.what(), "did not finish before the worker was closed (waited 0.100 s)"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "event 1 of the 2")) << e.what();
  }
  events[1].fulfill();  // late: ignored, harmless after close
  w.reset();
  pto::Worker fresh(l3_test::options(GetParam(), 1, 1));
  expect_basic_graph_runs(fresh);
}

TEST_P(L3, AFailedTaskSkipsItsDependentsAndTheWorkerServesTheNextRun) {
  pto::ChipCallable fail(pto_test::orch(l3_test::kOneTaskOrch, "l3_one_task_orch"));
  fail.add_kernel(0, PTO_CORE_AIV, pto_test::kernel(pto_test::kFailKernel, "fail_kernel"));
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  pto::Worker w(l3_test::options(GetParam(), 2, 1));
  const int64_t n = 64;
  int64_t *a = heap_i64(w, n, 0), *b = heap_i64(w, n, 0), *c = heap_i64(w, n, 0);
  std::atomic<bool> dependent_ran{false}, independent_ran{false};
  try {
    w.run([&](pto::HostOrchestrator &o) {
      o.submit_chip(fail, l3_test::io_args(a, b, n, {}), {}, 1, "bad kernel");
      pto::ChipStorageTaskArgs in;
      in.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
      o.submit_sub([&](pto::SubContext &) { dependent_ran = true; }, in, "consumer");
      o.submit_sub([&](pto::SubContext &) { independent_ran = true; }, {}, "independent");
    });
    FAIL() << "the run must fail";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_TASK_FAILED);
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "'bad kernel' failed on chip 1")) << m;
    EXPECT_TRUE(contains(m, "were not run: task")) << m;
    EXPECT_TRUE(contains(m, "'consumer'")) << m;
  }
  EXPECT_FALSE(dependent_ran.load());
  EXPECT_TRUE(independent_ran.load());
  w.run([&](pto::HostOrchestrator &o) { o.submit_chip(add, l3_test::io_args(a, c, n, {n, 5}), {}, 1); });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], i + 5);
}

// Cancel (what Ctrl-C does from Python): the running chip task is aborted inside its chip run
// (400 x 10 ms kernels: 2 s of work), queued and pending tasks are skipped, wait() says ABORTED
// and the worker serves the next run.
TEST_P(L3, CancelAbortsTheRunningChipTaskSkipsTheRestAndTheWorkerRunsAgain) {
  pto::ChipCallable slow(pto_test::orch(
      "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n(void)args;\n"
      "for (int i = 0; i < 400; ++i) g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(10)});\n}\n",
      "l3_sleep_x400"));
  slow.add_kernel(0, PTO_CORE_AIV, pto_test::kernel(pto_test::kSleepKernel, "sleep"));
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  const int64_t n = 64;
  int64_t *a = heap_i64(w, n, 0), *b = heap_i64(w, n, 0), *c = heap_i64(w, n, 0);
  std::atomic<bool> dependent_ran{false};
  const auto t0 = std::chrono::steady_clock::now();
  pto::RunHandle h = w.submit([&](pto::HostOrchestrator &o) {
    pto::ChipStorageTaskArgs writes_b;
    writes_b.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
    o.submit_chip(slow, writes_b, {}, 0, "slow");
    o.submit_chip(add, l3_test::io_args(a, c, n, {n, 1}), {}, 0, "queued behind slow");
    pto::ChipStorageTaskArgs reads_b;
    reads_b.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
    o.submit_sub([&](pto::SubContext &) { dependent_ran = true; }, reads_b, "reads b");
  });
  EXPECT_FALSE(h.wait_done(100));
  h.cancel();
  EXPECT_TRUE(h.wait_done(10000)) << h.pending_report();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500)) << "the chip run went on";
  try {
    h.wait(0);
    FAIL() << "a cancelled run must not succeed";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_ABORTED) << e.what();
    EXPECT_TRUE(contains(e.what(), "was cancelled")) << e.what();
  }
  EXPECT_FALSE(dependent_ran.load());
  h.cancel();  // a finished run: no effect
  w.run([&](pto::HostOrchestrator &o) { o.submit_chip(add, l3_test::io_args(a, c, n, {n, 5}), {}, 0); });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], i + 5);
}

// The reader is submitted only after the writer's failure has (very likely) been retired, so
// the tracker meets a finished, failed entry: it must still skip the reader, as it would if
// the reader had come first (l3_dep_tracker.cpp has the deterministic unit version).
TEST_P(L3, AReaderSubmittedAfterItsWriterFailedIsSkippedToo) {
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  const int64_t n = 64;
  int64_t *b = heap_i64(w, n, 0);
  std::atomic<bool> thrown{false}, reader_ran{false};
  try {
    w.run([&](pto::HostOrchestrator &o) {
      pto::ChipStorageTaskArgs out;
      out.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_OUTPUT);
      o.submit_sub(
          [&](pto::SubContext &) {
            thrown = true;
            throw std::runtime_error("no data");
          },
          out, "writer");
      for (int i = 0; i < 5000 && !thrown.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      pto::ChipStorageTaskArgs in;
      in.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
      o.submit_sub([&](pto::SubContext &) { reader_ran = true; }, in, "reader");
    });
    FAIL() << "the run must fail";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_TASK_FAILED);
    EXPECT_TRUE(contains(e.what(), "'reader'")) << e.what();
  }
  EXPECT_TRUE(thrown.load());
  EXPECT_FALSE(reader_ran.load()) << "a task reading a failed task's output must not run";
}

TEST_P(L3, GroupRunsOnePartPerChip) {
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  pto::Worker w(l3_test::options(GetParam(), 2, 0));
  const int64_t n = 128;
  int64_t *a = heap_i64(w, 2 * n, 0), *b = heap_i64(w, 2 * n, 0);
  const pto::WorkerRunStats s = w.run([&](pto::HostOrchestrator &o) {
    o.submit_chip_group(add, {l3_test::io_args(a, b, n, {n, 1}), l3_test::io_args(a + n, b + n, n, {n, 2})},
                        {}, {1, 0}, "group");
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(b[i], i + 1);
  for (int64_t i = n; i < 2 * n; ++i) ASSERT_EQ(b[i], i + 2);
  EXPECT_EQ(s.chip_tasks, 1u);
  EXPECT_EQ(s.tasks_per_chip, (std::vector<uint64_t>{1, 1}));
}

TEST_P(L3, ScopedBuffersReturnOnceTheScopeEndedAndTheirUsersFinished) {
  pto::Worker w(l3_test::options(GetParam(), 1, 1));
  const uint64_t before = w.heap_bytes_in_use();
  uint64_t during = 0;
  w.run([&](pto::HostOrchestrator &o) {
    pto::HostScope scope(o);
    auto *p = static_cast<int64_t *>(o.alloc(1 << 20));
    pto::ChipStorageTaskArgs sa;
    sa.add_tensor(p, 1 << 20, PTO_DTYPE_I64, {1 << 17}, PTO_DIR_OUTPUT);
    o.submit_sub(
        [p](pto::SubContext &) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          p[0] = 1;
        },
        sa, "user");
    o.scope_end();
    during = w.heap_bytes_in_use();  // the scope ended, the user still runs
    o.scope_begin();                 // balanced for the RAII scope
  });
  EXPECT_EQ(during, before + (1 << 20));
  EXPECT_EQ(w.heap_bytes_in_use(), before);
}

TEST_P(L3, BadInputIsReportedWithWhatToDo) {
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  pto::Worker w(l3_test::options(GetParam(), 1, 0));
  int64_t *a = heap_i64(w, 4, 0);
  try {
    w.run([&](pto::HostOrchestrator &o) { o.submit_chip(add, l3_test::io_args(a, a, 4, {4, 1}), {}, 3); });
    FAIL();
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(e.what(), "chip 3 is out of range; this worker has 1 chips")) << e.what();
  }
  try {
    w.run([&](pto::HostOrchestrator &o) { o.submit_sub([](pto::SubContext &) {}); });
    FAIL();
  } catch (const pto::Error &e) {
    EXPECT_TRUE(contains(e.what(), "num_sub_workers >= 1")) << e.what();
  }
  if (GetParam() == ChipMode::kProcess) {
    std::vector<int64_t> outside(4, 0);
    try {
      w.run([&](pto::HostOrchestrator &o) {
        o.submit_chip(add, l3_test::io_args(outside.data(), outside.data(), 4, {4, 1}), {}, 0);
      });
      FAIL();
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
      EXPECT_TRUE(contains(e.what(), "not in the worker's host heap")) << e.what();
    }
  }
  try {
    pto::ChipCallConfig profiled;
    profiled.enable_profiling = true;
    w.run([&](pto::HostOrchestrator &o) { o.submit_chip(add, l3_test::io_args(a, a, 4, {4, 1}), profiled); });
    FAIL();
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_NOT_SUPPORTED) << e.what();
  }
  w.run([&](pto::HostOrchestrator &o) { o.submit_chip(add, l3_test::io_args(a, a + 2, 2, {2, 1})); });
  EXPECT_EQ(a[2], 1);
}

INSTANTIATE_TEST_SUITE_P(Modes, L3, ::testing::Values(ChipMode::kThread, ChipMode::kProcess),
                         [](const auto &i) { return std::string(l3_test::mode_name(i.param)); });

// Every rejected option: INVALID_ARGUMENT naming the option (by the name the C++ field and the
// Python keyword share), its value and what is allowed.
TEST(L3Worker, BadOptionsNameTheOptionTheValueAndWhatIsAllowed) {
  struct Case {
    void (*set)(pto::WorkerOptions &);
    std::vector<std::string> says;
  };
  const Case cases[] = {
      {[](pto::WorkerOptions &o) { o.device_ids = {}; }, {"device_ids = [] is empty", "non-empty list"}},
      {[](pto::WorkerOptions &o) {
         o.device_ids = {0, -3};
       },
       {"device_ids = [0, -3]", "negative id -3", "device ids are >= 0"}},
      {[](pto::WorkerOptions &o) {
         o.device_ids = {1, 0, 1};
       },
       {"device_ids = [1, 0, 1]", "lists device 1 twice", "list each device once"}},
      {[](pto::WorkerOptions &o) { o.num_sub_workers = -1; }, {"num_sub_workers = -1", "allowed 0..256"}},
      {[](pto::WorkerOptions &o) { o.heap_bytes = 5; }, {"heap_bytes = 5", "allowed 4096..1099511627776"}},
      {[](pto::WorkerOptions &o) { o.heap_bytes = 1ull << 41; }, {"heap_bytes = 2199023255552", "allowed"}},
  };
  for (const Case &c : cases) {
    pto::WorkerOptions o = l3_test::options(ChipMode::kThread, 1, 1);
    c.set(o);
    try {
      pto::Worker w(o);
      ADD_FAILURE() << "accepted: " << c.says[0];
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
      for (const auto &s : c.says) EXPECT_TRUE(contains(e.what(), s)) << e.what() << "\nmissing: " << s;
      EXPECT_FALSE(contains(e.what(), "WorkerOptions.")) << e.what();
    }
  }
  pto::Worker w(l3_test::options(ChipMode::kThread, 1, 1));
  expect_basic_graph_runs(w);
}

TEST(L3Worker, HeapExhaustionNamesTheHeapBytesOption) {
  pto::WorkerOptions o = l3_test::options(ChipMode::kThread, 1, 1);
  o.heap_bytes = 1 << 20;
  o.heap_wait_ms = 0;
  pto::Worker w(o);
  try {
    w.alloc(2 << 20);
    FAIL() << "2 MiB fit a 1 MiB heap";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_OUT_OF_MEMORY);
    EXPECT_TRUE(contains(e.what(), "raise heap_bytes = 1048576")) << e.what();
    EXPECT_FALSE(contains(e.what(), "WorkerOptions.")) << e.what();
  }
  expect_basic_graph_runs(w);
}

// Every call but close()/closed()/free() on a closed worker: NOT_INITIALIZED, one message shape.
TEST(L3Worker, EveryCallOnAClosedWorkerSaysItIsClosed) {
  pto::Worker w(l3_test::options(ChipMode::kThread, 1, 1));
  void *kept = w.alloc(64);
  w.close();
  w.close();
  EXPECT_TRUE(w.closed());
  w.free(kept);
  const std::pair<const char *, std::function<void()>> calls[] = {
      {"Worker.submit", [&] { w.submit([](pto::HostOrchestrator &) {}); }},
      {"Worker.submit", [&] { w.run([](pto::HostOrchestrator &) {}); }},
      {"Worker.alloc", [&] { w.alloc(64); }},
      {"Worker.in_heap", [&] { w.in_heap(kept); }},
      {"Worker.heap_bytes_in_use", [&] { w.heap_bytes_in_use(); }},
      {"Worker.num_chips", [&] { w.num_chips(); }},
      {"Worker.num_sub_workers", [&] { w.num_sub_workers(); }},
      {"Worker.chip_pid", [&] { w.chip_pid(0); }},
  };
  for (const auto &c : calls) {
    try {
      c.second();
      ADD_FAILURE() << c.first << " worked on a closed worker";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_NOT_INITIALIZED) << e.what();
      EXPECT_EQ(std::string(e.what()),
                std::string(c.first) + ": the worker is closed (close() was called); create a new Worker");
    }
  }
  pto::Worker fresh(l3_test::options(ChipMode::kThread, 1, 1));
  expect_basic_graph_runs(fresh);
}

TEST(L3Worker, SubmitAfterCloseIsAnError) {
  pto::Worker w(l3_test::options(ChipMode::kThread, 1, 1));
  w.close();
  w.close();
  try {
    w.submit([](pto::HostOrchestrator &) {});
    FAIL();
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_NOT_INITIALIZED);
  }
}

TEST(L3Worker, SubmitFromInsideAnOrchestrationIsRefused) {
  pto::Worker w(l3_test::options(ChipMode::kThread, 1, 1));
  try {
    w.run([&](pto::HostOrchestrator &) { w.run([](pto::HostOrchestrator &) {}); });
    FAIL();
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(e.what(), "from inside an orchestration function")) << e.what();
  }
  w.run([](pto::HostOrchestrator &) {});  // and the worker still serves runs
}

TEST(L3Worker, ManySubTasksOnAChainAndAFanOut) {
  pto::Worker w(l3_test::options(ChipMode::kThread, 1, 2));
  int64_t *x = heap_i64(w, 64, 0);
  for (int64_t i = 0; i < 64; ++i) x[i] = 0;
  const pto::WorkerRunStats s = w.run([&](pto::HostOrchestrator &o) {
    for (int k = 0; k < 500; ++k) {
      pto::ChipStorageTaskArgs sa;
      const int64_t slot = k % 64;
      sa.add_tensor(x + slot, 8, PTO_DTYPE_I64, {1}, PTO_DIR_INOUT);
      o.submit_sub([x, slot](pto::SubContext &) { x[slot] += 1; }, sa);
    }
  });
  int64_t total = 0;
  for (int64_t i = 0; i < 64; ++i) total += x[i];
  EXPECT_EQ(total, 500);
  EXPECT_EQ(s.sub_tasks, 500u);
}

// Sixteen a2a3sim chips at full geometry in thread mode: 1,216 simulated AICPU threads and cores
// in this process, run as fibers on the one pool of CPU-sized workers (docs/design/sim_execution.md),
// not as 1,216 OS threads. Every chip computes its own slice, and the process's OS threads stay
// few while the chips are live.
TEST(L3Worker, SixteenFullChipsInThreadModeShareOneFiberPool) {
  const char *exec = std::getenv("PTO_SIM_EXEC");
  if (exec != nullptr && std::string(exec) == "threads") GTEST_SKIP() << "the thread-per-core sim: no pool";
  constexpr int kChips = 16;
  pto::Worker w(l3_test::options(ChipMode::kThread, kChips, 0));
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "add_i64");
  constexpr int64_t n = 256;
  std::vector<int64_t *> in(kChips), out(kChips);
  for (int c = 0; c < kChips; ++c) {
    in[c] = heap_i64(w, n, c);
    out[c] = heap_i64(w, n, -1);
  }
  size_t threads_during = 0;
  const pto::WorkerRunStats s = w.run([&](pto::HostOrchestrator &o) {
    for (int c = 0; c < kChips; ++c)
      o.submit_chip(add, l3_test::io_args(in[c], out[c], n, {n, 100}), {}, c, "chip" + std::to_string(c));
  });
  // Counted after the run: every chip's device (its 76 fibers) is up now.
  for (const auto &entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++threads_during;
  }
  EXPECT_EQ(s.chip_tasks, static_cast<uint64_t>(kChips));
  for (int c = 0; c < kChips; ++c)
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[c][i], in[c][i] + 100) << "chip " << c << " element " << i;
  // With a thread per simulated thread and core this process held over 1,216 threads.
  EXPECT_LT(threads_during, 200u) << threads_during << " OS threads for " << kChips << " chips";
  std::printf("16 full a2a3sim chips (thread mode): %zu OS threads in the process\n", threads_during);
}

}  // namespace
