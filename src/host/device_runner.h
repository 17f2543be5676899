// src/host/device_runner.h — one device context of the host program: device, memory, runs.
#ifndef PTO_HOST_DEVICE_RUNNER_H
#define PTO_HOST_DEVICE_RUNNER_H

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/geometry.h"
#include "host/memory_allocator.h"
#include "pto/c_api.h"
#include "pto/host_graph.h"
#include "pto_platform/device.h"

namespace pto {

struct KernelEntry {
  uint32_t func_id = 0;
  pto_core_type core_type = PTO_CORE_AIV;
  std::string path;
  LoadedKernel loaded;
};

// What a runtime variant gets for one run: kernels loaded, run tensors already on the device.
struct RunInputs {
  pto_call_config cfg{};
  std::string orchestration_path;
  std::map<uint32_t, KernelEntry> kernels;   // by func_id
  std::vector<Tensor> tensors;               // the run's tensor arguments, in order
  std::vector<const void *> host_data;       // their host buffers (the caller's)
  std::vector<int64_t> scalars;              // the run's scalar arguments, in order
  // The run's PTO_ARG_DEVICE_TENSOR arguments (communication windows), [addr, addr + nbytes):
  // device memory the run did not allocate but its tasks may use, in place.
  std::vector<std::pair<uint64_t, uint64_t>> in_place;
  ScopedAllocations *allocations = nullptr;  // run-lifetime device memory
  uint64_t handshakes = 0;                   // the context's handshake block (device address)
  uint64_t scheduler_bells = 0;              // the context's scheduler doorbells (device address)
  uint64_t device_log = 0;                   // the device's pto_device_log (device address)
  uint64_t short_task_ticks = 0;             // Device::short_task_ns() in ticks (core/core_pool.h)
  double ns_per_tick = 1.0;                  // Device::ns_per_tick() (core/tick_clock.h)
  uint64_t pipeline_ticks = 0;               // CorePool's queueing threshold (core/core_pool.h)
  uint64_t ready_hold_ticks = 0;             // tensormap: longest hold of a ready batch (0 = none)
  ClusterLayout layout;                      // of the chip (the handshake block's)
  bool timed = false;                        // sim timing mode (kernels report KernelPrice)
  // set_device's warm-up run (DeviceRunner::warm_up): no orchestration path; the runtime runs
  // core/warm_up_program.h instead.
  bool warm_up = false;
};

class DeviceRunner;
struct LaunchedRun;
// Implemented once per runtime variant (src/runtime/<variant>/host/): builds the graph (or
// prepares the device orchestration), lays out the run's device memory and fills *run with how
// to launch, abort and finish it. Does not launch. Returns a code and, on failure, a message.
// Appended to the error of an orchestration whose entry for `runtime` is missing: what the
// file defines instead (a kernel, the other runtime's entry) and what to do about it.
std::string orchestration_entry_hint(const std::string &orchestration_path, const std::string &runtime);

pto_status runtime_prepare(DeviceRunner &runner, RunInputs &in, pto_run_stats *stats, std::string *error,
                           LaunchedRun *run);

class DeviceRunner {
 public:
  DeviceRunner(const ChipGeometry &geometry, std::string aicpu_path, std::string aicore_path);
  ~DeviceRunner();

  pto_status set_device(int device_id);
  // A warm-up run like set_device's, with `cfg` (its clusters, AICPU threads and ring sizes):
  // what a first run with that configuration touches is touched here (prewarm_runtime).
  pto_status prewarm(const pto_call_config *cfg);
  pto_status run(const pto_callable_desc *callable, const pto_arg_desc *args, uint32_t num_args,
                 const pto_call_config *cfg, pto_run_stats *stats);
  // The same run in two halves: start() returns once the device programs are launched (the
  // host buffers of `args` must stay valid until the run is finished); poll() finishes it.
  // With block = false poll never waits (except to drain a run that timed out): *done = 0
  // while the run is in flight. Once *done = 1 it returns the run's status, like run().
  pto_status start(const pto_callable_desc *callable, const pto_arg_desc *args, uint32_t num_args,
                   const pto_call_config *cfg);
  pto_status poll(bool block, int *done, pto_run_stats *stats);
  // Waits up to timeout_ns for the started run to end (the device programs returned or its
  // deadline passed); *ended = 1 once poll() would finish it. Never finishes the run itself.
  pto_status wait(uint64_t timeout_ns, int *ended);
  // Stops the started run: aborts and drains it (run_wait.h, abort_run) and frees its memory.
  // Returns PTO_ABORTED (the context can run again) or PTO_DEVICE_BROKEN (a kernel did not
  // return; the context is broken).
  pto_status abort();
  bool in_flight() const { return in_flight_ != nullptr; }
  pto_status finalize();

  const std::string &last_error() const { return last_error_; }
  // The last run's trace as JSON (empty unless it ran with enable_profiling).
  // The last run's trace as JSON, rendered on the first call after the run.
  const std::string &last_trace() {
    if (render_trace_) {
      last_trace_ = render_trace_();
      render_trace_ = nullptr;
    }
    return last_trace_;
  }
  void set_last_trace(std::function<std::string()> render) { render_trace_ = std::move(render); }
  const ChipGeometry &geometry() const { return *geometry_; }
  Device &device() { return *device_; }
  MemoryAllocator &memory() { return *memory_; }
  // A run whose kernels did not return on time leaves the context unusable.
  void mark_broken(std::string why) { broken_ = std::move(why); }

  // Device memory a runtime keeps from one run to the next, under `key`: its contents and
  // `state` are the runtime's (fresh: zero state, valid false). A different size replaces the
  // block. Freed with the device. Null when the device is out of memory.
  struct KeptBlock {
    void *ptr = nullptr;
    uint64_t bytes = 0;
    bool valid = false;      // the runtime's word: the contents are as it left them
    uint64_t state[8] = {};  // the runtime's words
  };
  KeptBlock *kept_block(const std::string &key, uint64_t bytes);
  // dlopen's a host-side library once (orchestrations) and returns `symbol` from it.
  pto_status load_host_symbol(const std::string &path, const char *symbol, void **out, std::string *error);

 private:
  pto_status fail(pto_status code, std::string message);
  pto_status check_config(const pto_call_config &cfg);
  pto_status load_kernels(const pto_callable_desc &callable, RunInputs *in);
  pto_status stage_arguments(const pto_arg_desc *args, uint32_t num_args, RunInputs *in);
  void copy_outputs(const pto_arg_desc *args, uint32_t num_args, const RunInputs &in);

  pto_status start_device(Device &device, std::string *error);
  pto_status warm_up(const pto_call_config *cfg = nullptr);  // null: every cluster and thread
  void free_device_blocks(Device &device);

  const ChipGeometry *geometry_;
  std::string aicpu_path_, aicore_path_;
  int device_id_ = -1;
  std::unique_ptr<Device> device_;
  // Device memory for the device's whole life, laid out by this context (the core's layout, not
  // the platform's) and freed after Device::shutdown, once the cores stopped:
  // - one Handshake (core/handshake.h) per core of the geometry, the block the cores serve;
  // - one SchedulerSlot (core/scheduler_bell.h, a doorbell) per AICPU thread: cores ring their
  //   scheduler's doorbell after reporting completion, possibly after that run's memory is
  //   gone, so the doorbells cannot live in it.
  void *handshakes_ = nullptr;
  void *scheduler_bells_ = nullptr;
  std::unique_ptr<MemoryAllocator> memory_;
  std::map<std::string, void *> host_libs_;
  uint64_t host_opened_ns_ = 0;  // time spent opening host_libs_ (load_host_symbol)
  std::map<std::string, KeptBlock> kept_;  // kept_block()
  std::string broken_;
  bool warming_ = false;  // inside warm_up(): start() takes a callable without an orchestration
  struct InFlight;  // a started run (device_runner.cpp)
  std::unique_ptr<InFlight> in_flight_;
  std::string last_error_;
  std::string last_trace_;
  std::function<std::string()> render_trace_;  // pending: renders last_trace_
};

}  // namespace pto
#endif  // PTO_HOST_DEVICE_RUNNER_H
