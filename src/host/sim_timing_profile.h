// src/host/sim_timing_profile.h — the sim timing mode's per-platform costs of scheduler hand-offs.
//
// Data only: one row per chip family, matched by the prefix of the geometry's platform name
// ("a2a3sim" -> "a2a3"). The host copies a row into the launch's SimTiming
// (pto_platform/device.h); docs/sim_execution.md ("Timing mode") explains what each number
// stands for and what the model leaves out. Change a number here and the predicted makespans
// change with it; nothing else depends on them.
//
// Where the numbers come from: nowhere authoritative. We have no measurement of these
// latencies on Ascend hardware and no published figure for them; every value below is an
// ESTIMATE from the mechanism each hand-off goes through, so treat predicted makespans as
// relative (schedule A against schedule B), not as absolute device times.
//  - dispatch: the AICPU scheduler writes a task's payload into the core's handshake slot in
//    global memory (HBM) and the AICore, polling that slot, reads it and then the payload: about
//    two to three dependent global-memory accesses from the core, each some hundreds of ns on
//    HBM -> ~1 us.
//  - completion: the core writes its status word, the AICPU's next poll of the handshake slots
//    reads it: one global-memory write and one read, plus on average half a polling pass -> ~0.5 us.
//  - submit: the orchestrator's AICPU thread publishes a ready task to a scheduler thread on
//    another AICPU core through cache-coherent shared memory: a cache-line transfer between CPU
//    cores, ~0.1-0.2 us -> 0.2 us.
// a5: the same estimates (no better information on how its handshake differs).
#ifndef PTO_HOST_SIM_TIMING_PROFILE_H
#define PTO_HOST_SIM_TIMING_PROFILE_H

#include <cstdint>
#include <cstring>

namespace pto {

struct SimTimingProfile {
  const char *family;      // platform-name prefix
  uint64_t dispatch_ns;    // estimate, see above
  uint64_t completion_ns;  // estimate, see above
  uint64_t submit_ns;      // estimate, see above
};

inline constexpr SimTimingProfile kSimTimingProfiles[] = {
    {"a2a3", 1000, 500, 200},
    {"a5", 1000, 500, 200},
};

// The row of `platform` (a geometry name), or null if none matches.
inline const SimTimingProfile *sim_timing_profile(const char *platform) {
  for (const SimTimingProfile &p : kSimTimingProfiles)
    if (strncmp(platform, p.family, strlen(p.family)) == 0) return &p;
  return nullptr;
}

}  // namespace pto
#endif  // PTO_HOST_SIM_TIMING_PROFILE_H
