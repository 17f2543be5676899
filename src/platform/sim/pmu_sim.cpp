// src/platform/sim/pmu_sim.cpp — PMU counters on the sim: timestamp counter + perf_event_open.
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "pto_platform/clock.h"
#include "pto_platform/pmu.h"

namespace pto {
namespace {

int open_counter(uint64_t config, int group) {
  perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = config;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid <= 2
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1, group, 0));
}

// One per device thread: a counter group (instructions leader, cache misses member).
struct ThreadCounters {
  bool opened = false;
  int leader = -1, member = -1;
  int32_t error = 0;

  void open() {
    opened = true;
    leader = open_counter(PERF_COUNT_HW_INSTRUCTIONS, -1);
    if (leader < 0) {
      error = errno;
      return;
    }
    member = open_counter(PERF_COUNT_HW_CACHE_MISSES, leader);
    if (member < 0) error = errno;
  }
  ~ThreadCounters() {
    if (member >= 0) close(member);
    if (leader >= 0) close(leader);
  }
};

thread_local ThreadCounters t_counters;

}  // namespace

uint32_t platform_pmu_read(PmuSample *out, int32_t *error) {
  ThreadCounters &t = t_counters;
  if (!t.opened) t.open();
  uint32_t valid = kPmuCycles;
  *error = t.error;
  if (t.leader >= 0) {
    uint64_t buf[3] = {0, 0, 0};  // PERF_FORMAT_GROUP: nr, then one value per counter
    if (read(t.leader, buf, sizeof buf) >= static_cast<ssize_t>(2 * sizeof(uint64_t))) {
      out->instructions = buf[1];
      valid |= kPmuInstructions;
      if (buf[0] >= 2) {
        out->cache_misses = buf[2];
        valid |= kPmuCacheMisses;
      }
    }
  }
  out->cycles = platform_ticks();  // the timestamp counter: reference cycles
  return valid;
}

}  // namespace pto
