// src/runtime/host_build_graph/aicpu/scheduler.cpp — the AICPU program: schedule a host-built graph.
//
// The loop is the shared one (core/graph/scheduler_loop.h); what is particular to this runtime
// is only its policy: the host built the whole graph before launch, with explicit edges in
// flat fan-out storage, and pre-filled the ready queues with the tasks that have no
// predecessors, so a task's fan-out is a fixed range and retiring it is counting it finished.
// A MIX task's parts are its payload and its two entries in the MIX payload array (hbg_layout.h).
// Every scheduler thread stops once `finished` reaches num_tasks (the last one wakes the rest).
#include <cstdint>

#include "core/graph/scheduler_loop.h"
#include "hbg_layout.h"
#include "pto/device_log.h"
#include "pto/error.h"
#include "pto/kernel.h"

namespace pto {
namespace hbg {
namespace {

class HbgPolicy {
 public:
  static constexpr bool kHasMix = true;
  static constexpr bool kZeroSubmit = true;  // the trace's submit field: nobody else writes it

  explicit HbgPolicy(RuntimeHeader *h)
      : h_(h), tasks_(tasks_of(h)), fanout_(successors_of(h)), mix_(mix_payloads_of(h)) {}

  graph::TaskRecord &task(int64_t id) const { return tasks_[id]; }
  template <typename Each>
  void for_each_consumer(int64_t id, Each &&each) const {
    fanout_.for_each(tasks_[id].succ, [&each](uint32_t s) { each(static_cast<int64_t>(s)); });
  }
  // Its kernel's status, or for a MIX task the first non-zero of its parts'.
  int32_t status_of(int64_t id) const {
    if (tasks_[id].core_type != PTO_CORE_MIX) return status_at(tasks_[id].payload);
    const DispatchPayload *parts[kMaxCoresPerCluster];
    mix_parts(id, parts);
    for (const DispatchPayload *p : parts) {
      if (const int32_t s = status_at(*p)) return s;
    }
    return 0;
  }
  void on_failed(int64_t id, int32_t status) const {
    int32_t none = -1;
    if (h_->failed_task.compare_exchange_strong(none, static_cast<int32_t>(id), std::memory_order_acq_rel))
      h_->failed_status.store(status, std::memory_order_relaxed);
  }
  void on_ran(int64_t) const {}
  void end() const {}
  // acq_rel: the thread that counts the last task sees every other's results before it wakes
  // the rest to stop.
  bool retire(int64_t) const {
    return h_->finished.fetch_add(1, std::memory_order_acq_rel) + 1 == h_->num_tasks;
  }
  bool done() const { return h_->finished.load(std::memory_order_acquire) == h_->num_tasks; }
  // Asked only for a MIX task, so only when the run has the array.
  void mix_parts(int64_t id, const DispatchPayload *parts[kMaxCoresPerCluster]) const {
    parts[0] = &tasks_[id].payload;
    parts[1] = &mix_[2 * id];
    parts[2] = &mix_[2 * id + 1];
  }
  // Asked only for a task with one (pred_op set), so only when the run has the array.
  DispatchPredicate predicate(int64_t id) const {
    return reinterpret_cast<const DispatchPredicate *>(h_->preds_addr)[id];
  }

 private:
  static int32_t status_at(const DispatchPayload &p) {
    return reinterpret_cast<const pto_kernel_call *>(p.call_addr)->status;
  }

  RuntimeHeader *h_;
  Task *tasks_;
  graph::FlatFanout fanout_;
  const DispatchPayload *mix_;  // null without MIX tasks
};

}  // namespace
}  // namespace hbg
}  // namespace pto

extern "C" __attribute__((visibility("default"))) int pto_aicpu_entry(void *runtime, uint32_t thread_idx,
                                                                      uint32_t thread_num) {
  auto *h = static_cast<pto::hbg::RuntimeHeader *>(runtime);
  pto::graph::SchedulerLoop<pto::hbg::HbgPolicy> s(
      pto::graph::env_from_header(h, thread_num, h->aicpu_threads, h->num_tasks,
                                  reinterpret_cast<pto::MixSync *>(h->mix_sync_addr)),
      pto::hbg::HbgPolicy(h), thread_idx, thread_num);
  s.run();
  return PTO_OK;
}
