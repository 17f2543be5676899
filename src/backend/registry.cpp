// src/backend/registry.cpp — the backend registry: names to factories, each built once on first use.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/geometry.h"
#include "pto/backend.h"
#include "pto/error.h"

namespace pto {
namespace {

// One registered backend. `factory` is set at registration and never changes; `instance`
// or `error` is set exactly once, under `once`, by the first caller that needs it.
struct Entry {
  BackendFactory factory = nullptr;
  std::once_flag once;
  std::unique_ptr<Backend> instance;
  pto_status error_code = PTO_OK;
  std::string error_message;

  void build(const std::string &name) {
    std::call_once(once, [&] {
      try {
        instance = factory();
        if (!instance) {
          error_code = PTO_INTERNAL;
          error_message = "backend '" + name + "': its factory returned no backend";
        }
      } catch (const Error &e) {
        error_code = e.code();
        error_message = e.what();
      } catch (const std::exception &e) {
        error_code = PTO_INTERNAL;
        error_message = "backend '" + name + "': its factory threw: " + e.what();
      }
    });
  }
};

// Entries are never removed, so a pointer handed out stays valid for the process's life.
// The mutex guards the map only; Entry::build is serialised by its own once_flag.
struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Entry>> entries;  // sorted by name
};

// A function-local static: registrars in other translation units run before main in an
// unspecified order, and the first of them constructs it.
Registry &registry() {
  static Registry r;
  return r;
}

std::string joined(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<std::string> registered_names() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto &kv : r.entries) names.push_back(kv.first);
  return names;
}

Entry *find_entry(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(name);
  return it == r.entries.end() ? nullptr : it->second.get();
}

std::vector<std::string> platforms_of(const std::string &backend) {
  int count = 0;
  const ChipGeometry *rows = geometries(&count);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    if (backend == rows[i].backend) out.emplace_back(rows[i].platform);
  }
  return out;
}

// CompileOptions.sched: each field against what it may hold (ChipCallConfig's ranges, pto/call_config.h).
void check_schedule(const ScheduleConfig &s) {
  if (s.task_window > (1u << 24)) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.sched.task_window=" + std::to_string(s.task_window) +
                                          " is outside 0..16777216 (0 keeps ChipCallConfig.task_window)");
  }
  if (static_cast<uint32_t>(s.window_overflow) >= kWindowOverflowCount) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.sched.window_overflow=" +
                                          std::to_string(static_cast<uint32_t>(s.window_overflow)) +
                                          " is not one of stall (0), evict_completed (1), error (2)");
  }
  if (s.pipeline_depth > kMaxPipelineDepth) {
    throw Error(PTO_INVALID_ARGUMENT,
                "CompileOptions.sched.pipeline_depth=" + std::to_string(s.pipeline_depth) +
                    " is outside 0..65535 (0 = no gates)");
  }
  if (static_cast<uint32_t>(s.pipeline_scope) >= kPipelineScopeCount) {
    throw Error(
        PTO_INVALID_ARGUMENT,
        "CompileOptions.sched.pipeline_scope=" + std::to_string(static_cast<uint32_t>(s.pipeline_scope)) +
            " is not one of global (0), per_stream (1), per_pool (2), per_target (3)");
  }
  if (s.batch_deps > kMaxBatchDeps) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.sched.batch_deps=" + std::to_string(s.batch_deps) +
                                          " is outside 0..256 (submits per dependency batch; 0 = off)");
  }
  auto bad = [](const char *field, uint32_t v, const char *allowed) {
    throw Error(PTO_INVALID_ARGUMENT, std::string("CompileOptions.sched.") + field + "=" + std::to_string(v) +
                                          " is not one of " + allowed);
  };
  if (static_cast<uint32_t>(s.dispatch_metric) >= kDispatchMetricCount)
    bad("dispatch_metric", static_cast<uint32_t>(s.dispatch_metric), "none (0), ready (1)");
  if (static_cast<uint32_t>(s.dispatch_scope) >= kDispatchScopeCount)
    bad("dispatch_scope", static_cast<uint32_t>(s.dispatch_scope), "global (0), per_pool (1)");
  if (static_cast<uint32_t>(s.dispatch_below) >= kDispatchPolicyCount)
    bad("dispatch_below", static_cast<uint32_t>(s.dispatch_below),
        "locality (0), round_robin (1), work_stealing (2)");
  if (static_cast<uint32_t>(s.dispatch_above) >= kDispatchPolicyCount)
    bad("dispatch_above", static_cast<uint32_t>(s.dispatch_above),
        "locality (0), round_robin (1), work_stealing (2)");
  if (!s.dispatching()) {
    const ScheduleConfig d;
    const char *set = s.dispatch_threshold != d.dispatch_threshold   ? "dispatch_threshold"
                      : s.active_cores_below != d.active_cores_below ? "active_cores_below"
                      : s.dispatch_scope != d.dispatch_scope         ? "dispatch_scope"
                      : s.dispatch_below != d.dispatch_below         ? "dispatch_below"
                      : s.dispatch_above != d.dispatch_above         ? "dispatch_above"
                                                                     : nullptr;
    if (set) {
      throw Error(PTO_INVALID_ARGUMENT, std::string("CompileOptions.sched.") + set +
                                            " is set but dispatch_metric is none (dispatch_threshold off); "
                                            "set dispatch_metric='ready' or leave the dispatch_* fields at "
                                            "their defaults");
    }
  }
}

}  // namespace

void register_backend(const std::string &name, BackendFactory factory) {
  if (name.empty()) throw Error(PTO_INVALID_ARGUMENT, "register_backend: name is empty");
  if (factory == nullptr) {
    throw Error(PTO_INVALID_ARGUMENT, "register_backend: factory of backend '" + name + "' is null");
  }
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto entry = std::make_unique<Entry>();
  entry->factory = factory;
  if (!r.entries.emplace(name, std::move(entry)).second) {
    throw Error(PTO_INVALID_ARGUMENT, "register_backend: backend '" + name +
                                          "' is already registered (is its library linked twice?)");
  }
}

const Backend &get_backend(const std::string &name) {
  Entry *e = find_entry(name);
  if (e == nullptr) {
    throw Error(PTO_INVALID_ARGUMENT,
                "unknown backend '" + name + "'; registered backends: " + joined(registered_names()));
  }
  e->build(name);
  if (!e->instance) throw Error(e->error_code, e->error_message);
  return *e->instance;
}

std::vector<BackendInfo> backends() {
  std::vector<BackendInfo> out;
  for (const std::string &name : registered_names()) {
    Entry *e = find_entry(name);
    e->build(name);
    BackendInfo info;
    info.name = name;
    info.available = e->instance != nullptr;
    info.reason = info.available ? std::string() : e->error_message;
    info.platforms = platforms_of(name);
    out.push_back(std::move(info));
  }
  return out;
}

const Backend &backend_for_platform(const std::string &platform) {
  const ChipGeometry *g = find_geometry(platform.c_str());
  if (g == nullptr) {
    int count = 0;
    const ChipGeometry *rows = geometries(&count);
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.emplace_back(rows[i].platform);
    throw Error(PTO_INVALID_ARGUMENT, "unknown platform '" + platform + "'; use one of: " + joined(names));
  }
  return get_backend(g->backend);
}

BackendRegistrar::BackendRegistrar(const char *name, BackendFactory factory) {
  register_backend(name, factory);
}

std::vector<std::string> Backend::platforms() const {
  return platforms_of(name());
}

std::string Backend::platform_for(const BackendOptions &options) const {
  if (!options.platform.empty()) return options.platform;
  const std::vector<std::string> mine = platforms();
  if (mine.empty()) {
    throw Error(PTO_NOT_SUPPORTED, std::string("backend '") + name() + "' has no platform to run on yet");
  }
  return mine.front();
}

void Backend::check(const BackendOptions &o) const {
  if (o.target != name()) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.target '" + o.target + "' is checked by backend '" +
                                          name() + "'; call get_backend(target).check(options)");
  }
  if (o.opt_level < 0 || o.opt_level > 3) {
    throw Error(PTO_INVALID_ARGUMENT,
                "CompileOptions.opt_level " + std::to_string(o.opt_level) + " is out of range; use 0..3");
  }
  if (o.host_threads < 0) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.host_threads " + std::to_string(o.host_threads) +
                                          " is negative; use 0 (the backend's default) or more");
  }
  if (o.aicpu_threads < 0) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.aicpu_threads " + std::to_string(o.aicpu_threads) +
                                          " is negative; use 0 (the default) or more");
  }
  check_schedule(o.sched);
  const std::string platform = platform_for(o);
  const std::vector<std::string> mine = platforms();
  bool ours = false;
  for (const std::string &p : mine) ours = ours || p == platform;
  if (!ours) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.platform '" + platform + "' does not run on backend '" +
                                          name() + "'; use one of: " + joined(mine));
  }
  const ChipGeometry *g = find_geometry(platform.c_str());
  if (g != nullptr && o.aicpu_threads > g->max_aicpu_threads) {
    throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.aicpu_threads " + std::to_string(o.aicpu_threads) +
                                          " exceeds platform " + platform + "'s " +
                                          std::to_string(g->max_aicpu_threads) + " AICPU threads");
  }
}

}  // namespace pto
