// src/hierarchical/chip_endpoint.h — the seam between the L3 scheduler and one chip context.
//
// The scheduler only starts runs and polls for their end; it never blocks on a chip. Two
// implementations today: ThreadChip (a ChipWorker in this process, ChipWorker::start/poll)
// and ProcessChip (a forked chip process behind a shared-memory mailbox). A chip of another
// host driven from this one would be a third implementation of this interface: nothing above
// it knows about fork, futexes or shared memory. (L4, docs/guide/l4.md, does not use one: each host
// runs its own L3 worker and data moves between hosts as SUB tasks.) All methods are called by the scheduler thread only
// (plus construction/shutdown by the Worker, when the scheduler is not running).
#ifndef PTO_HIERARCHICAL_CHIP_ENDPOINT_H
#define PTO_HIERARCHICAL_CHIP_ENDPOINT_H

#include <cstdint>
#include <cstdio>
#include <string>

#include "pto/chip_worker.h"

namespace pto {
namespace l3 {

// "2.500 s": a duration in reports and in messages about the time limits (WorkerOptions
// *_ms), in the one unit both the C++ options and the Python keyword arguments can be read in.
inline std::string fmt_seconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}
inline std::string fmt_seconds_ms(uint64_t ms) {
  return fmt_seconds(ms * 1000000ull);
}

struct ChipResult {
  pto_status code = PTO_OK;
  std::string message;  // set when code != OK
  RunStats stats;
  bool context_lost = false;  // the chip context died with the run (it is being replaced)
  std::string where;          // describe() of the context that ran it (before any replacement)
};

class ChipEndpoint {
 public:
  virtual ~ChipEndpoint() = default;
  // "chip 1 (device 5, process 4321)": names the chip in errors and reports.
  virtual std::string describe() const = 0;
  // Starts a run and returns without waiting for it. Throws pto::Error if it cannot start.
  virtual void start(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                     const ChipCallConfig &config) = 0;
  // Never blocks. True once the started run finished; *out says how.
  virtual bool poll(ChipResult *out) = 0;
  // True when a run may be started now. May advance a restart; never blocks.
  virtual bool available() = 0;
  // True when the chip can no longer serve runs; *why says what happened.
  virtual bool broken(std::string *why) const = 0;
  // True when completions are only found by polling (the scheduler then wakes up periodically
  // while a run is in flight); false when the chip rings the scheduler's bell itself.
  virtual bool needs_polling() const = 0;
  // Asks the run in flight to stop (its task's run was cancelled); poll() then reports it,
  // PTO_ABORTED unless it finished first. May block while the chip drains (thread mode).
  virtual void abort() = 0;
  // Stops the context (waits for a run in flight to drain where the chip allows it).
  virtual void shutdown() = 0;
};

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_CHIP_ENDPOINT_H
