// tests/cpp/test_l4_mpi.cpp — claims about the C++ L4 worker, one scenario per ctest, each run under mpirun.
//
// Contract under test (docs/l4.md): every rank unrolls the same tasks; data crosses ranks only
// through send/receive SUB tasks ordered by L3 on each rank, which gives sequential semantics
// across ranks (RAW, WAR, WAW); a task failing on one rank fails the dependents on other ranks
// with an error naming the task and its rank; a dead rank makes the ranks waiting for it fail
// within peer_timeout, never hang; bad input is a typed error naming the argument.
// Usage: mpirun -n 4 --oversubscribe test_l4_mpi
// <ordering|poison|killed|bad_input|diverge|goodbye|comm|after> Each rank prints one line "rank R: OK ..." or
// "rank R: FAILED ..." and exits 1 on FAILED (mpirun's exit code is then non-zero; ctest also fails on any
// FAILED line).
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pto/error.h"
#include "pto/l4.h"

namespace {

using Clock = std::chrono::steady_clock;
using pto::l4::Orchestrator;

struct Checker {
  int rank = -1;
  std::string failures;
  void expect(bool ok, const std::string &what) {
    if (!ok) failures += (failures.empty() ? "" : "; ") + what;
  }
  int report(const std::string &ok_note = "") const {
    if (failures.empty())
      std::printf("rank %d: OK %s\n", rank, ok_note.c_str());
    else
      std::printf("rank %d: FAILED %s\n", rank, failures.c_str());
    std::fflush(stdout);
    return failures.empty() ? 0 : 1;
  }
};

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

pto::l4::WorkerOptions options(uint32_t peer_timeout_ms) {
  pto::l4::WorkerOptions o;
  o.num_sub_workers = 2;
  o.heap_bytes = 16ull << 20;
  o.peer_timeout_ms = peer_timeout_ms;
  return o;
}

// Tensor arguments on int64 arrays of n elements: (ptr, direction) pairs.
pto::ChipStorageTaskArgs args(std::initializer_list<std::pair<int64_t *, pto_direction>> ts, int64_t n = 4) {
  pto::ChipStorageTaskArgs a;
  for (const auto &[p, d] : ts) a.add_tensor(p, static_cast<uint64_t>(n) * 8, PTO_DTYPE_I64, {n}, d);
  return a;
}

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void fill(int64_t *p, int64_t v, int n = 4) {
  for (int i = 0; i < n; ++i) p[i] = v;
}

// Cross-rank RAW, WAR and WAW on one array x (x = 0 everywhere at first):
//   A rank 0: x = 1 (slow)        B rank 1: b = x, slowly (RAW: x moves 0 -> 1)
//   C rank 0: x = 2               (WAR on rank 0: after the send of A's x)
//   D rank 2: d = x               (RAW: x moves 0 -> 2 after C, so d == 2)
//   E rank 1: e = x               (x moves 0 -> 1 again: that receive must wait for B, a local
//                                  WAR on rank 1, or b would read 2)
//   F rank 2: x = 3               (WAW across ranks: rank 2's copy becomes the only valid one)
//   G rank 0: g = x               (RAW: 3)
// then a task placed with kAnyRank, and a broadcast (fetch to every rank: a binomial tree).
int ordering() {
  pto::l4::Worker w(options(30000));
  Checker c;
  c.rank = w.rank();
  if (w.size() < 3) {
    std::printf("rank %d: FAILED ordering needs 3 ranks or more\n", w.rank());
    return 1;
  }
  auto *x = static_cast<int64_t *>(w.alloc(32, "x"));
  auto *b = static_cast<int64_t *>(w.alloc(32, "b"));
  auto *d = static_cast<int64_t *>(w.alloc(32, "d"));
  auto *e = static_cast<int64_t *>(w.alloc(32, "e"));
  auto *g = static_cast<int64_t *>(w.alloc(32, "g"));
  for (int64_t *p : {x, b, d, e, g}) fill(p, 0);
  auto put = [](int64_t *dst, int64_t v, int ms) {
    return [=](pto::SubContext &) {
      sleep_ms(ms);
      fill(dst, v);
    };
  };
  auto copy = [](int64_t *dst, const int64_t *src, int ms) {
    return [=](pto::SubContext &) {
      sleep_ms(ms);
      for (int i = 0; i < 4; ++i) dst[i] = src[i];
    };
  };
  try {
    w.run(
        [&](Orchestrator &o) {
          o.submit_sub(put(x, 1, 300), args({{x, PTO_DIR_OUTPUT}}), 0, "A x=1");
          o.submit_sub(copy(b, x, 500), args({{x, PTO_DIR_INPUT}, {b, PTO_DIR_OUTPUT}}), 1, "B b=x");
          o.submit_sub(put(x, 2, 0), args({{x, PTO_DIR_OUTPUT}}), 0, "C x=2");
          o.submit_sub(copy(d, x, 0), args({{x, PTO_DIR_INPUT}, {d, PTO_DIR_OUTPUT}}), 2, "D d=x");
          o.submit_sub(copy(e, x, 0), args({{x, PTO_DIR_INPUT}, {e, PTO_DIR_OUTPUT}}), 1, "E e=x");
          o.submit_sub(put(x, 3, 0), args({{x, PTO_DIR_OUTPUT}}), 2, "F x=3");
          o.submit_sub(copy(g, x, 0), args({{x, PTO_DIR_INPUT}, {g, PTO_DIR_OUTPUT}}), 0, "G g=x");
          for (int64_t *p : {b, d, e}) o.fetch(p, 0);
        },
        60000);
    c.expect(w.valid_ranks(x) == std::vector<int>({0, 2}), "x should be valid on ranks 0 and 2");
    if (w.rank() == 0) {
      c.expect(b[0] == 1, "RAW/WAR: b = " + std::to_string(b[0]) + ", expected 1");
      c.expect(d[0] == 2, "RAW after WAR: d = " + std::to_string(d[0]) + ", expected 2");
      c.expect(e[0] == 2, "e = " + std::to_string(e[0]) + ", expected 2");
      c.expect(g[0] == 3, "WAW: g = " + std::to_string(g[0]) + ", expected 3");
    }
    // kAnyRank: ranks 0 and 2 hold x (a tie on bytes); rank 2 ran fewer tasks (2 against 3).
    auto *h = static_cast<int64_t *>(w.alloc(32, "h"));
    w.run(
        [&](Orchestrator &o) {
          o.submit_sub(copy(h, x, 0), args({{x, PTO_DIR_INPUT}, {h, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank,
                       "H h=x");
          o.fetch(h, 0);
        },
        60000);
    c.expect(w.valid_ranks(h) == std::vector<int>({0, 2}), "kAnyRank should have picked rank 2");
    if (w.rank() == 0) c.expect(h[0] == 3, "h = " + std::to_string(h[0]) + ", expected 3");
    // Broadcast: every rank ends with rank 0's value.
    auto *y = static_cast<int64_t *>(w.alloc(64, "y", 0));
    if (w.rank() == 0)
      for (int i = 0; i < 8; ++i) y[i] = 10 + i;
    w.run([&](Orchestrator &o) { o.fetch(y, pto::l4::kAllRanks); }, 60000);
    c.expect(w.valid_ranks(y).size() == static_cast<size_t>(w.size()), "y should be valid everywhere");
    for (int i = 0; i < 8; ++i)
      if (y[i] != 10 + i)
        c.expect(false, "broadcast: y[" + std::to_string(i) + "] = " + std::to_string(y[i]));
  } catch (const pto::Error &err) {
    c.expect(false, std::string(err.name()) + ": " + err.what());
  }
  w.close();
  return c.report();
}

// 'bad producer' on rank 2 throws; 'consumer' on rank 0 reads its output: rank 0's run fails
// naming the failed task and rank 2, the consumer never runs; 'independent' still runs.
int poison() {
  pto::l4::Worker w(options(30000));
  Checker c;
  c.rank = w.rank();
  auto *p = static_cast<int64_t *>(w.alloc(32, "p"));
  auto *out = static_cast<int64_t *>(w.alloc(32, "c"));
  auto *ind = static_cast<int64_t *>(w.alloc(32, "i"));
  std::atomic<bool> consumer_ran{false}, independent_ran{false};
  std::string error;
  const auto t0 = Clock::now();
  try {
    w.run(
        [&](Orchestrator &o) {
          o.submit_sub([](pto::SubContext &) { throw std::runtime_error("boom from the producer"); },
                       args({{p, PTO_DIR_OUTPUT}}), 2, "bad producer");
          o.submit_sub(
              [&](pto::SubContext &) {
                consumer_ran = true;
                fill(out, p[0]);
              },
              args({{p, PTO_DIR_INPUT}, {out, PTO_DIR_OUTPUT}}), 0, "consumer");
          o.submit_sub(
              [&](pto::SubContext &) {
                independent_ran = true;
                fill(ind, 7);
              },
              args({{ind, PTO_DIR_OUTPUT}}), 0, "independent");
        },
        60000);
  } catch (const pto::Error &err) {
    error = std::string(err.name()) + ": " + err.what();
  }
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  if (w.rank() == 0) {
    c.expect(contains(error, "TASK_FAILED"),
             "rank 0's run should fail with TASK_FAILED, got '" + error + "'");
    c.expect(contains(error, "'bad producer [L4 task 0, rank 2]'"),
             "the error should name the task and rank 2");
    c.expect(contains(error, "boom from the producer"), "the error should carry the root cause");
    c.expect(contains(error, "the data is not valid on rank 2"), "the error should say where the data was");
    c.expect(contains(error, "consumer [L4 task 1, rank 0]"), "the error should name the skipped consumer");
    c.expect(!consumer_ran.load(), "the consumer ran on poisoned data");
    c.expect(independent_ran.load(), "the independent task did not run");
  } else if (w.rank() == 2) {
    c.expect(contains(error, "boom from the producer"),
             "rank 2 should fail with its task's error: '" + error + "'");
  } else {
    c.expect(error.empty(), "this rank had nothing to fail: " + error);
  }
  c.expect(took < 20, "took " + std::to_string(took) + " s");
  w.close();
  return c.report(w.rank() == 0 ? error : "");
}

// Explicit edges across ranks (after= a task on another rank) carry no data, only order, through
// a token message. Each task stamps CLOCK_MONOTONIC (one clock for every process of the
// machine) when it starts and ends; the stamps are gathered with MPI afterwards. A chain
// 0 -> 1 -> 2 -> 3 of sleeping tasks must run one after the other, and a join on rank 0 after
// tasks on ranks 1 and 2 after both. Then failure: 'bad' on rank 2 throws, 'follower' on rank 0
// (after bad) and 'next' on rank 3 (after follower) must not run and their ranks' runs must fail
// naming 'bad', its rank and its error; 'independent' on rank 0 still runs.
int after_across_ranks() {
  pto::l4::Worker w(options(30000));
  Checker c;
  c.rank = w.rank();
  auto now = [] { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); };
  constexpr int kTasks = 6;  // chain 0..3, join's two inputs are chain tasks 1 and 2, join = 4
  std::vector<double> start(kTasks, 0), end(kTasks, 0);
  auto timed = [&](int i, int sleep_ms) {
    return [&, i, sleep_ms](pto::SubContext &) {
      start[static_cast<size_t>(i)] = now();
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      end[static_cast<size_t>(i)] = now();
    };
  };
  try {
    w.run(
        [&](Orchestrator &o) {
          uint64_t prev = o.submit_sub(timed(0, 200), {}, 0, "chain0");
          std::vector<uint64_t> ids{prev};
          for (int r = 1; r < 4; ++r) {
            prev = o.submit_sub(timed(r, 50), {}, r, "chain" + std::to_string(r), {prev});
            ids.push_back(prev);
          }
          o.submit_sub(timed(4, 0), {}, 0, "join", {ids[1], ids[2]});
        },
        60000);
  } catch (const pto::Error &err) {
    c.expect(false, std::string("ordering run: ") + err.name() + ": " + err.what());
  }
  std::vector<double> all_start(kTasks), all_end(kTasks);
  MPI_Allreduce(start.data(), all_start.data(), kTasks, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(end.data(), all_end.data(), kTasks, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i <= 4; ++i)
    c.expect(all_start[static_cast<size_t>(i)] > 0, "task " + std::to_string(i) + " never ran");
  for (int r = 1; r < 4; ++r)
    c.expect(
        all_start[static_cast<size_t>(r)] >= all_end[static_cast<size_t>(r - 1)],
        "chain" + std::to_string(r) + " started " +
            std::to_string((all_end[static_cast<size_t>(r - 1)] - all_start[static_cast<size_t>(r)]) * 1e3) +
            " ms before chain" + std::to_string(r - 1) + " ended");
  c.expect(all_start[4] >= all_end[1] && all_start[4] >= all_end[2],
           "join started before chain1 or chain2 ended");

  std::atomic<bool> follower_ran{false}, next_ran{false}, independent_ran{false};
  std::string error;
  try {
    w.run(
        [&](Orchestrator &o) {
          const uint64_t bad = o.submit_sub(
              [](pto::SubContext &) { throw std::runtime_error("boom before the token"); }, {}, 2, "bad");
          const uint64_t follower =
              o.submit_sub([&](pto::SubContext &) { follower_ran = true; }, {}, 0, "follower", {bad});
          o.submit_sub([&](pto::SubContext &) { next_ran = true; }, {}, 3, "next", {follower});
          o.submit_sub([&](pto::SubContext &) { independent_ran = true; }, {}, 0, "independent");
        },
        60000);
  } catch (const pto::Error &err) {
    error = std::string(err.name()) + ": " + err.what();
  }
  if (w.rank() == 0 || w.rank() == 3) {
    c.expect(contains(error, "TASK_FAILED"), "the run should fail with TASK_FAILED, got '" + error + "'");
    c.expect(contains(error, "'bad [L4 task 5, rank 2]'"),
             "the error should name 'bad' and rank 2: " + error);
    c.expect(contains(error, "boom before the token"), "the error should carry the root cause: " + error);
    c.expect(contains(error, "the task it follows failed on rank"),
             "the error should say a token failed: " + error);
  } else if (w.rank() == 2) {
    c.expect(contains(error, "boom before the token"),
             "rank 2 should fail with its task's error: '" + error + "'");
  } else {
    c.expect(error.empty(), "this rank had nothing to fail: " + error);
  }
  if (w.rank() == 0) {
    c.expect(contains(error, "were not run: ") && contains(error, "'follower [L4 task 6, rank 0]'"),
             "the error should name the follower as not run: " + error);
    c.expect(!follower_ran.load(), "the follower ran after a failed task");
    c.expect(independent_ran.load(), "the independent task did not run");
  }
  if (w.rank() == 3) c.expect(!next_ran.load(), "'next' ran after a task that did not");
  w.close();
  return c.report(w.rank() == 3 ? error : "");
}

// Rank 1 dies inside a task (_exit, no MPI_Finalize); rank 0 needs what it would have
// produced. Launched with mpirun --enable-recovery so the survivors keep running: rank 0 must
// fail within peer_timeout (+ slack), naming rank 1; the other ranks are unaffected.
int killed(uint32_t peer_timeout_ms) {
  pto::l4::Worker w(options(peer_timeout_ms));
  Checker c;
  c.rank = w.rank();
  auto *p = static_cast<int64_t *>(w.alloc(32, "p"));
  auto *out = static_cast<int64_t *>(w.alloc(32, "c"));
  std::string error;
  const auto t0 = Clock::now();
  try {
    w.run(
        [&](Orchestrator &o) {
          o.submit_sub(
              [](pto::SubContext &) {
                sleep_ms(200);
                std::fflush(stdout);
                _exit(3);
              },
              args({{p, PTO_DIR_OUTPUT}}), 1, "dies");
          o.submit_sub([&](pto::SubContext &) { fill(out, p[0]); },
                       args({{p, PTO_DIR_INPUT}, {out, PTO_DIR_OUTPUT}}), 0, "consumer");
        },
        60000);
  } catch (const pto::Error &err) {
    error = std::string(err.name()) + ": " + err.what();
  }
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  const double limit = peer_timeout_ms / 1000.0 + 3.0;
  if (w.rank() == 0) {
    const std::string want = "no message from rank 1 for " + std::to_string(peer_timeout_ms / 1000) +
                             " s (peer_timeout): rank 1 died or hangs";
    c.expect(contains(error, want), "rank 0 should fail with '" + want + "', got '" + error + "'");
    c.expect(contains(error, "'p'") && contains(error, "consumer"),
             "the error should name 'p' and the consumer");
    c.expect(took < limit, "failed after " + std::to_string(took) + " s, limit " + std::to_string(limit));
  } else {
    c.expect(error.empty(), "this rank had nothing to fail: " + error);
  }
  char note[64];
  std::snprintf(note, sizeof note, "after %.2f s", took);
  const int rc = c.report(w.rank() == 0 ? std::string(note) + ": " + error : note);
  // The job is broken (a rank is gone): skip the goodbyes and MPI_Finalize, which may wait for
  // the dead rank; the verdict is printed.
  std::fflush(stdout);
  _exit(rc);
}

// The ranks' programs diverge: rank 0 allocates x smaller than the others do. x moves from
// rank 1 to rank 0; the receive must fail saying the orchestration functions diverged (MPI's
// truncation, or the header's size), never deliver a part of x.
int diverge() {
  pto::l4::Worker w(options(30000));
  Checker c;
  c.rank = w.rank();
  const uint64_t n = w.rank() == 0 ? 4 : 8;  // the divergence
  auto *x = static_cast<int64_t *>(w.alloc(n * 8, "x"));
  auto *y = static_cast<int64_t *>(w.alloc(32, "y"));
  std::atomic<bool> reader_ran{false};
  std::string error;
  try {
    w.run(
        [&](Orchestrator &o) {
          o.submit_sub([=](pto::SubContext &) { fill(x, 5, static_cast<int>(n)); },
                       args({{x, PTO_DIR_OUTPUT}}, static_cast<int64_t>(n)), 1, "writer");
          pto::ChipStorageTaskArgs reads = args({{x, PTO_DIR_INPUT}}, static_cast<int64_t>(n));
          reads.add_tensor(y, 32, PTO_DTYPE_I64, {4}, PTO_DIR_OUTPUT);
          o.submit_sub(
              [&](pto::SubContext &) {
                reader_ran = true;
                fill(y, x[0]);
              },
              reads, 0, "reader");
        },
        60000);
  } catch (const pto::Error &err) {
    error = std::string(err.name()) + ": " + err.what();
  }
  if (w.rank() == 0) {
    c.expect(contains(error, "diverged"),
             "rank 0 should fail saying the ranks diverged, got '" + error + "'");
    c.expect(contains(error, "transfer 0 of 'x'"), "the error should name the transfer");
    c.expect(!reader_ran.load(), "the reader ran on a truncated x");
  }
  w.close();
  return c.report(w.rank() == 0 ? error : "");
}

// Rank 1 diverges by submitting nothing and closes its worker; rank 0 waits for x from rank 1.
// The goodbye rank 1 sends on close makes rank 0's receive fail after min(1 s, peer_timeout),
// long before the 30 s peer_timeout, saying the programs diverged.
int goodbye() {
  pto::l4::Worker w(options(30000));
  Checker c;
  c.rank = w.rank();
  auto *x = static_cast<int64_t *>(w.alloc(32, "x"));
  auto *y = static_cast<int64_t *>(w.alloc(32, "y"));
  std::string error;
  const auto t0 = Clock::now();
  try {
    w.run(
        [&](Orchestrator &o) {
          if (w.rank() == 1) return;  // the divergence
          o.submit_sub([=](pto::SubContext &) { fill(x, 5); }, args({{x, PTO_DIR_OUTPUT}}), 1, "writer");
          o.submit_sub([=](pto::SubContext &) { fill(y, x[0]); },
                       args({{x, PTO_DIR_INPUT}, {y, PTO_DIR_OUTPUT}}), 0, "reader");
        },
        60000);
  } catch (const pto::Error &err) {
    error = std::string(err.name()) + ": " + err.what();
  }
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  if (w.rank() == 0) {
    c.expect(contains(error, "rank 1 closed its Worker while this rank still waits for it") &&
                 contains(error, "diverged"),
             "rank 0 should fail naming rank 1's close, got '" + error + "'");
    c.expect(took < 10, "failed after " + std::to_string(took) + " s, expected about 1 s");
  }
  w.close();
  return c.report(w.rank() == 0 ? error : "");
}

// WorkerOptions::mpi_comm: the job is the communicator given, not MPI_COMM_WORLD. The world
// splits in two halves by rank parity, each numbered in reverse (its highest world rank is its
// rank 0); each half is an L4 job of its own, and an array moves from its rank 0 to its last rank.
int comm() {
  int provided = 0, world_rank = 0, world_size = 1;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &half);
  int half_size = 0;
  MPI_Comm_size(half, &half_size);
  Checker c;
  c.rank = world_rank;
  {
    pto::l4::WorkerOptions o = options(30000);
    o.mpi_comm = &half;
    pto::l4::Worker w(o);
    const int expected_rank = (world_size - 1 - world_rank) / 2;
    c.expect(w.size() == half_size && w.rank() == expected_rank,
             "worker rank " + std::to_string(w.rank()) + " of " + std::to_string(w.size()) + ", expected " +
                 std::to_string(expected_rank) + " of " + std::to_string(half_size));
    auto *x = static_cast<int64_t *>(w.alloc(32, "x", 0));
    auto *y = static_cast<int64_t *>(w.alloc(32, "y"));
    const int64_t value = 10 + world_rank % 2;
    fill(y, 0);
    if (w.rank() == 0) fill(x, value);
    const int last = w.size() - 1;
    w.run([&](Orchestrator &orch) {
      orch.submit_sub([=](pto::SubContext &) { fill(y, x[0]); },
                      args({{x, PTO_DIR_INPUT}, {y, PTO_DIR_OUTPUT}}), last, "reader");
    });
    if (w.rank() == last)
      c.expect(y[0] == value, "y = " + std::to_string(y[0]) + ", expected " + std::to_string(value));
    w.close();
  }
  MPI_Comm_free(&half);
  const int rc = c.report();
  MPI_Finalize();
  return rc;
}

// Typed errors naming the argument; none of them needs another rank.
int bad_input() {
  Checker c;
  auto expect_error = [&](pto_status code, const std::string &part, const std::function<void()> &f) {
    try {
      f();
      c.expect(false, "no error, expected one naming '" + part + "'");
    } catch (const pto::Error &e) {
      c.expect(e.code() == code && contains(e.what(), part), std::string("expected ") +
                                                                 pto_status_name(code) + " naming '" + part +
                                                                 "', got " + e.name() + ": " + e.what());
    }
  };
  pto::l4::WorkerOptions bad = options(30000);
  bad.num_sub_workers = 0;
  expect_error(PTO_INVALID_ARGUMENT, "num_sub_workers", [&] { pto::l4::Worker w(bad); });
  bad = options(10);
  expect_error(PTO_INVALID_ARGUMENT, "peer_timeout_ms", [&] { pto::l4::Worker w(bad); });
  bad = options(30000);
  bad.poll_max_us = 1;
  expect_error(PTO_INVALID_ARGUMENT, "poll_max_us", [&] { pto::l4::Worker w(bad); });
  bad = options(30000);
  bad.spin_us = pto::l4::kMaxSpinUs + 1;
  expect_error(PTO_INVALID_ARGUMENT, "spin_us", [&] { pto::l4::Worker w(bad); });
  pto::l4::Worker w(options(30000));
  c.rank = w.rank();
  expect_error(PTO_INVALID_ARGUMENT, "valid", [&] { w.alloc(8, "z", w.size()); });
  auto *x = static_cast<int64_t *>(w.alloc(32, "x"));
  int64_t outside[4] = {0, 0, 0, 0};
  auto ok = [](pto::SubContext &) {};
  expect_error(PTO_INVALID_ARGUMENT, "not (a part of) an array of this L4 worker's alloc()", [&] {
    w.run([&](Orchestrator &o) { o.submit_sub(ok, args({{outside, PTO_DIR_INPUT}})); });
  });
  expect_error(PTO_INVALID_ARGUMENT, "rank = " + std::to_string(w.size()), [&] {
    w.run([&](Orchestrator &o) { o.submit_sub(ok, args({{x, PTO_DIR_INPUT}}), w.size()); });
  });
  expect_error(PTO_INVALID_ARGUMENT, "after: 99 is not an L4 task id of this run", [&] {
    w.run([&](Orchestrator &o) { o.submit_sub(ok, args({{x, PTO_DIR_INPUT}}), 0, "", {99}); });
  });
  // A tensor running past the end of its array is not inside it.
  expect_error(PTO_INVALID_ARGUMENT, "not (a part of)", [&] {
    w.run([&](Orchestrator &o) { o.submit_sub(ok, args({{x, PTO_DIR_INPUT}}, 5)); });
  });
  w.close();
  expect_error(PTO_NOT_INITIALIZED, "closed", [&] { w.alloc(8); });
  return c.report();
}

}  // namespace

int main(int argc, char **argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  try {
    if (what == "ordering") return ordering();
    if (what == "poison") return poison();
    if (what == "killed") return killed(argc > 2 ? static_cast<uint32_t>(std::stoul(argv[2])) : 2000);
    if (what == "bad_input") return bad_input();
    if (what == "diverge") return diverge();
    if (what == "goodbye") return goodbye();
    if (what == "comm") return comm();
    if (what == "after") return after_across_ranks();
  } catch (const pto::Error &e) {
    std::printf("rank ?: FAILED %s: %s\n", e.name(), e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: %s ordering|poison|killed [peer_timeout_ms]|bad_input|diverge|goodbye|comm|after\n",
               argv[0]);
  return 2;
}
