// src/core/profiling.h — whether this build has the profiling code (CMake PTO_PROFILING).
//
// kProfilingBuilt is false in a build configured with -DPTO_PROFILING=OFF: every "is profiling
// on for this run?" test then folds to false at compile time and the trace / PMU code is
// dropped, which is what bench/profiling_overhead.py compares a normal build against.
#ifndef PTO_CORE_PROFILING_H
#define PTO_CORE_PROFILING_H

namespace pto {
#ifdef PTO_NO_PROFILING
constexpr bool kProfilingBuilt = false;
#else
constexpr bool kProfilingBuilt = true;
#endif
}  // namespace pto
#endif  // PTO_CORE_PROFILING_H
