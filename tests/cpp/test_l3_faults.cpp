// tests/cpp/test_l3_faults.cpp — PROCESS mode faults: a chip process that dies fails only its task.
//
// Contract under test: when a chip process dies (SIGKILL from outside, or a kernel that
// segfaults) the task it ran fails with an error naming the chip and the task, its dependents
// are not run, the other chips keep working, nothing hangs, and the worker serves the next run
// on a fresh chip process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "l3_util.h"

namespace {

using l3_test::contains;

int64_t *heap_i64(pto::Worker &w, int64_t n) {
  auto *p = static_cast<int64_t *>(w.alloc(static_cast<uint64_t>(n) * 8));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  return p;
}

void expect_next_run_works(pto::Worker &w, int chip) {
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  int64_t *a = heap_i64(w, 16), *b = heap_i64(w, 16);
  w.run(
      [&](pto::HostOrchestrator &o) {
        o.submit_chip(add, l3_test::io_args(a, b, 16, {16, 3}), {}, chip);
      },
      20000);
  for (int64_t i = 0; i < 16; ++i) ASSERT_EQ(b[i], i + 3);
}

TEST(L3Faults, KilledChipProcessFailsItsTaskOnlyAndIsReplaced) {
  const pto::ChipCallable slow = l3_test::callable(l3_test::kSlowCopyKernel, "l3_slow_copy");
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  pto::Worker w(l3_test::options(pto::ChipMode::kProcess, 2, 1));
  const int64_t n = 64;
  int64_t *a = heap_i64(w, n), *b = heap_i64(w, n), *c = heap_i64(w, n), *d = heap_i64(w, n);
  const int victim_pid = w.chip_pid(1);
  ASSERT_GT(victim_pid, 0);
  bool dependent_ran = false;
  pto::RunHandle h = w.submit([&](pto::HostOrchestrator &o) {
    o.submit_chip(slow, l3_test::io_args(a, b, n, {n, 20000}), {}, 1, "victim");
    pto::ChipStorageTaskArgs in;
    in.add_tensor(b, n * 8, PTO_DTYPE_I64, {n}, PTO_DIR_INPUT);
    o.submit_sub([&](pto::SubContext &) { dependent_ran = true; }, in, "after victim");
    o.submit_chip(add, l3_test::io_args(c, d, n, {n, 1}), {}, 0, "bystander");
  });
  // Kill it once the victim is running.
  for (int i = 0; i < 500 && !contains(h.pending_report(), "'victim' (chip): running"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(kill(victim_pid, SIGKILL), 0);
  try {
    h.wait(10000);
    FAIL() << "the victim's run must fail";
  } catch (const pto::Error &e) {
    ASSERT_EQ(e.code(), PTO_TASK_FAILED) << e.what();
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "'victim' failed: chip 1 (device 1, process " + std::to_string(victim_pid) + ")"))
        << m;
    EXPECT_TRUE(contains(m, "signal 9")) << m;
    EXPECT_TRUE(contains(m, "'after victim'")) << m;
  }
  EXPECT_FALSE(dependent_ran);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(d[i], i + 1) << "the other chip's task must complete";
  expect_next_run_works(w, 1);
  EXPECT_NE(w.chip_pid(1), victim_pid);
}

TEST(L3Faults, SegfaultingKernelFailsTheTaskAndTheChipIsReplaced) {
  const pto::ChipCallable segv = l3_test::callable(l3_test::kSegvKernel, "l3_segv");
  pto::Worker w(l3_test::options(pto::ChipMode::kProcess, 1, 0));
  int64_t *a = heap_i64(w, 4), *b = heap_i64(w, 4);
  try {
    w.run(
        [&](pto::HostOrchestrator &o) {
          o.submit_chip(segv, l3_test::io_args(a, b, 4, {}), {}, 0, "crasher");
        },
        20000);
    FAIL() << "the run must fail";
  } catch (const pto::Error &e) {
    ASSERT_EQ(e.code(), PTO_TASK_FAILED) << e.what();
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "'crasher' failed: chip 0")) << m;
    // SIGSEGV normally; under AddressSanitizer the process reports and exits instead.
    EXPECT_TRUE(contains(m, "signal 11") || contains(m, "exited with status")) << m;
  }
  expect_next_run_works(w, 0);
}

// The L2 run reports RUN_TIMEOUT once the sleeping kernel returned (1.5 s); the process is then
// replaced all the same, since a timed-out context may be unusable.
TEST(L3Faults, ChipRunThatTimesOutFailsItsTaskAndTheChipIsReplaced) {
  const pto::ChipCallable slow = l3_test::callable(l3_test::kSlowCopyKernel, "l3_slow_copy");
  pto::Worker w(l3_test::options(pto::ChipMode::kProcess, 1, 0));
  int64_t *a = heap_i64(w, 4), *b = heap_i64(w, 4);
  const int before = w.chip_pid(0);
  pto::ChipCallConfig cfg;
  cfg.timeout_ms = 200;
  try {
    w.run(
        [&](pto::HostOrchestrator &o) {
          o.submit_chip(slow, l3_test::io_args(a, b, 4, {4, 1500}), cfg, 0, "hangs");
        },
        20000);
    FAIL() << "the run must time out";
  } catch (const pto::Error &e) {
    ASSERT_EQ(e.code(), PTO_RUN_TIMEOUT) << e.what();
    EXPECT_TRUE(
        contains(e.what(), "'hangs' failed on chip 0 (device 0, process " + std::to_string(before) + ")"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "is being replaced by a new process")) << e.what();
  }
  // Asked while the replacement is being forked, chip_pid waits for it: never 0, which kill()
  // would take for the caller's own process group (a CI run was SIGKILLed that way).
  const int next = w.chip_pid(0);
  EXPECT_GT(next, 0);
  EXPECT_NE(next, before);
  EXPECT_EQ(kill(next, 0), 0) << "chip_pid names a live process";
  expect_next_run_works(w, 0);
  EXPECT_EQ(w.chip_pid(0), next);
}

// A host process that dies without closing its worker (SIGKILL) must not leave chip processes
// behind: the zygote sees its request pipe close and takes them down.
TEST(L3Faults, ChipProcessesExitWhenTheHostProcessIsKilled) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t host = fork();
  ASSERT_GE(host, 0);
  if (host == 0) {  // the "host": makes a worker, reports its chip's pid, waits to be killed
    close(fds[0]);
    pto::Worker w(l3_test::options(pto::ChipMode::kProcess, 1, 0));
    const int pid = w.chip_pid(0);
    if (write(fds[1], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) _exit(2);
    for (;;) pause();
  }
  close(fds[1]);
  int chip = -1;
  ASSERT_EQ(read(fds[0], &chip, sizeof chip), static_cast<ssize_t>(sizeof chip));
  close(fds[0]);
  ASSERT_GT(chip, 0);
  ASSERT_EQ(kill(chip, 0), 0) << "the chip process runs while its host lives";
  kill(host, SIGKILL);
  waitpid(host, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 300 && !gone; ++i) {
    gone = kill(chip, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "chip process " << chip << " outlived its host process by 3 s";
}

TEST(L3Faults, ChipProcessesExitWhenTheWorkerCloses) {
  int pid = -1;
  {
    pto::Worker w(l3_test::options(pto::ChipMode::kProcess, 1, 0));
    pid = w.chip_pid(0);
    ASSERT_GT(pid, 0);
  }
  // The zygote reaped it before close() returned.
  EXPECT_NE(kill(pid, 0), 0);
}

}  // namespace
