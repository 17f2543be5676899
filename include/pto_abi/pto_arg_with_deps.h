// include/pto_abi/pto_arg_with_deps.h — CoreTaskArgsWithDeps: task arguments that carry their own
// explicit dependencies (the reference API's convenience form), and its submit overloads.
//
// args.add_dep(id, ...) / add_dep_wait(id, ...) collect producers in the object itself, so an
// orchestration needs no array that outlives the submit; rt_submit_*(.., args) hands them over as
// set_dependencies_with_kinds. Here both kinds order the task after its producers (a producer's
// runtime-allocated outputs live until their scope ends either way). More than MaxDeps records
// an error, reported by the submit.
#ifndef PTO_ABI_PTO_ARG_WITH_DEPS_H
#define PTO_ABI_PTO_ARG_WITH_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "pto_types.h"

template <size_t MaxDeps = 16>
class CoreTaskArgsWithDeps : private CoreTaskArgs {
 public:
  using CoreTaskArgs::add_inout;
  using CoreTaskArgs::add_input;
  using CoreTaskArgs::add_no_dep;
  using CoreTaskArgs::add_output;
  using CoreTaskArgs::add_scalar;
  using CoreTaskArgs::add_scalars;
  using CoreTaskArgs::add_scalars_i32;
  using CoreTaskArgs::allow_early_resolve;
  using CoreTaskArgs::copy_scalars_from;
  using CoreTaskArgs::dump;
  using CoreTaskArgs::error_msg;
  using CoreTaskArgs::has_error;
  using CoreTaskArgs::launch_spec;
  using CoreTaskArgs::set_allow_early_resolve;
  using CoreTaskArgs::set_error;
  using CoreTaskArgs::set_task_timing_slot;
  using CoreTaskArgs::task_timing_slot;

  template <typename... Ids>
  void add_dep(Ids... ids) {
    add(DEP_WAIT | DEP_RETAIN, ids...);
  }
  template <typename... Ids>
  void add_dep_wait(Ids... ids) {
    add(DEP_WAIT, ids...);
  }
  // Empties the arguments and the dependencies, to reuse the object for the next task.
  void reset() {
    CoreTaskArgs::reset();
    count_ = 0;
  }
  // The submit overloads' hook: the collected dependencies bound to the arguments.
  CoreTaskArgs &finalize_for_submit() {
    CoreTaskArgs::set_dependencies(nullptr, 0);
    CoreTaskArgs::set_dependencies_with_kinds(deps_, kinds_, count_);
    return *this;
  }

 private:
  template <typename... Ids>
  void add(DepFlags kind, Ids... ids) {
    static_assert(sizeof...(Ids) >= 1, "add_dep: at least one task id");
    static_assert((std::is_same_v<std::decay_t<Ids>, PTO2TaskId> && ...), "add_dep takes PTO2TaskId values");
    if (count_ + sizeof...(Ids) > MaxDeps) {
      CoreTaskArgs::set_error(
          "CoreTaskArgsWithDeps: more dependencies than MaxDeps (raise the template argument)");
      return;
    }
    ((kinds_[count_] = kind, deps_[count_] = ids, ++count_), ...);
  }
  PTO2TaskId deps_[MaxDeps] = {};
  DepFlags kinds_[MaxDeps] = {};
  uint32_t count_ = 0;
};

template <size_t N>
inline TaskOutputTensors rt_submit_task(const MixedKernels &mk, CoreTaskArgsWithDeps<N> &args) {
  return rt_submit_task(mk, args.finalize_for_submit());
}
template <size_t N>
inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, CoreTaskArgsWithDeps<N> &args) {
  return rt_submit_aic_task(kernel_id, args.finalize_for_submit());
}
template <size_t N>
inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, CoreTaskArgsWithDeps<N> &args) {
  return rt_submit_aiv_task(kernel_id, args.finalize_for_submit());
}

#endif  // PTO_ABI_PTO_ARG_WITH_DEPS_H
