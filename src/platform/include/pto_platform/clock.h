// src/platform/include/pto_platform/clock.h — the two clocks device code reads.
//
// platform_now_ns() is the monotonic clock the host also reads (deadlines, run totals).
// platform_ticks() is the device's free-running timestamp counter: what device code stamps
// per-task events with (kernel start and end, dispatch, completion, submit), because it costs a
// single register read. On an Ascend device that is the system counter (cntvct_el0 on the AICPU,
// the AICore's system-cycle register); on the sim, the host CPU's (rdtsc / cntvct_el0), or the
// monotonic clock where there is none. Ticks are never shown to users: the host converts them to
// platform nanoseconds with two (ns, ticks) pairs a scheduler takes at the start and end of its
// run and the rate Device::ns_per_tick() reports (core/tick_clock.h).
#ifndef PTO_PLATFORM_CLOCK_H
#define PTO_PLATFORM_CLOCK_H

#include <atomic>
#include <cstdint>

#include "pto/types.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace pto {

// Monotonic clock in nanoseconds.
uint64_t platform_now_ns();

// The host CPU's counter, whatever mode the run is in.
inline uint64_t platform_host_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();  // constant-rate, synchronised across CPUs (Linux checks it to use it as clocksource)
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return platform_now_ns();
#endif
}

// Sim timing mode (docs/design/sim_execution.md): set when the sim binds this program; while what it
// points to is non-zero some launch of the process runs in virtual time, and platform_ticks()
// asks platform_virtual_ticks() — the running fiber's virtual clock in ns if it belongs to that
// launch, else the host counter. Null (no sim pool) or zero: one extra load per stamp.
extern std::atomic<const std::atomic<uint32_t> *> g_platform_timed_runs;
uint64_t platform_virtual_ticks();

// True while some launch of the process runs in virtual time (the one test every timing-mode
// hook below makes first).
inline bool platform_timed_runs() {
  const std::atomic<uint32_t> *timed = g_platform_timed_runs.load(std::memory_order_relaxed);
  return __builtin_expect(timed != nullptr && timed->load(std::memory_order_relaxed) != 0, 0);
}

inline uint64_t platform_ticks() { return platform_timed_runs() ? platform_virtual_ticks() : platform_host_ticks(); }

constexpr uint32_t kPricePipes = 7;  // SCALAR, MTE2, MTE1, CUBE, FIXP, VEC, MTE3 (pto_costmodel_probe.h)

// How a kernel invocation was priced, as its core reports it (core/handshake.h CoreReport).
struct KernelPrice {
  uint32_t source = PTO_PRICE_NONE;  // pto_price_source
  uint32_t stuck = 0;                  // isa_model: events the model could not finish (cycles: a lower bound)
  uint64_t cycles = 0;                 // isa_model: the model's prediction, in the model's cycles
  uint32_t pipe_ns[kPricePipes] = {};  // isa_model: each pipe's busy time (virtual ns, saturating)
  uint32_t reserved = 0;
};

// Sim timing mode: a core brackets each kernel with these (core/aicore_loop.h); they cost one
// load otherwise. kernel_entry: the kernel's LoadedKernel::entry_addr (its cost key); args/
// num_args: the task's arguments (a cost may depend on them, pto_platform/device.h); price:
// where the core reports what priced the invocation (written only in a timed run).
void platform_kernel_begin(uint64_t kernel_entry, int64_t *args, uint32_t num_args, KernelPrice *price);
void platform_kernel_end();

// Sim timing mode: one piece of work the AICPU's own cores do, which takes device time on a chip
// (an ARM core submitting or scheduling a task) but only host time on the sim. Device code says
// what it did and over how many units; the timing model (src/platform/sim/virtual_time.h)
// charges the platform profile's price for it (share/sim_profiles/<family>.json: a fixed part
// plus a part per unit) on the calling thread's virtual clock. Outside a timed run it costs one
// load and a branch; a caller that must count its units first tests platform_timed_runs().
enum class DeviceWork : uint32_t {
  kSubmit = 0,  // the orchestrator submits one task; units: its tensor arguments
  kDispatch,    // a scheduler dispatches one task, block or MIX task to its core(s)
  kCompletion,  // a scheduler retires one completed task (fanout walk, release)
  kCount
};
constexpr uint32_t kDeviceWorkKinds = static_cast<uint32_t>(DeviceWork::kCount);
void platform_device_work_timed(DeviceWork what, uint32_t units);
inline void platform_device_work(DeviceWork what, uint32_t units = 0) {
  if (platform_timed_runs()) platform_device_work_timed(what, units);
}
// The device's time now, in ns: on a fiber of a timed launch its virtual clock, else
// platform_now_ns(). For spans a runtime measures on the device (its orchestration's).
uint64_t platform_device_now_ns();

// Both clocks at (nearly) the same instant: the tick read that brackets the nanosecond read
// most tightly of a few tries, so a pre-emption between two reads does not skew the pair.
struct ClockPair {
  uint64_t ns = 0, ticks = 0;
};
ClockPair platform_clock_pair();

}  // namespace pto
#endif  // PTO_PLATFORM_CLOCK_H
