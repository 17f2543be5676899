// src/platform/sim/device_log_sim.h — the sim platform's device logs: one file per device id.
//
// <log dir>/device-<id>/device.log, where the log dir is $PTO_LOG_DIR or ~/ascend/log/debug
// (where Ascend hosts keep device logs). Lines are appended whole (one write each, under a
// mutex), so several contexts or processes may share a device's file. A directory that cannot
// be created is reported once on stderr and its messages are dropped: logging never fails a run.
// With PTO_LOG_STDERR=1 in the environment every line is also written to stderr.
#ifndef PTO_PLATFORM_SIM_DEVICE_LOG_SIM_H
#define PTO_PLATFORM_SIM_DEVICE_LOG_SIM_H

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "pto/device_log.h"

namespace pto {

class SimDeviceLog {
 public:
  explicit SimDeviceLog(int device_id);
  ~SimDeviceLog();
  SimDeviceLog(const SimDeviceLog &) = delete;
  SimDeviceLog &operator=(const SimDeviceLog &) = delete;

  // The device's log with its threshold set for the next run.
  pto_device_log *for_run(int32_t level) {
    log_.level = level;
    return &log_;
  }
  const std::string &path() const { return path_; }

 private:
  // printf-like (clang checks the format through vsnprintf otherwise: -Wformat-nonliteral).
  static void write(const pto_device_log *log, int32_t level, const char *file, int32_t line, const char *fmt,
                    va_list ap) __attribute__((format(printf, 5, 0)));
  void append(const char *text, size_t len);

  pto_device_log log_{};
  std::string dir_, path_;
  std::mutex mu_;
  FILE *file_ = nullptr;  // opened at the first message
  bool failed_ = false;   // could not open: reported once, messages dropped
};

// Names the calling device thread in its log lines ("aicpu 2", "core 30"); set once per thread.
void sim_log_set_thread(const char *kind, uint32_t index);
// The name log lines of this OS thread carry while a fiber runs on it (the fiber pool sets it
// on each resume: "aicpu 2", "core 17"); the string must outlive the fiber.
void sim_log_set_fiber_name(const char *name);

}  // namespace pto
#endif  // PTO_PLATFORM_SIM_DEVICE_LOG_SIM_H
