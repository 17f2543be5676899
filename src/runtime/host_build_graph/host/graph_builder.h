// src/runtime/host_build_graph/host/graph_builder.h — the host-side graph an orchestration builds.
#ifndef PTO_HBG_GRAPH_BUILDER_H
#define PTO_HBG_GRAPH_BUILDER_H

#include <string>
#include <vector>

#include "core/first_error.h"
#include "core/mix_parts.h"
#include "core/trace.h"
#include "host/device_runner.h"
#include "pto/host_graph.h"
#include "pto/orchestration.h"

namespace pto {
namespace hbg {

// One task as built. Flat: its arguments, edges and dump tensors live in the builder's shared
// arrays, so adding a task allocates nothing (amortised) — the graph is built task by task on
// the host before the device starts, so every allocation here is on the run's critical path.
struct HostTask {
  uint32_t func_id;         // a MIX task's: its first part's kernel (mix_task_func)
  pto_core_type core_type;  // PTO_CORE_MIX: a MIX task, on a whole cluster
  uint64_t kernel_addr;     // the kernel's entry, looked up once by add_task (a MIX task's part 0)
  uint32_t args_begin;      // into HostGraphBuilder::args()
  uint32_t num_args;
  uint32_t num_preds = 0;   // edges into it
  uint32_t num_succs = 0;   // edges out of it
  uint32_t succ_begin = 0;  // into HostGraphBuilder::successors(), once finish() succeeded
  uint32_t dump_begin = 0;  // into dump_tensors() (enable_dump_tensor only)
  uint32_t num_dump = 0;
  int32_t mix = -1;             // a MIX task: the index of its parts in HostGraphBuilder::mix_parts()
  uint16_t stream = 0;          // set_stream at add_task
  uint16_t target = kNoTarget;  // set_stream at add_task
  // Descriptor-ABI kernels (core/descriptor_call.h): its tensors, in argument order, as views in
  // HostGraphBuilder::abi_tensors(); num_abi_tensors is 0 for PTO_KERNEL kernels. `descriptors`:
  // its kernel takes descriptors (a MIX task: some part's does; HostMixParts says which).
  uint32_t abi_begin = 0;
  uint32_t num_abi_tensors = 0;
  bool descriptors = false;
  // Device orchestrations (host_orchestrator.h): a dependency-only task runs nothing and takes
  // no core; a pto::Launch gives SPMD blocks and a dispatch predicate (set_launch).
  bool dummy = false;
  bool sync_start = false;  // its blocks start together (graph::kTaskSyncStart)
  uint16_t block_num = 1;
  int32_t timing_slot = -1;  // pto::Launch::timing_slot (-1: untagged)
  DispatchPredicate predicate;
};

// A MIX task's three parts (core/mix_parts.h): part p runs kernel func[p] at kernel_addr[p], or,
// without a kernel of its own (submit_mixed's -1), graph::kNoKernel and idle_mix_part. Bit p of
// `descriptors`: part p's kernel takes descriptors, so its call block is a descriptor block.
struct HostMixParts {
  uint32_t func[kMixParts];
  uint64_t kernel_addr[kMixParts];
  uint32_t descriptors = 0;
  // Every part with a kernel takes descriptors (SPMD blocks need get_block_idx in each).
  bool all_descriptors() const {
    uint32_t with_kernel = 0;
    for (uint32_t p = 0; p < kMixParts; ++p) with_kernel |= func[p] != graph::kNoKernel ? 1u << p : 0u;
    return descriptors == with_kernel;
  }
};

// enable_dump_tensor: a tensor argument of a task, kept for the dump description.
struct DumpTensor {
  uint32_t arg;   // argument index
  uint32_t when;  // kDumpBefore / kDumpAfter (core/tensor_dump.h): both when the access is unknown
  TensorView view;
};

// The shape and row-major strides a descriptor gets for an hbg tensor: its own shape when that
// multiplies out to nelems, else one dimension of nelems (a sub-range made by offsetting addr).
// shape and strides have room for kMaxTensorDims.
void abi_shape_of(const Tensor &t, uint32_t *ndim, int64_t *shape, int64_t *strides);
// The whole of an hbg tensor as a view (offset 0, abi_shape_of's shape and strides): what a
// descriptor-ABI kernel receives for it.
TensorView view_of(const Tensor &t);

// Validates every call against the callable and the config; the first error wins and
// is reported with its code after the orchestration returns.
class HostGraphBuilder final : public GraphBuilder {
 public:
  HostGraphBuilder(DeviceRunner &runner, RunInputs &in) : runner_(runner), in_(in) {}

  TaskId add_task(uint32_t func_id, pto_core_type core_type, const TaskArg *args, uint32_t num_args) override;
  void set_stream(uint32_t stream, uint32_t target) override;
  void add_dependency(TaskId producer, TaskId consumer) override {
    add_edge(producer, consumer, kEdgeExplicit);
  }
  Tensor alloc_tensor(pto_dtype dtype, uint64_t nelems) override;
  void fail(const char *message) override;
  bool ok() const override { return err_.ok(); }

  // A task whose tensors are full views (buffer, offset, shape, strides) with access modes:
  // what the host orchestrator (host_orchestrator.h) submits. The same checks as add_task, on
  // the views; a tensor argument reaches a PTO_KERNEL kernel as the address of its first
  // element and a descriptor-ABI kernel as the descriptor of the view.
  TaskId add_view_task(uint32_t func_id, pto_core_type core_type, const Arg *args, uint32_t num_args);
  // A MIX task whose part p runs kernel funcs[p], -1 for none (Orchestrator::submit_mixed): at
  // least two parts have kernels (mix_funcs_fault), and each part's kernel passes add_view_task's
  // checks as the task it would be on its own core (part 0 AIC, parts 1 and 2 AIV).
  TaskId add_mixed_task(const int32_t funcs[kMixParts], const Arg *args, uint32_t num_args);
  // A dependency-only task (Orchestrator::submit_dummy): no kernel, no arguments, no core; its
  // edges are added like any task's.
  TaskId add_dummy_task();
  // A non-default pto::Launch for task `id` (just added by add_view_task or add_mixed_task): SPMD
  // blocks of descriptor-ABI kernels (a MIX task: one cluster per block), sync-start, and a
  // dispatch predicate. False with the error set.
  bool set_launch(TaskId id, const Launch &launch);
  // Tasks that may finish without a core (dependency-only, or with a predicate).
  uint32_t num_inline_candidates() const { return inline_candidates_; }
  // Why `v` is not a view into a live device allocation (a run tensor or alloc_tensor's), or
  // "" when it is one.
  std::string view_fault(const TensorView &v);
  // Records an error with its own code (the host orchestrator's fail_with); the first wins.
  void fail_with(pto_status code, std::string message) {
    error(code == PTO_OK ? PTO_INTERNAL : code, std::move(message));
  }
  uint32_t num_tasks() const { return static_cast<uint32_t>(tasks_.size()); }
  // add_dependency with the edge's kind for the trace (TraceEdgeKind: the host orchestrator's
  // inferred edges are RAW, WAW or WAR).
  void add_edge(TaskId producer, TaskId consumer, uint32_t kind);

  // After the orchestration: lays the successors out per task and checks the graph is acyclic
  // (DEPENDENCY_CYCLE names a cycle).
  pto_status finish();
  pto_status code() const { return err_.code; }
  const std::string &message() const { return err_.message; }
  const std::vector<HostTask> &tasks() const { return tasks_; }
  uint64_t num_edges() const { return edges_.size(); }
  const int64_t *args(const HostTask &t) const { return args_.data() + t.args_begin; }
  const uint32_t *successors(const HostTask &t) const { return succ_.data() + t.succ_begin; }
  const DumpTensor *dump_tensors(const HostTask &t) const { return dump_.data() + t.dump_begin; }
  const TensorView *abi_tensors(const HostTask &t) const { return abi_.data() + t.abi_begin; }
  const HostMixParts &mix_parts(const HostTask &t) const { return mix_[static_cast<size_t>(t.mix)]; }
  uint32_t num_mix_tasks() const { return static_cast<uint32_t>(mix_.size()); }
  // Every edge (producer, consumer), in the order add_dependency made them, and its kind.
  const std::vector<std::pair<uint32_t, uint32_t>> &edges() const { return edges_; }
  uint32_t edge_kind(size_t i) const { return edge_kinds_[i]; }
  // Predecessors of every task, CSR: task i's are preds[begin[i] .. begin[i + 1]) (reports only).
  void predecessors(std::vector<uint32_t> *begin, std::vector<uint32_t> *preds) const;

 private:
  void error(pto_status code, std::string message) { err_.set(code, std::move(message)); }
  bool check_args(const KernelEntry &k, TaskId id, const TaskArg *args, uint32_t n);
  bool check_descriptor_args(const KernelEntry &k, TaskId id, const TaskArg *args, uint32_t n);
  // add_view_task's: every view lies in a live allocation (check_views; func_id names the task in
  // messages), then the kernel's signature and, for a descriptor-ABI kernel, what a descriptor
  // can carry (check_view_kernel: a MIX task's once per part).
  bool check_view_args(const KernelEntry &k, TaskId id, const Arg *args, uint32_t n) {
    return check_views(id, k.func_id, args, n) && check_view_kernel(k, id, args, n);
  }
  bool check_views(TaskId id, uint32_t func_id, const Arg *args, uint32_t n);
  bool check_view_kernel(const KernelEntry &k, TaskId id, const Arg *args, uint32_t n);
  bool check_view_signature(const KernelEntry &k, TaskId id, const Arg *args, uint32_t n);
  // Appends a view task's arguments to args_, dump_ and (`descriptors`) abi_, then commits it.
  TaskId commit_views(TaskId id, const KernelEntry &k, pto_core_type core_type, const Arg *args, uint32_t n,
                      bool descriptors, const HostMixParts *mix);
  // The checks every task passes before its arguments (kernel, core type, capacity, argument
  // count): its kernel, or null after recording the error.
  const KernelEntry *admit(TaskId id, uint32_t func_id, pto_core_type core_type, uint32_t num_args,
                           bool args_null);
  // Appends the task (its arguments already in args_, dump_ and abi_ from the given starts). A
  // MIX task's parts are `mix`, or, for one MIX kernel (core_type PTO_CORE_MIX), k in each part.
  TaskId commit(TaskId id, const KernelEntry &k, pto_core_type core_type, uint32_t args_begin,
                uint32_t dump_begin, uint32_t abi_begin, uint32_t num_args, bool descriptors,
                const HostMixParts *mix = nullptr);
  // [addr, addr + bytes) lies in a live device allocation. The last allocation found is
  // remembered: nothing is freed while the orchestration runs, and most tensors of a graph
  // share a few allocations, so most checks skip the allocator's lock and map.
  bool live_tensor(uint64_t addr, uint64_t bytes);

  DeviceRunner &runner_;
  RunInputs &in_;
  std::vector<HostTask> tasks_;
  std::vector<int64_t> args_;
  std::vector<std::pair<uint32_t, uint32_t>> edges_;
  std::vector<uint8_t> edge_kinds_;  // by edge: TraceEdgeKind
  std::vector<uint32_t> succ_;       // by producer (finish)
  std::vector<DumpTensor> dump_;
  std::vector<TensorView> abi_;               // descriptor-ABI tasks' tensors (HostTask::abi_begin)
  std::vector<HostMixParts> mix_;             // MIX tasks' parts (HostTask::mix)
  uint64_t live_lo_ = 0, live_hi_ = 0;        // live_tensor's last allocation
  uint16_t stream_ = 0, target_ = kNoTarget;  // set_stream: what add_task gives the next tasks
  uint32_t inline_candidates_ = 0;            // num_inline_candidates
  FirstError err_;
};

}  // namespace hbg
}  // namespace pto
#endif  // PTO_HBG_GRAPH_BUILDER_H
