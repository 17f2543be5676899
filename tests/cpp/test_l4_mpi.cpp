// tests/cpp/test_l4_mpi.cpp — claims about the C++ L4 worker, one scenario per ctest, each run under mpirun.
//
// Contract under test (docs/guide/l4.md): every rank unrolls the same tasks; data crosses ranks only
// through send/receive SUB tasks ordered by L3 on each rank, which gives sequential semantics
// across ranks (RAW, WAR, WAW); a task failing on one rank fails the dependents on other ranks
// with an error naming the task and its rank; a dead rank makes the ranks waiting for it fail
// within peer_timeout, never hang; bad input is a typed error naming the argument.
// Distributed arrays (alloc_distributed): results with remote tile reads, memory per rank near
// N/R, refused non-owner writes, eviction under a small landing_bytes.
// Usage: mpirun -n 4 --oversubscribe test_l4_mpi <ordering|poison|killed|bad_input|diverge|goodbye|
// comm|after|dist_results|dist_memory|dist_refused|dist_evict|dist_diverge>
// Each rank prints one line "rank R: OK ..." or
// "rank R: FAILED ..." and exits 1 on FAILED (mpirun's exit code is then non-zero; ctest also fails on any
// FAILED line).
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../common/rank_checker.h"
#include "pto/error.h"
#include "pto/l4.h"

namespace {

using Clock = std::chrono::steady_clock;
using pto::l4::Orchestrator;

using Checker = pto_test::RankChecker;
using pto_test::contains;

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
  // The ordering run's times, gathered once the worker is closed: while it is open its progress
  // thread may drive this collective's requests inside Open MPI (MPI_THREAD_MULTIPLE lets any
  // thread's MPI_Testsome progress them), whose unpacking into these buffers TSan cannot order.
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
  return c.report(w.rank() == 3 ? error : "");
}

// Rank 1 dies inside a task (_exit, no MPI_Finalize); rank 0 needs what it would have
// produced, and rank 2 a tile of a distributed array it owns (written by the same task).
// Launched with mpirun --enable-recovery so the survivors keep running: ranks 0 and 2 must fail
// within peer_timeout (+ slack), naming rank 1, the task and the array (rank 2: the tile and its
// bytes too); the other ranks are unaffected.
int killed(uint32_t peer_timeout_ms) {
  pto::l4::Worker w(options(peer_timeout_ms));
  Checker c;
  c.rank = w.rank();
  auto *p = static_cast<int64_t *>(w.alloc(32, "p"));
  auto *out = static_cast<int64_t *>(w.alloc(32, "c"));
  auto *T = static_cast<char *>(
      w.alloc_distributed(4096ull * static_cast<uint64_t>(w.size()), "T", pto::l4::Distribution::kBlock));
  std::string error;
  const auto t0 = Clock::now();
  try {
    w.run(
        [&](Orchestrator &o) {
          pto::ChipStorageTaskArgs writes = args({{p, PTO_DIR_OUTPUT}});
          writes.add_tensor(T + 4096, 4096, PTO_DTYPE_U8, {4096}, PTO_DIR_OUTPUT);
          o.submit_sub(
              [](pto::SubContext &) {
                sleep_ms(200);
                std::fflush(stdout);
                _exit(3);
              },
              writes, 1, "dies");
          o.submit_sub([&](pto::SubContext &) { fill(out, p[0]); },
                       args({{p, PTO_DIR_INPUT}, {out, PTO_DIR_OUTPUT}}), 0, "consumer");
          if (w.size() > 2) {
            pto::ChipStorageTaskArgs reads;
            reads.add_tensor(T + 4096, 4096, PTO_DTYPE_U8, {4096}, PTO_DIR_INPUT);
            o.submit_sub([](pto::SubContext &) {}, reads, 2, "tile reader");
          }
        },
        60000);
  } catch (const pto::Error &err) {
    error = std::string(err.name()) + ": " + err.what();
  }
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  // Detected through peer_timeout, not the run's 60 s timeout: the slack covers start-up and a
  // loaded machine (sanitizers slow every thread several-fold).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  const double limit = peer_timeout_ms / 1000.0 + 12.0;
#else
  const double limit = peer_timeout_ms / 1000.0 + 3.0;
#endif
  const std::string died = "no message from rank 1 for " + std::to_string(peer_timeout_ms / 1000) +
                           " s (peer_timeout): rank 1 died or hangs";
  if (w.rank() == 0) {
    c.expect(contains(error, died), "rank 0 should fail with '" + died + "', got '" + error + "'");
    c.expect(contains(error, "'p'") && contains(error, "consumer"),
             "the error should name 'p' and the consumer");
    c.expect(took < limit, "failed after " + std::to_string(took) + " s, limit " + std::to_string(limit));
  } else if (w.rank() == 2) {
    const std::string want =
        "transfer 1 of 'T' tile 1 (bytes 4096..8191) (for L4 task 2 'tile reader') from "
        "rank 1 to rank 2: " +
        died;
    c.expect(contains(error, want), "rank 2 should fail with '" + want + "', got '" + error + "'");
    c.expect(took < limit, "failed after " + std::to_string(took) + " s, limit " + std::to_string(limit));
  } else {
    c.expect(error.empty(), "this rank had nothing to fail: " + error);
  }
  char note[64];
  std::snprintf(note, sizeof note, "after %.2f s", took);
  const int rc = c.report(w.rank() == 0 || w.rank() == 2 ? std::string(note) + ": " + error : note);
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
  bad = options(30000);
  bad.landing_bytes = 100;
  expect_error(PTO_INVALID_ARGUMENT, "landing_bytes = 100 is out of range", [&] { pto::l4::Worker w(bad); });
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

// --- Distributed arrays ----------------------------------------------------------------------

using pto::l4::Distribution;

// Tensor arguments on byte ranges: (ptr, bytes, direction).
pto::ChipStorageTaskArgs ranges(std::initializer_list<std::tuple<const void *, uint64_t, pto_direction>> ts) {
  pto::ChipStorageTaskArgs a;
  for (const auto &[p, n, d] : ts)
    a.add_tensor(const_cast<void *>(p), n, PTO_DTYPE_U8, {static_cast<int64_t>(n)}, d);
  return a;
}

// A field of /proc/self/status in bytes ("RssShmem", "VmHWM"), -1 if absent.
int64_t status_bytes(const std::string &field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, field.size() + 1, field + ":") == 0)
      return std::stoll(line.substr(field.size() + 1)) * 1024;
  return -1;
}

// Bytes of [p, p + n) backed by memory (mincore: pages in the shared mapping's page cache).
uint64_t resident_bytes(const void *p, uint64_t n) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + n + page - 1) & ~(page - 1);
  std::vector<unsigned char> v((hi - lo) / page);
  if (mincore(reinterpret_cast<void *>(lo), hi - lo, v.data()) != 0) return ~uint64_t{0};
  uint64_t in = 0;
  for (unsigned char c : v) in += (c & 1) ? page : 0;
  return in;
}

// Results with remote tile reads, on any number of ranks (1 too). A (kBlock, its last tile
// short) is filled by one task per tile placed with kAnyRank: each must run on the tile's owner.
// B (kBlockCyclic, 3000-byte tiles, so tiles share pages) gets B[i] = A[n-1-i] by one task per B
// tile on its owner, reading the (mostly remote) A tiles holding the mirrored range. Rank 0
// fetches B and checks every element; then B is broadcast (fetch to every rank, pinned) and every
// rank checks it; kAnyRank for a reader is the rank holding most of what it reads.
int dist_results() {
  pto::l4::Worker w(options(30000));
  Checker c;
  c.rank = w.rank();
  const int R = w.size();
  const int64_t n = 1000 * R + 13;  // int64 elements
  const uint64_t nbytes = static_cast<uint64_t>(n) * 8;
  auto *A = static_cast<int64_t *>(w.alloc_distributed(nbytes, "A", Distribution::kBlock));
  auto *B = static_cast<int64_t *>(w.alloc_distributed(nbytes, "B", Distribution::kBlockCyclic, 3000));
  c.expect(reinterpret_cast<uintptr_t>(A) % 4096 == 0 && reinterpret_cast<uintptr_t>(B) % 4096 == 0,
           "distributed arrays should be page-aligned");
  const uint64_t a_tile = ((nbytes + R - 1) / R + 4095) / 4096 * 4096;
  const uint64_t a_tiles = (nbytes + a_tile - 1) / a_tile, b_tiles = (nbytes + 2999) / 3000;
  std::atomic<int> misplaced{0};
  try {
    w.run(
        [&](Orchestrator &o) {
          for (uint64_t t = 0; t < a_tiles; ++t) {
            const uint64_t lo = t * a_tile, len = std::min(a_tile, nbytes - lo);
            const int owner = static_cast<int>(t % R);
            o.submit_sub(
                [&, lo, len, owner](pto::SubContext &) {
                  if (w.rank() != owner) ++misplaced;
                  for (uint64_t i = lo / 8; i < (lo + len) / 8; ++i) A[i] = static_cast<int64_t>(i) * 3 + 1;
                },
                ranges({{reinterpret_cast<char *>(A) + lo, len, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank,
                "init A tile " + std::to_string(t));
          }
          for (uint64_t u = 0; u < b_tiles; ++u) {
            const uint64_t lo = u * 3000, hi = std::min(nbytes, lo + 3000);
            // Whole elements of B touched by the tile (3000 is not a multiple of 8), and the
            // mirrored range of A they read.
            const uint64_t e0 = lo / 8, e1 = (hi + 7) / 8;
            const auto m0 = static_cast<uint64_t>(n) - e1, m1 = static_cast<uint64_t>(n) - e0;
            const int owner = static_cast<int>(u % R);
            // The elements split across two tiles are written by both tasks (the same value): the
            // task writes bytes [lo, hi) exactly, so it owns only those; the element straddling
            // the boundary is assembled from both halves.
            o.submit_sub(
                [&, lo, hi, e0, e1, owner](pto::SubContext &) {
                  if (w.rank() != owner) ++misplaced;
                  for (uint64_t e = e0; e < e1; ++e) {
                    const int64_t v = A[static_cast<uint64_t>(n) - 1 - e];
                    const auto *src = reinterpret_cast<const char *>(&v);
                    for (uint64_t b = std::max(lo, e * 8); b < std::min(hi, e * 8 + 8); ++b)
                      reinterpret_cast<char *>(B)[b] = src[b - e * 8];
                  }
                },
                ranges({{A + m0, (m1 - m0) * 8, PTO_DIR_INPUT},
                        {reinterpret_cast<char *>(B) + lo, hi - lo, PTO_DIR_OUTPUT}}),
                pto::l4::kAnyRank, "B tile " + std::to_string(u));
          }
          o.fetch(B, 0);
        },
        60000);
    c.expect(misplaced.load() == 0, std::to_string(misplaced.load()) + " task(s) ran off their tiles' owner");
    for (uint64_t t = 0; t < a_tiles; ++t) {  // on its owner, and where B's tasks read it
      const std::vector<int> v = w.valid_ranks(reinterpret_cast<char *>(A) + t * a_tile);
      c.expect(std::count(v.begin(), v.end(), static_cast<int>(t % R)) == 1,
               "A tile " + std::to_string(t) + " should be valid on its owner");
    }
    if (w.rank() == 0) {
      int64_t wrong = 0, first = -1;
      for (int64_t i = 0; i < n; ++i)
        if (B[i] != (n - 1 - i) * 3 + 1 && wrong++ == 0) first = i;
      c.expect(wrong == 0, std::to_string(wrong) + " wrong element(s) of B on rank 0, first B[" +
                               std::to_string(first) + "] = " + std::to_string(first >= 0 ? B[first] : 0));
    }
    // Broadcast: every rank ends with all of B (pinned), and a reader of B placed with kAnyRank
    // then finds it everywhere: the tie goes to the rank with the fewest tasks.
    w.run([&](Orchestrator &o) { o.fetch(B, pto::l4::kAllRanks); }, 60000);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += B[i] != (n - 1 - i) * 3 + 1;
    c.expect(wrong == 0, std::to_string(wrong) + " wrong element(s) of B after the broadcast");
    c.expect(w.valid_ranks(B + n - 1).size() == static_cast<size_t>(R),
             "B's last tile should be valid everywhere");
    c.expect(w.transfers().evictions == 0, "nothing should have been evicted (fetched tiles are pinned)");
  } catch (const pto::Error &err) {
    c.expect(false, std::string(err.name()) + ": " + err.what());
  }
  w.close();
  return c.report();
}

// Memory per rank: a kBlock array of 64 MiB whose owners write their tiles takes about N/R of
// each rank's memory (RssShmem: the L3 host heap is a shared mapping), not N; after a ring step
// in which each rank reads one tile of its neighbour, about 2N/R. Bounds are generous (MPI's own
// shared-memory segments grow a little too); a replicated array would cost N on every rank.
int dist_memory() {
  pto::l4::WorkerOptions o = options(30000);
  o.heap_bytes = 256ull << 20;
  pto::l4::Worker w(o);
  Checker c;
  c.rank = w.rank();
  const int R = w.size();
  const uint64_t N = 64ull << 20, tile = N / static_cast<uint64_t>(R);
  std::vector<int64_t *> sums;
  for (int r = 0; r < R; ++r) sums.push_back(static_cast<int64_t *>(w.alloc(8, "sum" + std::to_string(r))));
  const int64_t base = status_bytes("RssShmem");
  auto *A = static_cast<char *>(w.alloc_distributed(N, "A", Distribution::kBlock));
  const int64_t after_alloc = status_bytes("RssShmem") - base;
  try {
    w.run(
        [&](Orchestrator &orch) {
          for (int t = 0; t < R; ++t)
            orch.submit_sub([=](pto::SubContext &) { std::memset(A + t * tile, 1 + t, tile); },
                            ranges({{A + t * tile, tile, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank, "own tile");
        },
        60000);
    const int64_t owned = status_bytes("RssShmem") - base;
    w.run(
        [&](Orchestrator &orch) {
          for (int r = 0; r < R; ++r) {
            const int t = (r + 1) % R;
            int64_t *sum = sums[static_cast<size_t>(r)];
            orch.submit_sub(
                [=](pto::SubContext &) {
                  int64_t s = 0;
                  for (uint64_t i = 0; i < tile; i += 4096) s += A[t * tile + i];
                  *sum = s;
                },
                ranges({{A + t * tile, tile, PTO_DIR_INPUT}, {sum, 8, PTO_DIR_OUTPUT}}), r, "ring read");
          }
        },
        60000);
    const int64_t ring = status_bytes("RssShmem") - base;
    const int64_t mib = 1 << 20, share = static_cast<int64_t>(tile);
    const int64_t want_ring = R == 1 ? share : 2 * share;
    c.expect(after_alloc < 2 * mib,
             "alloc_distributed alone took " + std::to_string(after_alloc / mib) + " MiB");
    c.expect(owned > share * 9 / 10 && owned < share + share / 4 + 4 * mib,
             "after writing its tile: " + std::to_string(owned / mib) + " MiB, expected about " +
                 std::to_string(share / mib));
    c.expect(ring > want_ring * 9 / 10 && ring < want_ring + share / 4 + 4 * mib,
             "after the ring step: " + std::to_string(ring / mib) + " MiB, expected about " +
                 std::to_string(want_ring / mib));
    const int t = (w.rank() + 1) % R;
    c.expect(*sums[static_cast<size_t>(w.rank())] == static_cast<int64_t>(tile / 4096) * (1 + t),
             "the ring read saw " + std::to_string(*sums[static_cast<size_t>(w.rank())]));
    char note[128];
    std::snprintf(note, sizeof note,
                  "RssShmem +%lld MiB own tile, +%lld MiB after the ring (N = 64 MiB, R = %d)",
                  static_cast<long long>(owned / mib), static_cast<long long>(ring / mib), R);
    w.close();
    return c.report(note);
  } catch (const pto::Error &err) {
    c.expect(false, std::string(err.name()) + ": " + err.what());
  }
  w.close();
  return c.report();
}

// A task may write a tile only on its owner: an explicit other rank, and writing tiles of two
// owners, are refused at submit (INVALID_ARGUMENT naming the task, the array, the tile, its owner
// and the rank asked) on every rank alike; so is a task whose remote tiles exceed landing_bytes,
// and bad alloc_distributed arguments. The worker stays usable: a later run succeeds.
int dist_refused() {
  pto::l4::WorkerOptions o = options(30000);
  o.landing_bytes = 8192;
  pto::l4::Worker w(o);
  Checker c;
  c.rank = w.rank();
  const int R = w.size();
  auto expect_error = [&](pto_status code, const std::vector<std::string> &parts,
                          const std::function<void()> &f) {
    try {
      f();
      c.expect(false, "no error, expected one naming '" + parts[0] + "'");
    } catch (const pto::Error &e) {
      bool ok = e.code() == code;
      for (const std::string &p : parts) ok = ok && contains(e.what(), p);
      c.expect(ok, std::string("expected ") + pto_status_name(code) + " naming '" + parts[0] + "'..., got " +
                       e.name() + ": " + e.what());
    }
  };
  expect_error(PTO_INVALID_ARGUMENT, {"kBlockCyclic needs tile_bytes > 0"},
               [&] { w.alloc_distributed(4096, "z", Distribution::kBlockCyclic); });
  expect_error(PTO_INVALID_ARGUMENT, {"tile_bytes = 64 with kBlock"},
               [&] { w.alloc_distributed(4096, "z", Distribution::kBlock, 64); });
  expect_error(PTO_INVALID_ARGUMENT, {"more than heap_bytes", "raise heap_bytes"},
               [&] { w.alloc_distributed(1ull << 30, "huge", Distribution::kBlock); });
  auto *C = static_cast<int64_t *>(w.alloc_distributed(4 * 4096, "C", Distribution::kBlockCyclic, 4096));
  auto *big = static_cast<char *>(w.alloc_distributed(4 * 16384, "big", Distribution::kBlockCyclic, 16384));
  auto *out = static_cast<int64_t *>(w.alloc(8, "out"));
  const int other = R > 1 ? 1 : 0;  // tile 1's owner (rank 1 % R)
  auto ok = [](pto::SubContext &) {};
  if (R > 1) {
    expect_error(PTO_INVALID_ARGUMENT,
                 {"L4 task 0 'misplaced'",
                  "writes 'C' tile 1 (bytes 4096..8191), owned by rank 1, but asks for rank 0"},
                 [&] {
                   w.run([&](Orchestrator &orch) {
                     orch.submit_sub(ok, ranges({{C + 512, 4096, PTO_DIR_OUTPUT}}), 0, "misplaced");
                   });
                 });
    expect_error(
        PTO_INVALID_ARGUMENT,
        {"L4 task 0 'straddles' (rank any) writes 'C' tile 0 (bytes 0..4095), owned by rank 0, and "
         "'C' tile 1 (bytes 4096..8191), owned by rank 1",
         "one owner only"},
        [&] {
          w.run([&](Orchestrator &orch) {
            orch.submit_sub(ok, ranges({{C + 256, 4096, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank, "straddles");
          });
        });
    // A remote tile of 16 KiB does not fit in landing_bytes = 8 KiB.
    expect_error(PTO_INVALID_ARGUMENT,
                 {"L4 task 0 'greedy' on rank 0 reads 1 remote tile(s) of 16384 bytes",
                  "'big' tile 1 (bytes 16384..32767)", "landing_bytes = 8192"},
                 [&] {
                   w.run([&](Orchestrator &orch) {
                     orch.submit_sub(ok,
                                     ranges({{big + 16384, 16384, PTO_DIR_INPUT}, {out, 8, PTO_DIR_OUTPUT}}),
                                     0, "greedy");
                   });
                 });
  }
  // Still usable: tile 1 written on its owner, read on rank 0.
  try {
    w.run(
        [&](Orchestrator &orch) {
          orch.submit_sub([=](pto::SubContext &) { fill(C + 512, 42, 512); },
                          ranges({{C + 512, 4096, PTO_DIR_OUTPUT}}), other, "tile 1 on its owner");
          orch.submit_sub([=](pto::SubContext &) { *out = C[512] + C[1023]; },
                          ranges({{C + 512, 4096, PTO_DIR_INPUT}, {out, 8, PTO_DIR_OUTPUT}}), 0, "reader");
          orch.fetch(out, 0);
        },
        60000);
    if (w.rank() == 0)
      c.expect(*out == 84, "the later run computed " + std::to_string(*out) + ", expected 84");
  } catch (const pto::Error &err) {
    c.expect(false, std::string("the run after the refusals: ") + err.name() + ": " + err.what());
  }
  w.close();
  return c.report();
}

// Eviction: landing_bytes holds 2 tiles of 8 KiB. Every rank sums every tile of A (32 per rank,
// kBlockCyclic) one task per tile, each slowed a little, so each rank receives far more tiles
// than it may hold: older landed tiles are evicted (an L3 task ordered after their readers and
// the sends that forwarded them to other ranks, whose pages it releases) while the sums must
// still be exact. Afterwards the remote tiles backed by memory on each rank fit in landing_bytes.
int dist_evict() {
  pto::l4::WorkerOptions o = options(30000);
  constexpr uint64_t kTile = 8192;
  o.landing_bytes = 2 * kTile;
  pto::l4::Worker w(o);
  Checker c;
  c.rank = w.rank();
  const int R = w.size();
  const uint64_t tiles = 8ull * static_cast<uint64_t>(R), per = kTile / 8;
  auto *A =
      static_cast<int64_t *>(w.alloc_distributed(tiles * kTile, "A", Distribution::kBlockCyclic, kTile));
  std::vector<int64_t *> sums;
  for (int r = 0; r < R; ++r) sums.push_back(static_cast<int64_t *>(w.alloc(8, "sum" + std::to_string(r))));
  try {
    w.run(
        [&](Orchestrator &orch) {
          for (uint64_t t = 0; t < tiles; ++t)
            orch.submit_sub(
                [=](pto::SubContext &) {
                  for (uint64_t i = 0; i < per; ++i) A[t * per + i] = static_cast<int64_t>(t * per + i);
                },
                ranges({{A + t * per, kTile, PTO_DIR_OUTPUT}}), pto::l4::kAnyRank, "init");
          for (int r = 0; r < R; ++r) {
            int64_t *sum = sums[static_cast<size_t>(r)];
            orch.submit_sub([=](pto::SubContext &) { *sum = 0; }, ranges({{sum, 8, PTO_DIR_OUTPUT}}), r,
                            "zero");
            for (uint64_t k = 0; k < tiles; ++k) {
              const uint64_t t = (k + static_cast<uint64_t>(r) * 3) % tiles;  // each rank its own order
              orch.submit_sub(
                  [=](pto::SubContext &) {
                    sleep_ms(1);  // an eviction not ordered after this read would zero the tile under it
                    for (uint64_t i = 0; i < per; ++i) *sum += A[t * per + i];
                  },
                  ranges({{A + t * per, kTile, PTO_DIR_INPUT}, {sum, 8, PTO_DIR_INOUT}}), r, "add tile");
            }
          }
        },
        120000);
    const auto total = static_cast<int64_t>(tiles * per);
    const int64_t want = total * (total - 1) / 2;
    const int64_t got = *sums[static_cast<size_t>(w.rank())];
    c.expect(got == want, "rank " + std::to_string(w.rank()) + " summed " + std::to_string(got) +
                              ", expected " + std::to_string(want));
    const uint64_t ev = w.transfers().evictions;
    if (R > 1) c.expect(ev >= tiles - tiles / R - 2, "only " + std::to_string(ev) + " eviction(s)");
    uint64_t remote = 0;
    for (uint64_t t = 0; t < tiles; ++t)
      if (static_cast<int>(t % R) != w.rank()) remote += resident_bytes(A + t * per, kTile);
    c.expect(remote <= o.landing_bytes, std::to_string(remote) +
                                            " bytes of remote tiles still backed, more than "
                                            "landing_bytes");
    // Pinned tiles are outside the bound until their owner writes them: A gathered on rank 0
    // stays whole there; once the owners rewrite A, the next receive on rank 0 evicts the
    // unpinned copies until the remote tiles fit in landing_bytes again.
    w.run([&](Orchestrator &orch) { orch.fetch(A, 0); }, 60000);
    uint64_t pinned = 0;
    for (uint64_t t = 0; t < tiles; ++t)
      if (static_cast<int>(t % R) != w.rank()) pinned += resident_bytes(A + t * per, kTile);
    if (w.rank() == 0)
      c.expect(pinned == (tiles - tiles / R) * kTile, "rank 0 backs " + std::to_string(pinned) +
                                                          " bytes of remote tiles after the gather");
    w.run(
        [&](Orchestrator &orch) {
          for (uint64_t t = 0; t < tiles; ++t)
            orch.submit_sub([=](pto::SubContext &) { A[t * per] = -1; },
                            ranges({{A + t * per, kTile, PTO_DIR_INOUT}}), pto::l4::kAnyRank, "rewrite");
          int64_t *sum = sums[0];
          const uint64_t t = tiles - 1;  // a remote tile of rank 0 (when R > 1)
          orch.submit_sub([=](pto::SubContext &) { *sum = A[t * per] + A[t * per + 1]; },
                          ranges({{A + t * per, kTile, PTO_DIR_INPUT}, {sum, 8, PTO_DIR_OUTPUT}}), 0, "read");
        },
        60000);
    remote = 0;
    for (uint64_t t = 0; t < tiles; ++t)
      if (static_cast<int>(t % R) != w.rank()) remote += resident_bytes(A + t * per, kTile);
    if (w.rank() == 0) {
      c.expect(*sums[0] == static_cast<int64_t>((tiles - 1) * per + 1) - 1,
               "the read after the rewrite saw " + std::to_string(*sums[0]));
      c.expect(remote <= o.landing_bytes, "after the rewrite rank 0 backs " + std::to_string(remote) +
                                              " bytes of remote tiles, more than landing_bytes");
    }
    char note[96];
    std::snprintf(note, sizeof note, "%llu evictions, %llu bytes of remote tiles backed",
                  static_cast<unsigned long long>(ev), static_cast<unsigned long long>(remote));
    w.close();
    return c.report(note);
  } catch (const pto::Error &err) {
    c.expect(false, std::string(err.name()) + ": " + err.what());
  }
  w.close();
  return c.report();
}

// The ranks diverge on which tile of a distributed array moves: rank 0 reads tile 1 of D, rank 1
// believes rank 0 reads tile 3 (both rank 1's, of the same size, in the same transfer). Only
// the tile index in the header tells them apart: rank 0's receive must fail naming the
// divergence, and the reader must not run on the wrong tile.
int dist_diverge() {
  pto::l4::Worker w(options(30000));
  Checker c;
  c.rank = w.rank();
  auto *D = static_cast<char *>(w.alloc_distributed(4 * 4096, "D", Distribution::kBlockCyclic, 4096));
  std::atomic<bool> reader_ran{false};
  std::string error;
  try {
    w.run(
        [&](Orchestrator &o) {
          const uint64_t tile = w.rank() == 0 ? 1 : 3;  // the divergence
          o.submit_sub([&](pto::SubContext &) { reader_ran = true; },
                       ranges({{D + tile * 4096, 4096, PTO_DIR_INPUT}}), 0, "reader");
        },
        60000);
  } catch (const pto::Error &err) {
    error = std::string(err.name()) + ": " + err.what();
  }
  if (w.rank() == 0) {
    const std::string want =
        "transfer 0 of 'D' tile 1 (bytes 4096..8191) (for L4 task 0 'reader') from rank 1 to rank 0: "
        "rank 1 sent transfer 0 of array 0 tile 3 (4096 bytes) instead";
    c.expect(contains(error, want) && contains(error, "diverged"),
             "rank 0 should fail naming the tile rank 1 sent, got '" + error + "'");
    c.expect(!reader_ran.load(), "the reader ran on the wrong tile");
  }
  w.close();
  return c.report(w.rank() == 0 ? error : "");
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
    if (what == "dist_results") return dist_results();
    if (what == "dist_memory") return dist_memory();
    if (what == "dist_refused") return dist_refused();
    if (what == "dist_evict") return dist_evict();
    if (what == "dist_diverge") return dist_diverge();
  } catch (const pto::Error &e) {
    std::printf("rank ?: FAILED %s: %s\n", e.name(), e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: %s ordering|poison|killed [peer_timeout_ms]|bad_input|diverge|goodbye|comm|after|"
               "dist_results|dist_memory|dist_refused|dist_evict|dist_diverge\n",
               argv[0]);
  return 2;
}
