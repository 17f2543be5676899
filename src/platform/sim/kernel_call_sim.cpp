// src/platform/sim/kernel_call_sim.cpp — the sim's kernel call: a kernel a sim hook stopped fails its task.
#include "pto_platform/kernel_call.h"

#include "pto/kernel_stop.h"
#include "sim_exec.h"

namespace pto {

std::atomic<const SimCoreHooks *> g_sim_core{nullptr};

// Only KernelStop is caught: any other exception out of a kernel is a bug in it and stays fatal
// (it ends the process, as before), rather than becoming a quiet task status.
int32_t platform_call_kernel(void (*kernel)(int64_t *args), int64_t *args) {
  try {
    kernel(args);
  } catch (const KernelStop &stop) {
    return stop.status != 0 ? stop.status : -1;
  }
  return 0;
}

namespace {
// While a MIX part runs, the host program's slot of this core holds its waits (tile_pipes_sim.h).
struct WaitsFor {
  const SimCoreHooks *hooks = g_sim_core.load(std::memory_order_acquire);
  explicit WaitsFor(const KernelWaits *waits) {
    if (hooks != nullptr) hooks->set_kernel_waits(waits);
  }
  ~WaitsFor() {
    if (hooks != nullptr) hooks->set_kernel_waits(nullptr);
  }
};
}  // namespace

int32_t platform_call_kernel_waiting(void (*kernel)(int64_t *args), int64_t *args, const KernelWaits *waits) {
  const WaitsFor during(waits);
  return platform_call_kernel(kernel, args);
}

}  // namespace pto
