// src/platform/sim/sim_exec.h — how the sim's doorbells reach the fiber pool from every program.
//
// The host program (libhost.so) and the two device programs (libaicpu.so, libaicore.so) each
// link their own copy of the platform's doorbell code (sim/doorbell_sim.cpp). The fiber pool
// lives in the host program; when it loads the device programs it hands each copy these hooks
// through pto_sim_bind_exec (sim/exec_bind.cpp, compiled into every program and exported), so a
// wait on a simulated thread or core suspends its fiber and a ring makes the fiber runnable,
// whichever program the code runs in. Without hooks (no pool: a program used on its own) the
// doorbells spin and park the OS thread as before.
#ifndef PTO_PLATFORM_SIM_SIM_EXEC_H
#define PTO_PLATFORM_SIM_SIM_EXEC_H

#include <atomic>
#include <cstdint>

#include "pto_platform/clock.h"
#include "pto_platform/doorbell.h"
#include "pto_platform/kernel_call.h"

namespace pto {

struct SimExecHooks {
  bool (*on_fiber)();                        // true when called on a pool fiber
  void (*park)(Doorbell &b, uint32_t seen);  // on a fiber: suspend until seq != seen
  void (*unpark_all)(Doorbell &b);           // make every fiber parked on b runnable
  void (*yield)();                           // on a fiber: let other runnable fibers go first
  // Timing mode (pto_platform/device.h, SimTiming): only called while *timed_runs != 0.
  const std::atomic<uint32_t> *timed_runs;      // launches in virtual time now, process-wide
  bool (*virtual_clock)(uint64_t *ns);          // on a fiber of a timed launch: its clock; else false
  void (*kernel_begin)(uint64_t kernel_entry, int64_t *args, uint32_t num_args,
                       KernelPrice *price);  // a core starts a kernel
  void (*kernel_end)();                         // ... it returned: advance the clock, let earlier fibers go
  // AICPU work of kind `what` (DeviceWork) over `units`: advance the clock, let earlier fibers go.
  void (*device_work)(uint32_t what, uint32_t units);
};

// The doorbell's sleeper count holds OS-thread waiters in its low half (futex) and fiber
// waiters in its high half (the pool's parking lot), so a ring wakes only the kinds present.
constexpr uint32_t kOsSleeper = 1;
constexpr uint32_t kFiberSleeper = 1u << 16;

// This program's copy of the hooks (null until bound). The pool binds a program right after
// loading it, before any of its device code runs; devices loading the same program at once all
// store the same pointer (hence atomic: fibers of one device read it while another binds).
extern std::atomic<const SimExecHooks *> g_sim_exec;

// How a device program's platform_call_kernel reaches the host program's state of the calling
// core (tile_pipes_sim.h), under either executor: the device binds the AICore program with
// these right after loading it, fibers or threads.
struct SimCoreHooks {
  void (*set_kernel_waits)(const KernelWaits *waits);  // the calling core's call starts (non-null) / ends
};

// This program's copy (null until bound; a program used on its own has none).
extern std::atomic<const SimCoreHooks *> g_sim_core;

}  // namespace pto

// Exported by each program; the pool calls it through dlsym.
extern "C" void pto_sim_bind_exec(const pto::SimExecHooks *hooks);
#define PTO_SIM_BIND_EXEC_SYMBOL "pto_sim_bind_exec"
// Exported by each program; the device calls it on the AICore program through dlsym.
extern "C" void pto_sim_bind_core(const pto::SimCoreHooks *hooks);
#define PTO_SIM_BIND_CORE_SYMBOL "pto_sim_bind_core"

#endif  // PTO_PLATFORM_SIM_SIM_EXEC_H
