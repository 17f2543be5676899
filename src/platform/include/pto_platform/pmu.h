// src/platform/include/pto_platform/pmu.h — performance counters of the calling device thread.
//
// What enable_pmu records around every kernel. `cycles` always works (the sim reads the CPU's
// timestamp counter; a hardware backend reads the core's cycle counter). Instructions and cache
// misses need hardware counters: the sim asks Linux through perf_event_open (user space only,
// per thread), which virtual machines and strict perf_event_paranoid settings often refuse; the
// result then says which counters are missing and why, and the run goes on without them.
#ifndef PTO_PLATFORM_PMU_H
#define PTO_PLATFORM_PMU_H

#include <cstdint>

namespace pto {

enum : uint32_t { kPmuCycles = 1, kPmuInstructions = 2, kPmuCacheMisses = 4 };

struct PmuSample {
  uint64_t cycles = 0, instructions = 0, cache_misses = 0;
};

// Reads the calling thread's counters (opening them on its first call). Returns the valid
// ones (kPmu* bits); *error is the errno of a refused counter (0 if none was refused).
uint32_t platform_pmu_read(PmuSample *out, int32_t *error);

}  // namespace pto
#endif  // PTO_PLATFORM_PMU_H
