/* include/pto/mix_sync.h — cross-core sync between the three parts of one MIX task.
 *
 * A MIX task's kernel runs on all three cores of one cluster at once: part 0 on the AIC core,
 * parts 1 and 2 on its AIV cores (pto::mix_part). These calls let the parts talk:
 *
 *   Event flags (FFTS-style). A task has PTO_MIX_FLAGS flags, each a counter that starts at 0:
 *     pto::sync_set(args, f)   adds one (at most PTO_MIX_FLAG_MAX pending sets per flag);
 *     pto::sync_wait(args, f)  waits until the counter is non-zero, then takes one.
 *   Any part may set or wait on any flag; a set by one part releases one wait by another
 *   (or by itself). Every part's writes to global memory before a set are visible to the part
 *   whose wait that set releases.
 *
 *   Tile pipes. A task has PTO_MIX_PIPES pipes, each a bounded FIFO of PTO_MIX_PIPE_DEPTH tiles
 *   of 1 .. PTO_MIX_TILE_BYTES bytes, copied in and out:
 *     pto::pipe_push(args, p, src, bytes)  waits while the pipe is full, then copies a tile in;
 *     pto::pipe_pop(args, p, dst, bytes)   waits while it is empty, then copies the oldest
 *                                          tile out; `bytes` must equal the pushed tile's size.
 *   A pipe joins two parts: the first part that pushes to it is its only pusher and the first
 *   that pops from it its only popper for the rest of the task (they may be the same part).
 *
 * Waits suspend the calling core (on the sim: the core's fiber, through the platform's
 * doorbell; with PTO_SIM_EXEC=threads its OS thread parks); they never spin.
 *
 * Deadlock is an error, not a hang. A wait fails at once, and fails the task, when it can never
 * be satisfied: every part still running waits and none of their waits can proceed, or the
 * part that alone could satisfy it (a pipe's bound pusher or popper) has returned. Each call
 * returns true on success; false means the task has been failed with a status naming the
 * part and the flag or pipe (pto_mix_status_describe), and the kernel should return.
 *
 * Calling any of these from a task that is not a MIX task fails the task too.
 *
 * The state lives in device memory the runtime owns: one pto_mix_sync-sized block per cluster,
 * reset by the scheduler each time it starts a MIX task there (docs/design/mix_sync.md). A kernel
 * reaches it only through the running core's function table, pto_kernel_call.mix_ops: kernels
 * are separately compiled and cannot link the runtime's wait code. On an Ascend device the
 * flags map to FFTS cross-core flags (whose counters also hold at most 15 sets). */
#ifndef PTO_MIX_SYNC_H
#define PTO_MIX_SYNC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pto/kernel.h"

#define PTO_MIX_PARTS 3
#define PTO_MIX_FLAGS 16
#define PTO_MIX_FLAG_MAX 15 /* pending sets per flag, as an FFTS flag counter */
#define PTO_MIX_PIPES 4
#define PTO_MIX_PIPE_DEPTH 2
#define PTO_MIX_TILE_BYTES 16384
#define PTO_MIX_OPS_ABI 1

#ifdef __cplusplus
extern "C" {
#endif

/* The running core's implementation of the calls above; filled by the core before it runs a
 * MIX part (pto_kernel_call.mix_ops). Each returns 0 or the non-zero status it stored in the
 * call's status word (the task failed). */
typedef struct pto_mix_ops {
  uint32_t abi; /* PTO_MIX_OPS_ABI */
  uint32_t reserved;
  int32_t (*set)(pto_kernel_call *call, uint32_t flag);
  int32_t (*wait)(pto_kernel_call *call, uint32_t flag);
  int32_t (*push)(pto_kernel_call *call, uint32_t pipe, const void *tile, uint32_t bytes);
  int32_t (*pop)(pto_kernel_call *call, uint32_t pipe, void *tile, uint32_t bytes);
} pto_mix_ops;

/* The task statuses these calls fail a task with: -(0x4D58 << 16 | kind << 10 | part << 8 |
 * index), index being the flag or pipe (255 when out of range). Kernels must not pass codes
 * of this form to pto::fail. */
enum pto_mix_error {
  PTO_MIX_DEADLOCK_WAIT = 1, /* sync_wait on a flag no part can set any more */
  PTO_MIX_DEADLOCK_PUSH = 2, /* pipe_push to a full pipe no part can pop any more */
  PTO_MIX_DEADLOCK_POP = 3,  /* pipe_pop from an empty pipe no part can push to any more */
  PTO_MIX_NOT_MIX = 4,       /* called by a task that is not a MIX task */
  PTO_MIX_BAD_FLAG = 5,      /* flag >= PTO_MIX_FLAGS */
  PTO_MIX_BAD_PIPE = 6,      /* pipe >= PTO_MIX_PIPES */
  PTO_MIX_FLAG_OVERFLOW = 7, /* more than PTO_MIX_FLAG_MAX sets pending on one flag */
  PTO_MIX_TILE_SIZE = 8,     /* push of 0 or more than PTO_MIX_TILE_BYTES bytes */
  PTO_MIX_TILE_MISMATCH = 9, /* pop of a size other than the pushed tile's */
  PTO_MIX_PIPE_PUSHER = 10,  /* a second part pushes to a pipe */
  PTO_MIX_PIPE_POPPER = 11,  /* a second part pops from a pipe */
  /* PTO-ISA's TPUSH/TPOP/TFREE on a TPipe (index: its FlagID) waiting where no part can end it: */
  PTO_MIX_DEADLOCK_TPUSH = 12, /* room in a full pipe */
  PTO_MIX_DEADLOCK_TPOP = 13,  /* a tile in an empty pipe */
  PTO_MIX_DEADLOCK_TPIPE = 14, /* either (a pipe of both directions) */
  PTO_MIX_TPIPE_NOT_MIX = 15,  /* such a wait in a task that is not a MIX task */
};
#define PTO_MIX_STATUS_TAG 0x4D58

static inline int32_t pto_mix_status(uint32_t kind, uint32_t part, uint32_t index) {
  return -(int32_t)(((uint32_t)PTO_MIX_STATUS_TAG << 16) | ((kind & 0x3Fu) << 10) | ((part & 3u) << 8) |
                    (index > 255u ? 255u : index));
}

/* Writes what a status from the calls above means into buf (NUL-terminated, at most n bytes)
 * and returns 1; returns 0 (buf untouched) for any other status. */
static inline int pto_mix_status_describe(int32_t status, char *buf, size_t n) {
  if (status >= 0) return 0;
  const uint32_t v = (uint32_t)(-(int64_t)status);
  if ((v >> 16) != PTO_MIX_STATUS_TAG) return 0;
  const uint32_t kind = (v >> 10) & 0x3Fu, part = (v >> 8) & 3u, index = v & 0xFFu;
  const char *core = part == 0 ? "AIC" : "AIV";
  switch (kind) {
    case PTO_MIX_DEADLOCK_WAIT:
      snprintf(buf, n,
               "MIX sync deadlock: part %u (%s) waits on flag %u, which no part can set any more "
               "(the other parts returned or wait too)",
               part, core, index);
      return 1;
    case PTO_MIX_DEADLOCK_PUSH:
      snprintf(buf, n,
               "MIX sync deadlock: part %u (%s) pushes to pipe %u, which is full and which no part can "
               "pop any more (its popper returned, or the other parts wait too)",
               part, core, index);
      return 1;
    case PTO_MIX_DEADLOCK_POP:
      snprintf(buf, n,
               "MIX sync deadlock: part %u (%s) pops from pipe %u, which is empty and which no part can "
               "push to any more (its pusher returned, or the other parts wait too)",
               part, core, index);
      return 1;
    case PTO_MIX_NOT_MIX:
      snprintf(buf, n,
               "a MIX sync call (pto::sync_* / pto::pipe_*, flag or pipe %u) in a task that is not a MIX "
               "task; submit it with core type MIX",
               index);
      return 1;
    case PTO_MIX_BAD_FLAG:
      snprintf(buf, n, "part %u (%s) used MIX sync flag %s%u; flags are 0..%d", part, core,
               index == 255 ? ">= " : "", index, PTO_MIX_FLAGS - 1);
      return 1;
    case PTO_MIX_BAD_PIPE:
      snprintf(buf, n, "part %u (%s) used MIX pipe %s%u; pipes are 0..%d", part, core,
               index == 255 ? ">= " : "", index, PTO_MIX_PIPES - 1);
      return 1;
    case PTO_MIX_FLAG_OVERFLOW:
      snprintf(buf, n, "part %u (%s) set MIX sync flag %u more than %d times without a wait taking one", part,
               core, index, PTO_MIX_FLAG_MAX);
      return 1;
    case PTO_MIX_TILE_SIZE:
      snprintf(buf, n, "part %u (%s) pushed a tile of 0 or more than %d bytes to MIX pipe %u", part, core,
               PTO_MIX_TILE_BYTES, index);
      return 1;
    case PTO_MIX_TILE_MISMATCH:
      snprintf(buf, n, "part %u (%s) popped from MIX pipe %u with a size other than the pushed tile's", part,
               core, index);
      return 1;
    case PTO_MIX_PIPE_PUSHER:
      snprintf(buf, n,
               "part %u (%s) pushed to MIX pipe %u, which another part pushes to (a pipe has one pushing "
               "and one popping part)",
               part, core, index);
      return 1;
    case PTO_MIX_PIPE_POPPER:
      snprintf(buf, n,
               "part %u (%s) popped from MIX pipe %u, which another part pops from (a pipe has one pushing "
               "and one popping part)",
               part, core, index);
      return 1;
    case PTO_MIX_DEADLOCK_TPUSH:
    case PTO_MIX_DEADLOCK_TPOP:
    case PTO_MIX_DEADLOCK_TPIPE:
      snprintf(buf, n,
               "TPUSH/TPOP deadlock: part %u (%s) waits in %s on PTO-ISA pipe FlagID %u, %s, and no part "
               "can change that pipe any more (the other parts returned or wait too)",
               part, core,
               kind == PTO_MIX_DEADLOCK_TPUSH  ? "a TPUSH"
               : kind == PTO_MIX_DEADLOCK_TPOP ? "a TPOP"
                                               : "a TPUSH, TPOP or TFREE",
               index,
               kind == PTO_MIX_DEADLOCK_TPUSH  ? "which is full"
               : kind == PTO_MIX_DEADLOCK_TPOP ? "which holds no tile for it"
                                               : "which cannot serve it now");
      return 1;
    case PTO_MIX_TPIPE_NOT_MIX:
      snprintf(buf, n,
               "a TPUSH, TPOP or TFREE on PTO-ISA pipe FlagID %u waits in a task that is not a MIX task: a "
               "pipe joins the AIC and AIV parts of one MIX task, and no other part could ever end the wait "
               "(submit the kernels as one MIX task)",
               index);
      return 1;
    default:
      return 0;
  }
}

#ifdef __cplusplus
} /* extern "C" */

namespace pto {

namespace mix_detail {
/* The ops of a MIX part, or null after failing a non-MIX task with `index` in its status. */
inline const pto_mix_ops *ops_or_fail(__gm__ int64_t *args, uint32_t index) {
  pto_kernel_call *call = const_cast<pto_kernel_call *>(call_of_args(args));
  if (call->is_mix && call->mix_ops != 0) return reinterpret_cast<const pto_mix_ops *>(call->mix_ops);
  call->status = pto_mix_status(PTO_MIX_NOT_MIX, 0, index);
  return nullptr;
}
inline pto_kernel_call *call_rw(__gm__ int64_t *args) {
  return const_cast<pto_kernel_call *>(call_of_args(args));
}
}  // namespace mix_detail

/* Adds one to flag `flag` of this MIX task, releasing one sync_wait on it. */
inline bool sync_set(__gm__ int64_t *args, uint32_t flag) {
  const pto_mix_ops *ops = mix_detail::ops_or_fail(args, flag);
  return ops && ops->set(mix_detail::call_rw(args), flag) == 0;
}

/* Waits until flag `flag` is non-zero, then takes one from it. */
inline bool sync_wait(__gm__ int64_t *args, uint32_t flag) {
  const pto_mix_ops *ops = mix_detail::ops_or_fail(args, flag);
  return ops && ops->wait(mix_detail::call_rw(args), flag) == 0;
}

/* Copies `bytes` bytes from `tile` into pipe `pipe`, waiting while it is full. */
inline bool pipe_push(__gm__ int64_t *args, uint32_t pipe, const void *tile, uint32_t bytes) {
  const pto_mix_ops *ops = mix_detail::ops_or_fail(args, pipe);
  return ops && ops->push(mix_detail::call_rw(args), pipe, tile, bytes) == 0;
}

/* Copies the oldest tile of pipe `pipe` (exactly `bytes` bytes) to `tile`, waiting while it is empty. */
inline bool pipe_pop(__gm__ int64_t *args, uint32_t pipe, void *tile, uint32_t bytes) {
  const pto_mix_ops *ops = mix_detail::ops_or_fail(args, pipe);
  return ops && ops->pop(mix_detail::call_rw(args), pipe, tile, bytes) == 0;
}

}  // namespace pto
#endif /* __cplusplus */

#endif /* PTO_MIX_SYNC_H */
