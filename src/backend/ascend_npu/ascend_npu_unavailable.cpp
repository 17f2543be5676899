// src/backend/ascend_npu/ascend_npu_unavailable.cpp — ascend_npu in a build without CANN: registered, unavailable.
//
// src/backend/CMakeLists.txt compiles this file instead of ascend_npu_cann.cpp when the CANN
// toolkit was not found at configure time, and passes what it looked for and missed.
#include <memory>
#include <string>

#include "pto/backend.h"
#include "pto/error.h"

#ifndef PTO_ASCEND_MISSING
#error "PTO_ASCEND_MISSING must be defined (src/backend/CMakeLists.txt sets it)"
#endif

namespace pto {
namespace {

std::unique_ptr<Backend> make_ascend_npu() {
  throw Error(PTO_NOT_SUPPORTED,
              std::string("backend 'ascend_npu' is not available: CANN toolkit (ASCEND_HOME_PATH / "
                          "libascendcl) not found at build time (") +
                  PTO_ASCEND_MISSING +
                  "); install CANN, set ASCEND_HOME_PATH and rebuild, or use cpu_sim (a2a3sim, a5sim)");
}

const BackendRegistrar kRegistrar("ascend_npu", &make_ascend_npu);

}  // namespace
}  // namespace pto
