// src/core/warm_up_program.h — the orchestration of set_device's warm-up run.
//
// DeviceRunner::warm_up runs it once on a fresh device, on every cluster: tensormap_and_ringbuffer's
// device orchestrator calls it when the run has no orchestration entry, host_build_graph's host
// orchestrator runs it as a device orchestration. Dependency-only tasks over one small tensor of
// the run's heap (a writer, two readers after it, a writer after them), then, when the device
// has an idle kernel (Device::idle_kernel, registered as kWarmUpAicFunc and kWarmUpAivFunc), one
// task of it per core. That
// is enough for the alloc, submit, dependency, ready-queue, dispatch, completion and retire
// paths to have run once, and for the memory they use to be touched, before the caller's first
// run. The run's scalars: 0 or 1 (the idle kernel), then the AIC and the AIV cores.
#ifndef PTO_CORE_WARM_UP_PROGRAM_H
#define PTO_CORE_WARM_UP_PROGRAM_H

#include "pto/orchestration.h"

namespace pto {

constexpr uint32_t kWarmUpAicFunc = 0, kWarmUpAivFunc = 1;

inline void warm_up_program(Orchestrator &o) {
  Scope scope(o);
  const int64_t shape[1] = {256};
  const TensorView t = o.alloc_tensor(PTO_DTYPE_F32, 1, shape);
  const Arg write = Arg::out(t), read = Arg::in(t), update = Arg::inout(t);
  o.submit_dummy(&write, 1);
  o.submit_dummy(&read, 1);
  o.submit_dummy(&read, 1);
  o.submit_dummy(&update, 1);
  if (o.num_scalars() < 3 || o.scalar(0) == 0) return;
  for (int64_t i = 0; i < o.scalar(1); ++i) o.submit_task(kWarmUpAicFunc, PTO_CORE_AIC, nullptr, 0);
  for (int64_t i = 0; i < o.scalar(2); ++i) o.submit_task(kWarmUpAivFunc, PTO_CORE_AIV, nullptr, 0);
}

// The same as a device orchestration entry (PTO_DEVICE_ORCHESTRATION's signature).
inline void warm_up_entry(Orchestrator &o) {
  warm_up_program(o);
}

}  // namespace pto
#endif  // PTO_CORE_WARM_UP_PROGRAM_H
