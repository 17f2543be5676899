// src/backend/amd_aie/amd_aie_backend.cpp — the amd_aie backend: registered, not implemented.
#include <memory>

#include "pto/backend.h"
#include "pto/error.h"

namespace pto {
namespace {

std::unique_ptr<Backend> make_amd_aie() {
  throw Error(PTO_NOT_SUPPORTED,
              "backend 'amd_aie' is not implemented: it needs a spatial mapper, an MLIR-AIE "
              "lowering and XRT integration (seed 004), none of which exist in this project yet");
}

const BackendRegistrar kRegistrar("amd_aie", &make_amd_aie);

}  // namespace
}  // namespace pto
