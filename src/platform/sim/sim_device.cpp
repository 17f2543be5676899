// src/platform/sim/sim_device.cpp — the simulated device: malloc memory, dlopen'd programs, fibers.
//
// One fiber per AICPU thread and per compute core of the shape (fiber_pool.h: run by a
// pool of OS threads sized to the CPUs, shared by every device of the process), started when the
// programs are loaded and kept until shutdown. Core fibers run the AICore program once, for
// the device's whole life: it serves the core's part of the host's block (CoreProgram) run
// after run, suspended on it while idle, so a run launches only the AICPU threads it uses
// (their doorbells are rung; the others stay suspended) and its fixed cost does not grow with
// the chip. The device knows the chip only as its DeviceShape (pto_platform/device.h).
// PTO_SIM_EXEC=threads runs each of them on an OS thread of its own instead (the model before
// the pool; kept for comparison, docs/design/sim_execution.md).
// Over 600 lines: one device's life, from loading to shutdown, with its CPU placement. What
// would move out first is the loading of a program (SimDevice::library: dlopen and binding the
// sim's hooks into it), which touches only its own cache of loaded programs (libs_).
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "crash_report_sim.h"
#include "device_log_sim.h"
#include "fiber_pool.h"
#include "pto/kernel_list.h"
#include "pto_platform/device.h"
#include "pto_platform/doorbell.h"
#include "sim_exec.h"
#include "tile_pipes_sim.h"

namespace pto {
namespace {

// The CPUs this process may run on (read once).
const std::vector<int> &allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> out;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    }
    return out;
  }();
  return cpus;
}

size_t host_cpus() {
  return allowed_cpus().empty() ? 1 : allowed_cpus().size();
}

// Below this average kernel time, handing tasks to more cores (waking parked core threads, 10-50
// us each on the 2-vCPU VM) costs more than it gains; see short_task_ns(). Tuned with
// bench/run.py (METG and empty tasks) at 0, 3, 8 and 20 us: 0 makes fan-out and stencil graphs
// 5-8x slower; 3 us gave the best METG (20-44 us against 35-58 at 20 us), the same empty-task
// costs.
constexpr uint32_t kShortTaskNs = 3000;

// A kernel's or orchestration's sched_yield (pto/sim_kernel_yield.h): a kernel polling another
// core's write or a clock lets the other fibers run; on an OS thread, the C library's.
int kernel_yield() {
  return platform_fiber_yield() ? 0 : sched_yield();
}

// PTO_SIM_EXEC: "fibers" (default) or "threads"; read once.
bool use_fibers() {
  static const bool fibers = [] {
    const char *s = getenv("PTO_SIM_EXEC");
    if (s == nullptr || *s == '\0' || strcmp(s, "fibers") == 0) return true;
    if (strcmp(s, "threads") == 0) return false;
    fprintf(stderr, "pto_runtime: PTO_SIM_EXEC=%s is not 'fibers' or 'threads'; using fibers\n", s);
    return true;
  }();
  return fibers;
}

// What a fiber of the device sets on the OS thread that resumes it (FiberResumeHook).
struct FiberIdentity {
  char log_name[24];
  const CrashReportCore *core = nullptr;  // null for an AICPU thread
  SimCoreSlot *slot = nullptr;            // likewise
  static void on_resume(void *arg) {
    const auto *id = static_cast<const FiberIdentity *>(arg);
    sim_log_set_fiber_name(id->log_name);
    crash_report_set_current(id->core);
    sim_core_set_current(id->slot);
  }
};

// The core state the AICore program's kernel calls reach (sim_exec.h, SimCoreHooks).
const SimCoreHooks kCoreHooks = {sim_core_set_kernel_waits};

std::string dl_error() {
  const char *e = dlerror();
  return e ? e : "unknown dynamic loader error";
}

ClockPair calibration_origin();

// Device::idle_kernel's kernel: the sim's cores run in this process, so it is a function of it.
void idle_kernel_entry(int64_t *args) {
  (void)args;
}

class SimDevice final : public Device {
 public:
  SimDevice(const DeviceShape &shape, int device_id) : Device(shape, device_id), log_(device_id) {
    (void)calibration_origin();  // the tick rate's baseline starts with the first device
  }
  ~SimDevice() override { shutdown(); }

  void *malloc(size_t bytes) override;
  void free(void *addr) override;
  // An empty tensor may have no host buffer (null): memcpy's pointers must not be null even
  // for 0 bytes.
  void copy_to_device(void *dst, const void *src, size_t bytes) override {
    if (bytes) memcpy(dst, src, bytes);
  }
  void copy_from_device(void *dst, const void *src, size_t bytes) override {
    if (bytes) memcpy(dst, src, bytes);
  }
  void zero_device(void *dst, size_t bytes) override {
    if (bytes) memset(dst, 0, bytes);
  }

  pto_status load_programs(const std::string &aicpu_path, const std::string &aicore_path,
                           const CoreProgram &cores, std::string *error) override;
  pto_status load_kernel(const std::string &path, uint32_t func_id, LoadedKernel *out,
                         std::string *error) override;
  pto_status load_symbol(const std::string &path, const char *symbol, uint64_t *addr,
                         std::string *error) override;
  void *device_log(int32_t level) override { return log_.for_run(level); }
  void launch(const LaunchSpec &spec) override;
  bool wait(uint64_t deadline_ns) override;
  bool finished() override { return remaining_.load(std::memory_order_acquire) == 0; }
  int launch_status() const override { return status_.load(std::memory_order_acquire); }
  // With fewer CPUs than device threads: kernels shorter than PTO_SIM_SHORT_TASK_NS (default
  // kShortTaskNs; 0 turns the policy off) stay on one warm core per scheduler.
  uint64_t opened_ns() const override { return opened_ns_.load(std::memory_order_relaxed); }
  bool idle_kernel(LoadedKernel *out) const override {
    out->entry_addr = reinterpret_cast<uint64_t>(&idle_kernel_entry);
    out->name = "idle";
    return true;
  }
  uint32_t short_task_ns() const override {
    static const uint32_t ns = [] {
      const char *s = getenv("PTO_SIM_SHORT_TASK_NS");
      return s ? static_cast<uint32_t>(strtoul(s, nullptr, 10)) : kShortTaskNs;
    }();
    if (use_fibers()) return 0;  // handing a task to an idle core is a queue push, not a wake-up
    return host_cpus() < threads_.size() ? ns : 0;
  }
  double ns_per_tick() const override;
  bool supports_seeded_runs() const override { return use_fibers(); }
  uint64_t virtual_makespan_ns() const override { return timed_ ? det_->makespan_ns() : 0; }
  void virtual_priced(uint64_t (&counts)[PTO_PRICE_SOURCE_COUNT]) const override {
    if (timed_) return det_->priced(counts);
    for (uint64_t &c : counts) c = 0;
  }
  void shutdown() override;
  void stop_waits() override { stop_waits_.store(true, std::memory_order_release); }
  std::string waits_report() const override {
    return core_slots_ ? signal_waits_report(core_slots_.get(), static_cast<uint32_t>(shape().cores.size()),
                                             platform_now_ns())
                       : std::string();
  }

 private:
  // One slot per device thread. A launch writes the spec into the slots of the threads that
  // take part, then publishes it with a release store of `assigned` and rings only their
  // doorbells: threads outside the launch are neither woken nor read anything, and a slot is
  // rewritten only after its thread finished the previous launch (the host waits for that).
  struct alignas(64) ThreadSlot {
    Doorbell bell;                      // rung by the host: launch or shutdown
    std::atomic<uint32_t> assigned{0};  // writer: host (release); reader: the slot's thread
    LaunchSpec spec;                    // writer: host, before `assigned`
  };
  void aicpu_main(uint32_t index, ThreadSlot *slot);
  void assign(uint32_t slot, const LaunchSpec &spec);
  void finish_one();
  void place_threads(uint32_t schedulers);
  uint32_t placed_for_ = 0;  // host only: the scheduler count the threads are placed for

  void *aicpu_lib_ = nullptr;
  void *aicore_lib_ = nullptr;
  AicpuEntryFn aicpu_entry_ = nullptr;
  AicoreEntryFn aicore_entry_ = nullptr;
  std::vector<std::thread> threads_;             // PTO_SIM_EXEC=threads: AICPU threads, then one per core
  bool started_ = false;                         // load_programs started the device's threads or fibers
  bool pool_acquired_ = false;                   // this device counts as a user of the fiber pool
  FiberGroup fibers_;                            // the device's fibers (fiber mode)
  std::unique_ptr<DeterministicExecutor> det_;   // seeded runs: made at the first one
  bool timed_ = false;                           // the last launch ran in virtual time (host only)
  std::unique_ptr<FiberIdentity[]> identities_;  // one per fiber: AICPU threads, then cores
  CoreProgram cores_;                            // the host's, from load_programs
  std::unique_ptr<CrashReportCore[]> crash_;     // one per core: what the fault report reads
  std::unique_ptr<SimCoreSlot[]> core_slots_;    // one per core: what its kernels' pipe hooks read
  TilePipes pipes_;                              // PTO-ISA's TPUSH/TPOP pipes, per cluster
  std::atomic<bool> stop_waits_{false};          // stop_waits() until the next launch

  std::unique_ptr<ThreadSlot[]> slots_;  // one per AICPU thread
  uint32_t generation_ = 0;              // host only
  std::atomic<bool> stopping_{false};
  alignas(64) std::atomic<uint32_t> remaining_{0};  // writers: device threads finishing
  std::atomic<int> status_{0};
  Doorbell done_;  // rung by the last thread to finish
  SimDeviceLog log_;

  // Large blocks freed by one run are kept for the next (runs of one graph ask for the same
  // sizes): the C library would hand them back to the kernel, and the next run would fault in
  // and zero every page again — a fixed cost per run that grew with the block.
  static constexpr size_t kCacheMinBytes = 64 << 10;
  static constexpr size_t kCacheMaxBytes = 512ull << 20;  // at most this much kept
  std::mutex blocks_mu_;
  std::multimap<size_t, void *> free_blocks_;  // size -> block (blocks_mu_)
  std::map<void *, size_t> block_size_;        // every large block handed out (blocks_mu_)
  size_t cached_bytes_ = 0;                    // in free_blocks_ (blocks_mu_)

  void *library(const std::string &path, std::string *error);  // dlopen once per path (libs_mu_ held)
  std::mutex libs_mu_;
  std::map<std::string, void *> libs_;  // kernels and device orchestrations
  std::atomic<uint64_t> opened_ns_{0};  // time spent in library()'s dlopen calls
};

pto_status SimDevice::load_programs(const std::string &aicpu_path, const std::string &aicore_path,
                                    const CoreProgram &cores, std::string *error) {
  if (started_) return PTO_OK;
  aicpu_lib_ = dlopen(aicpu_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!aicpu_lib_) {
    *error = "cannot load AICPU program " + aicpu_path + ": " + dl_error();
    return PTO_LOAD_FAILED;
  }
  aicore_lib_ = dlopen(aicore_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!aicore_lib_) {
    *error = "cannot load AICore program " + aicore_path + ": " + dl_error();
    return PTO_LOAD_FAILED;
  }
  aicpu_entry_ = reinterpret_cast<AicpuEntryFn>(dlsym(aicpu_lib_, PTO_AICPU_ENTRY_SYMBOL));
  aicore_entry_ = reinterpret_cast<AicoreEntryFn>(dlsym(aicore_lib_, PTO_AICORE_ENTRY_SYMBOL));
  if (!aicpu_entry_ || !aicore_entry_) {
    *error = "device program lacks its entry point (" PTO_AICPU_ENTRY_SYMBOL " in " + aicpu_path +
             ", " PTO_AICORE_ENTRY_SYMBOL " in " + aicore_path + ")";
    return PTO_LOAD_FAILED;
  }
  if (!cores.block || !cores.stop) {
    *error = "the host gave the cores no block to serve or no way to stop them";
    return PTO_INVALID_ARGUMENT;
  }
  cores_ = cores;
  const DeviceShape &sh = shape();
  const uint32_t aicpu = sh.aicpu_threads;
  const auto ncores = static_cast<uint32_t>(sh.cores.size());
  crash_.reset(new CrashReportCore[ncores]);
  for (uint32_t c = 0; c < ncores; ++c)
    crash_[c] = CrashReportCore{cores_.activity, cores_.block, c, sh.cores[c].kind};
  core_slots_.reset(new SimCoreSlot[ncores]);
  for (uint32_t c = 0; c < ncores; ++c) {
    const CoreDesc &d = sh.cores[c];
    const bool aic = strcmp(d.kind, "AIC") == 0;
    SimCoreSlot &slot = core_slots_[c];
    slot.pipes = &pipes_;
    slot.cluster = d.cluster;
    slot.subblock = aic ? 0u : d.lane;
    slot.aic = aic;
    slot.stop_waits = &stop_waits_;
  }
  // A MIX part's kernel call hands its waits to its core's slot (kernel_call_sim.cpp).
  if (auto bind =
          reinterpret_cast<void (*)(const SimCoreHooks *)>(dlsym(aicore_lib_, PTO_SIM_BIND_CORE_SYMBOL)))
    bind(&kCoreHooks);
  slots_.reset(new ThreadSlot[aicpu]);
  crash_report_install();
  started_ = true;
  if (use_fibers()) {
    FiberPool &pool = FiberPool::instance();
    if (!FiberPool::bind_program(aicpu_lib_) || !FiberPool::bind_program(aicore_lib_)) {
      started_ = false;
      *error = "device programs lack " PTO_SIM_BIND_EXEC_SYMBOL " (" + aicpu_path + ", " + aicore_path +
               "): they were built for another sim";
      return PTO_LOAD_FAILED;
    }
    pool.acquire();
    pool_acquired_ = true;
    identities_.reset(new FiberIdentity[aicpu + ncores]);
    const std::string dev = " of device " + std::to_string(device_id());
    for (uint32_t i = 0; i < aicpu; ++i) {
      FiberIdentity &id = identities_[i];
      snprintf(id.log_name, sizeof id.log_name, "aicpu %u", i);
      pool.spawn(
          fibers_, id.log_name + dev, [this, i] { aicpu_main(i, &slots_[i]); }, &FiberIdentity::on_resume,
          &id, FiberRole::kAicpu);
    }
    for (uint32_t c = 0; c < ncores; ++c) {
      FiberIdentity &id = identities_[aicpu + c];
      snprintf(id.log_name, sizeof id.log_name, "core %u", c);
      id.core = &crash_[c];
      id.slot = &core_slots_[c];
      pool.spawn(
          fibers_, id.log_name + dev, [this, c] { aicore_entry_(cores_.block, c); },
          &FiberIdentity::on_resume, &id, FiberRole::kCore);
    }
    (void)ns_per_tick();  // the process's tick rate, measured once here rather than in a run
    return PTO_OK;
  }
  for (uint32_t i = 0; i < aicpu; ++i) {
    threads_.emplace_back([this, i] {
      sim_log_set_thread("aicpu", i);
      aicpu_main(i, &slots_[i]);
    });
  }
  for (uint32_t c = 0; c < ncores; ++c) {
    threads_.emplace_back([this, c] {
      sim_log_set_thread("core", c);
      const CrashReportThread report(&crash_[c]);  // a kernel that faults says which it was
      sim_core_set_current(&core_slots_[c]);
      aicore_entry_(cores_.block, c);
    });
  }
  (void)ns_per_tick();  // as above
  return PTO_OK;
}

void *SimDevice::library(const std::string &path, std::string *error) {
  auto it = libs_.find(path);
  if (it != libs_.end()) return it->second;
  const uint64_t t0 = platform_now_ns();
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  opened_ns_.fetch_add(platform_now_ns() - t0, std::memory_order_relaxed);
  if (!lib) {
    *error = "cannot load " + path + ": " + dl_error();
    return nullptr;
  }
  libs_.emplace(path, lib);
  // Its sched_yield calls come to kernel_yield (pto/sim_kernel_yield.h); binaries that
  // KernelCompiler did not build may lack the hook and keep the C library's.
  using BindYield = void (*)(int (*)());
  if (auto bind = reinterpret_cast<BindYield>(dlsym(lib, "pto_sim_bind_kernel_yield"))) bind(&kernel_yield);
  bind_tile_pipes(lib);  // a tile kernel's TPUSH/TPOP pipes (tile_pipes_sim.h)
  return lib;
}

pto_status SimDevice::load_kernel(const std::string &path, uint32_t func_id, LoadedKernel *out,
                                  std::string *error) {
  std::lock_guard<std::mutex> lock(libs_mu_);
  void *lib = library(path, error);
  if (!lib) return PTO_LOAD_FAILED;
  // A kernel program: the table's entry for func_id, which runs the program's dispatch switch.
  if (const auto *table = static_cast<const pto_kernel_table_t *>(dlsym(lib, PTO_KERNEL_TABLE_SYMBOL))) {
    if (func_id >= table->num_kernels) {
      *error = "kernel program " + path + " has " + std::to_string(table->num_kernels) +
               " kernels (func_id 0.." + std::to_string(table->num_kernels) + "), not func_id " +
               std::to_string(func_id);
      return PTO_INVALID_ARGUMENT;
    }
    const pto_kernel_table_entry &k = table->kernels[func_id];
    out->entry_addr = reinterpret_cast<uint64_t>(k.entry);
    out->name = k.name != nullptr ? k.name : "";
    out->core_type = static_cast<int32_t>(k.core_type);
    out->signature = nullptr;  // one PTO_KERNEL_SIGNATURE per binary cannot describe several kernels
    crash_report_name_kernel(out->entry_addr, out->name);
    return PTO_OK;
  }
  void *entry = dlsym(lib, PTO_KERNEL_ENTRY_SYMBOL);
  void *abi_entry = dlsym(lib, PTO_ABI_KERNEL_ENTRY_SYMBOL);
  if (entry && abi_entry) {
    *error = "kernel binary " + path + " exports both " PTO_KERNEL_ENTRY_SYMBOL " (PTO_KERNEL) and " +
             PTO_ABI_KERNEL_ENTRY_SYMBOL
             " (the descriptor ABI); the entry decides how arguments are "
             "passed, so keep exactly one";
    return PTO_INVALID_ARGUMENT;
  }
  if (!entry && !abi_entry) {
    *error = "kernel binary " + path +
             " has no " PTO_KERNEL_ENTRY_SYMBOL " or " PTO_ABI_KERNEL_ENTRY_SYMBOL
             " (define the kernel with PTO_KERNEL(args) from pto/kernel.h, with extern \"C\" "
             "kernel_entry(__gm__ int64_t *args) and the descriptors of include/pto_abi/tensor.h, or "
             "several with PTO_KERNEL_PROGRAM from pto/kernel_list.h)";
    return PTO_LOAD_FAILED;
  }
  out->abi = entry ? 0u : 1u;
  if (!entry) entry = abi_entry;
  out->entry_addr = reinterpret_cast<uint64_t>(entry);
  crash_report_name_kernel(out->entry_addr, path);
  out->signature = static_cast<const pto_kernel_signature_t *>(dlsym(lib, PTO_KERNEL_SIGNATURE_SYMBOL));
  return PTO_OK;
}

pto_status SimDevice::load_symbol(const std::string &path, const char *symbol, uint64_t *addr,
                                  std::string *error) {
  std::lock_guard<std::mutex> lock(libs_mu_);
  void *lib = library(path, error);
  if (!lib) return PTO_LOAD_FAILED;
  void *sym = dlsym(lib, symbol);
  if (!sym) {
    *error = path + " does not define " + symbol;
    return PTO_LOAD_FAILED;
  }
  *addr = reinterpret_cast<uint64_t>(sym);
  return PTO_OK;
}

void SimDevice::assign(uint32_t slot, const LaunchSpec &spec) {
  slots_[slot].spec = spec;
  slots_[slot].assigned.store(generation_, std::memory_order_release);
  doorbell_ring(slots_[slot].bell);
}

void SimDevice::launch(const LaunchSpec &spec) {
  place_threads(spec.scheduler_threads);
  pipes_.clear();  // every run starts with empty pipes; no kernel runs now
  stop_waits_.store(false, std::memory_order_release);
  status_.store(0, std::memory_order_relaxed);
  remaining_.store(spec.aicpu_threads, std::memory_order_relaxed);
  ++generation_;
  // A seeded run takes the device's fibers off the pool once they all parked after the last
  // run (microseconds); an unseeded one after a seeded one hands them back.
  bool seeded = false;
  timed_ = false;
  if (use_fibers() && spec.seed >= 0) {
    if (!det_) det_.reset(new DeterministicExecutor(fibers_));
    seeded = det_->begin(static_cast<uint64_t>(spec.seed), spec.timing);
    timed_ = seeded && spec.timing != nullptr;
    if (!seeded) {
      fprintf(stderr,
              "pto_runtime: device %d: its fibers did not settle within 10 s after the last run; "
              "this run is not seeded\n",
              device_id());
    }
  } else if (det_ && det_->active() && !det_->end()) {
    fprintf(stderr, "pto_runtime: device %d: its fibers did not settle within 10 s after a seeded run\n",
            device_id());
  }
  if (seeded) det_->hold();  // all AICPU threads runnable before the first pick
  // Last thread first: the pool starts fibers in the order they become runnable, and a
  // runtime with an orchestrating thread gives it the last index (tensormap_and_ringbuffer);
  // its first tasks are then under way while the schedulers start.
  for (uint32_t i = spec.aicpu_threads; i-- > 0;) assign(i, spec);
  if (seeded) det_->unhold();
}

// Where the device threads run when the host has fewer CPUs than the device has threads (the
// sim's usual case). Left to itself, Linux tends to put a woken core thread on the CPU of the
// scheduler that woke it, and then every hand-off between the two costs context switches or a
// park and a wake-up: a dependent chain measured 5-10 us per task that way on a 2-vCPU VM.
// So: AICPU thread i runs on CPU i % n; the m-th core of one kind (AIC or AIV) that scheduler
// i owns (it owns the clusters c with c % S == i; each core's cluster, lane and lanes come from
// its CoreDesc) runs on CPU (i + 1 + m) % n. The core of each
// type a scheduler uses first (and keeps warm) is on another CPU than the scheduler, and its
// cores alternate across the CPUs so compute-bound runs still use them all, even on one
// cluster. Against no placement (5 rounds on that VM, time ratios): chain 0.27-0.41x, stencil
// 0.58-0.79x, fan-out/fan-in 0.81x, tiled GEMM 0.92x (docs/benchmarks.md). PTO_SIM_PLACE=0
// turns it off; with at least as many CPUs as device threads nothing is pinned. `schedulers` =
// S of the run being launched; the threads are re-placed only when it changes.
void SimDevice::place_threads(uint32_t schedulers) {
  if (schedulers == 0 || schedulers == placed_for_ || use_fibers()) return;
  placed_for_ = schedulers;
  static const bool enabled = [] {
    const char *s = getenv("PTO_SIM_PLACE");
    return !(s && strcmp(s, "0") == 0);
  }();
  const std::vector<int> &cpus = allowed_cpus();
  const size_t n = cpus.size();
  if (!enabled || n < 2 || n >= threads_.size()) return;
  auto pin = [](std::thread &t, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(t.native_handle(), sizeof set, &set);  // best effort: a hint
  };
  const DeviceShape &sh = shape();
  const uint32_t aicpu = sh.aicpu_threads;
  for (uint32_t i = 0; i < aicpu; ++i) pin(threads_[i], cpus[i % n]);
  for (uint32_t k = 0; k < sh.cores.size(); ++k) {
    // m: this core's index among its owner's cores of the same kind.
    const CoreDesc &core = sh.cores[k];
    const uint32_t m = core.lanes * (core.cluster / schedulers) + core.lane;
    pin(threads_[aicpu + k], cpus[(core.cluster % schedulers + 1 + m) % n]);
  }
}

bool SimDevice::wait(uint64_t deadline_ns) {
  for (;;) {
    const uint32_t seen = doorbell_prepare(done_);
    if (remaining_.load(std::memory_order_acquire) == 0) return true;
    if (!doorbell_wait_until(done_, seen, deadline_ns)) {
      return remaining_.load(std::memory_order_acquire) == 0;
    }
  }
}

void SimDevice::finish_one() {
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) doorbell_ring(done_);
}

void SimDevice::aicpu_main(uint32_t index, ThreadSlot *slot) {
  uint32_t seen = 0;
  for (;;) {
    const uint32_t bell = doorbell_prepare(slot->bell);
    if (stopping_.load(std::memory_order_acquire)) return;
    const uint32_t g = slot->assigned.load(std::memory_order_acquire);
    if (g == seen) {
      doorbell_wait(slot->bell, bell);
      continue;
    }
    seen = g;
    const LaunchSpec &spec = slot->spec;
    const int rc = aicpu_entry_(spec.runtime, index, spec.aicpu_threads);
    if (rc != 0) {
      int expected = 0;
      status_.compare_exchange_strong(expected, rc, std::memory_order_acq_rel);
    }
    finish_one();
  }
}

void *SimDevice::malloc(size_t bytes) {
  if (bytes == 0) bytes = 64;
  if (bytes >= kCacheMinBytes) {
    bytes = (bytes + 4095) & ~size_t{4095};
    std::lock_guard<std::mutex> lock(blocks_mu_);
    auto it = free_blocks_.find(bytes);
    if (it != free_blocks_.end()) {
      void *p = it->second;
      free_blocks_.erase(it);
      cached_bytes_ -= bytes;
      return p;
    }
  }
  void *p = nullptr;
  if (posix_memalign(&p, 64, bytes) != 0) return nullptr;
  if (bytes >= kCacheMinBytes) {
    std::lock_guard<std::mutex> lock(blocks_mu_);
    block_size_[p] = bytes;
  }
  return p;
}

void SimDevice::free(void *addr) {
  if (!addr) return;
  {
    std::lock_guard<std::mutex> lock(blocks_mu_);
    auto it = block_size_.find(addr);
    if (it != block_size_.end() && cached_bytes_ + it->second <= kCacheMaxBytes) {
      free_blocks_.emplace(it->second, addr);
      cached_bytes_ += it->second;
      return;
    }
    if (it != block_size_.end()) block_size_.erase(it);
  }
  ::free(addr);
}

// The host CPU's counter against the monotonic clock, once per process, over at least 2 ms
// from the first device's creation: a rate good to ~1e-5, for runs too short to measure their
// own (core/tick_clock.h). Device start-up (loading programs, starting cores) usually takes
// longer than that; load_programs waits for what is left, so that no run does.
ClockPair calibration_origin() {
  static const ClockPair origin = platform_clock_pair();
  return origin;
}

double SimDevice::ns_per_tick() const {
  static const double rate = [] {
    const ClockPair a = calibration_origin();
    ClockPair b;
    do {
      b = platform_clock_pair();
    } while (b.ns - a.ns < 2000000);
    return b.ticks > a.ticks ? static_cast<double>(b.ns - a.ns) / static_cast<double>(b.ticks - a.ticks)
                             : 1.0;
  }();
  return rate;
}

void SimDevice::shutdown() {
  if (started_) {
    started_ = false;
    stopping_.store(true, std::memory_order_release);
    for (uint32_t i = 0; i < shape().aicpu_threads; ++i) doorbell_ring(slots_[i].bell);
    // The cores leave their loop (they are idle now: no run is in flight).
    cores_.stop(cores_.block, static_cast<uint32_t>(shape().cores.size()));
    for (std::thread &t : threads_) t.join();
    threads_.clear();
    fibers_.wait_empty();
    det_.reset();  // its thread ran the fibers of a seeded last run to their end; now it stops
    if (pool_acquired_) {
      pool_acquired_ = false;
      FiberPool::instance().release();
    }
  }
  // Tile memory a waiting kernel left with its core: ended by the kernels' own code, so before
  // they are unloaded below.
  for (uint32_t c = 0; core_slots_ && c < shape().cores.size(); ++c) release_core_memory(core_slots_[c]);
  for (auto &kv : libs_) {
    for (const char *symbol : {PTO_KERNEL_ENTRY_SYMBOL, PTO_ABI_KERNEL_ENTRY_SYMBOL}) {
      if (void *entry = dlsym(kv.second, symbol))
        crash_report_name_kernel(reinterpret_cast<uint64_t>(entry), "");  // forget its name
    }
    dlclose(kv.second);
  }
  libs_.clear();
  if (aicore_lib_) dlclose(aicore_lib_);
  if (aicpu_lib_) dlclose(aicpu_lib_);
  aicore_lib_ = aicpu_lib_ = nullptr;
  std::lock_guard<std::mutex> lock(blocks_mu_);
  for (auto &kv : free_blocks_) {
    block_size_.erase(kv.second);
    ::free(kv.second);
  }
  free_blocks_.clear();
  cached_bytes_ = 0;
}

}  // namespace

pto_status Device::create(const DeviceShape &shape, int device_id, std::unique_ptr<Device> *out,
                          std::string *error) {
  if (shape.backend != "cpu_sim") {  // the sim is the cpu_sim backend's platform
    *error = "platform " + shape.platform + " needs the " + shape.backend +
             " backend, which the simulator is not (see pto::backends())";
    return PTO_NOT_SUPPORTED;
  }
  out->reset(new SimDevice(shape, device_id));
  return PTO_OK;
}

}  // namespace pto
