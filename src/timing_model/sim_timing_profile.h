// src/timing_model/sim_timing_profile.h — the sim timing mode's per-chip-family profile: the latencies of
// the scheduler's hand-offs and the chip clock, read from a JSON file at each timed run.
//
// The files are data, not code: share/sim_profiles/<family>.json in the source tree, staged to
// <build>/stage/sim_profiles/ and installed to <package>/sim_profiles/ (three levels above each
// runtimes/<backend>/<runtime>/libhost.so, which is how a run finds them). PTO_SIM_PROFILE names
// another file. Every constant carries its value and a `source` string saying where the number
// comes from or that it is an estimate. docs/design/sim_execution.md ("Timing profile") describes the
// format; the host copies the latencies into the launch's SimTiming (pto_platform/device.h).
#ifndef PTO_TIMING_MODEL_SIM_TIMING_PROFILE_H
#define PTO_TIMING_MODEL_SIM_TIMING_PROFILE_H

#include <cstdint>
#include <string>

#include "pto/error.h"

namespace pto {

struct SimTimingProfile {
  std::string family;          // the chip family it is for: "a2a3", "a5" (ChipGeometry::arch)
  uint64_t dispatch_ns = 0;    // an AICPU thread rings a core: until the core starts the payload
  uint64_t completion_ns = 0;  // a core rings an AICPU thread: until a parked scheduler sees it
  uint64_t submit_ns = 0;      // an AICPU thread rings another: until the other goes on
  // The chip clock in MHz: a cost model's cycles / cycles_per_us = microseconds. > 0.
  double cycles_per_us = 0;
  // What the AICPU's cores spend on each piece of runtime work (DeviceWork, pto_platform/clock.h).
  uint64_t aicpu_submit_ns = 0, aicpu_submit_tensor_ns = 0, aicpu_dispatch_ns = 0, aicpu_completion_ns = 0;
  // A run's device time outside its tasks' window: before the first can start, after the last
  // one ended, and per task (the runtime resetting the task's shared state between runs).
  uint64_t device_preamble_ns = 0, device_teardown_ns = 0, device_reset_per_task_ns = 0;
  // Global memory (HBM) bandwidth shared by every core, GB/s (1e9 bytes/s); and the per-core
  // rates, GiB/s, at which the kernels' cost model prices its transfers by pipe (MTE2 of a cube
  // core: GM -> L1, of a vector core: GM -> UB; MTE3: UB -> GM; FIXP: L0C -> GM).
  double gm_GBps = 0, mte2_cube_GiBps = 0, mte2_vector_GiBps = 0, mte3_GiBps = 0, fixp_GiBps = 0;
  std::string path;  // the file it was read from
};

// Reads and checks the profile file at `path`. False with *error saying what is wrong (the file
// is missing or unreadable, not JSON, a key is missing, unknown or of the wrong kind, a latency is
// negative or fractional, the clock is not positive, a source is empty), without the path.
bool read_sim_timing_profile(const std::string &path, SimTimingProfile *out, std::string *error);
// The same checks on the text of a profile (out->path left empty); tests/fuzz reads it so.
bool parse_sim_timing_profile(const std::string &text, SimTimingProfile *out, std::string *error);

// Where a family's default profile is: <dir>/<family>.json, <dir> the sim_profiles/ directory
// of the layout the calling host library belongs to. "" when the library cannot locate itself.
std::string default_sim_timing_profile_path(const std::string &family);

// The profile of a timed run on `platform` (a geometry name, "a2a3sim") of chip family `family`
// ("a2a3"): the file PTO_SIM_PROFILE names, else the family's default. PTO_OK, or
// PTO_INVALID_ARGUMENT with *error naming the variable (or the default file), the path and what is
// wrong, including a profile written for another family.
pto_status load_sim_timing_profile(const char *platform, const char *family, SimTimingProfile *out,
                                   std::string *error);

}  // namespace pto
#endif  // PTO_TIMING_MODEL_SIM_TIMING_PROFILE_H
