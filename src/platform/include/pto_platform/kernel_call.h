// src/platform/include/pto_platform/kernel_call.h — how a compute core calls one kernel invocation.
#ifndef PTO_PLATFORM_KERNEL_CALL_H
#define PTO_PLATFORM_KERNEL_CALL_H

#include <cstdint>

namespace pto {

// Calls kernel(args) and returns 0, or the task status of an invocation the platform stopped
// before the kernel returned. The sim stops a tile kernel that reaches a PTO-ISA feature it
// does not implement and that would otherwise block the core for good (TPUSH/TPOP: a hook
// compiled into the kernel throws pto::KernelStop, include/pto/kernel_stop.h); the
// caller fails the task with the status. Costs nothing on the normal path (a zero-cost
// exception region around one indirect call). A hardware backend has nothing to stop: 0.
int32_t platform_call_kernel(void (*kernel)(int64_t *args), int64_t *args);

}  // namespace pto
#endif  // PTO_PLATFORM_KERNEL_CALL_H
