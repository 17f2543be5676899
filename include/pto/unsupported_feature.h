/* include/pto/unsupported_feature.h — what the status of a task stopped at an unsupported feature means.
 *
 * The statuses themselves and how a kernel is stopped: include/pto/kernel_stop.h. */
#ifndef PTO_UNSUPPORTED_FEATURE_H
#define PTO_UNSUPPORTED_FEATURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pto/kernel_stop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The feature a status of kernel_stop.h names, or 0 for any other status. */
static inline uint32_t pto_unsupported_status_feature(int32_t status) {
  if (status >= 0) return 0;
  const uint32_t v = (uint32_t)(-(int64_t)status);
  return (v >> 16) == PTO_UNSUPPORTED_STATUS_TAG ? (v & 0xFFFFu) : 0;
}

/* Writes what such a status means into buf (NUL-terminated, at most n bytes), worded to follow
 * "task N (kernel K) ", and returns 1; returns 0 (buf untouched) for any other status. */
static inline int pto_unsupported_status_describe(int32_t status, char *buf, size_t n) {
  switch (pto_unsupported_status_feature(status)) {
    case PTO_UNSUPPORTED_TPIPE:
      snprintf(buf, n,
               "uses PTO-ISA's TPUSH/TPOP cross-core pipes (TPUSH, TPOP, TFREE on a TPipe) in a kernel "
               "binary the simulator did not load for a core, so there is no cluster to connect the pipe "
               "to: the kernel was stopped at its first pipe call instead of waiting for a peer that "
               "never comes");
      return 1;
    case PTO_UNSUPPORTED_REMOTE_WINDOW:
      snprintf(buf, n,
               "used a window of a chip on another host (an L4 communication domain) where no L4 worker "
               "serves such windows: only chips in thread mode of an L4 worker reach them");
      return 1;
    default:
      return 0;
  }
}

/* What a status of pto_comm_remote_status (pto/kernel_stop.h) means, worded as above; 0 for
 * any other status. */
static inline int pto_comm_remote_status_describe(int32_t status, char *buf, size_t n) {
  if (status >= 0) return 0;
  const uint32_t v = (uint32_t)(-(int64_t)status);
  if ((v >> 16) != PTO_COMM_REMOTE_STATUS_TAG) return 0;
  static const char *const kWhy[] = {
      "?", "the address lies in no live communication domain of this L4 worker",
      "the access runs past the end of the peer's window",
      "TPUT with AtomicAdd of an element type MPI cannot add (float16, bfloat16, ...)",
      "the MPI call failed (the worker's stderr names the MPI error)"};
  const uint32_t why = v & 0xFFFFu;
  snprintf(buf, n, "failed to reach a window of a chip on another host: %s", why < 5 ? kWhy[why] : "?");
  return 1;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PTO_UNSUPPORTED_FEATURE_H */
