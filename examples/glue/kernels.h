// examples/glue/kernels.h — the example's one kernel list, shared by the kernel program and the orchestration.
#ifndef EXAMPLES_GLUE_KERNELS_H
#define EXAMPLES_GLUE_KERNELS_H

#include "pto/kernel_list.h"

// X(name, core type): the kernel ids, the dispatch switch and the trace names all come from here.
#define KERNEL_LIST(X)  \
  X(vadd, PTO_CORE_AIV) \
  X(vscale, PTO_CORE_AIV) \
  X(vmul, PTO_CORE_AIV)

PTO_KERNEL_IDS(KERNEL_LIST)

#endif  // EXAMPLES_GLUE_KERNELS_H
