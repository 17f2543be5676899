// src/host/run_wait.cpp — launch, wait with a deadline, and the time-out path (see run_wait.h).
#include "host/run_wait.h"

#include <cstring>

#include "pto_platform/doorbell.h"

namespace pto {
namespace {
constexpr uint64_t kDrainGraceNs = 5ull * 1000 * 1000 * 1000;  // after a time-out
}

HostImage::HostImage(uint64_t bytes) {
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  mem_.reset(static_cast<char *>(std::aligned_alloc(64, rounded ? rounded : 64)));
  if (!mem_) throw std::bad_alloc();
  memset(mem_.get(), 0, rounded);
}

void launch_run(DeviceRunner &runner, LaunchedRun *run) {
  run->launch_ns = platform_now_ns();
  runner.device().launch(run->spec);
}

pto_status time_out_run(DeviceRunner &runner, RunInputs &in, const LaunchedRun &run, std::string *error) {
  Device &device = runner.device();
  // Snapshot first: after the drain the running tasks have finished and the report would no
  // longer say what the run was stuck on.
  const std::string report = run.hooks.report();
  run.hooks.abort();
  const std::string head =
      "the run exceeded its time limit of " + std::to_string(in.cfg.timeout_ms) + " ms; ";
  if (!device.wait(platform_now_ns() + kDrainGraceNs)) {
    runner.mark_broken(
        "a kernel of an earlier run did not return after its time-out; this context cannot run again");
    in.allocations->leak();  // a kernel may still write to this run's memory
    *error = head + "a kernel did not return within " + std::to_string(kDrainGraceNs / 1000000000ull) +
             " s after it, so this worker can no longer run; " + report;
  } else {
    *error = head + report;
  }
  return PTO_RUN_TIMEOUT;
}

pto_status complete_run(DeviceRunner &runner, LaunchedRun &run, pto_run_stats *stats, std::string *error) {
  stats->launch_to_done_ns = platform_now_ns() - run.launch_ns;
  const int status = runner.device().launch_status();
  if (status != 0) {
    *error = "the AICPU program failed with status " + std::to_string(status);
    return PTO_INTERNAL;
  }
  return run.finish(run.launch_ns, stats, error);
}

}  // namespace pto
