// src/platform/include/pto_platform/device.h — the host side of the platform seam: one device.
//
// Everything the host program needs from a device and nothing runtime-specific: memory, copies,
// loading the two device programs and kernels, launching them and waiting. The sim backend
// implements it with malloc and host threads; an Ascend backend would use CANN (not built here).
#ifndef PTO_PLATFORM_DEVICE_H
#define PTO_PLATFORM_DEVICE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/geometry.h"
#include "pto/error.h"
#include "pto/kernel.h"

namespace pto {

// Device program entry points (exported by libaicpu.so / libaicore.so).
// AICPU: runs on `thread_num` threads for one run; returns 0 or a pto_status.
using AicpuEntryFn = int (*)(void *runtime, uint32_t thread_idx, uint32_t thread_num);
// AICore: started once per core when the programs are loaded, it serves that core's
// handshake slot (in the device's handshake block) run after run until told to quit.
using AicoreEntryFn = void (*)(void *handshakes, uint32_t core_idx);
#define PTO_AICPU_ENTRY_SYMBOL "pto_aicpu_entry"
#define PTO_AICORE_ENTRY_SYMBOL "pto_aicore_entry"

struct LaunchSpec {
  void *runtime = nullptr;     // device address of the runtime's shared memory
  uint32_t aicpu_threads = 1;  // threads running the AICPU entry
  // AICPU threads 0 .. scheduler_threads-1 schedule; scheduler i owns the clusters c with
  // c % scheduler_threads == i (core/core_pool.h). A hint for where the sim runs threads.
  uint32_t scheduler_threads = 1;
};

struct LoadedKernel {
  uint64_t entry_addr = 0;                            // what the core calls
  const pto_kernel_signature_t *signature = nullptr;  // may be null (no declaration)
};

class Device {
 public:
  // Creates the device for `geometry` (its backend decides the class). Errors go to *error.
  static pto_status create(const ChipGeometry &geometry, int device_id, std::unique_ptr<Device> *out,
                           std::string *error);
  virtual ~Device() = default;

  virtual void *malloc(size_t bytes) = 0;  // nullptr when out of memory
  virtual void free(void *addr) = 0;
  virtual void copy_to_device(void *dst, const void *src, size_t bytes) = 0;
  virtual void copy_from_device(void *dst, const void *src, size_t bytes) = 0;

  // Loads the AICPU and AICore programs, lays out the handshake block and starts the cores
  // (on the sim, one thread per core serving its slot until shutdown).
  virtual pto_status load_programs(const std::string &aicpu_path, const std::string &aicore_path,
                                   std::string *error) = 0;
  // The device's handshake block: one Handshake (core/handshake.h) per core of the geometry,
  // AIC cores first (slot c is cluster c's AIC), then AIV (slots C + 2c and C + 2c + 1 for C
  // clusters), each with its core_type set. It lives as long as the device, so runs only
  // launch the AICPU program: the cores are already waiting on their slots.
  virtual void *handshake_block() = 0;
  // One SchedulerSlot (a doorbell) per AICPU thread, also for the device's life: cores ring
  // their scheduler's doorbell after reporting completion, possibly after that run's memory
  // is gone, so the doorbells cannot live in it.
  virtual void *scheduler_bells() = 0;
  // The device's log (pto/device_log.h), its threshold set to `level` for the next run: its
  // device address, for the runtime to hand to kernels and AICPU code. Lives with the device.
  virtual void *device_log(int32_t level) = 0;
  // Loads (once per path) a kernel binary and returns its entry address and signature.
  virtual pto_status load_kernel(const std::string &path, LoadedKernel *out, std::string *error) = 0;
  // Loads (once per path) a device-side binary and returns the address of `symbol` in it
  // (the tensormap runtime's orchestration, run by the AICPU program).
  virtual pto_status load_symbol(const std::string &path, const char *symbol, uint64_t *addr,
                                 std::string *error) = 0;

  // Starts the AICPU program of one run; at most one is in flight.
  virtual void launch(const LaunchSpec &spec) = 0;
  // Waits until every AICPU thread returned; false if the monotonic deadline passed first.
  virtual bool wait(uint64_t deadline_ns) = 0;
  // True once every AICPU thread of the last launch returned; never blocks.
  virtual bool finished() = 0;
  // The first non-zero status an AICPU thread returned in the last launch.
  virtual int launch_status() const = 0;

  // Non-zero when the device's threads outnumber the CPUs that run them (the sim on a small
  // host): schedulers keep one core busy while kernels are shorter than this (core/core_pool.h).
  virtual uint32_t short_task_ns() const { return 0; }

  // Nanoseconds per platform_ticks() tick (pto_platform/clock.h): the rate hosts convert device
  // timestamps with when a run is too short to measure it (core/tick_clock.h).
  virtual double ns_per_tick() const = 0;

  // Stops device threads and unloads programs. Idempotent.
  virtual void shutdown() = 0;

  const ChipGeometry &geometry() const { return *geometry_; }
  int device_id() const { return device_id_; }

 protected:
  Device(const ChipGeometry &geometry, int device_id) : geometry_(&geometry), device_id_(device_id) {}

 private:
  const ChipGeometry *geometry_;
  int device_id_;
};

}  // namespace pto
#endif  // PTO_PLATFORM_DEVICE_H
