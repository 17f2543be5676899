// src/core/schedule_messages.h — the one wording of the schedule primitives' errors, for both runtimes.
//
// Host-side and orchestrator code only (std::string); the scheduler loop raises none of these.
#ifndef PTO_CORE_SCHEDULE_MESSAGES_H
#define PTO_CORE_SCHEDULE_MESSAGES_H

#include <cstdint>
#include <string>

#include "pto/schedule_config.h"

namespace pto {

// task_window_overflow=error: the window is a capacity and task `id` does not fit.
inline std::string window_overflow_message(const char *runtime, int64_t id, uint32_t task_window) {
  return std::string(runtime) + ": task " + std::to_string(id) +
         " overflows the task window: task_window=" + std::to_string(task_window) +
         " with task_window_overflow=error (2) holds at most " + std::to_string(task_window) +
         " tasks per run; raise task_window, or use task_window_overflow=stall (0) or evict_completed (1)";
}

// "" when (stream, target) is valid for set_stream, else what is wrong with which value.
inline std::string stream_error(uint32_t stream, uint32_t target) {
  if (stream >= kMaxStreams)
    return "set_stream: stream=" + std::to_string(stream) + " is outside 0.." +
           std::to_string(kMaxStreams - 1);
  if (target != kNoTarget && target >= kMaxTargets)
    return "set_stream: target=" + std::to_string(target) + " is outside 0.." +
           std::to_string(kMaxTargets - 1) + " (or kNoTarget = " + std::to_string(kNoTarget) +
           ": no target affinity)";
  return "";
}

}  // namespace pto
#endif  // PTO_CORE_SCHEDULE_MESSAGES_H
