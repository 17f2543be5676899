// src/platform/include/pto_platform/kernel_call.h — how a compute core calls one kernel invocation.
#ifndef PTO_PLATFORM_KERNEL_CALL_H
#define PTO_PLATFORM_KERNEL_CALL_H

#include <cstdint>

namespace pto {

// What a kernel is about to wait for inside code the platform runs for it (on the sim: a
// TPUSH, TPOP or TFREE of PTO-ISA's CPU pipes that cannot go on yet). kWaitPush: room in a full
// pipe; kWaitPop: a tile in an empty one; kWaitPipe: either (a pipe both ways).
enum KernelWaitRole : uint32_t { kWaitPipe = 0, kWaitPush = 1, kWaitPop = 2 };

// The runtime's side of such waits, for one call: only the runtime knows the task's other
// parts, so only it can tell a wait another part will end from one nothing can end any more.
// Handed to platform_call_kernel by the core that calls a MIX part; valid for that call only.
struct KernelWaits {
  void *self;
  // Suspends the calling kernel until another part may have changed what it waits for (`pipe`
  // names the pipe, for the status). The kernel holds `lock`: the runtime calls release(lock)
  // before it suspends and reacquire(lock) after. Returns 0 (the kernel checks its condition
  // again; the wake-up may be spurious), or a non-zero task status when the wait can never
  // end: the lock is held then and the kernel must be stopped.
  int32_t (*wait)(void *self, KernelWaitRole role, uint32_t pipe, void (*release)(void *lock),
                  void (*reacquire)(void *lock), void *lock);
  // The kernel changed state another part may be waiting for (a notify).
  void (*changed)(void *self);
};

// Calls kernel(args) and returns 0, or the task status of an invocation the platform stopped
// before the kernel returned. The sim stops a tile kernel at a PTO-ISA feature it cannot run
// there and whose wait would block the core for good (a TPUSH/TPOP outside a MIX task, a pipe
// wait no other part can end: hooks compiled into the kernel throw pto::KernelStop,
// include/pto/kernel_stop.h); the caller fails the task with the status. Costs nothing on the
// normal path (a zero-cost exception region around one indirect call). A hardware backend has
// nothing to stop: 0.
int32_t platform_call_kernel(void (*kernel)(int64_t *args), int64_t *args);
// The same for a MIX part: `waits` serves the kernel's pipe waits during this call. A function
// of its own, so that the other calls, every task's, carry nothing for it.
int32_t platform_call_kernel_waiting(void (*kernel)(int64_t *args), int64_t *args, const KernelWaits *waits);

}  // namespace pto
#endif  // PTO_PLATFORM_KERNEL_CALL_H
