// tests/portable/core_graph_portable.cpp — the graph core builds as the AICPU program needs it.
//
// Compiled with -fno-exceptions (tests/portable/CMakeLists.txt), together with tensor_map.cpp:
// every header under src/core/graph must build without exceptions and without pulling in the
// STL containers, strings or smart pointers (the libstdc++ include guards below would be set).
// Run, it does one look-up, so the object is linked and not only parsed.
#include "core/graph/arena.h"
#include "core/graph/id_list.h"
#include "core/graph/pipeline_gates.h"
#include "core/graph/ready_queue_set.h"
#include "core/graph/scheduler_loop.h"
#include "core/graph/task_record.h"
#include "core/graph/task_window.h"
#include "core/graph/tensor_map.h"

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#error "core_graph_portable must be compiled with -fno-exceptions"
#endif
#if defined(_GLIBCXX_VECTOR) || defined(_GLIBCXX_STRING) || defined(_GLIBCXX_MAP) || \
    defined(_GLIBCXX_UNORDERED_MAP) || defined(_GLIBCXX_MEMORY) || defined(_GLIBCXX_DEQUE) || \
    defined(_GLIBCXX_LIST) || defined(_GLIBCXX_SET)
#error "a src/core/graph header pulls in an STL container, std::string or <memory>"
#endif

#include <cstdio>

int main() {
  pto::graph::TensorMap m(16);
  int64_t storage[16];
  pto::graph::IdList out(storage, 16);
  const int64_t shape[1] = {16}, strides[1] = {1};
  const pto::Region r = pto::make_region(0x1000, 0, 4, 1, shape, strides);
  if (!m.access(r, true, 0, 0, &out) || !m.access(r, false, 1, 0, &out) || out.size() != 1 || out[0] != 0) {
    std::fprintf(stderr, "core_graph_portable: the look-up did not find the writer\n");
    return 1;
  }
  return 0;
}
