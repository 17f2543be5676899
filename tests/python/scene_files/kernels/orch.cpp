// tests/python/scene_files/kernels/orch.cpp — x += 1, then y = 2 x. PTO_BUMP_ACCESS is how the
// first task declares x: inout is right; in (the scene tests' racy variant) lets the second
// task read x before or after the bump, depending on the schedule.
#include "pto/orchestration.h"
#ifndef PTO_BUMP_ACCESS
#define PTO_BUMP_ACCESS inout
#endif
PTO_DEVICE_ORCHESTRATION(orch) {
  using pto::Arg;
  const pto::TensorView x = orch.tensor(0), y = orch.tensor(1);
  orch.submit_task(0, PTO_CORE_AIV, {Arg::PTO_BUMP_ACCESS(x), Arg::i64(x.numel())});
  orch.submit_task(1, PTO_CORE_AIV, {Arg::in(x), Arg::out_existing(y), Arg::i64(x.numel())});
}
