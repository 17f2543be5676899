// src/runtime/host_build_graph/host/graph_builder.h — the host-side graph an orchestration builds.
#ifndef PTO_HBG_GRAPH_BUILDER_H
#define PTO_HBG_GRAPH_BUILDER_H

#include <string>
#include <vector>

#include "host/device_runner.h"
#include "pto/host_graph.h"

namespace pto {
namespace hbg {

struct HostTask {
  uint32_t func_id;
  pto_core_type core_type;
  std::vector<int64_t> args;
  std::vector<uint32_t> successors;
  std::vector<uint32_t> predecessors;                // for reports only
  std::vector<std::pair<uint32_t, Tensor>> tensors;  // enable_dump_tensor only: (argument index, tensor)
};

// Validates every call against the callable and the config; the first error wins and
// is reported with its code after the orchestration returns.
class HostGraphBuilder final : public GraphBuilder {
 public:
  HostGraphBuilder(DeviceRunner &runner, RunInputs &in) : runner_(runner), in_(in) {}

  TaskId add_task(uint32_t func_id, pto_core_type core_type, const TaskArg *args, uint32_t num_args) override;
  void add_dependency(TaskId producer, TaskId consumer) override;
  Tensor alloc_tensor(pto_dtype dtype, uint64_t nelems) override;
  void fail(const char *message) override;
  bool ok() const override { return code_ == PTO_OK; }

  // After the orchestration: checks the graph is acyclic (DEPENDENCY_CYCLE names a cycle).
  pto_status finish();
  pto_status code() const { return code_; }
  const std::string &message() const { return message_; }
  const std::vector<HostTask> &tasks() const { return tasks_; }
  uint64_t num_edges() const { return num_edges_; }

 private:
  void error(pto_status code, std::string message);
  bool check_args(const KernelEntry &k, TaskId id, const TaskArg *args, uint32_t n);

  DeviceRunner &runner_;
  RunInputs &in_;
  std::vector<HostTask> tasks_;
  uint64_t num_edges_ = 0;
  pto_status code_ = PTO_OK;
  std::string message_;
};

}  // namespace hbg
}  // namespace pto
#endif  // PTO_HBG_GRAPH_BUILDER_H
