// src/host/c_api.cpp — the host program's C API (include/pto/c_api.h) over DeviceRunner.
#include "pto/c_api.h"

#include <mutex>
#include <new>
#include <set>
#include <string>

#include "core/geometry.h"
#include "host/device_runner.h"
#include "pto/call_config.h"

struct pto_device_context {
  explicit pto_device_context(const pto::ChipGeometry &g, const char *aicpu, const char *aicore)
      : runner(g, aicpu, aicore) {}
  pto::DeviceRunner runner;
  std::string error;  // for failures before/around the runner
};

namespace {

// The contexts created and not yet destroyed. A handle that is not among them (null, destroyed,
// never created) is refused with INVALID_ARGUMENT instead of being followed: a C caller's
// use-after-destroy is an error code, not a crash. (A handle destroyed and then handed out
// again by the allocator is live again: the check cannot tell.) Never destroyed, so calls
// during exit still find it.
std::mutex &live_mutex() {
  static std::mutex *m = new std::mutex;
  return *m;
}
std::set<const pto_device_context *> &live_contexts() {
  static auto *s = new std::set<const pto_device_context *>;
  return *s;
}
bool live(const pto_device_context *ctx) {
  std::lock_guard<std::mutex> lock(live_mutex());
  return ctx != nullptr && live_contexts().count(ctx) != 0;
}
const char kNotLive[] = "not a live device context (null, destroyed, or never created)";

// A required output pointer was null: INVALID_ARGUMENT, with the message every failure leaves.
int null_argument(pto_device_context *ctx, const char *call, const char *name) {
  ctx->error =
      std::string(call) + ": " + name + " is null (it receives the result; pass a pointer to an int)";
  return PTO_INVALID_ARGUMENT;
}

int guarded(pto_device_context *ctx, int (*body)(pto_device_context *, void *), void *arg) {
  try {
    return body(ctx, arg);
  } catch (const std::bad_alloc &) {
    ctx->error = "host out of memory";
    return PTO_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    ctx->error = std::string("internal error: ") + e.what();
    return PTO_INTERNAL;
  }
}

}  // namespace

extern "C" {

PTO_EXPORT void pto_default_call_config(pto_call_config *cfg) {
  // The defaults of the one field list (pto/call_config.h), which ChipCallConfig also takes.
  *cfg = pto_call_config{};
#define PTO_DEFAULT_FIELD(type, name, def, lo, hi, doc) cfg->name = def;
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_DEFAULT_FIELD)
#undef PTO_DEFAULT_FIELD
}

PTO_EXPORT int create_device_context(const char *platform, const char *aicpu_path, const char *aicore_path,
                                     pto_device_context **out) {
  if (!out) return PTO_INVALID_ARGUMENT;
  *out = nullptr;
  const pto::ChipGeometry *g = pto::find_geometry(platform);
  if (!g || !aicpu_path || !aicore_path) return PTO_INVALID_ARGUMENT;
  *out = new (std::nothrow) pto_device_context(*g, aicpu_path, aicore_path);
  if (!*out) return PTO_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(live_mutex());
  live_contexts().insert(*out);
  return PTO_OK;
}

PTO_EXPORT int set_device(pto_device_context *ctx, int device_id) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  ctx->error.clear();
  return guarded(
      ctx, [](pto_device_context *c, void *a) -> int { return c->runner.set_device(*static_cast<int *>(a)); },
      &device_id);
}

PTO_EXPORT int prewarm_runtime(pto_device_context *ctx, const pto_call_config *cfg) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  ctx->error.clear();
  return guarded(
      ctx,
      [](pto_device_context *c, void *a) -> int {
        return c->runner.prewarm(static_cast<const pto_call_config *>(a));
      },
      const_cast<pto_call_config *>(cfg));
}

PTO_EXPORT uint64_t get_runtime_size(const pto_call_config *cfg) {
  if (!cfg) return 0;
  // Upper bound of the runtime's own device memory (tasks, successors, arguments, queues).
  const uint64_t t = cfg->max_tasks;
  return 4096 + t * 64 + t * cfg->max_successors * 4 + t * (8 + 8ull * cfg->max_args_per_task) +
         2 * 2 * t * 16;
}

PTO_EXPORT int run_runtime(pto_device_context *ctx, const pto_callable_desc *callable,
                           const pto_arg_desc *args, uint32_t num_args, const pto_call_config *cfg,
                           pto_run_stats *stats) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  ctx->error.clear();
  struct Call {
    const pto_callable_desc *callable;
    const pto_arg_desc *args;
    uint32_t num_args;
    const pto_call_config *cfg;
    pto_run_stats *stats;
  } call{callable, args, num_args, cfg, stats};
  return guarded(
      ctx,
      [](pto_device_context *c, void *a) -> int {
        auto *k = static_cast<Call *>(a);
        return c->runner.run(k->callable, k->args, k->num_args, k->cfg, k->stats);
      },
      &call);
}

PTO_EXPORT int start_runtime(pto_device_context *ctx, const pto_callable_desc *callable,
                             const pto_arg_desc *args, uint32_t num_args, const pto_call_config *cfg) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  ctx->error.clear();
  struct Call {
    const pto_callable_desc *callable;
    const pto_arg_desc *args;
    uint32_t num_args;
    const pto_call_config *cfg;
  } call{callable, args, num_args, cfg};
  return guarded(
      ctx,
      [](pto_device_context *c, void *a) -> int {
        auto *k = static_cast<Call *>(a);
        return c->runner.start(k->callable, k->args, k->num_args, k->cfg);
      },
      &call);
}

PTO_EXPORT int poll_runtime(pto_device_context *ctx, int block, int *done, pto_run_stats *stats) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  ctx->error.clear();
  if (!done) return null_argument(ctx, "poll_runtime", "done");
  struct Call {
    int block;
    int *done;
    pto_run_stats *stats;
  } call{block, done, stats};
  return guarded(
      ctx,
      [](pto_device_context *c, void *a) -> int {
        auto *k = static_cast<Call *>(a);
        return c->runner.poll(k->block != 0, k->done, k->stats);
      },
      &call);
}

PTO_EXPORT int wait_runtime(pto_device_context *ctx, uint64_t timeout_ns, int *ended) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  ctx->error.clear();
  if (!ended) return null_argument(ctx, "wait_runtime", "ended");
  struct Call {
    uint64_t timeout_ns;
    int *ended;
  } call{timeout_ns, ended};
  return guarded(
      ctx,
      [](pto_device_context *c, void *a) -> int {
        auto *k = static_cast<Call *>(a);
        return c->runner.wait(k->timeout_ns, k->ended);
      },
      &call);
}

PTO_EXPORT int abort_runtime(pto_device_context *ctx) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  ctx->error.clear();
  return guarded(
      ctx, [](pto_device_context *c, void *) -> int { return c->runner.abort(); }, nullptr);
}

PTO_EXPORT int finalize_device(pto_device_context *ctx) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  return ctx->runner.finalize();
}

PTO_EXPORT void destroy_device_context(pto_device_context *ctx) {
  {
    std::lock_guard<std::mutex> lock(live_mutex());
    if (live_contexts().erase(ctx) == 0) return;  // null, or destroyed already
  }
  delete ctx;
}

PTO_EXPORT const char *get_last_error_message(pto_device_context *ctx) {
  if (!ctx) return "";
  if (!live(ctx)) return kNotLive;
  return ctx->error.empty() ? ctx->runner.last_error().c_str() : ctx->error.c_str();
}

PTO_EXPORT int get_platform_info(pto_device_context *ctx, int32_t *num_clusters, int32_t *max_aicpu_threads,
                                 int32_t *num_devices) {
  if (!live(ctx)) return PTO_INVALID_ARGUMENT;
  const pto::ChipGeometry &g = ctx->runner.geometry();
  if (num_clusters) *num_clusters = g.num_clusters;
  if (max_aicpu_threads) *max_aicpu_threads = g.max_aicpu_threads;
  if (num_devices) *num_devices = g.num_devices;
  return PTO_OK;
}

PTO_EXPORT const char *get_last_trace_json(pto_device_context *ctx) {
  if (!live(ctx)) return "";
  try {
    return ctx->runner.last_trace().c_str();  // rendered now, on the first call after the run
  } catch (const std::exception &) {
    return "";  // out of memory while rendering: no trace rather than a crash
  }
}

PTO_EXPORT int get_c_api_version(void) {
  return PTO_C_API_VERSION;
}

}  // extern "C"
