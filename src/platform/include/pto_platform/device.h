// src/platform/include/pto_platform/device.h — the host side of the platform seam: one device.
//
// Everything the host program needs from a device and nothing runtime-specific: memory, copies,
// loading the two device programs and kernels, execution contexts that run them, launching and
// waiting. The sim backend implements it with malloc and fibers (or host threads); an Ascend
// backend would use CANN (not built here).
//
// The seam points one way: the platform knows no chip geometry and no handshake layout (those
// are the core's, src/core/). The host describes the device in platform terms (DeviceShape:
// AICPU threads, compute cores and where each core sits) and owns the block the cores serve
// (CoreProgram): it lays it out, hands it to the cores and tells them how to stop.
#ifndef PTO_PLATFORM_DEVICE_H
#define PTO_PLATFORM_DEVICE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pto/error.h"
#include "pto/kernel.h"
#include "pto_platform/clock.h"

namespace pto {

// Device program entry points (exported by libaicpu.so / libaicore.so).
// AICPU: runs on `thread_num` threads for one run; returns 0 or a pto_status.
using AicpuEntryFn = int (*)(void *runtime, uint32_t thread_idx, uint32_t thread_num);
// AICore: started once per core when the programs are loaded, it serves that core's part of
// the block the host handed over (CoreProgram::block) run after run until told to stop.
using AicoreEntryFn = void (*)(void *block, uint32_t core_idx);
#define PTO_AICPU_ENTRY_SYMBOL "pto_aicpu_entry"
#define PTO_AICORE_ENTRY_SYMBOL "pto_aicore_entry"

// One compute core of the device (one AICore program instance), in platform terms: where it
// sits, for placing execution contexts on CPUs, and its kind, for messages.
struct CoreDesc {
  uint32_t cluster = 0;   // the cluster it belongs to; see LaunchSpec::scheduler_threads
  uint32_t lane = 0;      // its index among its cluster's cores of the same kind
  uint32_t lanes = 1;     // cores of that kind per cluster
  const char *kind = "";  // "AIC", "AIV": a static string (read by the fault report)
};

// What the host asks a device to be (derived from its chip geometry by the host).
struct DeviceShape {
  std::string platform;         // the user-facing platform name, for messages
  std::string backend;          // "sim"; any other needs a backend this build does not have
  uint32_t aicpu_threads = 1;   // threads that can run the AICPU program (thread_idx range)
  std::vector<CoreDesc> cores;  // the compute cores; core_idx of AicoreEntryFn indexes it
};

// What a core is running right now, as far as the host's layer can tell: for the fault report
// of a kernel that crashes it.
struct CoreActivity {
  uint64_t kernel_entry = 0;  // LoadedKernel::entry_addr of its kernel; 0: unknown
  int64_t task = -1;          // the task's id; negative: unknown
};

// The block the cores serve and the host's knowledge of it, handed over when the cores start.
// The block is host-owned device memory that must stay valid until shutdown() returned.
struct CoreProgram {
  void *block = nullptr;  // passed to every core's AicoreEntryFn
  // Makes every core's AICore program return (they are idle then): called once by shutdown(),
  // after the AICPU threads stopped and before it waits for the cores.
  void (*stop)(void *block, uint32_t cores) = nullptr;
  // What core `core` runs: called in a signal handler on that core's thread when its kernel
  // faults, so it may only read memory (async-signal-safe, no locks). May be null.
  CoreActivity (*activity)(const void *block, uint32_t core) = nullptr;
};

// Timing mode of a seeded launch (sim only, docs/design/sim_execution.md "Timing mode"): every device
// thread and core carries a virtual clock in ns and the one that runs next is the runnable one
// with the smallest (ties: the seeded PRNG). A kernel takes its cost-table entry if listed, else
// what its model prices it at if it has one, else its measured host time times kernel_factor; a
// thread or core woken by another's doorbell ring starts no earlier than the ringer's clock plus
// the latency of that hand-off.
struct SimKernelCost {
  uint64_t entry = 0;        // LoadedKernel::entry_addr of the kernel
  uint64_t base_ns = 0;      // fixed part
  int32_t arg = -1;          // >= 0: plus ns_per_unit x the task's argument `arg` (a size it reads)
  double ns_per_unit = 0.0;  // an argument beyond the task's count, or negative, adds nothing
  // Non-null: the kernel is priced per invocation by a model of it instead (base_ns etc. unused):
  // called on the core's thread just before the kernel runs, with the arguments the kernel gets;
  // fills price (source PTO_PRICE_ISA_MODEL, cycles, pipe_ns) and returns the invocation's
  // virtual ns at the clock SimTiming::cycles_per_us (<= 0: the model's own).
  uint64_t (*model_price)(const void *model, int64_t *args, double cycles_per_us,
                          KernelPrice *price) = nullptr;
  const void *model = nullptr;
  bool cube = false;  // an AIC kernel (its MTE2 pipe is GM -> L1), else AIV (GM -> UB)
};

struct SimTiming {
  double kernel_factor = 1.0;
  std::vector<SimKernelCost> kernel_costs;  // one per entry at most
  uint64_t dispatch_ns = 0;    // an AICPU thread rings a core: until the core starts the payload
  uint64_t completion_ns = 0;  // a core rings an AICPU thread: until a parked scheduler sees it
  uint64_t submit_ns = 0;      // an AICPU thread rings another: until the other goes on
  double cycles_per_us = 0;    // the chip's clock (MHz): a model's cycles to ns; <= 0: the model's
  // What the AICPU's cores spend on one piece of each DeviceWork kind (pto_platform/clock.h), ns:
  // work_ns, plus work_unit_ns per unit of it.
  uint64_t work_ns[kDeviceWorkKinds] = {};
  uint64_t work_unit_ns[kDeviceWorkKinds] = {};
  // Global memory shared by all cores: the bytes per ns it serves at most (0: no limit), and the
  // rates at which the cost model prices one core's transfers, bytes per ns, by pipe (an
  // isa_model price's MTE2/MTE3/FIXP busy time times its rate is the bytes it moves).
  double gm_bytes_per_ns = 0;
  double mte2_cube_bytes_per_ns = 0, mte2_vector_bytes_per_ns = 0, mte3_bytes_per_ns = 0,
         fixp_bytes_per_ns = 0;
};

struct LaunchSpec {
  void *runtime = nullptr;     // device address of the runtime's shared memory
  uint32_t aicpu_threads = 1;  // threads running the AICPU entry
  // AICPU threads 0 .. scheduler_threads-1 schedule; scheduler i owns the clusters c with
  // c % scheduler_threads == i (CoreDesc::cluster). A hint for where the sim runs threads.
  uint32_t scheduler_threads = 1;
  // >= 0: run this launch reproducibly — on the sim, one device thread at a time in an order
  // drawn from a PRNG seeded with it (supports_seeded_runs()); -1: as fast as it goes.
  int64_t seed = -1;
  // Seeded launches only: non-null runs it in virtual time (supports_seeded_runs()). Read during
  // launch(); the caller keeps it until then.
  const SimTiming *timing = nullptr;
};

struct LoadedKernel {
  uint64_t entry_addr = 0;                            // what the core calls
  const pto_kernel_signature_t *signature = nullptr;  // may be null (no declaration)
  // A kernel program (pto/kernel_list.h, several kernels in one binary): the name and core
  // type its table gives func_id; "" and -1 for a one-kernel binary.
  std::string name;
  int32_t core_type = -1;
  // The ABI its entry picks (pto/kernel.h): 0 = pto_kernel_entry (PTO_KERNEL), 1 = kernel_entry
  // (the descriptor ABI of include/pto_abi/; core/descriptor_call.h lays out its call block).
  uint32_t abi = 0;
};

class Device {
 public:
  // Creates the device for `shape` (its backend decides the class). Errors go to *error.
  static pto_status create(const DeviceShape &shape, int device_id, std::unique_ptr<Device> *out,
                           std::string *error);
  virtual ~Device() = default;

  virtual void *malloc(size_t bytes) = 0;  // nullptr when out of memory
  virtual void free(void *addr) = 0;
  virtual void copy_to_device(void *dst, const void *src, size_t bytes) = 0;
  virtual void copy_from_device(void *dst, const void *src, size_t bytes) = 0;
  // Zeroes `bytes` of device memory at dst (a run's OUTPUT tensors start zeroed). The default
  // copies from a zero page, 4 KiB at a time; a device that can set memory itself overrides it.
  virtual void zero_device(void *dst, size_t bytes) {
    static const char zeros[4096] = {};
    for (size_t done = 0; done < bytes; done += sizeof zeros) {
      const size_t n = bytes - done < sizeof zeros ? bytes - done : sizeof zeros;
      copy_to_device(static_cast<char *>(dst) + done, zeros, n);
    }
  }

  // Loads the AICPU and AICore programs and starts one execution context per AICPU thread and
  // per core of the shape (on the sim, fibers or threads that live until shutdown). Each core
  // runs the AICore program once, on `cores.block`, serving it run after run, so runs only
  // launch the AICPU program: the cores are already waiting.
  virtual pto_status load_programs(const std::string &aicpu_path, const std::string &aicore_path,
                                   const CoreProgram &cores, std::string *error) = 0;
  // The device's log (pto/device_log.h), its threshold set to `level` for the next run: its
  // device address, for the runtime to hand to kernels and AICPU code. Lives with the device.
  virtual void *device_log(int32_t level) = 0;
  // Loads (once per path) a kernel binary and returns the entry of kernel `func_id` and its
  // signature: PTO_KERNEL's entry, or the func_id-th entry of a kernel program's table
  // (pto/kernel_list.h; INVALID_ARGUMENT when the table has no such kernel).
  virtual pto_status load_kernel(const std::string &path, uint32_t func_id, LoadedKernel *out,
                                 std::string *error) = 0;
  // A kernel that does nothing, built into the device (PTO_KERNEL's ABI), for the runtime's
  // warm-up run (DeviceRunner::warm_up); false when the device has none.
  virtual bool idle_kernel(LoadedKernel *out) const {
    (void)out;
    return false;
  }
  // Loads (once per path) a device-side binary and returns the address of `symbol` in it
  // (the tensormap runtime's orchestration, run by the AICPU program).
  virtual pto_status load_symbol(const std::string &path, const char *symbol, uint64_t *addr,
                                 std::string *error) = 0;

  // Starts the AICPU program of one run; at most one is in flight.
  virtual void launch(const LaunchSpec &spec) = 0;
  // The run is being stopped (time-out, cancel): kernels waiting on a signal of a communication
  // domain (PTO-ISA's TWAIT) stop instead of waiting on, until the next launch.
  virtual void stop_waits() {}
  // What the device's kernels wait for now that no task of the runtime tracks (a TWAIT's
  // signal), a line each; empty if nothing.
  virtual std::string waits_report() const { return std::string(); }
  // Waits until every AICPU thread returned; false if the monotonic deadline passed first.
  virtual bool wait(uint64_t deadline_ns) = 0;
  // True once every AICPU thread of the last launch returned; never blocks.
  virtual bool finished() = 0;
  // The first non-zero status an AICPU thread returned in the last launch.
  virtual int launch_status() const = 0;

  // Non-zero when the device's threads outnumber the CPUs that run them (the sim on a small
  // host): schedulers keep one core busy while kernels are shorter than this (core/core_pool.h).
  virtual uint32_t short_task_ns() const { return 0; }
  // Time spent so far opening programs for load_kernel / load_symbol (their first use), in ns.
  virtual uint64_t opened_ns() const { return 0; }

  // Whether launch honours LaunchSpec::seed (the sim with fibers; not its thread-per-core model,
  // not a real device, whose cores the host does not schedule).
  virtual bool supports_seeded_runs() const { return false; }
  // After a launch with LaunchSpec::timing has finished: the largest virtual clock any of its
  // threads or cores reached (the predicted device makespan, ns); 0 for other launches.
  virtual uint64_t virtual_makespan_ns() const { return 0; }
  // ... and how many of its kernel invocations each source priced, by KernelPrice source
  // (PTO_PRICE_HOST_TIME, PTO_PRICE_TABLE, PTO_PRICE_ISA_MODEL); zeros for other launches.
  virtual void virtual_priced(uint64_t (&counts)[PTO_PRICE_SOURCE_COUNT]) const {
    for (uint64_t &c : counts) c = 0;
  }

  // Nanoseconds per platform_ticks() tick (pto_platform/clock.h): the rate hosts convert device
  // timestamps with when a run is too short to measure it (core/tick_clock.h).
  virtual double ns_per_tick() const = 0;

  // Stops the AICPU threads, then the cores (CoreProgram::stop), waits for all of them and
  // unloads the programs. Afterwards the host may free the core block. Idempotent.
  virtual void shutdown() = 0;

  const DeviceShape &shape() const { return shape_; }
  int device_id() const { return device_id_; }

 protected:
  Device(DeviceShape shape, int device_id) : shape_(std::move(shape)), device_id_(device_id) {}

 private:
  DeviceShape shape_;
  int device_id_;
};

}  // namespace pto
#endif  // PTO_PLATFORM_DEVICE_H
