// tests/fuzz/fuzz_config.cpp — a run's configuration from random bytes: BackendOptions
// (with its ScheduleConfig) through make_call_config, then ChipCallConfig fields set to any
// value, checked by a run.
//
// Oracles:
//   - CompileOptions: make_call_config / kernel_compile_options / platform_of either accept the
//     options or throw INVALID_ARGUMENT or NOT_SUPPORTED; accepted options make a ChipCallConfig
//     that a run on their platform accepts as it is.
//   - ChipCallConfig: a run accepts it exactly when every field is within its range
//     (pto/call_config.h), the dispatch_* fields are unset without a metric, and block_dim and
//     aicpu_thread_num fit the platform; a refusal is INVALID_ARGUMENT (GEOMETRY_EXCEEDED for
//     the geometry) naming the field.
//   - An accepted config of sizes a test can afford runs a program (tmr_fuzz_program.h) to the
//     outcome its meaning gives: tiny rings, one-slot windows, gates, batches and dispatch
//     policies never hang, crash or corrupt a buffer.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "core/geometry.h"
#include "fuzz/tmr_fuzz_program.h"
#include "fuzz_common.h"
#include "pto/compile_options.h"

namespace {

// The worker of each platform (the run check needs no callable: it stops at the missing
// orchestration once the config passed).
pto::ChipWorker &worker_for(const std::string &platform) {
  if (platform == "a2a3sim") return pto_fuzz::tmr_fuzz_worker();
  // Never destroyed, map included (a map destroyed at exit would leave its workers leaked).
  static auto *others = new std::map<std::string, pto::ChipWorker *>;
  pto::ChipWorker *&w = (*others)[platform];
  if (!w) {
    w = new pto::ChipWorker();
    w->init(platform, "tensormap_and_ringbuffer");
    w->set_device(0);
  }
  return *w;
}

// What a run says of `cfg`: "" accepted, else the error's code name and message.
std::string run_verdict(const std::string &platform, const pto::ChipCallConfig &cfg, pto_status *code) {
  pto::ChipStorageTaskArgs none;
  try {
    worker_for(platform).run(pto::ChipCallable(), none, cfg);
  } catch (const pto::Error &e) {
    const std::string m = e.what();
    if (m.find("the callable has no orchestration") != std::string::npos) return "";
    *code = e.code();
    return m;
  }
  pto_fuzz::fuzz_failed("a run without an orchestration succeeded");
}

// The field a run must refuse `cfg` for ("" none), and its code.
std::string expected_refusal(const std::string &platform, const pto::ChipCallConfig &cfg, pto_status *code) {
  const pto_call_config c = cfg.to_c();
  *code = PTO_INVALID_ARGUMENT;
#define PTO_FUZZ_RANGE(type, name, def, lo, hi, doc) \
  if (!pto::config_field_in_range(c.name, lo, hi)) return #name;
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_FUZZ_RANGE)
#undef PTO_FUZZ_RANGE
  if (c.dispatch_metric == 0) {
    if (c.dispatch_threshold) return "dispatch_threshold";
    if (c.active_cores_below) return "active_cores_below";
    if (c.dispatch_scope) return "dispatch_scope";
    if (c.dispatch_below) return "dispatch_below";
    if (c.dispatch_above) return "dispatch_above";
  }
  const pto::ChipGeometry *g = pto::find_geometry(platform.c_str());
  FUZZ_CHECK(g, "no geometry for %s", platform.c_str());
  *code = PTO_GEOMETRY_EXCEEDED;
  if (c.block_dim > g->num_clusters) return "block_dim";
  if (c.aicpu_thread_num > g->max_aicpu_threads) return "aicpu_thread_num";
  return "";
}

// One of the values at and around a field's bounds, or any value of its type.
template <typename T>
T edge_value(FuzzedDataProvider &in, long long lo, unsigned long long hi) {
  const long long lo_t = static_cast<long long>(std::numeric_limits<T>::min());
  const unsigned long long hi_t = static_cast<unsigned long long>(std::numeric_limits<T>::max());
  switch (in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0:
      return static_cast<T>(lo);
    case 1:
      return static_cast<T>(lo > lo_t ? lo - 1 : lo);
    case 2:
      return static_cast<T>(hi);
    case 3:
      return static_cast<T>(hi < hi_t ? hi + 1 : hi);
    case 4:
      return static_cast<T>(lo + in.ConsumeIntegralInRange<int>(0, 64));
    default:
      return in.ConsumeIntegral<T>();
  }
}
template <>
bool edge_value<bool>(FuzzedDataProvider &in, long long, unsigned long long) {
  return in.ConsumeBool();
}

std::string pick(FuzzedDataProvider &in, std::initializer_list<const char *> names) {
  const size_t i = in.ConsumeIntegralInRange<size_t>(0, names.size());
  return i < names.size() ? names.begin()[i] : in.ConsumeRandomLengthString(12);
}

pto::BackendOptions make_options(FuzzedDataProvider &in) {
  pto::BackendOptions o;
  o.target = pick(in, {"cpu_sim", "cpu_sim", "cpu_sim", "ascend_npu", "amd_aie", ""});
  o.platform = pick(in, {"", "", "a2a3sim", "a5sim", "a2a3", "a5"});
  o.opt_level = edge_value<int>(in, 0, 3);
  o.debug = in.ConsumeBool();
  o.profiling = in.ConsumeBool();
  o.host_threads = edge_value<int>(in, 0, 64);
  o.aicpu_threads = in.ConsumeBool() ? 0 : edge_value<int>(in, 0, 8);
  pto::ScheduleConfig &s = o.sched;
  if (in.ConsumeBool()) return o;  // no schedule primitives
  // Enum fields take any value of their underlying type (enum classes: defined behaviour).
  s.task_window = edge_value<uint32_t>(in, 0, 1u << 24);
  s.window_overflow = static_cast<pto::WindowOverflow>(edge_value<uint32_t>(in, 0, 2));
  s.pipeline_depth = edge_value<uint32_t>(in, 0, pto::kMaxPipelineDepth);
  s.pipeline_scope = static_cast<pto::PipelineScope>(edge_value<uint32_t>(in, 0, 3));
  s.batch_deps = edge_value<uint32_t>(in, 0, pto::kMaxBatchDeps);
  if (in.ConsumeBool()) {
    s.dispatch_metric = static_cast<pto::DispatchMetric>(edge_value<uint8_t>(in, 0, 1));
    s.dispatch_threshold = edge_value<uint16_t>(in, 0, 65535);
    s.active_cores_below = edge_value<uint16_t>(in, 0, 65535);
    s.dispatch_scope = static_cast<pto::DispatchScope>(edge_value<uint8_t>(in, 0, 1));
    s.dispatch_below = static_cast<pto::DispatchPolicy>(edge_value<uint8_t>(in, 0, 2));
    s.dispatch_above = static_cast<pto::DispatchPolicy>(edge_value<uint8_t>(in, 0, 2));
  }
  return o;
}

// Sizes a run of a small program can afford (the fields' ranges allow terabytes).
bool affordable(const pto::ChipCallConfig &c) {
  return (c.heap_bytes % pto_fuzz::kBufBytes == 0 || c.heap_bytes < pto_fuzz::kBufBytes) &&
         c.heap_bytes <= (1u << 26) && uint64_t{c.task_window} * c.max_args_per_task <= (1u << 20) &&
         c.dep_pool_entries <= (1u << 20) && c.tensormap_entries <= (1u << 20) &&
         c.trace_tasks <= (1u << 20) && c.max_tasks <= (1u << 20);
}

void check_verdict(const std::string &platform, const pto::ChipCallConfig &cfg, const std::string &context) {
  pto_status want_code = PTO_OK, got_code = PTO_OK;
  const std::string field = expected_refusal(platform, cfg, &want_code);
  const std::string got = run_verdict(platform, cfg, &got_code);
  if (field.empty()) {
    FUZZ_CHECK(got.empty(), "%s: a valid config on %s is refused: %s", context.c_str(), platform.c_str(),
               got.c_str());
    return;
  }
  FUZZ_CHECK(!got.empty(), "%s: a config on %s with a bad %s is accepted", context.c_str(), platform.c_str(),
             field.c_str());
  FUZZ_CHECK(got_code == want_code && got.find(field) != std::string::npos,
             "%s: a bad %s on %s is refused with %s: %s", context.c_str(), field.c_str(), platform.c_str(),
             pto_status_name(got_code), got.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::string platform = "a2a3sim";
  pto::ChipCallConfig cfg;
  if (in.ConsumeBool()) {
    const pto::BackendOptions o = make_options(in);
    try {
      cfg = pto::make_call_config(o);
      platform = pto::platform_of(o);
      pto::kernel_compile_options(o);
    } catch (const pto::Error &e) {
      FUZZ_CHECK(e.code() == PTO_INVALID_ARGUMENT || e.code() == PTO_NOT_SUPPORTED,
                 "CompileOptions refused with %s: %s", e.name(), e.what());
      return 0;
    }
    // Options a backend accepted make a config their platform's runs accept.
    check_verdict(platform, cfg, "make_call_config");
    if (platform != "a2a3sim" && platform != "a5sim") return 0;
  } else {
    platform = in.ConsumeBool() ? "a2a3sim" : "a5sim";
  }
  // Then any field may take any value.
  if (in.ConsumeBool()) {
#define PTO_FUZZ_SET(type, name, def, lo, hi, doc) \
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) cfg.name = edge_value<type>(in, lo, hi);
    PTO_CHIP_CALL_CONFIG_FIELDS(PTO_FUZZ_SET)
#undef PTO_FUZZ_SET
    check_verdict(platform, cfg, "ChipCallConfig");
  }
  pto_status code = PTO_OK;
  if (platform != "a2a3sim" || !expected_refusal(platform, cfg, &code).empty() || !affordable(cfg)) return 0;
  // An accepted config runs a program (the rest of the bytes) to its meaning.
  pto_fuzz::TmrFuzzProgram p = pto_fuzz::make_tmr_fuzz_program(in);
  cfg.timeout_ms = 30000;          // a hang shows as RUN_TIMEOUT, not as a slow input
  cfg.enable_dump_tensor = false;  // files on every run
  cfg.log_level = std::max(cfg.log_level, static_cast<int32_t>(PTO_LOG_WARN));  // likewise
  p.config = cfg;
  pto_fuzz::check_tmr_fuzz_run(p, true);
  return 0;
}
