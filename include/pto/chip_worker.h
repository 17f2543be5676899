// include/pto/chip_worker.h — the single-chip (L2) user API in C++: ChipWorker and its inputs.
//
// The same flow the Python package offers, without Python:
//   pto::KernelCompiler kc("a2a3sim");
//   pto::ChipCallable callable(kc.compile_orchestration("host_build_graph", "orch.cpp"));
//   callable.add_kernel(0, PTO_CORE_AIV, kc.compile_incore("kernel_add.cpp", PTO_CORE_AIV));
//   pto::ChipStorageTaskArgs args;  args.add_tensor(a.data(), ...);
//   pto::ChipWorker w;  w.init("a2a3sim", "host_build_graph");  w.set_device(0);
//   pto::RunStats s = w.run(callable, args, pto::ChipCallConfig{});
// Every failure throws pto::Error carrying the code, the message and the hint.
#ifndef PTO_CHIP_WORKER_H
#define PTO_CHIP_WORKER_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pto/c_api.h"
#include "pto/call_config.h"
#include "pto/device_log.h"
#include "pto/error.h"
#include "pto/runtime_builder.h"
#include "pto/types.h"

namespace pto {

// Per-run configuration (seed 001's ChipCallConfig). Defaults match pto_default_call_config.
struct ChipCallConfig {
#define PTO_DECLARE_FIELD(type, name, def, lo, hi, doc) type name = def;
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_DECLARE_FIELD)
#undef PTO_DECLARE_FIELD

  pto_call_config to_c() const {
    pto_call_config c{};
#define PTO_COPY_FIELD(type, name, def, lo, hi, doc) c.name = name;
    PTO_CHIP_CALL_CONFIG_FIELDS(PTO_COPY_FIELD)
#undef PTO_COPY_FIELD
    return c;
  }
};

// Kernels (by func_id) plus the orchestration that builds the graph.
class ChipCallable {
 public:
  ChipCallable() = default;
  explicit ChipCallable(std::string orchestration_path) : orchestration_(std::move(orchestration_path)) {}
  void set_orchestration(std::string path) { orchestration_ = std::move(path); }
  // Throws INVALID_ARGUMENT if func_id is already defined.
  void add_kernel(uint32_t func_id, pto_core_type core_type, std::string binary_path);
  // Adds every kernel of a kernel program (PTO_KERNEL_PROGRAM, pto/kernel_list.h) under its
  // KernelId as func_id, with the core type its KERNEL_LIST gives; returns how many. Throws as
  // read_kernel_table and add_kernel do.
  uint32_t add_kernels(const std::string &program_path);
  // Sim timing mode: kernel func_id's cost-model twin (KernelCompiler::compile_incore_cost_model),
  // which prices each of its invocations with PTO-ISA's cost model (docs/design/sim_execution.md); or,
  // with an empty path, why there is none (`unavailable`, which the run reports). Throws
  // INVALID_ARGUMENT if func_id is not defined or both strings are empty.
  void set_cost_model(uint32_t func_id, std::string twin_path, std::string unavailable = "");

  const std::string &orchestration() const { return orchestration_; }
  struct Kernel {
    uint32_t func_id;
    pto_core_type core_type;
    std::string binary_path;
    std::string cost_model_path;  // set_cost_model
    std::string cost_model_note;
  };
  const std::vector<Kernel> &kernels() const { return kernels_; }

 private:
  std::string orchestration_;
  std::vector<Kernel> kernels_;
};

// One kernel of a kernel program binary.
struct KernelTableRow {
  uint32_t func_id;
  std::string name;
  pto_core_type core_type;
};
// The kernel table of a kernel program (pto/kernel_list.h), read by loading the binary into
// this process — sim kernel binaries are host shared objects. LOAD_FAILED when it cannot be
// loaded, INVALID_ARGUMENT when it is a one-kernel binary (no pto_kernel_table).
std::vector<KernelTableRow> read_kernel_table(const std::string &program_path);

// The run's arguments: host tensors (copied to the device before, and back after, as their
// direction says) and scalars. The storage stays owned by the caller for the run.
class ChipStorageTaskArgs {
 public:
  void add_tensor(void *host_ptr, uint64_t nbytes, pto_dtype dtype, const std::vector<int64_t> &shape,
                  pto_direction direction);
  // A tensor already in the chip's device memory (a communication domain's buffer,
  // CommBuffer::add_to): the run uses it in place, nothing is copied in or out.
  void add_device_tensor(void *device_ptr, uint64_t nbytes, pto_dtype dtype,
                         const std::vector<int64_t> &shape, pto_direction direction);
  // Host memory the chip reaches as it is (an L3 worker's host heap, which every chip maps):
  // the run uses it in place, and zeroes it first if it is an OUTPUT, as a staged output starts.
  void add_shared_tensor(void *host_ptr, uint64_t nbytes, pto_dtype dtype, const std::vector<int64_t> &shape,
                         pto_direction direction);
  // Turns argument `index`, a staged tensor (add_tensor), into a shared one (add_shared_tensor).
  void share_tensor(size_t index);
  void add_scalar(int64_t value);
  void add_scalar_f32(float value);
  const std::vector<pto_arg_desc> &descs() const { return args_; }
  void clear() { args_.clear(); }

 private:
  void add(pto_arg_kind kind, const char *call, void *ptr, uint64_t nbytes, pto_dtype dtype,
           const std::vector<int64_t> &shape, pto_direction direction);
  std::vector<pto_arg_desc> args_;
};

struct RunStats {
  uint64_t tasks_run = 0;
  uint64_t aic_tasks = 0;
  uint64_t aiv_tasks = 0;
  uint64_t mix_tasks = 0;  // whole-cluster tasks (tensormap_and_ringbuffer)
  double orchestration_us = 0;
  double device_us = 0;  // launch to completion
  double total_us = 0;
  double load_us = 0;  // of total_us: opening programs on their first use in this worker
  uint32_t cores_used = 0;
  uint32_t aicpu_threads_used = 0;
  // tensormap_and_ringbuffer: occupancy and back-pressure of each ring
  struct Ring {
    uint64_t capacity = 0;    // slots, bytes or entries
    uint64_t high_water = 0;  // the most in use at once
    uint64_t stalls = 0;      // times the orchestrator waited for space
    double stall_us = 0;      // time it spent waiting
  };
  Ring window, heap, dep_pool, tensormap;
  // Always collected (cheap counters, both runtimes):
  double effective_us = 0;   // earliest kernel start to latest kernel end
  double scheduling_us = 0;  // AICPU scheduler threads' time not parked, summed over threads
  struct Core {
    uint32_t slot = 0;  // handshake slot: the chip's AIC cores by cluster, then its AIV cores
    pto_core_type type = PTO_CORE_AIV;
    uint32_t cluster = 0;
    uint64_t tasks = 0;        // kernels run (a MIX task counts on each of its cores)
    double busy_us = 0;        // time running kernels
    double busy_fraction = 0;  // busy_us / effective_us
    // sim_timing: busy_us / predicted_makespan_us (busy_us is virtual time then); 0 otherwise
    double predicted_utilisation = 0;
  };
  std::vector<Core> cores;  // every core of the clusters the run used (block_dim x 3)
  // sim_timing: the device makespan in virtual time, as the timing model predicts it (the
  // trace's timestamps and the busy times above are virtual then too); 0 otherwise.
  double predicted_makespan_us = 0;
  // sim_timing: kernel invocations by what priced them (docs/design/sim_execution.md): PTO-ISA's cost
  // model (a twin, set_cost_model), PTO_SIM_KERNEL_COSTS, or the measured host time.
  uint64_t priced_isa_model = 0, priced_table = 0, priced_host_time = 0;
  // sim_timing: what prices each kernel of the callable, by func_id: "isa_model", "table" or
  // "host_time"; empty otherwise.
  std::vector<std::pair<uint32_t, std::string>> kernel_pricing;
  // sim_timing: kernels a cost model was asked for and not used, and why ("" if none).
  std::string price_note;
  // enable_pmu: which counters could not be counted and why ("" if none; per-task counters
  // are in the trace, ChipWorker::last_trace_json).
  std::string pmu_note;
  // enable_dump_tensor: the directory of this run's .npy files and index.json.
  std::string dump_dir;
  // Schedule primitives (pto/schedule_config.h), both runtimes:
  std::string window_overflow = "stall";  // the task window's overflow mode the run used
  uint64_t pipeline_deferred = 0;         // pipeline_depth: tasks that waited for a token
  uint32_t pipeline_max_in_flight = 0;    // pipeline_depth: the most in flight in one gate
  // batch_deps (tensormap_and_ringbuffer; 0 otherwise): batches filed into the TensorMap,
  // TensorMap look-ups the batch made unnecessary, accesses never filed (a later write in the
  // same batch covered them). docs/design/architecture.md, "Schedule primitives".
  uint64_t batch_flushes = 0;
  uint64_t batch_local_hits = 0;
  uint64_t batch_unfiled = 0;
  // dispatch_threshold (all 0 when off): tasks dispatched under each policy, decisions that
  // flipped side (below <-> above) against the same scheduler's previous one in that scope.
  uint64_t dispatch_locality = 0, dispatch_round_robin = 0, dispatch_work_stealing = 0;
  uint64_t dispatch_switches = 0;
  // Tasks finished without a core: dependency-only tasks and tasks whose dispatch predicate was
  // false (not in tasks_run).
  uint64_t tasks_retired_inline = 0;
  // sim_timing: the predicted device time of the whole AICPU run: predicted_makespan_us plus the
  // platform profile's device preamble and teardown (the reference's "Device"); 0 otherwise.
  double predicted_device_us = 0;
  // Task timing slots (pto::Launch::timing_slot), each slot some task was tagged with: the
  // slot, the earliest dispatch and the latest finish of its tasks, in ns since the launch
  // (sim_timing: predicted virtual ns; otherwise the sim's measured ns), by slot.
  struct TaskTimingSlot {
    uint32_t slot = 0;
    uint64_t dispatch_ns = 0;
    uint64_t finish_ns = 0;
  };
  std::vector<TaskTimingSlot> task_timing_slots;

  // A short printable table of everything above.
  std::string table() const;
};

struct PlatformInfo {
  std::string platform;
  int num_clusters = 0;
  int max_aicpu_threads = 0;
  int num_devices = 0;
};

// Owns one device context of a host program (seed 001's ChipWorker).
class ChipWorker {
 public:
  ChipWorker();
  ~ChipWorker();
  ChipWorker(const ChipWorker &) = delete;
  ChipWorker &operator=(const ChipWorker &) = delete;

  // Loads the host program of (platform, runtime), found by RuntimeBuilder.
  void init(const std::string &platform, const std::string &runtime);
  // Loads explicit binaries.
  void init(const RuntimeBinaries &binaries);
  // Starts the device context, then warms it with one internal run (every cluster and AICPU
  // thread, the default ring sizes; a few dependency-only tasks and an idle kernel on each
  // core): the memory and code a run touches for the first time are touched there, so the
  // first run() costs less. Throws what Device start-up or that run reports (the worker then
  // has no device).
  void set_device(int device_id);
  // One more warm-up run, with `config` instead of the defaults (its clusters, AICPU threads and
  // ring sizes): a first run() with that configuration then costs what a later one does. The
  // reference's Worker.init(prewarm_config=...). Throws as run() would for a bad config.
  void prewarm(const ChipCallConfig &config);
  RunStats run(const ChipCallable &callable, const ChipStorageTaskArgs &args,
               const ChipCallConfig &config = ChipCallConfig{});
  // Asynchronous run: start() returns once the device programs are launched; poll() never
  // blocks (except to drain a run that timed out). One run in flight per worker; the host
  // buffers of `args` must stay valid until poll() returned true or threw, or abort()
  // returned. run() = start() + wait + poll().
  void start(const ChipCallable &callable, const ChipStorageTaskArgs &args,
             const ChipCallConfig &config = ChipCallConfig{});
  // False while the started run is in flight. True once it finished: outputs are copied back
  // and *stats (if non-null) is filled; throws pto::Error like run() if the run failed.
  bool poll(RunStats *stats = nullptr);
  // Waits up to timeout_ms (< 0: until the run ends) for the started run to end: true once
  // poll() would return true or throw. Does not finish the run (poll() does). Waiting in short
  // slices lets a caller stay responsive, e.g. to Ctrl-C (the Python binding does that).
  bool wait(int64_t timeout_ms);
  // Stops the started run: the device programs are told to stop, drained (up to 5 s) and the
  // run's memory freed; its outputs are not copied back. The worker is idle and can run again,
  // unless a kernel did not return: then this throws DEVICE_BROKEN and so does every later
  // run (finalize and create a new worker).
  void abort();
  bool busy() const;  // start() was called and poll() has not yet returned true or thrown
  // Stops the device context. Idempotent; afterwards every call but finalize() and the state
  // queries (busy, initialized, device_id) throws NOT_INITIALIZED "ChipWorker.<call>: the worker
  // is finalized (finalize() was called); create a new ChipWorker".
  void finalize();

  // The last run's trace as JSON (docs/guide/profiling.md); empty unless it ran with
  // enable_profiling.
  std::string last_trace_json() const;
  bool initialized() const;
  int device_id() const;
  PlatformInfo platform_info() const;
  // Throws what a call named `what` ("run") would for a worker that is finalized, not
  // initialized or has no device; returns if it is ready. Bindings that build run() from
  // start() and wait() use it so their errors name run().
  void check_ready(const char *what) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pto
#endif  // PTO_CHIP_WORKER_H
