// src/platform/sim/device_log_sim.cpp — see device_log_sim.h.
#include "device_log_sim.h"

#include <errno.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include <unistd.h>

#include "pto_platform/files.h"

namespace pto {
namespace {

thread_local char t_thread_name[24] = "host";
__attribute__((tls_model("initial-exec")))  // set at every fiber resume (see crash_report_sim.cpp)
thread_local const char *t_fiber_name = nullptr;  // set while a pool fiber runs on this thread

const char *level_name(int32_t level) {
  static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
  return level >= 0 && level < 4 ? names[level] : "?";
}

const char *base_name(const char *path) {
  const char *slash = path ? strrchr(path, '/') : nullptr;
  return slash ? slash + 1 : (path ? path : "?");
}

}  // namespace

void sim_log_set_thread(const char *kind, uint32_t index) {
  snprintf(t_thread_name, sizeof t_thread_name, "%s %u", kind, index);
}

void sim_log_set_fiber_name(const char *name) {
  t_fiber_name = name;
}

SimDeviceLog::SimDeviceLog(int device_id) {
  const char *env = getenv("PTO_LOG_DIR");
  const char *home = getenv("HOME");
  const std::string root =
      env && *env ? std::string(env) : std::string(home && *home ? home : "/tmp") + "/ascend/log/debug";
  dir_ = root + "/device-" + std::to_string(device_id);
  path_ = dir_ + "/device.log";
  log_.level = PTO_LOG_WARN;
  log_.device_id = device_id;
  log_.write = &SimDeviceLog::write;
  log_.sink = this;
}

SimDeviceLog::~SimDeviceLog() {
  if (file_) fclose(file_);
}

void SimDeviceLog::write(const pto_device_log *log, int32_t level, const char *file, int32_t line,
                         const char *fmt, va_list ap) {
  char msg[1024];
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm local{};
  localtime_r(&ts.tv_sec, &local);
  int n = snprintf(msg, sizeof msg, "%04d-%02d-%02d %02d:%02d:%02d.%06ld %-5s [%s] %s:%d] ",
                   local.tm_year + 1900, local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min,
                   local.tm_sec, ts.tv_nsec / 1000, level_name(level), t_fiber_name ? t_fiber_name : t_thread_name, base_name(file), line);
  if (n < 0) return;
  const size_t head = static_cast<size_t>(n) < sizeof msg ? static_cast<size_t>(n) : sizeof msg - 1;
  const int body = vsnprintf(msg + head, sizeof msg - head, fmt, ap);
  size_t len = head + (body > 0 ? static_cast<size_t>(body) : 0);
  if (len > sizeof msg - 2) len = sizeof msg - 2;  // truncated: keep the line whole
  msg[len++] = '\n';
  msg[len] = '\0';
  static_cast<SimDeviceLog *>(log->sink)->append(msg, len);
}

void SimDeviceLog::append(const char *text, size_t len) {
  // PTO_LOG_STDERR=1: each line on stderr (fd 2) too, one write, as the reference's sim prints
  // its device log (read per line: a test may set it after the device was opened).
  const char *echo = getenv("PTO_LOG_STDERR");
  if (echo && echo[0] == '1') (void)!::write(2, text, len);
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return;
  if (!file_) {
    if (const int err = platform_make_directories(dir_)) {
      errno = err;
    } else {
      file_ = fopen(path_.c_str(), "a");
    }
    if (!file_) {
      failed_ = true;
      fprintf(stderr,
              "pto_runtime: cannot write device log %s (%s); its messages are dropped (set PTO_LOG_DIR)\n",
              path_.c_str(), strerror(errno));
      return;
    }
  }
  fwrite(text, 1, len, file_);
  fflush(file_);
}

}  // namespace pto
