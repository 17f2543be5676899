// src/worker/chip_worker.cpp — ChipWorker: loads a host program with dlopen and drives its C API.
//
// Just over 600 lines: each public call is a thin, checked wrapper of one C API function over
// the same resolved-symbol table (Impl); what would move out first is the RunStats conversion
// (to_run_stats), a pure function of the C struct.
#include "pto/chip_worker.h"

#include <dlfcn.h>

#include "core/geometry.h"
#include "pto/kernel_list.h"
#include "pto/schedule_config.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "worker/remote_windows.h"

namespace pto {

std::vector<KernelTableRow> read_kernel_table(const std::string &program_path) {
  void *lib = dlopen(program_path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) {
    const char *why = dlerror();
    throw Error(PTO_LOAD_FAILED,
                "cannot load kernel program " + program_path + ": " + (why ? why : "dlopen failed"));
  }
  const auto *table = static_cast<const pto_kernel_table_t *>(dlsym(lib, PTO_KERNEL_TABLE_SYMBOL));
  if (table == nullptr) {
    dlclose(lib);
    throw Error(PTO_INVALID_ARGUMENT, program_path +
                                          " is not a kernel program (no " PTO_KERNEL_TABLE_SYMBOL
                                          "; define it with PTO_KERNEL_PROGRAM from pto/kernel_list.h), so "
                                          "add its one kernel with add_kernel");
  }
  std::vector<KernelTableRow> rows;
  for (uint32_t i = 0; i < table->num_kernels; ++i) {
    const pto_kernel_table_entry &k = table->kernels[i];
    rows.push_back(
        KernelTableRow{i, k.name != nullptr ? k.name : "", static_cast<pto_core_type>(k.core_type)});
  }
  dlclose(lib);
  return rows;
}

uint32_t ChipCallable::add_kernels(const std::string &program_path) {
  const std::vector<KernelTableRow> rows = read_kernel_table(program_path);
  for (const Kernel &k : kernels_) {  // all or nothing: check before adding any
    if (k.func_id < rows.size()) {
      throw Error(PTO_INVALID_ARGUMENT, "ChipCallable.add_kernels: func_id " + std::to_string(k.func_id) +
                                            " ('" + rows[k.func_id].name + "' of " + program_path +
                                            ") is already defined (" + k.binary_path + ")");
    }
  }
  for (const KernelTableRow &r : rows) add_kernel(r.func_id, r.core_type, program_path);
  return static_cast<uint32_t>(rows.size());
}

void ChipCallable::add_kernel(uint32_t func_id, pto_core_type core_type, std::string binary_path) {
  for (const Kernel &k : kernels_) {
    if (k.func_id == func_id) {
      throw Error(PTO_INVALID_ARGUMENT, "ChipCallable.add_kernel: func_id " + std::to_string(func_id) +
                                            " is already defined (" + k.binary_path + ")");
    }
  }
  if (core_type != PTO_CORE_AIC && core_type != PTO_CORE_AIV && core_type != PTO_CORE_MIX) {
    throw Error(PTO_INVALID_ARGUMENT, "ChipCallable.add_kernel: core type must be AIC, AIV or MIX");
  }
  kernels_.push_back(Kernel{func_id, core_type, std::move(binary_path), "", ""});
}

void ChipCallable::set_cost_model(uint32_t func_id, std::string twin_path, std::string unavailable) {
  if (twin_path.empty() && unavailable.empty()) {
    throw Error(PTO_INVALID_ARGUMENT, "ChipCallable.set_cost_model: func_id " + std::to_string(func_id) +
                                          ": give the twin's path or why there is none");
  }
  for (Kernel &k : kernels_) {
    if (k.func_id != func_id) continue;
    k.cost_model_path = std::move(twin_path);
    k.cost_model_note = std::move(unavailable);
    return;
  }
  throw Error(PTO_INVALID_ARGUMENT, "ChipCallable.set_cost_model: func_id " + std::to_string(func_id) +
                                        " is not defined; add_kernel it first");
}

std::string RunStats::table() const {
  char buf[256];
  std::string t;
  std::snprintf(buf, sizeof buf, "tasks run        %llu (AIC %llu, AIV %llu, MIX %llu)\n",
                static_cast<unsigned long long>(tasks_run), static_cast<unsigned long long>(aic_tasks),
                static_cast<unsigned long long>(aiv_tasks), static_cast<unsigned long long>(mix_tasks));
  t += buf;
  std::snprintf(
      buf, sizeof buf,
      "orchestration    %.1f us\ndevice           %.1f us (launch to done)\ntotal            %.1f us",
      orchestration_us, device_us, total_us);
  t += buf;
  if (load_us > 0) {
    std::snprintf(buf, sizeof buf, " (%.1f us of it loading programs)", load_us);
    t += buf;
  }
  t += "\n";
  std::snprintf(buf, sizeof buf, "cores / AICPU    %u / %u\n", cores_used, aicpu_threads_used);
  t += buf;
  std::snprintf(buf, sizeof buf,
                "effective        %.1f us (first kernel start to last kernel end)\n"
                "scheduling       %.1f us (AICPU scheduler threads, not parked)\n",
                effective_us, scheduling_us);
  t += buf;
  for (pto_core_type type : {PTO_CORE_AIC, PTO_CORE_AIV}) {
    double sum = 0, lo = 1e300, hi = 0;
    uint64_t n = 0, tasks = 0;
    for (const Core &c : cores) {
      if (c.type != type) continue;
      sum += c.busy_fraction;
      lo = c.busy_fraction < lo ? c.busy_fraction : lo;
      hi = c.busy_fraction > hi ? c.busy_fraction : hi;
      tasks += c.tasks;
      ++n;
    }
    if (n == 0) continue;
    std::snprintf(buf, sizeof buf,
                  "%s busy         mean %.0f%% (min %.0f%%, max %.0f%%) over %llu cores, %llu kernels\n",
                  type == PTO_CORE_AIC ? "AIC" : "AIV", 100 * sum / static_cast<double>(n), 100 * lo,
                  100 * hi, static_cast<unsigned long long>(n), static_cast<unsigned long long>(tasks));
    t += buf;
  }
  if (predicted_makespan_us > 0) {
    std::snprintf(buf, sizeof buf,
                  "predicted        %.1f us (sim_timing: the device makespan in virtual time)\n",
                  predicted_makespan_us);
    t += buf;
    std::snprintf(buf, sizeof buf, "priced by        isa_model %llu, table %llu, host_time %llu kernels\n",
                  static_cast<unsigned long long>(priced_isa_model),
                  static_cast<unsigned long long>(priced_table),
                  static_cast<unsigned long long>(priced_host_time));
    t += buf;
  }
  if (pipeline_max_in_flight > 0) {
    std::snprintf(buf, sizeof buf, "pipeline         at most %u in flight per gate, %llu task(s) deferred\n",
                  pipeline_max_in_flight, static_cast<unsigned long long>(pipeline_deferred));
    t += buf;
  }
  if (batch_flushes > 0) {
    std::snprintf(
        buf, sizeof buf,
        "batch_deps       %llu batch(es), %llu TensorMap look-up(s) skipped, %llu access(es) not filed\n",
        static_cast<unsigned long long>(batch_flushes), static_cast<unsigned long long>(batch_local_hits),
        static_cast<unsigned long long>(batch_unfiled));
    t += buf;
  }
  if (dispatch_locality + dispatch_round_robin + dispatch_work_stealing > 0) {
    std::snprintf(buf, sizeof buf,
                  "dispatch         %llu locality, %llu round_robin, %llu work_stealing, %llu switch(es)\n",
                  static_cast<unsigned long long>(dispatch_locality),
                  static_cast<unsigned long long>(dispatch_round_robin),
                  static_cast<unsigned long long>(dispatch_work_stealing),
                  static_cast<unsigned long long>(dispatch_switches));
    t += buf;
  }
  const char *names[4] = {"task window", "heap (bytes)", "dep pool", "TensorMap"};
  const Ring *rings[4] = {&window, &heap, &dep_pool, &tensormap};
  if (window.capacity) {
    t += "ring             capacity   high water   stalls   stall us\n";
    for (int r = 0; r < 4; ++r) {
      std::snprintf(buf, sizeof buf, "%-16s %8llu   %10llu   %6llu   %8.1f\n", names[r],
                    static_cast<unsigned long long>(rings[r]->capacity),
                    static_cast<unsigned long long>(rings[r]->high_water),
                    static_cast<unsigned long long>(rings[r]->stalls), rings[r]->stall_us);
      t += buf;
    }
  }
  if (!pmu_note.empty()) t += "PMU              " + pmu_note + "\n";
  return t;
}

void ChipStorageTaskArgs::add_tensor(void *host_ptr, uint64_t nbytes, pto_dtype dtype,
                                     const std::vector<int64_t> &shape, pto_direction direction) {
  add(PTO_ARG_TENSOR, "add_tensor", host_ptr, nbytes, dtype, shape, direction);
}

void ChipStorageTaskArgs::add_device_tensor(void *device_ptr, uint64_t nbytes, pto_dtype dtype,
                                            const std::vector<int64_t> &shape, pto_direction direction) {
  add(PTO_ARG_DEVICE_TENSOR, "add_device_tensor", device_ptr, nbytes, dtype, shape, direction);
}

void ChipStorageTaskArgs::add_shared_tensor(void *host_ptr, uint64_t nbytes, pto_dtype dtype,
                                            const std::vector<int64_t> &shape, pto_direction direction) {
  add(PTO_ARG_SHARED_TENSOR, "add_shared_tensor", host_ptr, nbytes, dtype, shape, direction);
}

void ChipStorageTaskArgs::share_tensor(size_t index) {
  if (index >= args_.size() || args_[index].kind != PTO_ARG_TENSOR) {
    throw Error(PTO_INVALID_ARGUMENT, "ChipStorageTaskArgs.share_tensor: argument " + std::to_string(index) +
                                          " is not a staged tensor (add_tensor)");
  }
  args_[index].kind = PTO_ARG_SHARED_TENSOR;
}

void ChipStorageTaskArgs::add(pto_arg_kind kind, const char *call, void *ptr, uint64_t nbytes,
                              pto_dtype dtype, const std::vector<int64_t> &shape, pto_direction direction) {
  const std::string where =
      std::string("ChipStorageTaskArgs.") + call + " (argument " + std::to_string(args_.size()) + ")";
  if (shape.size() > PTO_MAX_DIMS) {
    throw Error(PTO_BAD_TENSOR,
                where + ": " + std::to_string(shape.size()) + " dimensions; at most 8 are supported");
  }
  if (pto_dtype_size(dtype) == 0) throw Error(PTO_BAD_TENSOR, where + ": unsupported dtype");
  if (direction != PTO_DIR_INPUT && direction != PTO_DIR_OUTPUT && direction != PTO_DIR_INOUT) {
    throw Error(PTO_INVALID_ARGUMENT, where + ": direction must be INPUT, OUTPUT or INOUT");
  }
  pto_arg_desc d{};
  d.kind = kind;
  d.dtype = dtype;
  d.direction = direction;
  d.ndim = static_cast<uint32_t>(shape.size());
  d.host_ptr = ptr;
  d.nbytes = nbytes;
  for (size_t i = 0; i < shape.size(); ++i) d.shape[i] = shape[i];
  args_.push_back(d);
}

void ChipStorageTaskArgs::add_scalar(int64_t value) {
  pto_arg_desc d{};
  d.kind = PTO_ARG_SCALAR;
  d.scalar = value;
  args_.push_back(d);
}

void ChipStorageTaskArgs::add_scalar_f32(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  add_scalar(static_cast<int64_t>(bits));
}

struct ChipWorker::Impl {
  RuntimeBinaries binaries;
  void *lib = nullptr;
  pto_device_context *ctx = nullptr;
  int device_id = -1;

  decltype(&::create_device_context) create = nullptr;
  decltype(&::set_device) set_device = nullptr;
  decltype(&::prewarm_runtime) prewarm = nullptr;
  decltype(&::run_runtime) run = nullptr;
  decltype(&::start_runtime) start = nullptr;
  decltype(&::poll_runtime) poll = nullptr;
  decltype(&::wait_runtime) wait = nullptr;
  decltype(&::abort_runtime) abort = nullptr;
  bool busy = false;       // start() succeeded and poll() has not finished the run yet
  bool finalized = false;  // finalize() after init(): every call but finalize() now fails
  decltype(&::finalize_device) finalize = nullptr;
  decltype(&::destroy_device_context) destroy = nullptr;
  decltype(&::get_last_error_message) last_error = nullptr;
  decltype(&::get_platform_info) platform_info = nullptr;
  decltype(&::get_last_trace_json) last_trace = nullptr;
  ClusterLayout layout;  // of the platform's chip (geometry table): where each handshake slot sits

  [[noreturn]] void raise(int code, const std::string &what) const {
    std::string msg = what;
    const char *detail = ctx && last_error ? last_error(ctx) : "";
    if (detail && *detail) msg += ": " + std::string(detail);
    throw Error(static_cast<pto_status>(code), msg);
  }

  template <typename F>
  void resolve(F *fn, const char *name) {
    *fn = reinterpret_cast<F>(dlsym(lib, name));
    if (!*fn) throw Error(PTO_LOAD_FAILED, "host program " + binaries.host_path + " does not export " + name);
  }
};

namespace {
std::atomic<pto_sim_remote_fn> g_remote_server{nullptr};
}  // namespace

void set_remote_window_server(pto_sim_remote_fn fn) {
  g_remote_server.store(fn, std::memory_order_release);
}
pto_sim_remote_fn remote_window_server() {
  return g_remote_server.load(std::memory_order_acquire);
}

namespace {
// The one message for any call on a finalized worker (the L3 Worker says the same after close()).
Error finalized_error(const char *what) {
  return Error(PTO_NOT_INITIALIZED,
               std::string("ChipWorker.") + what +
                   ": the worker is finalized (finalize() was called); create a new ChipWorker");
}
}  // namespace

ChipWorker::ChipWorker() : impl_(new Impl) {}
ChipWorker::~ChipWorker() {
  try {
    finalize();
  } catch (...) {
  }
}

void ChipWorker::init(const std::string &platform, const std::string &runtime) {
  init(RuntimeBuilder(platform).get_binaries(runtime));
}

void ChipWorker::init(const RuntimeBinaries &binaries) {
  Impl &m = *impl_;
  if (m.finalized) throw finalized_error("init");
  if (m.lib) throw Error(PTO_INVALID_ARGUMENT, "ChipWorker.init was already called; use a new ChipWorker");
  m.binaries = binaries;
  m.lib = dlopen(binaries.host_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m.lib) {
    const char *e = dlerror();
    throw Error(PTO_LOAD_FAILED, "cannot load host program " + binaries.host_path + ": " + (e ? e : "?"));
  }
  m.resolve(&m.create, "create_device_context");
  m.resolve(&m.set_device, "set_device");
  m.resolve(&m.prewarm, "prewarm_runtime");
  m.resolve(&m.run, "run_runtime");
  m.resolve(&m.start, "start_runtime");
  m.resolve(&m.poll, "poll_runtime");
  m.resolve(&m.wait, "wait_runtime");
  m.resolve(&m.abort, "abort_runtime");
  m.resolve(&m.finalize, "finalize_device");
  m.resolve(&m.destroy, "destroy_device_context");
  m.resolve(&m.last_error, "get_last_error_message");
  m.resolve(&m.platform_info, "get_platform_info");
  m.resolve(&m.last_trace, "get_last_trace_json");
  using BindRemote = void (*)(pto_sim_remote_server);
  if (auto bind = reinterpret_cast<BindRemote>(dlsym(m.lib, PTO_SIM_BIND_REMOTE_WINDOWS_SYMBOL)))
    bind(&remote_window_server);  // the sim's host programs: windows of other hosts (L4)
  int rc =
      m.create(binaries.platform.c_str(), binaries.aicpu_path.c_str(), binaries.aicore_path.c_str(), &m.ctx);
  if (rc != PTO_OK) {
    throw Error(static_cast<pto_status>(rc),
                "cannot create a device context for platform '" + binaries.platform + "'");
  }
  const ChipGeometry *g = find_geometry(binaries.platform.c_str());
  if (g == nullptr) {  // create_device_context knows the same table, so it has refused it already
    throw Error(PTO_INTERNAL, "platform '" + binaries.platform + "' has no row in the geometry table");
  }
  m.layout = g->layout();
}

namespace {

// The devices this process's workers hold, by (platform, id). Two workers on one device would
// each build their own simulated device (on hardware: contend for one) and neither would know;
// a second worker is refused until the first finalizes. Guarded by open_devices_mutex.
std::mutex open_devices_mutex;
std::set<std::pair<std::string, int>> open_devices;

void claim_device(const std::string &platform, int device_id) {
  std::lock_guard<std::mutex> lock(open_devices_mutex);
  if (!open_devices.insert({platform, device_id}).second) {
    throw Error(PTO_INVALID_ARGUMENT, "device_id " + std::to_string(device_id) + " of " + platform +
                                          " is already used by another worker in this process; finalize "
                                          "(close) that worker first, or pick another device_id");
  }
}

void release_device(const std::string &platform, int device_id) {
  std::lock_guard<std::mutex> lock(open_devices_mutex);
  open_devices.erase({platform, device_id});
}

}  // namespace

void ChipWorker::set_device(int device_id) {
  Impl &m = *impl_;
  if (m.finalized) throw finalized_error("set_device");
  if (!m.ctx)
    throw Error(PTO_NOT_INITIALIZED,
                "ChipWorker.set_device before init(): call init(platform, runtime) first");
  if (device_id >= 0 && device_id == m.device_id) return;  // already this worker's device
  if (m.device_id >= 0) {
    throw Error(PTO_INVALID_ARGUMENT,
                "ChipWorker.set_device(" + std::to_string(device_id) + "): this worker already uses device " +
                    std::to_string(m.device_id) + "; finalize it and init a new one for another device");
  }
  const std::string &platform = m.binaries.platform;
  claim_device(platform, device_id);
  const int rc = m.set_device(m.ctx, device_id);
  if (rc != PTO_OK) {
    release_device(platform, device_id);
    m.raise(rc, "set_device(" + std::to_string(device_id) + ")");
  }
  m.device_id = device_id;
}

namespace {

RunStats to_run_stats(const pto_run_stats &s, const ClusterLayout &layout) {
  RunStats out;
  out.tasks_run = s.tasks_run;
  out.aic_tasks = s.tasks_per_core_type[PTO_CORE_AIC];
  out.aiv_tasks = s.tasks_per_core_type[PTO_CORE_AIV];
  out.mix_tasks = s.tasks_per_core_type[PTO_CORE_MIX];
  out.orchestration_us = static_cast<double>(s.orchestration_ns) / 1e3;
  out.device_us = static_cast<double>(s.launch_to_done_ns) / 1e3;
  out.load_us = static_cast<double>(s.load_ns) / 1e3;
  out.total_us = static_cast<double>(s.total_ns) / 1e3;
  out.cores_used = s.cores_used;
  out.aicpu_threads_used = s.aicpu_threads_used;
  RunStats::Ring *rings[4] = {&out.window, &out.heap, &out.dep_pool, &out.tensormap};
  for (int r = 0; r < 4; ++r) {
    *rings[r] = RunStats::Ring{s.ring_capacity[r], s.ring_high_water[r], s.ring_stalls[r],
                               static_cast<double>(s.ring_stall_ns[r]) / 1e3};
  }
  out.effective_us = static_cast<double>(s.effective_ns) / 1e3;
  out.pmu_note = std::string(s.pmu_note, strnlen(s.pmu_note, sizeof s.pmu_note));
  out.dump_dir = std::string(s.dump_dir, strnlen(s.dump_dir, sizeof s.dump_dir));
  out.scheduling_us = static_cast<double>(s.scheduling_ns) / 1e3;
  out.predicted_makespan_us = static_cast<double>(s.predicted_makespan_ns) / 1e3;
  out.priced_host_time = s.priced[PTO_PRICE_HOST_TIME];
  out.priced_table = s.priced[PTO_PRICE_TABLE];
  out.priced_isa_model = s.priced[PTO_PRICE_ISA_MODEL];
  for (uint32_t i = 0; i < s.num_kernel_prices && i < PTO_STATS_MAX_KERNELS; ++i)
    out.kernel_pricing.emplace_back(s.kernel_price_func[i], pto_price_source_name(s.kernel_price_source[i]));
  out.price_note = std::string(s.price_note, strnlen(s.price_note, sizeof s.price_note));
  out.window_overflow = s.window_overflow < kWindowOverflowCount
                            ? window_overflow_name(static_cast<WindowOverflow>(s.window_overflow))
                            : "?";
  out.pipeline_deferred = s.pipeline_deferred;
  out.pipeline_max_in_flight = s.pipeline_max_in_flight;
  out.batch_flushes = s.batch_flushes;
  out.batch_local_hits = s.batch_local_hits;
  out.batch_unfiled = s.batch_unfiled;
  out.dispatch_locality = s.dispatch_tasks[0];
  out.dispatch_round_robin = s.dispatch_tasks[1];
  out.dispatch_work_stealing = s.dispatch_tasks[2];
  out.dispatch_switches = s.dispatch_switches;
  out.tasks_retired_inline = s.tasks_retired_inline;
  out.predicted_device_us = static_cast<double>(s.predicted_device_ns) / 1e3;
  for (uint32_t k = 0; k < PTO_TASK_TIMING_SLOTS; ++k) {
    if (s.task_slot_mask >> k & 1u)
      out.task_timing_slots.push_back({k, s.task_slot_dispatch_ns[k], s.task_slot_finish_ns[k]});
  }
  out.cores.reserve(s.num_cores);
  for (uint32_t slot = 0; slot < s.num_cores; ++slot) {
    const HandshakeSlotPlace place = layout.place(slot);
    RunStats::Core c;
    c.slot = slot;
    c.type = static_cast<pto_core_type>(place.core_type);
    c.cluster = place.cluster;
    if (c.cluster >= s.block_dim) continue;
    c.tasks = s.core_tasks[slot];
    c.busy_us = static_cast<double>(s.core_busy_ns[slot]) / 1e3;
    c.busy_fraction = s.effective_ns ? static_cast<double>(s.core_busy_ns[slot]) / s.effective_ns : 0.0;
    c.predicted_utilisation =
        s.predicted_makespan_ns ? static_cast<double>(s.core_busy_ns[slot]) / s.predicted_makespan_ns : 0.0;
    out.cores.push_back(c);
  }
  return out;
}

// The C descriptors of a call; they point into `callable`, which outlives the call.
struct CallableDesc {
  explicit CallableDesc(const ChipCallable &callable) {
    kernels.reserve(callable.kernels().size());
    for (const auto &k : callable.kernels())
      kernels.push_back(pto_kernel_desc{k.func_id, k.core_type, k.binary_path.c_str(),
                                        k.cost_model_path.c_str(), k.cost_model_note.c_str()});
    desc = pto_callable_desc{callable.orchestration().c_str(), kernels.data(),
                             static_cast<uint32_t>(kernels.size())};
  }
  std::vector<pto_kernel_desc> kernels;
  pto_callable_desc desc;
};

}  // namespace

void ChipWorker::check_ready(const char *what) const {
  const Impl &m = *impl_;
  if (m.finalized) throw finalized_error(what);
  if (!m.ctx)
    throw Error(PTO_NOT_INITIALIZED,
                std::string("ChipWorker.") + what + " before init(): call init() and set_device() first");
  if (m.device_id < 0)
    throw Error(PTO_NOT_INITIALIZED,
                std::string("ChipWorker.") + what + " before set_device(): call set_device(id) first");
}

void ChipWorker::prewarm(const ChipCallConfig &config) {
  Impl &m = *impl_;
  check_ready("prewarm");
  if (m.busy)
    throw Error(PTO_INVALID_ARGUMENT,
                "ChipWorker.prewarm while a started run is in flight: poll() it to completion first");
  const pto_call_config cfg = config.to_c();
  const int rc = m.prewarm(m.ctx, &cfg);
  if (rc != PTO_OK) m.raise(rc, "prewarm failed");
}

RunStats ChipWorker::run(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                         const ChipCallConfig &config) {
  Impl &m = *impl_;
  check_ready("run");
  if (m.busy)
    throw Error(PTO_INVALID_ARGUMENT,
                "ChipWorker.run while a started run is in flight: poll() it to completion first");
  const CallableDesc c(callable);
  const pto_call_config cfg = config.to_c();
  pto_run_stats s{};
  int rc = m.run(m.ctx, &c.desc, args.descs().data(), static_cast<uint32_t>(args.descs().size()), &cfg, &s);
  if (rc != PTO_OK) m.raise(rc, "run failed");
  return to_run_stats(s, m.layout);
}

void ChipWorker::start(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                       const ChipCallConfig &config) {
  Impl &m = *impl_;
  check_ready("start");
  if (m.busy)
    throw Error(PTO_INVALID_ARGUMENT,
                "ChipWorker.start while a started run is in flight: poll() it to completion first");
  const CallableDesc c(callable);
  const pto_call_config cfg = config.to_c();
  int rc = m.start(m.ctx, &c.desc, args.descs().data(), static_cast<uint32_t>(args.descs().size()), &cfg);
  if (rc != PTO_OK) m.raise(rc, "run failed");
  m.busy = true;
}

bool ChipWorker::poll(RunStats *stats) {
  Impl &m = *impl_;
  check_ready("poll");
  if (!m.busy) throw Error(PTO_INVALID_ARGUMENT, "ChipWorker.poll without a started run: call start() first");
  int done = 0;
  pto_run_stats s{};
  int rc = m.poll(m.ctx, 0, &done, &s);
  if (!done && rc == PTO_OK) return false;
  m.busy = false;
  if (rc != PTO_OK) m.raise(rc, "run failed");
  if (stats) *stats = to_run_stats(s, m.layout);
  return true;
}

bool ChipWorker::wait(int64_t timeout_ms) {
  Impl &m = *impl_;
  check_ready("wait");
  if (!m.busy) throw Error(PTO_INVALID_ARGUMENT, "ChipWorker.wait without a started run: call start() first");
  const uint64_t ns = timeout_ms < 0 ? UINT64_MAX : static_cast<uint64_t>(timeout_ms) * 1000000ull;
  int ended = 0;
  const int rc = m.wait(m.ctx, ns, &ended);
  if (rc != PTO_OK) m.raise(rc, "wait failed");
  return ended != 0;
}

void ChipWorker::abort() {
  Impl &m = *impl_;
  check_ready("abort");
  if (!m.busy)
    throw Error(PTO_INVALID_ARGUMENT, "ChipWorker.abort without a started run: call start() first");
  m.busy = false;  // the run is over whatever happens below
  const int rc = m.abort(m.ctx);
  if (rc != PTO_OK && rc != PTO_ABORTED) m.raise(rc, "abort");
}

bool ChipWorker::busy() const {
  return impl_->busy;
}

void ChipWorker::finalize() {
  Impl &m = *impl_;
  m.busy = false;  // finalize stops a run nobody finished
  if (m.lib) m.finalized = true;
  if (m.ctx) {
    m.finalize(m.ctx);
    m.destroy(m.ctx);
    m.ctx = nullptr;
  }
  // The host program stays loaded: a process may create workers again, and unloading a
  // library whose threads just exited is a needless risk.
  if (m.device_id >= 0) release_device(m.binaries.platform, m.device_id);
  m.device_id = -1;
}

std::string ChipWorker::last_trace_json() const {
  const Impl &m = *impl_;
  if (m.finalized) throw finalized_error("last_trace");
  return m.ctx ? std::string(m.last_trace(m.ctx)) : std::string();
}

bool ChipWorker::initialized() const {
  return impl_->ctx != nullptr;
}
int ChipWorker::device_id() const {
  return impl_->device_id;
}

PlatformInfo ChipWorker::platform_info() const {
  const Impl &m = *impl_;
  if (m.finalized) throw finalized_error("platform_info");
  if (!m.ctx) throw Error(PTO_NOT_INITIALIZED, "ChipWorker.platform_info before init(): call init() first");
  PlatformInfo p;
  p.platform = m.binaries.platform;
  int32_t clusters = 0, threads = 0, devices = 0;
  m.platform_info(m.ctx, &clusters, &threads, &devices);
  p.num_clusters = clusters;
  p.max_aicpu_threads = threads;
  p.num_devices = devices;
  return p;
}

}  // namespace pto
