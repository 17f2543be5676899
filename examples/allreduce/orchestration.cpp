// examples/allreduce/orchestration.cpp — the chip's whole program: one AIV task with the run's
// arguments in order, on the host_build_graph runtime. Shared by the communication examples
// (allreduce, ffn_tp, moe_ep); each kernel's header comment lists what it takes.
#include "pto/host_graph.h"

PTO_ORCHESTRATION(g, args) {
  constexpr uint32_t kMax = 16;
  if (args.num_tensors() + args.num_scalars() > kMax) {
    g.fail("examples/allreduce/orchestration.cpp: more than 16 arguments");
    return;
  }
  pto::TaskArg a[kMax];
  uint32_t n = 0;
  for (uint32_t i = 0; i < args.num_tensors(); ++i) a[n++] = pto::TaskArg::of(args.tensor(i));
  for (uint32_t i = 0; i < args.num_scalars(); ++i) a[n++] = pto::TaskArg::of_i64(args.scalar(i));
  g.add_task(0, PTO_CORE_AIV, a, n);
}
