// include/pto_abi/aicpu/cache_maintenance.h — the reference's AICPU cache-maintenance calls, for
// orchestrations that include it (the reference's sync-start tests poll kernel-written memory).
//
// On the device, the AICPU's data cache is not coherent with what the AI cores write, so an
// orchestration invalidates a range before it reads and flushes it after it writes. The sim
// runs every core on the host's coherent memory: both calls order the caller's memory accesses
// (a full fence). An orchestration invalidates before it reads what a kernel writes, so it may
// be waiting for that kernel: the invalidation also hands the tasks submitted so far to the
// schedulers (pto::Orchestrator::progress), and on the sim lets the simulated cores run first
// (it may return on another thread).
#ifndef PTO_ABI_AICPU_CACHE_MAINTENANCE_H
#define PTO_ABI_AICPU_CACHE_MAINTENANCE_H

#include <stddef.h>

#include "pto_orchestration_api.h"

inline void cache_invalidate_range(const void *addr, size_t size) {
  (void)addr;
  (void)size;
  pto_abi::Bound bound;
  bound.get()->progress();
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

inline void cache_flush_range(const void *addr, size_t size) {
  (void)addr;
  (void)size;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif  // PTO_ABI_AICPU_CACHE_MAINTENANCE_H
