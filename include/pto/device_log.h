/* include/pto/device_log.h — levelled device logs from kernels, device orchestrations and AICPU code.
 *
 *   DEV_INFO(args, "tile %d of %d", i, n);     // in a kernel: args is the kernel's argument pointer
 *   DEV_WARN(o, "window nearly full");         // in a device orchestration: o is the Orchestrator
 *
 * Each device has one pto_device_log, owned by the platform and set up for every run: the
 * run's threshold (ChipCallConfig.log_level) and a writer. A message below the threshold costs
 * one compare and branch at the call site; its arguments are not evaluated. On the sim
 * platform messages go to <log dir>/device-<id>/device.log, one line each with the time, the
 * level, which AICPU thread or core wrote it, and file:line; the log dir is $PTO_LOG_DIR, by
 * default ~/ascend/log/debug as on Ascend hosts. A hardware backend gives the same struct a
 * writer of its own. */
#ifndef PTO_DEVICE_LOG_H
#define PTO_DEVICE_LOG_H

#include <stdarg.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pto_log_level {
  PTO_LOG_DEBUG = 0,
  PTO_LOG_INFO = 1,
  PTO_LOG_WARN = 2,
  PTO_LOG_ERROR = 3,
  PTO_LOG_OFF = 4, /* as a threshold: nothing is written */
};

typedef struct pto_device_log {
  int32_t level; /* threshold for the current run; host-written before launch */
  int32_t device_id;
  /* Formats and writes one message; platform-owned, safe to call from any device thread. */
  void (*write)(const struct pto_device_log *log, int32_t level, const char *file, int32_t line,
                const char *fmt, va_list ap);
  void *sink; /* the platform's */
} pto_device_log;

#ifdef __cplusplus
} /* extern "C" */

#include "pto/kernel.h"

namespace pto {

class Orchestrator;

/* The device log a call site writes to: a kernel's args, a device orchestration's
 * Orchestrator (orchestration.h defines that overload), or the log itself. */
inline const pto_device_log *device_log_of(const pto_device_log *log) {
  return log;
}
inline const pto_device_log *device_log_of(__gm__ int64_t *args) {
  return reinterpret_cast<const pto_device_log *>(static_cast<uintptr_t>(call_of_args(args)->log));
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
inline void
device_log_write(const pto_device_log *log, int32_t level, const char *file, int32_t line, const char *fmt,
                 ...) {
  va_list ap;
  va_start(ap, fmt);
  log->write(log, level, file, line, fmt, ap);
  va_end(ap);
}

}  // namespace pto

#define PTO_DEV_LOG(where, lvl, ...)                                                 \
  do {                                                                               \
    const pto_device_log *pto_dev_log_ = ::pto::device_log_of(where);                \
    if ((lvl) >= pto_dev_log_->level)                                                \
      ::pto::device_log_write(pto_dev_log_, (lvl), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

#define DEV_DEBUG(where, ...) PTO_DEV_LOG(where, PTO_LOG_DEBUG, __VA_ARGS__)
#define DEV_INFO(where, ...) PTO_DEV_LOG(where, PTO_LOG_INFO, __VA_ARGS__)
#define DEV_WARN(where, ...) PTO_DEV_LOG(where, PTO_LOG_WARN, __VA_ARGS__)
#define DEV_ERROR(where, ...) PTO_DEV_LOG(where, PTO_LOG_ERROR, __VA_ARGS__)
#endif /* __cplusplus */

#endif /* PTO_DEVICE_LOG_H */
