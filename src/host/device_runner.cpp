// src/host/device_runner.cpp — the generic part of a run: checks, kernels, argument staging, copies.
// Over 600 lines because every step of a run's life (device start and warm-up, checks, kernel
// loading, staging, start, poll, wait, abort, finalize) shares the context's private state and
// the in-flight run; what would move out first is check_config (a pure function of the config and
// the geometry) and the argument staging and copy-back, into a file of their own.
#include "host/device_runner.h"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "core/core_pool.h"
#include "core/entry_points.h"
#include "core/handshake.h"
#include "core/profiling.h"
#include "core/scheduler_bell.h"
#include "core/warm_up_program.h"
#include "host/run_wait.h"
#include "pto/call_config.h"
#include "pto/device_log.h"
#include "pto_platform/doorbell.h"
#include "pto_platform/files.h"
#include "timing_model/kernel_pricing.h"
#include "timing_model/sim_timing_profile.h"

namespace pto {
namespace {

// CorePool's queueing threshold: kPipelineNs, or PTO_PIPELINE_NS (0 turns queueing off).
double pipeline_ns() {
  static const double ns = [] {
    const char *s = getenv("PTO_PIPELINE_NS");
    return s ? strtod(s, nullptr) : static_cast<double>(kPipelineNs);
  }();
  return ns;
}

// PTO_SIM_SEED: the sim_seed of runs that leave it at -1 (unset or empty: -1). False, with
// *error, when it is not a seed.
bool env_sim_seed(int64_t *seed, std::string *error) {
  *seed = -1;
  const char *s = getenv("PTO_SIM_SEED");
  if (s == nullptr || *s == '\0') return true;
  char *end = nullptr;
  errno = 0;
  const long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0 || v < 0) {
    *error = std::string("PTO_SIM_SEED=") + s +
             " is not a seed (an integer 0 .. 9223372036854775807; unset it for unseeded runs)";
    return false;
  }
  *seed = v;
  return true;
}

// PTO_SIM_TIMING: "1" turns the timing mode on for runs that leave sim_timing off; unset, empty
// or "0": off. False, with *error, for anything else.
bool env_sim_timing(bool *on, std::string *error) {
  *on = false;
  const char *s = getenv("PTO_SIM_TIMING");
  if (s == nullptr || *s == '\0' || strcmp(s, "0") == 0) return true;
  if (strcmp(s, "1") == 0) {
    *on = true;
    return true;
  }
  *error = std::string("PTO_SIM_TIMING=") + s + " is not 0 or 1 (1: run in virtual time; needs a seeded run)";
  return false;
}

// Writes "pto_runtime: <line>" to stderr the first time this process sees that line (a note
// every run of a loop would repeat otherwise).
void say_once(const std::string &line) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (said.insert(line).second) fprintf(stderr, "pto_runtime: %s\n", line.c_str());
}

// The chip as the platform sees it: AICPU threads, and one core per handshake slot.
DeviceShape device_shape(const ChipGeometry &g) {
  DeviceShape shape;
  shape.platform = g.platform;
  shape.backend = g.backend;
  shape.aicpu_threads = static_cast<uint32_t>(g.max_aicpu_threads);
  for (uint32_t slot = 0; slot < static_cast<uint32_t>(g.total_cores()); ++slot) {
    const HandshakeSlotPlace p = g.layout().place(slot);
    CoreDesc core;
    core.cluster = p.cluster;
    core.lane = p.lane;
    core.lanes = p.lanes;
    core.kind = pto_core_type_name(static_cast<pto_core_type>(p.core_type));
    shape.cores.push_back(core);
  }
  return shape;
}

// CoreProgram::stop: every core leaves its loop.
void stop_cores(void *block, uint32_t cores) {
  auto *slots = static_cast<Handshake *>(block);
  for (uint32_t c = 0; c < cores; ++c) handshake_send_quit(slots[c]);
}

// CoreProgram::activity: in a fault handler on core `core`'s thread (only reads).
CoreActivity core_activity(const void *block, uint32_t core) {
  CoreActivity now;
  handshake_current(static_cast<const Handshake *>(block)[core], &now.kernel_entry, &now.task);
  return now;
}

}  // namespace

DeviceRunner::DeviceRunner(const ChipGeometry &geometry, std::string aicpu_path, std::string aicore_path)
    : geometry_(&geometry), aicpu_path_(std::move(aicpu_path)), aicore_path_(std::move(aicore_path)) {}

DeviceRunner::~DeviceRunner() {
  finalize();
}

std::string orchestration_entry_hint(const std::string &orchestration_path, const std::string &runtime) {
  const EntryPoint *wanted = orchestration_entry_of(runtime);
  if (wanted == nullptr) return "";
  return " (" +
         entry_point_hint(*wanted,
                          [&](const char *s) { return platform_elf_exports(orchestration_path, s); }) +
         ")";
}

pto_status DeviceRunner::fail(pto_status code, std::string message) {
  last_error_ = std::move(message);
  return code;
}

pto_status DeviceRunner::set_device(int device_id) {
  if (device_) {
    return fail(PTO_INVALID_ARGUMENT, "set_device was already called on this context (device " +
                                          std::to_string(device_id_) +
                                          "); create a new worker for another device");
  }
  if (device_id < 0 || device_id >= geometry_->num_devices) {
    return fail(PTO_DEVICE_OUT_OF_RANGE, "device id " + std::to_string(device_id) + " is out of range for " +
                                             geometry_->platform + " (valid: 0.." +
                                             std::to_string(geometry_->num_devices - 1) + ")");
  }
  std::string err;
  std::unique_ptr<Device> dev;
  pto_status rc = Device::create(device_shape(*geometry_), device_id, &dev, &err);
  if (rc != PTO_OK) return fail(rc, err);
  rc = start_device(*dev, &err);
  if (rc != PTO_OK) {
    dev->shutdown();
    free_device_blocks(*dev);
    return fail(rc, err);
  }
  device_ = std::move(dev);
  memory_.reset(new MemoryAllocator(device_.get()));
  device_id_ = device_id;
  rc = warm_up();
  if (rc != PTO_OK) {
    const std::string why = last_error_;
    finalize();
    return fail(rc, "the device started but its warm-up run failed: " + why);
  }
  return PTO_OK;
}

// One warm-up run before the caller's first: core/warm_up_program.h (dependency-only tasks, then
// the device's idle kernel once per core), with the default configuration on every cluster and
// AICPU thread. Everything a run allocates and touches for the first time (the run's device
// memory, the schedulers' and the orchestrator's structures, the host images, the code of
// submit, dispatch and completion) is faulted in here. A fresh page costs ~4 us on a VM and a
// first run touched 150-250 of them, so without this the first run cost 10-25x a warm one
// (docs/benchmarks.md, session 23).
pto_status DeviceRunner::warm_up(const pto_call_config *with) {
  pto_call_config cfg;
  if (with != nullptr) {
    cfg = *with;
  } else {
    pto_default_call_config(&cfg);
    cfg.block_dim = geometry_->num_clusters;
    cfg.aicpu_thread_num = geometry_->max_aicpu_threads;
  }
  pto_callable_desc nothing{};
  nothing.orchestration_path = "";  // the runtimes run core/warm_up_program.h instead
  // The program's scalars: how many idle-kernel tasks of each core type (none without one).
  LoadedKernel idle;
  const bool has_idle = device_->idle_kernel(&idle);
  const ClusterLayout layout = geometry_->layout();
  pto_arg_desc args[2] = {};
  args[0].scalar = has_idle ? layout.clusters * layout.aic_per_cluster : 0;
  args[1].scalar = has_idle ? layout.clusters * layout.aiv_per_cluster : 0;
  for (pto_arg_desc &a : args) a.kind = PTO_ARG_SCALAR;
  warming_ = true;
  pto_status rc = start(&nothing, args, 2, &cfg);
  warming_ = false;
  if (rc != PTO_OK) return rc;
  int done = 0;
  rc = poll(true, &done, nullptr);
  last_trace_.clear();
  render_trace_ = nullptr;
  return rc;
}

pto_status DeviceRunner::prewarm(const pto_call_config *cfg) {
  if (!device_)
    return fail(PTO_NOT_INITIALIZED, "prewarm() before set_device(): call set_device(device_id) first");
  if (!cfg) return fail(PTO_INVALID_ARGUMENT, "prewarm(): config must not be null");
  return warm_up(cfg);  // start() checks the rest, as for any run
}

// Lays out the handshake block and the scheduler doorbells in `device`'s memory and starts
// the device programs on them.
pto_status DeviceRunner::start_device(Device &device, std::string *error) {
  const ChipGeometry &g = *geometry_;
  const auto cores = static_cast<uint32_t>(g.total_cores());
  const auto threads = static_cast<uint32_t>(g.max_aicpu_threads);
  auto *slots = static_cast<Handshake *>(device.malloc(cores * sizeof(Handshake)));
  handshakes_ = slots;
  if (!slots) {
    *error = "cannot allocate the handshake block";
    return PTO_OUT_OF_MEMORY;
  }
  auto *bells = static_cast<SchedulerSlot *>(device.malloc(threads * sizeof(SchedulerSlot)));
  scheduler_bells_ = bells;
  if (!bells) {
    *error = "cannot allocate the scheduler doorbells";
    return PTO_OUT_OF_MEMORY;
  }
  for (uint32_t t = 0; t < threads; ++t) new (&bells[t]) SchedulerSlot();
  for (uint32_t c = 0; c < cores; ++c) {
    new (&slots[c]) Handshake();
    slots[c].core_type = g.layout().place(c).core_type;
  }
  CoreProgram program;
  program.block = slots;
  program.stop = &stop_cores;
  program.activity = &core_activity;
  return device.load_programs(aicpu_path_, aicore_path_, program, error);
}

// After Device::shutdown: the cores stopped, nothing rings or polls the blocks any more.
void DeviceRunner::free_device_blocks(Device &device) {
  if (handshakes_) device.free(handshakes_);
  if (scheduler_bells_) device.free(scheduler_bells_);
  handshakes_ = scheduler_bells_ = nullptr;
  for (auto &kv : kept_) device.free(kv.second.ptr);
  kept_.clear();
}

DeviceRunner::KeptBlock *DeviceRunner::kept_block(const std::string &key, uint64_t bytes) {
  KeptBlock &k = kept_[key];
  if (k.ptr != nullptr && k.bytes == bytes) return &k;
  if (k.ptr != nullptr) device_->free(k.ptr);
  k = KeptBlock{};
  k.ptr = device_->malloc(bytes);
  if (k.ptr == nullptr) {
    kept_.erase(key);
    return nullptr;
  }
  k.bytes = bytes;
  return &k;
}

pto_status DeviceRunner::check_config(const pto_call_config &cfg) {
  // The platform-independent range of every field (pto/call_config.h), then the geometry.
#define PTO_CHECK_FIELD(type, name, def, lo, hi, doc)                                      \
  if (!config_field_in_range(cfg.name, lo, hi)) {                                          \
    return fail(PTO_INVALID_ARGUMENT,                                                      \
                config_field_range_message(#name, std::to_string(cfg.name), lo, hi, doc)); \
  }
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_CHECK_FIELD)
#undef PTO_CHECK_FIELD
  // dispatch_threshold is off without a metric: a threshold or policy set then is a mistake.
  if (cfg.dispatch_metric == 0) {
    const char *set = cfg.dispatch_threshold   ? "dispatch_threshold"
                      : cfg.active_cores_below ? "active_cores_below"
                      : cfg.dispatch_scope     ? "dispatch_scope"
                      : cfg.dispatch_below     ? "dispatch_below"
                      : cfg.dispatch_above     ? "dispatch_above"
                                               : nullptr;
    if (set) {
      return fail(PTO_INVALID_ARGUMENT,
                  std::string(set) +
                      " is set but dispatch_metric=0 (none: dispatch_threshold is off); "
                      "set dispatch_metric=1 (ready) or leave the dispatch_* fields at 0");
    }
  }
  const ChipGeometry &g = *geometry_;
  if (cfg.block_dim > g.num_clusters) {
    return fail(PTO_GEOMETRY_EXCEEDED, "block_dim " + std::to_string(cfg.block_dim) + " is outside 1.." +
                                           std::to_string(g.num_clusters) + " (the clusters of " +
                                           g.platform + ")");
  }
  if (cfg.aicpu_thread_num > g.max_aicpu_threads) {
    return fail(PTO_GEOMETRY_EXCEEDED, "aicpu_thread_num " + std::to_string(cfg.aicpu_thread_num) +
                                           " is outside 1.." + std::to_string(g.max_aicpu_threads) +
                                           " (the AICPU threads of " + g.platform + ")");
  }
  if (!kProfilingBuilt && (cfg.enable_profiling || cfg.enable_pmu)) {
    return fail(PTO_NOT_SUPPORTED,
                std::string(cfg.enable_profiling ? "enable_profiling" : "enable_pmu") +
                    ": this build has no profiling code (configured with -DPTO_PROFILING=OFF); "
                    "use a default build");
  }
  return PTO_OK;
}

pto_status DeviceRunner::load_kernels(const pto_callable_desc &callable, RunInputs *in) {
  for (uint32_t i = 0; i < callable.num_kernels; ++i) {
    const pto_kernel_desc &k = callable.kernels[i];
    if (k.core_type >= PTO_TASK_SHAPE_COUNT) {
      return fail(PTO_INVALID_ARGUMENT, "kernel " + std::to_string(k.func_id) + " has an invalid core type " +
                                            std::to_string(k.core_type) + " (use AIC, AIV or MIX)");
    }
    if (k.binary_path == nullptr) {
      return fail(PTO_INVALID_ARGUMENT, "kernel " + std::to_string(k.func_id) + " has no binary path");
    }
    if (in->kernels.count(k.func_id)) {
      return fail(PTO_INVALID_ARGUMENT,
                  "func_id " + std::to_string(k.func_id) + " is defined twice in the callable");
    }
    KernelEntry e;
    e.func_id = k.func_id;
    e.core_type = static_cast<pto_core_type>(k.core_type);
    e.path = k.binary_path;
    std::string err;
    pto_status rc = device_->load_kernel(e.path, e.func_id, &e.loaded, &err);
    if (rc != PTO_OK) return fail(rc, "kernel " + std::to_string(k.func_id) + ": " + err);
    if (e.loaded.core_type >= 0 && e.loaded.core_type != static_cast<int32_t>(e.core_type)) {
      return fail(PTO_INVALID_ARGUMENT, "kernel " + std::to_string(k.func_id) + " ('" + e.loaded.name +
                                            "' of kernel program " + e.path + ") is declared for core type " +
                                            std::to_string(e.loaded.core_type) + " in its KERNEL_LIST, but added as " +
                                            std::to_string(k.core_type));
    }
    in->kernels.emplace(k.func_id, e);
  }
  return PTO_OK;
}

pto_status DeviceRunner::stage_arguments(const pto_arg_desc *args, uint32_t num_args, RunInputs *in) {
  for (uint32_t i = 0; i < num_args; ++i) {
    const pto_arg_desc &a = args[i];
    if (a.kind == PTO_ARG_SCALAR) {
      in->scalars.push_back(a.scalar);
      continue;
    }
    const std::string where =
        "argument " + std::to_string(i) + " (tensor " + std::to_string(in->tensors.size()) + ")";
    if (a.kind != PTO_ARG_TENSOR && a.kind != PTO_ARG_DEVICE_TENSOR && a.kind != PTO_ARG_SHARED_TENSOR)
      return fail(PTO_INVALID_ARGUMENT, where + " has an unknown kind " + std::to_string(a.kind));
    // Range-checked before the cast: an out-of-range enum value is undefined behaviour.
    const uint32_t esize = a.dtype < PTO_DTYPE_COUNT ? pto_dtype_size(static_cast<pto_dtype>(a.dtype)) : 0;
    if (esize == 0)
      return fail(PTO_BAD_TENSOR, where + " has an unsupported dtype code " + std::to_string(a.dtype));
    if (a.ndim > PTO_MAX_DIMS) return fail(PTO_BAD_TENSOR, where + " has more than 8 dimensions");
    if (a.direction > PTO_DIR_INOUT) return fail(PTO_INVALID_ARGUMENT, where + " has an invalid direction");
    uint64_t nelems = 1, bytes = 0;
    bool wraps = false, empty = false;  // wraps: shape x dtype size is 2^64 bytes or more
    for (uint32_t d = 0; d < a.ndim; ++d) {
      if (a.shape[d] < 0) return fail(PTO_BAD_TENSOR, where + " has a negative extent");
      empty |= a.shape[d] == 0;
      wraps |= __builtin_mul_overflow(nelems, static_cast<uint64_t>(a.shape[d]), &nelems);
    }
    wraps = !empty && (wraps || __builtin_mul_overflow(nelems, uint64_t{esize}, &bytes));
    if (empty) nelems = bytes = 0;
    if (wraps || bytes != a.nbytes) {
      return fail(PTO_BAD_TENSOR, where + ": nbytes " + std::to_string(a.nbytes) +
                                      " does not match shape x dtype size (" +
                                      (wraps ? std::string("more than 2^64") : std::to_string(bytes)) +
                                      "); pass a C-contiguous array");
    }
    if (a.nbytes > 0 && a.host_ptr == nullptr)
      return fail(PTO_BAD_TENSOR, where + (a.kind == PTO_ARG_DEVICE_TENSOR ? " has no device address"
                                                                           : " has no host buffer"));
    // A device tensor (a communication window) is used where it is; nothing is staged. So is a
    // shared one (host memory this chip reaches), but an OUTPUT starts zeroed, as a staged one.
    void *dev = a.host_ptr;
    if (a.kind == PTO_ARG_SHARED_TENSOR && a.direction == PTO_DIR_OUTPUT) device_->zero_device(dev, a.nbytes);
    if (a.kind == PTO_ARG_TENSOR) {
      dev = in->allocations->allocate(a.nbytes);
      if (!dev)
        return fail(PTO_OUT_OF_MEMORY,
                    where + ": cannot allocate " + std::to_string(a.nbytes) + " device bytes");
      if (a.direction == PTO_DIR_OUTPUT) {
        // Outputs start zeroed, never with stale device data; zeroed in place (a host vector of
        // zeros cost a fresh page per 4 KiB of output on every run: 1 ms per 4 MiB here).
        device_->zero_device(dev, a.nbytes);
      } else {
        device_->copy_to_device(dev, a.host_ptr, a.nbytes);
      }
    }
    Tensor t;
    t.addr = reinterpret_cast<uint64_t>(dev);
    t.nbytes = a.nbytes;
    if (a.kind != PTO_ARG_TENSOR) in->in_place.emplace_back(t.addr, t.addr + t.nbytes);
    t.nelems = nelems;
    t.dtype = static_cast<pto_dtype>(a.dtype);
    t.ndim = a.ndim;
    for (uint32_t d = 0; d < a.ndim; ++d) t.shape[d] = a.shape[d];
    in->tensors.push_back(t);
    in->host_data.push_back(a.host_ptr);
  }
  return PTO_OK;
}

void DeviceRunner::copy_outputs(const pto_arg_desc *args, uint32_t num_args, const RunInputs &in) {
  size_t ti = 0;
  for (uint32_t i = 0; i < num_args; ++i) {
    if (args[i].kind == PTO_ARG_SCALAR) continue;
    const Tensor &t = in.tensors[ti++];
    if (args[i].kind == PTO_ARG_TENSOR && args[i].direction != PTO_DIR_INPUT && t.nbytes > 0) {
      device_->copy_from_device(args[i].host_ptr, reinterpret_cast<void *>(t.addr), t.nbytes);
    }
  }
}

struct DeviceRunner::InFlight {
  explicit InFlight(MemoryAllocator *memory) : allocations(memory) {}
  uint64_t t0 = 0;
  uint64_t deadline_ns = UINT64_MAX;
  ScopedAllocations allocations;  // freed when the run is finished
  RunInputs in;
  std::vector<pto_arg_desc> args;  // the caller's descriptors, for copying outputs back
  LaunchedRun launched;
  SimTiming timing;  // timing mode: what launched.spec.timing points to
  bool timed = false;
  uint64_t device_overhead_ns = 0;  // timing mode: the profile's device preamble + teardown
  uint64_t device_per_task_ns = 0;  // ... and its device time per task outside the makespan
  pto_run_stats stats{};
};

pto_status DeviceRunner::start(const pto_callable_desc *callable, const pto_arg_desc *args, uint32_t num_args,
                               const pto_call_config *cfg) {
  const uint64_t t0 = platform_now_ns();
  last_error_.clear();
  last_trace_.clear();
  render_trace_ = nullptr;
  if (!device_)
    return fail(PTO_NOT_INITIALIZED, "run() before set_device(): call set_device(device_id) first");
  if (!broken_.empty()) return fail(PTO_DEVICE_BROKEN, broken_);
  if (in_flight_)
    return fail(PTO_INVALID_ARGUMENT,
                "a run was started on this context and not finished yet: poll() it to completion first");
  if (!callable || !cfg || (num_args > 0 && !args)) {
    return fail(PTO_INVALID_ARGUMENT, "run(): callable, config and args must not be null");
  }
  if (callable->num_kernels > 0 && !callable->kernels) {
    return fail(PTO_INVALID_ARGUMENT, "run(): the callable's kernels is null but its num_kernels is " +
                                          std::to_string(callable->num_kernels));
  }
  pto_status rc = check_config(*cfg);
  if (rc != PTO_OK) return rc;
  if (!warming_ && (!callable->orchestration_path || !*callable->orchestration_path)) {
    return fail(PTO_INVALID_ARGUMENT,
                "the callable has no orchestration (compile one with KernelCompiler.compile_orchestration)");
  }
  int64_t seed = cfg->sim_seed;
  if (std::string why; seed < 0 && !env_sim_seed(&seed, &why)) return fail(PTO_INVALID_ARGUMENT, why);
  if (seed >= 0 && !device_->supports_seeded_runs()) {
    return fail(PTO_NOT_SUPPORTED,
                "sim_seed=" + std::to_string(seed) +
                    ": seeded (reproducible) runs need the sim's fiber execution " +
                    "model; this device does not schedule its threads itself (PTO_SIM_EXEC=threads, or " +
                    "a real device)");
  }
  bool timed = cfg->sim_timing != 0;
  if (std::string why; !timed && !env_sim_timing(&timed, &why)) return fail(PTO_INVALID_ARGUMENT, why);
  if (timed && seed < 0) {
    return fail(
        PTO_INVALID_ARGUMENT,
        std::string(cfg->sim_timing ? "sim_timing=1" : "PTO_SIM_TIMING=1") +
            ": the timing mode runs in a seeded schedule; set sim_seed >= 0 (or PTO_SIM_SEED) as well");
  }
  auto run = std::make_unique<InFlight>(memory_.get());
  run->t0 = t0;
  const uint64_t opened0 = device_->opened_ns() + host_opened_ns_;
  run->timed = timed;
  RunInputs &in = run->in;
  in.cfg = *cfg;
  in.orchestration_path = callable->orchestration_path;
  in.warm_up = warming_;
  in.allocations = &run->allocations;
  in.handshakes = reinterpret_cast<uint64_t>(handshakes_);
  in.scheduler_bells = reinterpret_cast<uint64_t>(scheduler_bells_);
  in.device_log = reinterpret_cast<uint64_t>(device_->device_log(cfg->log_level));
  // Timing mode: device timestamps are virtual nanoseconds (pto_platform/clock.h).
  in.ns_per_tick = timed ? 1.0 : device_->ns_per_tick();
  in.short_task_ticks = static_cast<uint64_t>(device_->short_task_ns() / in.ns_per_tick);
  // Seeded: no decision may depend on measured time, and queueing behind short kernels does.
  in.pipeline_ticks = seed >= 0 ? 0 : static_cast<uint64_t>(pipeline_ns() / in.ns_per_tick);
  // The tensormap orchestrator hands tasks ready at submit to the schedulers in batches held at
  // most this long (docs/design/tensormap_runtime.md); seeded runs hand each over at once.
  in.ready_hold_ticks = seed >= 0 ? 0 : static_cast<uint64_t>(graph::kReadyHoldNs / in.ns_per_tick);
  in.layout = geometry_->layout();
  in.timed = timed;
  if ((rc = load_kernels(*callable, &in)) != PTO_OK) return rc;
  if (warming_) {  // the warm-up program's kernels (core/warm_up_program.h), if the device has one
    for (const auto &[func, core] :
         {std::pair{kWarmUpAicFunc, PTO_CORE_AIC}, std::pair{kWarmUpAivFunc, PTO_CORE_AIV}}) {
      KernelEntry e;
      e.func_id = func;
      e.core_type = core;
      if (device_->idle_kernel(&e.loaded)) in.kernels.emplace(e.func_id, e);
    }
  }
  if (timed) {
    SimTiming &t = run->timing;
    t.kernel_factor = cfg->sim_kernel_time_pct / 100.0;
    std::string why;
    if ((rc = set_kernel_costs(*callable, in.kernels, &t, &run->stats, &why)) != PTO_OK) return fail(rc, why);
    SimTimingProfile p;  // PTO_SIM_PROFILE's file or the family's default, read at each run
    if ((rc = load_sim_timing_profile(geometry_->platform, geometry_->arch, &p, &why)) != PTO_OK)
      return fail(rc, why);
    t.dispatch_ns = p.dispatch_ns;
    t.completion_ns = p.completion_ns;
    t.submit_ns = p.submit_ns;
    t.cycles_per_us = p.cycles_per_us;
    t.work_ns[static_cast<uint32_t>(DeviceWork::kSubmit)] = p.aicpu_submit_ns;
    t.work_unit_ns[static_cast<uint32_t>(DeviceWork::kSubmit)] = p.aicpu_submit_tensor_ns;
    t.work_ns[static_cast<uint32_t>(DeviceWork::kDispatch)] = p.aicpu_dispatch_ns;
    t.work_ns[static_cast<uint32_t>(DeviceWork::kCompletion)] = p.aicpu_completion_ns;
    constexpr double kGiB = 1073741824.0 / 1e9;  // bytes per ns at 1 GiB/s
    t.gm_bytes_per_ns = p.gm_GBps;               // 1 GB/s = 1 byte per ns
    t.mte2_cube_bytes_per_ns = p.mte2_cube_GiBps * kGiB;
    t.mte2_vector_bytes_per_ns = p.mte2_vector_GiBps * kGiB;
    t.mte3_bytes_per_ns = p.mte3_GiBps * kGiB;
    t.fixp_bytes_per_ns = p.fixp_GiBps * kGiB;
    run->device_overhead_ns = p.device_preamble_ns + p.device_teardown_ns;
    run->device_per_task_ns = p.device_reset_per_task_ns;
  }
  if ((rc = stage_arguments(args, num_args, &in)) != PTO_OK) return rc;
  run->args.assign(args, args + num_args);
  std::string err;
  rc = runtime_prepare(*this, in, &run->stats, &err, &run->launched);
  if (rc != PTO_OK) return fail(rc, err);
  run->stats.load_ns = device_->opened_ns() + host_opened_ns_ - opened0;
  run->launched.spec.seed = seed;
  run->launched.spec.timing = timed ? &run->timing : nullptr;
  launch_run(*this, &run->launched);
  if (cfg->timeout_ms) run->deadline_ns = run->launched.launch_ns + cfg->timeout_ms * 1000000ull;
  in_flight_ = std::move(run);
  return PTO_OK;
}

pto_status DeviceRunner::poll(bool block, int *done, pto_run_stats *stats) {
  *done = 0;
  if (!in_flight_) return fail(PTO_INVALID_ARGUMENT, "poll(): no run was started on this context");
  InFlight &run = *in_flight_;
  // Blocking: wait until the device finished or the deadline passed, whichever comes first.
  const bool ended = block ? (device_->wait(run.deadline_ns), true)
                           : device_->finished() || platform_now_ns() >= run.deadline_ns;
  if (!ended) return PTO_OK;
  *done = 1;
  // The run ends here whatever happens next: its memory is freed when `owned` goes.
  std::unique_ptr<InFlight> owned = std::move(in_flight_);
  std::string err;
  pto_status rc;
  if (!device_->finished()) {
    rc = time_out_run(*this, run.in, run.launched, &err);
  } else {
    rc = complete_run(*this, run.launched, &run.stats, &err);
  }
  if (rc != PTO_OK) {
    if (run.stats.dump_dir[0]) err += std::string(" (its tensors were dumped to ") + run.stats.dump_dir + ")";
    return fail(rc, err);
  }
  copy_outputs(run.args.data(), static_cast<uint32_t>(run.args.size()), run.in);
  if (run.timed) {
    run.stats.predicted_makespan_ns = device_->virtual_makespan_ns();
    run.stats.predicted_device_ns = run.stats.predicted_makespan_ns + run.device_overhead_ns +
                                    run.device_per_task_ns * (run.stats.tasks_run + run.stats.tasks_retired_inline);
    device_->virtual_priced(run.stats.priced);
    if (run.stats.price_note[0]) say_once(std::string("sim_timing: ") + run.stats.price_note);
  }
  run.stats.total_ns = platform_now_ns() - run.t0;
  if (run.stats.pmu_note[0]) say_once(std::string("enable_pmu: ") + run.stats.pmu_note);
  if (stats) *stats = run.stats;
  return PTO_OK;
}

pto_status DeviceRunner::wait(uint64_t timeout_ns, int *ended) {
  *ended = 0;
  if (!in_flight_) return fail(PTO_INVALID_ARGUMENT, "wait(): no run was started on this context");
  const uint64_t now = platform_now_ns();
  const uint64_t until = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
  const uint64_t deadline = std::min(until, in_flight_->deadline_ns);
  *ended = device_->wait(deadline) || platform_now_ns() >= in_flight_->deadline_ns ? 1 : 0;
  return PTO_OK;
}

pto_status DeviceRunner::abort() {
  if (!in_flight_) return fail(PTO_INVALID_ARGUMENT, "abort(): no run was started on this context");
  std::unique_ptr<InFlight> owned = std::move(in_flight_);  // freed on return (unless leaked)
  std::string err;
  const pto_status rc = abort_run(*this, owned->in, owned->launched, &err);
  return fail(rc, err);
}

pto_status DeviceRunner::run(const pto_callable_desc *callable, const pto_arg_desc *args, uint32_t num_args,
                             const pto_call_config *cfg, pto_run_stats *stats) {
  pto_status rc = start(callable, args, num_args, cfg);
  if (rc != PTO_OK) return rc;
  int done = 0;
  return poll(true, &done, stats);
}

pto_status DeviceRunner::load_host_symbol(const std::string &path, const char *symbol, void **out,
                                          std::string *error) {
  void *lib;
  auto it = host_libs_.find(path);
  if (it != host_libs_.end()) {
    lib = it->second;
  } else {
    const uint64_t t0 = platform_now_ns();
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    host_opened_ns_ += platform_now_ns() - t0;
    if (!lib) {
      const char *e = dlerror();
      *error = "cannot load " + path + ": " + (e ? e : "unknown error");
      return PTO_LOAD_FAILED;
    }
    host_libs_.emplace(path, lib);
  }
  *out = dlsym(lib, symbol);
  if (!*out) {
    *error = path + " does not define " + symbol;
    return PTO_LOAD_FAILED;
  }
  return PTO_OK;
}

namespace {
// Contexts given up on while a kernel still ran in them: never freed or shut down, and kept
// reachable (from a global) so that leak checkers see a deliberate keep, not a lost pointer.
struct AbandonedContext {
  std::unique_ptr<MemoryAllocator> memory;
  std::unique_ptr<Device> device;
  void *handshakes, *scheduler_bells;  // still served and rung by the device's cores
};
void abandon(AbandonedContext context) {
  static std::mutex mu;
  static auto *kept = new std::vector<AbandonedContext>;
  std::lock_guard<std::mutex> lock(mu);
  kept->push_back(std::move(context));
}
}  // namespace

pto_status DeviceRunner::finalize() {
  if (in_flight_) {
    // A started run nobody finished: stop it before its memory and the device go away.
    in_flight_->launched.hooks.abort();
    device_->stop_waits();
    if (!device_->wait(platform_now_ns() + 5ull * 1000 * 1000 * 1000)) {
      mark_broken("a run was abandoned while a kernel was still running");
      in_flight_->allocations.leak();
    }
    in_flight_.reset();
  }
  if (!broken_.empty()) {
    // A kernel is still running on a device thread: joining would hang and freeing its memory
    // would corrupt it. Keep both on purpose; the process can go on with other contexts.
    abandon(AbandonedContext{std::move(memory_), std::move(device_), handshakes_, scheduler_bells_});
    handshakes_ = scheduler_bells_ = nullptr;
    kept_.clear();  // left with the device: its threads may still use them
  }
  if (memory_) memory_->free_all();
  memory_.reset();
  if (device_) {
    device_->shutdown();  // stops the cores (stop_cores) before the blocks they use go
    free_device_blocks(*device_);
  }
  device_.reset();
  for (auto &kv : host_libs_) dlclose(kv.second);
  host_libs_.clear();
  return PTO_OK;
}

}  // namespace pto
