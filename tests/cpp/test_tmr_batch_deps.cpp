// tests/cpp/test_tmr_batch_deps.cpp — batch_deps on the tensormap runtime: random programs give
// the same buffers with and without it, and equal sequential execution; the trace says which
// edges the batch map found.
//
// Contract under test (docs/design/architecture.md, "Schedule primitives"): dependency inference over a
// local batch map first, then the TensorMap, orders every read after write, write after write
// and write after read exactly as the TensorMap alone does. The programs are made to batch:
// runs of one kernel, the same views again (and views inside them), stream changes and scopes
// (every one a flush point), over strided and overlapping views; small rings make the
// orchestrator wait (another flush point) constantly.
#include <gtest/gtest.h>

#include <bitset>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_kernels.h"
#include "common/tmr_program.h"
#include "common/trace_json.h"

namespace {

struct Case {
  const char *name;
  const char *platform;
  int block_dim, threads;
  int64_t tasks;
  uint32_t window, deps, tmap;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.name;
}

class TmrBatchDeps : public ::testing::TestWithParam<Case> {};

TEST_P(TmrBatchDeps, EveryBatchSizeGivesTheBuffersOfSequentialExecution) {
  const Case c = GetParam();
  pto::ChipCallable callable = pto_test::make_tmr_program_callable(c.platform);
  pto::ChipWorker w;
  w.init(c.platform, "tensormap_and_ringbuffer");
  w.set_device(1);
  for (uint64_t seed : {21u, 22u, 23u}) {
    const pto_test::TmrProgram prog = pto_test::make_tmr_program(c.tasks, seed * 7919, /*batchy=*/true);
    const pto_test::TmrData init(prog, seed);
    const auto expected = pto_test::run_sequential(prog, init.bufs, init.consts);

    std::vector<std::vector<int32_t>> unbatched;
    for (uint32_t batch : {0u, 1u, 4u, 32u}) {
      pto_test::TmrData data = init;
      pto::ChipStorageTaskArgs args = data.args();
      pto::ChipCallConfig cfg;
      cfg.block_dim = c.block_dim;
      cfg.aicpu_thread_num = c.threads;
      cfg.task_window = c.window;
      cfg.dep_pool_entries = c.deps;
      cfg.tensormap_entries = c.tmap;
      cfg.heap_bytes = 8192;
      cfg.batch_deps = batch;
      cfg.enable_profiling = batch == 4 && seed == 21;  // the trace's path: retired producers seen too
      const pto::RunStats s = w.run(callable, args, cfg);
      ASSERT_EQ(s.tasks_run, static_cast<uint64_t>(prog.tasks)) << "batch_deps=" << batch;
      std::printf(
          "[ batch    ] seed %llu batch_deps %u: %llu flushes, %llu look-ups skipped, %llu not filed\n",
          static_cast<unsigned long long>(seed), batch, static_cast<unsigned long long>(s.batch_flushes),
          static_cast<unsigned long long>(s.batch_local_hits),
          static_cast<unsigned long long>(s.batch_unfiled));
      if (batch == 0) {
        EXPECT_EQ(s.batch_flushes + s.batch_local_hits + s.batch_unfiled, 0u) << "off means off";
      } else {
        EXPECT_GT(s.batch_flushes, 0u);
        if (batch > 1) {
          EXPECT_GT(s.batch_local_hits, 0u) << "the program reuses views inside one kernel's run";
        }
      }
      pto_test::expect_same_buffers(data.bufs, expected,
                                    "seed " + std::to_string(seed) + ", batch_deps " + std::to_string(batch));
      if (batch == 0) unbatched = data.bufs;
      EXPECT_EQ(data.bufs, unbatched) << "batch_deps=" << batch << " differs from batch_deps=0";
    }
  }
}

// The traced edges of a run, from the trace JSON: (from, to, kind, source) with source "" for an
// explicit edge.
struct TracedEdge {
  int64_t from, to;
  std::string kind, source;
};
std::vector<TracedEdge> traced_edges(const std::string &json) {
  const size_t begin = json.find("\"edges\": [");
  const size_t end = json.find("\"aicpu\": [", begin);
  EXPECT_NE(begin, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  const std::string part = json.substr(begin, end - begin);
  std::vector<TracedEdge> out;
  for (size_t at = part.find("{\"from\": "); at != std::string::npos; at = part.find("{\"from\": ", at + 1)) {
    const std::string kind = pto_test::json_string_field(part, at, "kind"),
                      source = pto_test::json_string_field(part, at, "source");
    out.push_back(TracedEdge{std::stoll(pto_test::json_field(part, at, "from")),
                             std::stoll(pto_test::json_field(part, at, "to")), kind, source});
    EXPECT_EQ(!source.empty(), kind != "explicit") << "an inferred edge, and only one, has a source";
  }
  return out;
}

// batch_deps' edges are marked in the trace. With batch_deps=4 some edges come from the batch
// map; with 0 none do; and the batched run's edges order every pair the unbatched run's edges
// order — checked as reachability (u before v through the batched edges, transitively), since
// the batch map finds a covering writer where the TensorMap lists every older access.
// Rings big enough that no TensorMap entry is reclaimed: then both traces hold every edge.
TEST(TmrBatchDepsTrace, BatchFoundEdgesAreMarkedAndOrderEveryPairTheTensorMapOrders) {
  constexpr int64_t kTasks = 600;
  pto::ChipCallable callable = pto_test::make_tmr_program_callable("a2a3sim");
  pto::ChipWorker w;
  w.init("a2a3sim", "tensormap_and_ringbuffer");
  w.set_device(1);
  const pto_test::TmrProgram prog = pto_test::make_tmr_program(kTasks, 31 * 7919, /*batchy=*/true);
  const pto_test::TmrData init(prog, 31);
  std::vector<TracedEdge> by_batch[2];
  for (int on = 0; on < 2; ++on) {
    pto_test::TmrData data = init;
    pto::ChipStorageTaskArgs args = data.args();
    pto::ChipCallConfig cfg;
    cfg.block_dim = 4;
    cfg.aicpu_thread_num = 3;
    cfg.task_window = 1024;
    cfg.tensormap_entries = 16384;
    cfg.batch_deps = on ? 4 : 0;
    cfg.enable_profiling = true;
    const pto::RunStats s = w.run(callable, args, cfg);
    ASSERT_EQ(s.tasks_run, static_cast<uint64_t>(kTasks));
    const std::string json = w.last_trace_json();
    ASSERT_NE(json.find("\"dropped_edges\": 0,"), std::string::npos) << "the trace must hold every edge";
    by_batch[on] = traced_edges(json);
    ASSERT_FALSE(by_batch[on].empty());
    size_t from_batch = 0;
    std::set<std::tuple<int64_t, int64_t, std::string>> seen;
    for (const TracedEdge &e : by_batch[on]) {
      from_batch += e.source == "batch" ? 1 : 0;
      EXPECT_TRUE(seen.emplace(e.from, e.to, e.kind).second)
          << e.from << " -> " << e.to << " " << e.kind
          << " is listed twice: found both ways, it is traced once";
    }
    std::printf("[ trace    ] batch_deps %u: %zu edges, %zu found by the batch map, %llu look-ups skipped\n",
                cfg.batch_deps, by_batch[on].size(), from_batch,
                static_cast<unsigned long long>(s.batch_local_hits));
    if (on) {
      EXPECT_GT(s.batch_local_hits, 0u);
      EXPECT_GT(from_batch, 0u) << "look-ups were skipped, so the batch map found edges";
    } else {
      EXPECT_EQ(from_batch, 0u) << "no batch, no batch edges";
    }
  }
  // reach[u]: the tasks after u through the batched run's edges (ids are submit order, and an
  // edge goes from an older task to a newer one).
  std::vector<std::bitset<kTasks>> reach(kTasks);
  std::vector<std::vector<int64_t>> succ(kTasks);
  for (const TracedEdge &e : by_batch[1]) {
    ASSERT_LT(e.from, e.to);
    ASSERT_LT(e.to, kTasks);
    succ[e.from].push_back(e.to);
  }
  for (int64_t u = kTasks - 1; u >= 0; --u) {
    for (int64_t v : succ[u]) reach[u] |= reach[v], reach[u].set(v);
  }
  size_t unordered = 0;
  std::string first;
  for (const TracedEdge &e : by_batch[0]) {
    ASSERT_LT(e.to, kTasks);
    if (reach[e.from].test(e.to)) continue;
    if (unordered++ == 0) first = std::to_string(e.from) + " -> " + std::to_string(e.to);
  }
  EXPECT_EQ(unordered, 0u) << "of " << by_batch[0].size() << " edges without batch_deps, batch_deps=4 leaves "
                           << unordered << " unordered, the first " << first;
}

// One thread: the orchestrator schedules too (its waits run scheduling passes). Tiny pools: the
// TensorMap and the dependency pool make it wait — and so flush — on most submits.
INSTANTIATE_TEST_SUITE_P(
    Configs, TmrBatchDeps,
    ::testing::Values(Case{"one_thread_tiny_window", "a2a3sim", 1, 1, 1500, 4, 16, 24},
                      Case{"two_threads_tiny_pools", "a2a3sim", 2, 2, 2000, 64, 8, 12},
                      Case{"four_threads_default_rings", "a2a3sim", 24, 4, 4000, 1024, 16384, 16384},
                      Case{"a5_five_threads_small_rings", "a5sim", 3, 5, 2000, 16, 64, 64}),
    [](const ::testing::TestParamInfo<Case> &i) { return std::string(i.param.name); });

}  // namespace
