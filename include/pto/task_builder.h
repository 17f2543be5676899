// include/pto/task_builder.h — TaskBuilder: alloc_task / add_input / add_output / submit over pto::Orchestrator.
//
// For generated orchestration code (seed 004, "thin glue"): a task is built one argument at a
// time instead of as a hand-written Arg array, and dependencies are still inferred by the
// runtime from the views (pto/orchestration.h). No heap: the arguments live in the builder,
// so it runs where the orchestration runs (an AICPU thread).
//
//   pto::TaskBuilder b(orch);
//   b.alloc_task(KernelId::add).add_input(x).add_input(y).add_output(z);
//   pto::TaskHandle t = b.submit();
//
// Misuse (an argument before alloc_task, alloc_task while a task is open, submit without one,
// more than kMaxArgs arguments or kMaxAfter extra dependencies) fails the orchestration with a
// message naming the call (Orchestrator::fail -> ORCHESTRATION_FAILED when the run ends); the
// open task is dropped and later calls do nothing until the next alloc_task.
#ifndef PTO_TASK_BUILDER_H
#define PTO_TASK_BUILDER_H

#include <stdint.h>
#include <stdio.h>

#include "pto/orchestration.h"

namespace pto {

class TaskBuilder {
 public:
  static constexpr uint32_t kMaxArgs = 32;
  static constexpr uint32_t kMaxAfter = 16;

  explicit TaskBuilder(Orchestrator &o) : o_(o) {}
  TaskBuilder(const TaskBuilder &) = delete;
  TaskBuilder &operator=(const TaskBuilder &) = delete;

  // Opens a task of kernel func_id on core_type.
  TaskBuilder &alloc_task(uint32_t func_id, pto_core_type core_type) {
    if (state_ == State::kOpen) return misuse("alloc_task", "the previous task was not submitted");
    func_id_ = func_id;
    core_type_ = core_type;
    num_args_ = num_after_ = 0;
    state_ = State::kOpen;
    return *this;
  }
  // Opens a task of a KERNEL_LIST kernel (pto/kernel_list.h): its core type comes from the list.
  template <class Id, class = decltype(pto_kernel_core_type(Id{}))>
  TaskBuilder &alloc_task(Id id) {
    return alloc_task(static_cast<uint32_t>(id), pto_kernel_core_type(id));
  }

  TaskBuilder &add_input(const TensorView &v) { return add("add_input", Arg::in(v)); }
  TaskBuilder &add_output(const TensorView &v) { return add("add_output", Arg::out(v)); }
  TaskBuilder &add_inout(const TensorView &v) { return add("add_inout", Arg::inout(v)); }
  TaskBuilder &add_output_existing(const TensorView &v) { return add("add_output_existing", Arg::out_existing(v)); }
  TaskBuilder &add_scalar(int64_t value) { return add("add_scalar", Arg::i64(value)); }
  TaskBuilder &add_scalar_f32(float value) { return add("add_scalar_f32", Arg::f32(value)); }
  // An extra producer the task waits for, beyond the inferred ones (an invalid handle is ignored,
  // as submit_task ignores it).
  TaskBuilder &add_dep(TaskHandle producer) {
    if (state_ != State::kOpen) return misuse("add_dep", "no task is open");
    if (num_after_ == kMaxAfter) return misuse("add_dep", "more than TaskBuilder::kMaxAfter dependencies");
    after_[num_after_++] = producer;
    return *this;
  }

  // Submits the open task; an invalid handle after an error.
  TaskHandle submit() {
    if (state_ != State::kOpen) {
      misuse("submit", "no task is open");
      return TaskHandle{};
    }
    state_ = State::kIdle;
    return o_.submit_task(func_id_, core_type_, args_, num_args_, num_after_ ? after_ : nullptr, num_after_);
  }

  bool task_open() const { return state_ == State::kOpen; }
  uint32_t num_args() const { return num_args_; }

 private:
  enum class State : uint8_t { kIdle, kOpen };

  TaskBuilder &add(const char *call, const Arg &a) {
    if (state_ != State::kOpen) return misuse(call, "no task is open; call alloc_task first");
    if (num_args_ == kMaxArgs) return misuse(call, "more than TaskBuilder::kMaxArgs arguments");
    args_[num_args_++] = a;
    return *this;
  }
  TaskBuilder &misuse(const char *call, const char *what) {
    char message[160];
    snprintf(message, sizeof message, "TaskBuilder.%s: %s (kernel %u)", call, what, func_id_);
    o_.fail(message);
    state_ = State::kIdle;  // the open task, if any, is dropped
    return *this;
  }

  Orchestrator &o_;
  State state_ = State::kIdle;
  uint32_t func_id_ = 0;
  pto_core_type core_type_ = PTO_CORE_AIV;
  uint32_t num_args_ = 0;
  uint32_t num_after_ = 0;
  Arg args_[kMaxArgs];
  TaskHandle after_[kMaxAfter];
};

}  // namespace pto
#endif  // PTO_TASK_BUILDER_H
