// tests/cpp/test_l4_domain.cpp — communication domains across hosts (L4), each scenario a ctest under mpirun.
//
// Contract under test (docs/design/comm_domains.md, "Across hosts"): a domain over chips of
// several ranks gives every member a window its peers reach with PTO-ISA's comm instructions;
// a peer on another rank is reached through MPI one-sided operations, so examples/allreduce's
// ring kernel (TPUT + TNOTIFY to its right neighbour, TWAIT on its own flags) gives the same
// bits across ranks as on one host; the windows of a run are freed at the next submit, and a
// new domain works there; bad input is INVALID_ARGUMENT before anything is allocated (so every
// rank stays in step), process mode NOT_SUPPORTED.
// Usage: mpirun -n 2 --oversubscribe test_l4_domain <ring|bad_input|late>. Each rank prints
// "rank R: OK ..." or "rank R: FAILED ..." and exits 1 on FAILED.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../common/rank_checker.h"
#include "../common/tile_toolchain.h"
#include "pto/error.h"
#include "pto/kernel_compiler.h"
#include "pto/l4.h"

namespace {

using Checker = pto_test::RankChecker;
using pto_test::contains;

pto::l4::WorkerOptions options(int chips) {
  pto::l4::WorkerOptions o;
  o.num_sub_workers = 1;
  o.heap_bytes = 64ull << 20;
  o.runtime = "host_build_graph";
  o.device_ids.clear();
  for (int c = 0; c < chips; ++c) o.device_ids.push_back(c);
  return o;
}

pto::ChipCallable ring_callable() {
  const std::string dir = std::string(PTO_TEST_EXAMPLES_DIR) + "/allreduce";
  pto::CompileOptions co;
  co.pto_isa_root = pto_test::isa_root();
  const pto::KernelCompiler kc("a2a3sim", co);
  pto::ChipCallable c(kc.compile_orchestration("host_build_graph", dir + "/orchestration.cpp"));
  c.add_kernel(0, PTO_CORE_AIV, kc.compile_incore(dir + "/kernels/allreduce_ring.cpp", PTO_CORE_AIV));
  return c;
}

// What the ring kernel leaves everywhere: chunk k = in_k + in_(k+1) + ... (members mod), in that
// order of float additions (examples/allreduce/main.py, expected()).
std::vector<float> ring_sum(const std::vector<float *> &in, uint64_t n) {
  const uint64_t r = in.size(), chunk = n / r;
  std::vector<float> out(n);
  for (uint64_t k = 0; k < r; ++k)
    for (uint64_t i = k * chunk; i < (k + 1) * chunk; ++i) {
      float acc = in[k][i];
      for (uint64_t j = 1; j < r; ++j) acc = in[(k + j) % r][i] + acc;
      out[i] = acc;
    }
  return out;
}

// One run: a domain over every chip of every rank (rank by rank, so the ring crosses ranks),
// `epochs` all-reduces in it. Returns the number of wrong floats on this rank's members.
uint64_t ring_run(pto::l4::Worker &w, const pto::ChipCallable &ring, int chips, uint64_t n, int epochs,
                  uint32_t seed) {
  std::vector<pto::l4::DomainMember> members;
  for (int r = 0; r < w.size(); ++r)
    for (int c = 0; c < chips; ++c) members.push_back({r, c});
  const auto m = static_cast<uint64_t>(members.size());
  std::mt19937 gen(seed);  // the same on every rank: the replicated inputs
  std::normal_distribution<float> normal;
  std::vector<float *> in;
  for (uint64_t i = 0; i < m; ++i) {
    in.push_back(static_cast<float *>(w.alloc(n * 4, "in" + std::to_string(i))));
    for (uint64_t j = 0; j < n; ++j) in.back()[j] = normal(gen);
  }
  std::vector<std::vector<float *>> out(static_cast<size_t>(epochs));
  for (int e = 0; e < epochs; ++e)
    for (uint64_t i = 0; i < m; ++i)
      out[static_cast<size_t>(e)].push_back(static_cast<float *>(
          w.alloc(n * 4, "out" + std::to_string(e) + "_" + std::to_string(i), members[i].rank)));
  const uint64_t slots = 2 * (m - 1);
  const std::vector<pto::CommBufferSpec> buffers = {
      {"data", PTO_DTYPE_F32, slots * (n / m), slots * (n / m) * 4},
      {"flags", PTO_DTYPE_I32, slots + 1, (slots + 1) * 4}};
  pto::ChipCallConfig cfg;
  cfg.block_dim = 1;
  cfg.aicpu_thread_num = 1;
  w.run([&](pto::l4::Orchestrator &o) {
    pto::l4::GlobalCommDomain d =
        o.allocate_domain("ring", members, (slots * (n / m) + slots + 1) * 4, buffers);
    for (int e = 1; e <= epochs; ++e) {
      for (uint64_t i = 0; i < m; ++i) {
        const pto::ChipDomainContext &ctx = d(members[i].rank, members[i].chip);
        pto::ChipStorageTaskArgs a;
        a.add_tensor(in[i], n * 4, PTO_DTYPE_F32, {static_cast<int64_t>(n)}, PTO_DIR_INPUT);
        a.add_tensor(out[static_cast<size_t>(e - 1)][i], n * 4, PTO_DTYPE_F32, {static_cast<int64_t>(n)},
                     PTO_DIR_OUTPUT);
        ctx.buffer("data").add_to(a, PTO_DIR_INOUT);
        ctx.buffer("flags").add_to(a, PTO_DIR_INOUT);
        a.add_scalar(static_cast<int64_t>(n));
        a.add_scalar(static_cast<int64_t>(ctx.device_ctx));
        a.add_scalar(e);
        o.submit_chip(ring, a, cfg, members[i].rank, members[i].chip, "ring" + std::to_string(e));
      }
    }
  });
  const std::vector<float> want = ring_sum(in, n);
  uint64_t wrong = 0;
  for (int e = 0; e < epochs; ++e)
    for (uint64_t i = 0; i < m; ++i) {
      if (members[i].rank != w.rank()) continue;
      for (uint64_t j = 0; j < n; ++j) wrong += out[static_cast<size_t>(e)][i][j] != want[j];
    }
  return wrong;
}

// Two runs, each with its own domain (the first one's windows are freed by the second submit),
// two ring all-reduces each, on 2 chips per rank: members on the same rank talk through memory,
// neighbours on other ranks through MPI.
int ring() {
  const std::string missing = pto_test::tile_unavailable();
  pto::l4::Worker w(options(2));
  Checker c;
  c.rank = w.rank();
  if (!missing.empty()) {
    c.expect(!pto_test::tile_required(), "PTO_REQUIRE_TILE=1, but " + missing);
    return c.report("skipped: " + missing);
  }
  const pto::ChipCallable ring = ring_callable();
  for (int run = 0; run < 2; ++run) {
    const uint64_t n = 4096u * static_cast<uint64_t>(w.size());
    const uint64_t wrong = ring_run(w, ring, 2, n, 2, 7u + static_cast<uint32_t>(run));
    c.expect(wrong == 0, "run " + std::to_string(run) + ": " + std::to_string(wrong) + " floats differ");
  }
  w.close();
  return c.report("2 runs of 2 ring all-reduces, 2 chips per rank");
}

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const pto::Error &e) {
    return std::string(e.name()) + ": " + e.what();
  }
  return "";
}

int bad_input() {
  Checker c;
  {
    pto::l4::Worker w(options(2));
    c.rank = w.rank();
    const std::vector<pto::CommBufferSpec> one = {{"x", PTO_DTYPE_F32, 16, 64}};
    std::vector<std::string> errors;
    pto::l4::GlobalCommDomain kept;
    w.run([&](pto::l4::Orchestrator &o) {
      errors.push_back(error_of([&] { o.allocate_domain("d", {}, 64, one); }));
      errors.push_back(error_of([&] { o.allocate_domain("d", {{w.size(), 0}}, 64, one); }));
      errors.push_back(error_of([&] { o.allocate_domain("d", {{0, 2}}, 64, one); }));
      errors.push_back(error_of([&] { o.allocate_domain("d", {{0, 1}, {0, 1}}, 64, one); }));
      errors.push_back(error_of([&] { o.allocate_domain("d", {{0, 0}, {1, 0}}, 32, one); }));
      // After every refusal, a good domain: every rank is still in step (the refusals made no
      // collective call).
      kept = o.allocate_domain("good", {{0, 0}, {1, 1}}, 64, one);
      errors.push_back(error_of([&] { kept(1, 0); }));
    });
    const char *const want[] = {"members has 0 chips",           "rank is not one of the job's",
                                "chip is not a chip index",      "a member twice",
                                "window_size = 32 is too small", "is not one of its members"};
    for (size_t i = 0; i < errors.size(); ++i) {
      c.expect(
          contains(errors[i], "INVALID_ARGUMENT") && contains(errors[i], want[i]),
          "case " + std::to_string(i) + ": want INVALID_ARGUMENT '" + want[i] + "', got '" + errors[i] + "'");
    }
    c.expect(kept.is_local(0, 0) == (w.rank() == 0) && kept.is_local(1, 1) == (w.rank() == 1),
             "is_local should say which member is this rank's");
    c.expect(kept(0, 0).buffer("x").nbytes == 64, "a stand-in context should still name the buffers");
    w.close();
  }
#if !defined(__SANITIZE_THREAD__)
  // Not under TSan: an L4 worker forks its chip zygote after MPI and the progress thread have
  // started, and TSan ends a child of a multithreaded process once that child starts threads
  // (its die_after_fork), as every chip process does.
  {
    pto::l4::WorkerOptions o = options(1);
    o.mode = pto::ChipMode::kProcess;
    pto::l4::Worker w(o);
    std::string error;
    w.run([&](pto::l4::Orchestrator &orch) {
      error = error_of([&] { orch.allocate_domain("p", {{0, 0}}, 64); });
    });
    c.expect(contains(error, "NOT_SUPPORTED") && contains(error, "thread mode"),
             "process mode should be NOT_SUPPORTED naming thread mode, got '" + error + "'");
    w.close();
  }
#endif
  return c.report();
}

// Rank 1 comes to free the first run's domain 3 s late, past peer_timeout (1 s): both ranks
// give up freeing it (RUN_TIMEOUT naming the domain) instead of waiting in MPI_Win_free, refuse
// new domains across hosts from then on (NOT_SUPPORTED saying why), and still run tasks.
int late() {
  pto::l4::WorkerOptions o = options(1);
  o.peer_timeout_ms = 1000;
  pto::l4::Worker w(o);
  Checker c;
  c.rank = w.rank();
  w.run([&](pto::l4::Orchestrator &orch) { orch.allocate_domain("early", {{0, 0}, {1, 0}}, 64); });
  if (w.rank() == 1) std::this_thread::sleep_for(std::chrono::seconds(3));
  const auto t0 = std::chrono::steady_clock::now();
  const std::string freeing = error_of([&] { w.run([](pto::l4::Orchestrator &) {}); });
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.expect(contains(freeing, "RUN_TIMEOUT") && contains(freeing, "domain 'early'") &&
               contains(freeing, "peer_timeout"),
           "freeing the domain should fail with RUN_TIMEOUT naming it, got '" + freeing + "'");
  c.expect(waited < 10, "gave up after " + std::to_string(waited) + " s");
  std::string again;
  bool ran = false;
  w.run([&](pto::l4::Orchestrator &orch) {
    again = error_of([&] { orch.allocate_domain("again", {{0, 0}, {1, 0}}, 64); });
    orch.submit_sub([&](pto::SubContext &) { ran = true; }, {}, w.rank(), "still works");
  });
  c.expect(contains(again, "NOT_SUPPORTED") && contains(again, "are off for this worker"),
           "a new domain should be refused saying why, got '" + again + "'");
  c.expect(ran, "the worker should still run tasks");
  w.close();
  return c.report();
}

}  // namespace

int main(int argc, char **argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  try {
    if (what == "ring") return ring();
    if (what == "bad_input") return bad_input();
    if (what == "late") return late();
  } catch (const pto::Error &e) {
    std::printf("rank ?: FAILED %s: %s\n", e.name(), e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s ring|bad_input|late\n", argv[0]);
  return 2;
}
