// src/host/run_wait.h — what every runtime's host part does around a launch: image buffer, wait, time-out.
#ifndef PTO_HOST_RUN_WAIT_H
#define PTO_HOST_RUN_WAIT_H

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "core/tick_clock.h"
#include "host/device_runner.h"
#include "pto/mix_sync.h"             // pto_mix_status_describe
#include "pto/unsupported_feature.h"  // pto_unsupported_status_describe

namespace pto {

// For the host's TASK_FAILED message: " (what it means)" for a status the MIX sync calls
// (core/mix_sync.h) fail a task with, "" for any other.
inline std::string mix_status_text(int32_t status) {
  char text[256];
  return pto_mix_status_describe(status, text, sizeof text) ? std::string(" (") + text + ")" : std::string();
}

// A failed task's report, after "task N (kernel K...)": what went wrong, and the run's code.
// A kernel the simulator stopped at a feature it does not implement (pto/unsupported_feature.h)
// makes the run NOT_SUPPORTED, worded as the feature; any other status TASK_FAILED,
// " failed with status S" and, for a MIX sync status, its meaning.
inline pto_status failed_task_code(int32_t status) {
  return pto_unsupported_status_feature(status) != 0 ? PTO_NOT_SUPPORTED : PTO_TASK_FAILED;
}
inline std::string failed_task_text(int32_t status) {
  char text[512];
  if (pto_unsupported_status_describe(status, text, sizeof text))
    return std::string(" ") + text + " (status " + std::to_string(status) + ")";
  if (pto_comm_remote_status_describe(status, text, sizeof text))
    return std::string(" ") + text + " (status " + std::to_string(status) + ")";
  return " failed with status " + std::to_string(status) + mix_status_text(status);
}

// A zeroed, cache-line-aligned host buffer in which a runtime lays out its shared memory
// before copying it to the device.
class HostImage {
 public:
  explicit HostImage(uint64_t bytes);
  char *data() { return mem_.get(); }

 private:
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> mem_;
};

struct RunWaitHooks {
  // Describes what every unfinished task is doing; called when time runs out, before abort.
  std::function<std::string()> report;
  // Tells the device programs to stop (set the runtime's abort flag, ring its doorbells).
  std::function<void()> abort;
};

// What a runtime hands back once it has laid out a run: how to launch it, how to report and
// abort it on a time-out, and what to do once the device programs have finished. The state the
// callbacks need (graph, layout, device addresses) is captured by them, so a run can be
// finished later by whoever notices its completion (ChipWorker::poll).
struct LaunchedRun {
  LaunchSpec spec;
  RunWaitHooks hooks;
  uint64_t launch_ns = 0;  // platform clock when the device programs were started
  // Reads results back and fills the runtime's part of the statistics.
  std::function<pto_status(uint64_t launch_ns, pto_run_stats *stats, std::string *error)> finish;
};

// Fills the always-collected part of *stats (effective and scheduling time, per-core busy time
// and task counts, task timing slots in platform ns) from a run's counters region (core/run_counters.h) at device address
// `region`, written by `threads` scheduler threads for a chip of `layout`'s clusters of which
// the run used `block_dim`; `ns_per_tick` is Device::ns_per_tick().
void read_run_counters(Device &device, const void *region, uint32_t threads, const ClusterLayout &layout,
                       uint32_t block_dim, double ns_per_tick, pto_run_stats *stats);

// The map from the run's device ticks to platform nanoseconds (core/tick_clock.h), from the
// clock pairs of scheduler thread 0 in the counters region at device address `region`.
TickClock read_tick_clock(Device &device, const void *region, double ns_per_tick);

// Starts the device programs of `run`.
void launch_run(DeviceRunner &runner, LaunchedRun *run);

// After the run's deadline passed: reports, aborts and drains (a kernel that never returns
// marks the context broken and leaks the run's memory). Returns PTO_RUN_TIMEOUT.
pto_status time_out_run(DeviceRunner &runner, RunInputs &in, const LaunchedRun &run, std::string *error);

// The caller gave up on the run (ChipWorker::abort, Ctrl-C): aborts and drains it like a
// time-out, without the report. Returns PTO_ABORTED, or PTO_DEVICE_BROKEN when a kernel did
// not return within the drain grace (the context is then marked broken).
pto_status abort_run(DeviceRunner &runner, RunInputs &in, const LaunchedRun &run, std::string *error);

// Once the device programs returned: checks their status, then calls run.finish.
pto_status complete_run(DeviceRunner &runner, LaunchedRun &run, pto_run_stats *stats, std::string *error);

}  // namespace pto
#endif  // PTO_HOST_RUN_WAIT_H
