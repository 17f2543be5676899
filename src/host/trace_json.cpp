// src/host/trace_json.cpp — JSON export of a run's trace (schema in docs/guide/profiling.md).
#include "host/trace_json.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <tuple>

#include "pto/schedule_config.h"
#include "pto_platform/pmu.h"

namespace pto {
namespace {

// By TaskRecord::core_type; 4 is graph::kPoolInline, a dependency-only task.
const char *kShapeNames[] = {"AIC", "AIV", "MIX", "ANY", "DUMMY"};
const char *kStatusNames[] = {"", "done", "failed", "skipped", "retired"};
const char *kEdgeNames[] = {"raw", "waw", "war", "explicit"};

// KernelCompiler names binaries "<source name>-<key>-<headers digest>.so", each hash 16 hex
// digits: show the source name.
std::string kernel_name(const std::string &path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".so") == 0) base.resize(base.size() - 3);
  for (;;) {
    const size_t dash = base.find_last_of('-');
    if (dash == std::string::npos || dash == 0 || base.size() - dash != 17 ||
        base.find_first_not_of("0123456789abcdef", dash + 1) != std::string::npos) {
      return base;
    }
    base.resize(dash);
  }
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string rel(uint64_t t, uint64_t base) {
  return std::to_string(t >= base ? t - base : 0);
}

// Sim timing mode: what priced a task's kernel (docs/guide/profiling.md, "cost").
std::string price_json(const KernelPrice &p) {
  std::string j = std::string("{\"source\": \"") + pto_price_source_name(p.source) + "\"";
  if (p.source == PTO_PRICE_ISA_MODEL) {
    static const char *kPipes[kPricePipes] = {"SCALAR", "MTE2", "MTE1", "CUBE", "FIXP", "VEC", "MTE3"};
    j += ", \"cycles\": " + std::to_string(p.cycles);
    if (p.stuck) j += ", \"stuck\": " + std::to_string(p.stuck);
    j += ", \"pipes_us\": {";
    for (uint32_t i = 0; i < kPricePipes; ++i) {
      char us[32];
      snprintf(us, sizeof us, "%.3f", p.pipe_ns[i] / 1e3);
      j += std::string(i ? ", " : "") + "\"" + kPipes[i] + "\": " + us;
    }
    j += "}";
  }
  return j + "}";
}

}  // namespace

std::string pmu_note(const TaskTrace *tasks, const PmuTrace *pmu, size_t num_tasks) {
  const uint32_t all = kPmuCycles | kPmuInstructions | kPmuCacheMisses;
  uint32_t valid = all;
  int32_t error = 0;
  for (size_t i = 0; i < num_tasks; ++i) {
    if (tasks[i].status == kTraceNone || tasks[i].status == kTraceSkipped || tasks[i].status == kTraceRetired)
      continue;
    valid &= pmu[i].valid;
    if (pmu[i].error) error = pmu[i].error;
  }
  if (valid == all) return "";
  const std::string missing =
      (valid & kPmuInstructions) ? "cache misses were" : "instructions and cache misses were";
  return missing + " not counted: perf_event_open refused hardware counters (" +
         (error ? std::string(strerror(error)) : std::string("unknown reason")) +
         "; virtual machines often lack them, and kernel.perf_event_paranoid above 2 forbids them); "
         "cycles come from the timestamp counter";
}

std::string trace_to_json(const TraceMeta &meta, const RunInputs &in, const ChipGeometry &g,
                          const TaskTrace *tasks, size_t num_tasks, const std::vector<EdgeTrace> &edges) {
  const uint64_t t0 = meta.launch_ns;
  const TickClock &clk = meta.clock;
  const ClusterLayout layout = g.layout();
  const auto block_dim = static_cast<uint32_t>(in.cfg.block_dim);
  std::string j;
  j.reserve(256 + num_tasks * 160 + edges.size() * 48);
  j += "{\"version\": 1, \"platform\": " + quoted(g.platform) + ", \"runtime\": " + quoted(meta.runtime) +
       ", \"block_dim\": " + std::to_string(block_dim) +
       ", \"aicpu_threads\": " + std::to_string(meta.aicpu_threads) +
       ", \"clock\": \"ns\", \"dropped_tasks\": " + std::to_string(meta.dropped_tasks) +
       ", \"dropped_edges\": " + std::to_string(meta.dropped_edges) + ",\n\"cores\": [";
  // The run's cores, cluster by cluster (core/cluster_layout.h).
  for (uint32_t c = 0; c < block_dim; ++c) {
    for (uint32_t k = 0; k < layout.cores_per_cluster(); ++k) {
      const uint32_t slot = layout.slot(c, k);
      const auto type = static_cast<pto_core_type>(layout.place(slot).core_type);
      j += std::string(c || k ? ", " : "") + "{\"slot\": " + std::to_string(slot) + ", \"type\": \"" +
           pto_core_type_name(type) + "\", \"cluster\": " + std::to_string(c) + "}";
    }
  }
  j += "],\n\"tasks\": [";
  // AICPU events, gathered per thread while the tasks are written.
  std::vector<std::vector<std::tuple<uint64_t, int, int64_t>>> events(meta.aicpu_threads);
  bool first = true;
  for (size_t i = 0; i < num_tasks; ++i) {
    const TaskTrace &t = tasks[i];
    if (t.status == kTraceNone) continue;
    const char *shape = t.shape < 5 ? kShapeNames[t.shape] : "AIV";
    std::string cores = "[" + std::to_string(t.core) + "]";
    if (t.shape == PTO_CORE_MIX && t.core >= 0) {  // t.core: the cluster's first AIC slot
      const uint32_t c = layout.place(static_cast<uint32_t>(t.core)).cluster;
      cores = "[";
      for (uint32_t k = 0; k < layout.cores_per_cluster(); ++k)
        cores += (k ? ", " : "") + std::to_string(layout.slot(c, k));
      cores += "]";
    }
    const bool ran = t.status != kTraceSkipped && t.status != kTraceRetired;  // took a core
    j += std::string(first ? "" : ",") + "\n{\"id\": " + std::to_string(t.id) +
         ", \"func\": " + std::to_string(t.func) + ", \"shape\": \"" + shape +
         "\", \"cores\": " + (ran ? cores : "[]") +
         ", \"start\": " + (ran ? rel(clk.ns(t.start), t0) : "null") +
         ", \"end\": " + (ran ? rel(clk.ns(t.end), t0) : "null") + ", \"status\": \"" +
         kStatusNames[t.status < 5 ? t.status : 0] + "\"";
    if (t.submit) j += ", \"submit\": " + rel(clk.ns(t.submit), t0);
    // In flight from dispatch to complete: what pipeline_depth bounds (docs/guide/profiling.md).
    if (ran) {
      j +=
          ", \"dispatch\": " + rel(clk.ns(t.dispatch), t0) + ", \"complete\": " + rel(clk.ns(t.complete), t0);
    }
    j += ", \"stream\": " + std::to_string(t.stream);
    if (t.target != kNoTarget) j += ", \"target\": " + std::to_string(t.target);
    if (meta.pmu && ran) {
      const PmuTrace &p = meta.pmu[i];
      auto counter = [&p](uint32_t bit, uint64_t v) { return (p.valid & bit) ? std::to_string(v) : "null"; };
      j += ", \"pmu\": {\"cycles\": " + counter(kPmuCycles, p.cycles) +
           ", \"instructions\": " + counter(kPmuInstructions, p.instructions) +
           ", \"cache_misses\": " + counter(kPmuCacheMisses, p.cache_misses) + "}";
    }
    if (meta.price && ran && meta.price[i].source != PTO_PRICE_NONE)
      j += ", \"cost\": " + price_json(meta.price[i]);
    if (ran && t.thread >= 0) j += ", \"thread\": " + std::to_string(t.thread);
    // dispatch_threshold's decision (locality, metric 0 when the run has none).
    if (ran) {
      j += ", \"dispatch_policy\": \"" +
           std::string(dispatch_policy_name(static_cast<DispatchPolicy>(t.dispatch_policy))) +
           "\", \"dispatch_metric\": " + std::to_string(t.dispatch_metric);
    }
    j += "}";
    first = false;
    if (ran && t.thread >= 0 && static_cast<uint32_t>(t.thread) < meta.aicpu_threads) {
      events[t.thread].emplace_back(clk.ns(t.dispatch), 0, t.id);
      events[t.thread].emplace_back(clk.ns(t.complete), 1, t.id);
    }
    if (t.submit && meta.orchestrator_thread >= 0) {
      events[meta.orchestrator_thread].emplace_back(clk.ns(t.submit), 2, t.id);
    }
  }
  j += "],\n\"edges\": [";
  for (size_t e = 0; e < edges.size(); ++e) {
    j += std::string(e ? ", " : "") + "{\"from\": " + std::to_string(edges[e].from) +
         ", \"to\": " + std::to_string(edges[e].to) + ", \"kind\": \"" + kEdgeNames[edges[e].kind & 3] + "\"";
    // Where an inferred edge was found (explicit edges have no source).
    if (edges[e].kind != kEdgeExplicit)
      j += std::string(", \"source\": \"") + (edges[e].source == kEdgeFromBatch ? "batch" : "tensormap") +
           "\"";
    j += "}";
  }
  j += "],\n\"aicpu\": [";
  static const char *kEventNames[] = {"dispatch", "complete", "submit"};
  for (uint32_t th = 0; th < meta.aicpu_threads; ++th) {
    std::sort(events[th].begin(), events[th].end());
    const bool orch = static_cast<int32_t>(th) == meta.orchestrator_thread;
    j += std::string(th ? ",\n" : "\n") + "{\"thread\": " + std::to_string(th) + ", \"role\": \"" +
         (orch ? "orchestrator" : "scheduler") + "\", \"events\": [";
    for (size_t k = 0; k < events[th].size(); ++k) {
      const auto &[time, kind, id] = events[th][k];
      j += std::string(k ? ", " : "") + "[" + rel(time, t0) + ", \"" + kEventNames[kind] + "\", " +
           std::to_string(id) + "]";
    }
    j += "]}";
  }
  j += "],\n\"kernels\": {";
  first = true;
  for (const auto &kv : in.kernels) {
    j += std::string(first ? "" : ", ") + "\"" + std::to_string(kv.first) +
         "\": " + quoted(kv.second.loaded.name.empty() ? kernel_name(kv.second.path) : kv.second.loaded.name);
    first = false;
  }
  j += "}";
  if (meta.pmu) j += ",\n\"pmu_note\": " + quoted(meta.pmu_note);
  j += "}\n";
  return j;
}

void keep_trace(DeviceRunner &runner, TraceMeta meta, const RunInputs &in, TraceRecords records,
                std::vector<EdgeTrace> edges, PmuRecords pmu, PriceRecords price, pto_run_stats *stats) {
  if (!pmu.empty()) {
    meta.pmu_note = pmu_note(records.data(), pmu.data(), records.size());
    snprintf(stats->pmu_note, sizeof stats->pmu_note, "%s", meta.pmu_note.c_str());
  }
  struct Kept {
    TraceMeta meta;
    RunInputs in;  // only cfg and kernels are used
    TraceRecords records;
    std::vector<EdgeTrace> edges;
    PmuRecords pmu;
    PriceRecords price;
  };
  auto kept = std::make_shared<Kept>();
  kept->meta = meta;
  kept->in.cfg = in.cfg;
  kept->in.kernels = in.kernels;
  kept->records = std::move(records);
  kept->edges = std::move(edges);
  kept->pmu = std::move(pmu);
  kept->price = std::move(price);
  const ChipGeometry *g = &runner.geometry();
  runner.set_last_trace([kept, g] {
    kept->meta.pmu = kept->pmu.empty() ? nullptr : kept->pmu.data();
    kept->meta.price = kept->price.empty() ? nullptr : kept->price.data();
    return trace_to_json(kept->meta, kept->in, *g, kept->records.data(), kept->records.size(), kept->edges);
  });
}

}  // namespace pto
