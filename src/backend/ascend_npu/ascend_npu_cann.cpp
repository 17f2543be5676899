// src/backend/ascend_npu/ascend_npu_cann.cpp — ascend_npu in a build with CANN: probes the devices through AscendCL.
//
// Compiled only where CANN was found at configure time (src/backend/CMakeLists.txt), against
// its public API (acl/acl.h, libascendcl). It cannot be compiled on a machine without CANN,
// so the CI here never builds it; ascend_npu_unavailable.cpp stands in.
//
// What it decides: whether AscendCL initialises and sees a device. Even then the backend is
// reported unavailable, because the onboard platform (a Device over aclrt* memory, launch and
// doorbells, src/platform/ascend/) and its runtime programs do not exist yet: the reason says
// so, with the device count, rather than letting a run fail later on a missing file.
#include <acl/acl.h>

#include <memory>
#include <string>

#include "pto/backend.h"
#include "pto/error.h"

namespace pto {
namespace {

std::string acl_failure(const char *call, aclError rc) {
  const char *detail = aclGetRecentErrMsg();
  return std::string(call) + " returned " + std::to_string(static_cast<int>(rc)) +
         (detail != nullptr && *detail != '\0' ? std::string(": ") + detail : std::string());
}

std::unique_ptr<Backend> make_ascend_npu() {
  // aclInit may be called once per process; a second call reports REPEAT_INITIALIZE, which is
  // fine: someone else (the user's own AscendCL code) initialised it.
  const aclError init = aclInit(nullptr);
  if (init != ACL_SUCCESS && init != ACL_ERROR_REPEAT_INITIALIZE) {
    throw Error(PTO_NOT_SUPPORTED, "backend 'ascend_npu' is not available: " + acl_failure("aclInit", init));
  }
  uint32_t devices = 0;
  const aclError count = aclrtGetDeviceCount(&devices);
  if (count != ACL_SUCCESS) {
    throw Error(PTO_NOT_SUPPORTED,
                "backend 'ascend_npu' is not available: " + acl_failure("aclrtGetDeviceCount", count));
  }
  if (devices == 0) {
    throw Error(PTO_NOT_SUPPORTED, "backend 'ascend_npu' is not available: AscendCL sees no device");
  }
  throw Error(PTO_NOT_SUPPORTED, "backend 'ascend_npu' is not available: CANN sees " + std::to_string(devices) +
                                     " device(s), but the onboard platform (src/platform/ascend/) and its "
                                     "runtime programs are not implemented yet; use cpu_sim");
}

const BackendRegistrar kRegistrar("ascend_npu", &make_ascend_npu);

}  // namespace
}  // namespace pto
