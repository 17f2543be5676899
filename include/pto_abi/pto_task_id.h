/* include/pto_abi/pto_task_id.h — a task's id as the descriptor ABI carries it (8 bytes). */
#ifndef PTO_ABI_PTO_TASK_ID_H
#define PTO_ABI_PTO_TASK_ID_H

#include <stdint.h>

/* High 32 bits: a ring number (always 0 here: one task window), low 32: the task's id.
 * All ones: no task (external tensors, run arguments). */
struct PTO2TaskId {
  uint64_t raw;

  static constexpr PTO2TaskId make(uint8_t ring_id, uint32_t local_id) {
    return PTO2TaskId{(static_cast<uint64_t>(ring_id) << 32) | local_id};
  }
  static constexpr PTO2TaskId invalid() { return PTO2TaskId{UINT64_MAX}; }
  constexpr uint8_t ring() const { return static_cast<uint8_t>(raw >> 32); }
  constexpr uint32_t local() const { return static_cast<uint32_t>(raw); }
  constexpr bool is_valid() const { return raw != UINT64_MAX; }
  constexpr bool is_invalid() const { return raw == UINT64_MAX; }
  constexpr bool operator==(const PTO2TaskId &o) const { return raw == o.raw; }
  constexpr bool operator!=(const PTO2TaskId &o) const { return raw != o.raw; }
};
static_assert(sizeof(PTO2TaskId) == 8, "a task id is 8 bytes in every descriptor");

#endif /* PTO_ABI_PTO_TASK_ID_H */
