// src/core/warm_up_program.h — the orchestration of set_device's warm-up run.
//
// DeviceRunner::warm_up runs it once on a fresh device, on every cluster: tensormap_and_ringbuffer's
// device orchestrator calls it when the run has no orchestration entry, host_build_graph's host
// orchestrator runs it as a device orchestration (it has that entry's signature). Dependency-only
// tasks over one small tensor of the run's heap (a writer, two readers after it, a writer after
// them), then one task of the device's idle kernel (Device::idle_kernel, registered as
// kWarmUpAicFunc and kWarmUpAivFunc) per core: as many AIC and AIV tasks as the run's two
// scalars say (0 and 0 when the device has no idle kernel). That is enough for the alloc,
// submit, dependency, ready-queue, dispatch, completion and retire paths to have run once, and
// for the memory they use to be touched, before the caller's first run.
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
  if (o.num_scalars() < 2) return;
  for (int64_t i = 0; i < o.scalar(0); ++i) o.submit_task(kWarmUpAicFunc, PTO_CORE_AIC, nullptr, 0);
  for (int64_t i = 0; i < o.scalar(1); ++i) o.submit_task(kWarmUpAivFunc, PTO_CORE_AIV, nullptr, 0);
}

}  // namespace pto
#endif  // PTO_CORE_WARM_UP_PROGRAM_H
