// examples/allreduce/orchestration.cpp — the chip's whole program: one AIV task, the run's
// arguments in order (kernels/comm_ring.h lists them), on the host_build_graph runtime.
#include "pto/host_graph.h"

PTO_ORCHESTRATION(g, args) {
  pto::TaskArg a[8];
  uint32_t n = 0;
  for (uint32_t i = 0; i < args.num_tensors(); ++i) a[n++] = pto::TaskArg::of(args.tensor(i));
  for (uint32_t i = 0; i < args.num_scalars(); ++i) a[n++] = pto::TaskArg::of_i64(args.scalar(i));
  g.add_task(0, PTO_CORE_AIV, a, n);
}
