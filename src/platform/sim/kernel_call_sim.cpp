// src/platform/sim/kernel_call_sim.cpp — the sim's kernel call: a kernel a sim hook stopped fails its task.
#include "pto_platform/kernel_call.h"

#include "pto/kernel_stop.h"

namespace pto {

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

}  // namespace pto
