// src/host/run_wait.cpp — launch, wait with a deadline, and the time-out path (see run_wait.h).
#include "host/run_wait.h"

#include <algorithm>
#include <cstring>

#include <vector>

#include "core/run_counters.h"
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

namespace {
TickClock tick_clock_of(const SchedulerCounters &s, double ns_per_tick) {
  return TickClock(s.start.ns, s.start.ticks, s.end.ns, s.end.ticks, ns_per_tick);
}
}  // namespace

TickClock read_tick_clock(Device &device, const void *region, double ns_per_tick) {
  SchedulerCounters s;
  device.copy_from_device(&s, region, sizeof s);  // thread 0's entry comes first
  return tick_clock_of(s, ns_per_tick);
}

namespace {
// The threads' TaskTimingSlots (`slots`, unaligned in the host's copy) folded into the stats:
// the earliest dispatch and latest finish of each slot, in platform ns (complete_run rebases
// them on the launch).
void fold_task_timing_slots(const char *slots, uint32_t threads, const TickClock &clock,
                            pto_run_stats *stats) {
  TaskTimingSlots all{};
  for (uint32_t t = 0; t < threads; ++t) {
    TaskTimingSlots s;
    memcpy(&s, slots + t * sizeof s, sizeof s);
    all.merge(s);
  }
  stats->task_slot_mask = 0;
  for (uint32_t k = 0; k < PTO_TASK_TIMING_SLOTS; ++k) {
    uint64_t dispatch = 0, finish = 0;
    // A slot never dispatched, or never finished, is left out.
    if (!all.first_dispatch(k, &dispatch) || !all.last_finish(k, &finish)) continue;
    stats->task_slot_mask |= 1u << k;
    stats->task_slot_dispatch_ns[k] = clock.ns(dispatch);
    stats->task_slot_finish_ns[k] = clock.ns(finish);
  }
}
}  // namespace

void read_run_counters(Device &device, const void *region, uint32_t threads, const ClusterLayout &layout,
                       uint32_t block_dim, double ns_per_tick, pto_run_stats *stats) {
  const uint32_t cores = layout.cores();
  std::vector<char> buf(run_counters_bytes(threads, cores));
  device.copy_from_device(buf.data(), region, buf.size());
  const auto base = reinterpret_cast<uint64_t>(buf.data());
  const SchedulerCounters *sched = scheduler_counters(base);
  const CoreCounters *core = core_counters(base, threads);
  const TickClock clock = tick_clock_of(sched[0], ns_per_tick);
  stats->scheduling_ns = 0;
  for (uint32_t t = 0; t < threads; ++t) {
    const uint64_t span = sched[t].end.ns > sched[t].start.ns ? sched[t].end.ns - sched[t].start.ns : 0;
    const uint64_t parked = clock.span_ns(sched[t].parked_ticks);
    stats->scheduling_ns += span > parked ? span - parked : 0;
    for (uint32_t p = 0; p < 3; ++p) stats->dispatch_tasks[p] += sched[t].dispatched[p];
    stats->dispatch_switches += sched[t].dispatch_switches;
    stats->tasks_retired_inline += sched[t].retired_inline;
  }
  uint64_t first = UINT64_MAX, last = 0;
  stats->num_cores = cores < PTO_STATS_MAX_CORES ? cores : PTO_STATS_MAX_CORES;
  stats->num_clusters = layout.clusters;
  stats->block_dim = block_dim;
  for (uint32_t c = 0; c < stats->num_cores; ++c) {
    stats->core_busy_ns[c] = clock.span_ns(core[c].busy_ticks);
    stats->core_tasks[c] = static_cast<uint32_t>(core[c].tasks);
    if (core[c].tasks == 0) continue;
    first = core[c].first_start < first ? core[c].first_start : first;
    last = core[c].last_end > last ? core[c].last_end : last;
  }
  stats->effective_ns = last > first ? clock.span_ns(last - first) : 0;
  fold_task_timing_slots(buf.data() + run_counters_slots_offset(threads, cores), threads, clock, stats);
}

void launch_run(DeviceRunner &runner, LaunchedRun *run) {
  run->launch_ns = platform_now_ns();
  runner.device().launch(run->spec);
}

namespace {
// Tells the device programs to stop and waits for them (kDrainGraceNs). False when a kernel
// did not return: the context is marked broken and the run's memory leaked, since the kernel
// may still write to it.
bool abort_and_drain(DeviceRunner &runner, RunInputs &in, const LaunchedRun &run, const char *when) {
  run.hooks.abort();
  runner.device().stop_waits();
  if (runner.device().wait(platform_now_ns() + kDrainGraceNs)) return true;
  runner.mark_broken(std::string("a kernel of an earlier run did not return after ") + when +
                     "; this context cannot run again");
  in.allocations->leak();
  return false;
}

std::string drain_grace_text() {
  return "a kernel did not return within " + std::to_string(kDrainGraceNs / 1000000000ull) +
         " s after it, so this worker can no longer run; ";
}
}  // namespace

pto_status time_out_run(DeviceRunner &runner, RunInputs &in, const LaunchedRun &run, std::string *error) {
  // Snapshot first: after the drain the running tasks have finished and the report would no
  // longer say what the run was stuck on.
  std::string report = run.hooks.report();
  const std::string waits = runner.device().waits_report();
  if (!waits.empty() && !report.empty() && report.back() != '\n') report += '\n';
  report += waits;
  const std::string head =
      "the run exceeded its time limit of " + std::to_string(in.cfg.timeout_ms) + " ms; ";
  if (!abort_and_drain(runner, in, run, "its time-out")) {
    *error = head + drain_grace_text() + report;
  } else {
    *error = head + report;
  }
  return PTO_RUN_TIMEOUT;
}

pto_status abort_run(DeviceRunner &runner, RunInputs &in, const LaunchedRun &run, std::string *error) {
  const std::string waits = runner.device().waits_report();
  const std::string tail = waits.empty() ? std::string() : "; kernels were waiting:\n" + waits;
  if (!abort_and_drain(runner, in, run, "it was aborted")) {
    *error = "the run was aborted; " + drain_grace_text() + tail;
    return PTO_DEVICE_BROKEN;
  }
  *error = "the run was aborted before it finished; its outputs were not copied back" + tail;
  return PTO_ABORTED;
}

pto_status complete_run(DeviceRunner &runner, LaunchedRun &run, pto_run_stats *stats, std::string *error) {
  stats->launch_to_done_ns = platform_now_ns() - run.launch_ns;
  const int status = runner.device().launch_status();
  if (status != 0) {
    *error = "the AICPU program failed with status " + std::to_string(status);
    return PTO_INTERNAL;
  }
  // Timing mode: the run's timestamps are virtual ns and the launch is virtual time 0.
  const uint64_t origin = run.spec.timing != nullptr ? 0 : run.launch_ns;
  const pto_status rc = run.finish(origin, stats, error);
  for (uint32_t k = 0; k < PTO_TASK_TIMING_SLOTS; ++k) {
    if ((stats->task_slot_mask >> k & 1u) == 0) continue;
    stats->task_slot_dispatch_ns[k] -= std::min(origin, stats->task_slot_dispatch_ns[k]);
    stats->task_slot_finish_ns[k] -= std::min(origin, stats->task_slot_finish_ns[k]);
  }
  return rc;
}

}  // namespace pto
