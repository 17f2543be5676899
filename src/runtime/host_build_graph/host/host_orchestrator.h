// src/runtime/host_build_graph/host/host_orchestrator.h — pto::Orchestrator on the host, over the
// graph builder: how host_build_graph runs device orchestrations.
//
// An orchestration binary that defines PTO_DEVICE_ORCHESTRATION (pto/orchestration.h) — ours, or
// one written against the reference API, whose header (pto_abi/pto_orchestration_api.h) defines
// that entry — and no PTO_ORCHESTRATION is run by host_build_graph with this orchestrator, on the
// host, before launch. Each submit becomes a task of the HostGraphBuilder (graph_builder.h) with
// its tensors as full views, and edges to the producers inferred from the tensor regions as the
// tensormap runtime infers them (region_deps.h), plus the `after` handles. Differences, each
// because the graph is complete before any task runs:
//   alloc_tensor      the builder's device allocation, alive until the run ends (scopes free
//                     nothing early);
//   scopes            bookkeeping only: a manual scope turns inference off inside it;
//   wait_for_tasks_using  true when no submitted task conflicts with the access (the memory is
//                     then what the device will see: run tensors are staged before the
//                     orchestration runs, and the sim's device memory is the host's); otherwise
//                     the orchestration fails with NOT_SUPPORTED naming the tensor and the task,
//                     which could only finish after the orchestration returns;
//   launches          a non-default Launch goes with the task to the scheduler: SPMD blocks
//                     (sync-start ones too) and dispatch predicates
//                     (HostGraphBuilder::set_launch checks them);
//   submit_dummy      a dependency-only task of the graph (no kernel, no core).
// MIX tasks (submit_task with PTO_CORE_MIX, submit_mixed) are tasks of the graph like any other,
// run on a whole cluster (HostGraphBuilder::add_mixed_task).
// Errors go to the builder's first error, so run() reports them like any hbg orchestration's.
#ifndef PTO_HBG_HOST_ORCHESTRATOR_H
#define PTO_HBG_HOST_ORCHESTRATOR_H

#include <string>
#include <vector>

#include "host/device_runner.h"
#include "host/graph_builder.h"
#include "host/region_deps.h"
#include "pto/orchestration.h"

namespace pto {
namespace hbg {

class HostOrchestrator final : public Orchestrator {
 public:
  HostOrchestrator(HostGraphBuilder &builder, const RunInputs &in) : b_(builder), in_(in) {}

  // Calls the binary's pto_device_orchestration_entry (`entry`) with this orchestrator, then
  // checks that every scope it opened was closed.
  void run(void *entry);

  uint32_t num_tensors() const override { return static_cast<uint32_t>(in_.tensors.size()); }
  uint32_t num_scalars() const override { return static_cast<uint32_t>(in_.scalars.size()); }
  TensorView tensor(uint32_t i) const override;
  int64_t scalar(uint32_t i) const override { return i < in_.scalars.size() ? in_.scalars[i] : 0; }
  TaskHandle submit_task(uint32_t func_id, pto_core_type core_type, const Arg *args, uint32_t num_args,
                         const TaskHandle *after, uint32_t num_after, const Launch *launch) override;
  TaskHandle submit_mixed(const int32_t funcs[3], const Arg *args, uint32_t num_args, const TaskHandle *after,
                          uint32_t num_after, const Launch *launch) override;
  TaskHandle submit_dummy(const Arg *args, uint32_t num_args, const TaskHandle *after,
                          uint32_t num_after) override;
  void set_stream(uint32_t stream, uint32_t target) override { b_.set_stream(stream, target); }
  TensorView alloc_tensor(pto_dtype dtype, uint32_t ndim, const int64_t *shape) override;
  void scope_begin(bool manual) override;
  void scope_end() override;
  void fail(const char *message) override { b_.fail(message); }
  void fail_with(pto_status code, const char *message) override {
    b_.fail_with(code, message ? message : "(no message)");
  }
  bool ok() const override { return b_.ok(); }
  const pto_device_log *log() const override {
    return reinterpret_cast<const pto_device_log *>(static_cast<uintptr_t>(in_.device_log));
  }
  bool wait_for_tasks_using(const TensorView &v, bool write) override;
  uint32_t num_clusters() const override { return static_cast<uint32_t>(in_.cfg.block_dim); }

 private:
  // The `after` handles name tasks submitted before this one.
  bool check_after(const TaskHandle *after, uint32_t num_after);
  // Task `id`'s producers (inferred, unless in a manual scope, plus `after`), distinct, as edges.
  void add_dependencies(uint32_t id, const Arg *args, uint32_t n, const TaskHandle *after,
                        uint32_t num_after);
  // "run tensor 2" or "the alloc_tensor buffer at 0x...": the buffer a view is into, for messages.
  std::string buffer_name(const TensorView &v) const;

  HostGraphBuilder &b_;
  const RunInputs &in_;
  RegionDeps deps_;
  std::vector<bool> scopes_;                     // per open scope: inference off (manual); [0] is the root
  std::vector<RegionDeps::Producer> producers_;  // one submit's, as found (duplicates included)
  std::vector<int64_t> listed_by_;               // per task: the last task that took it as a producer
};

}  // namespace hbg
}  // namespace pto
#endif  // PTO_HBG_HOST_ORCHESTRATOR_H
