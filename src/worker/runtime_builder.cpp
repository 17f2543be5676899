// src/worker/runtime_builder.cpp — finds the prebuilt host/AICPU/AICore programs of a runtime.
#include "pto/runtime_builder.h"

#include <utility>

#include "core/geometry.h"
#include "pto/backend.h"
#include "pto/error.h"
#include "worker/kernel_cache.h"
#include "worker/paths.h"

#ifndef PTO_BUILD_RUNTIMES_DIR
#error "PTO_BUILD_RUNTIMES_DIR must be defined (src/worker/CMakeLists.txt sets it)"
#endif

namespace pto {
namespace {

// The one list of runtimes. KernelCompiler validates orchestration runtimes against it too,
// so adding "tensormap_and_ringbuffer" here is the whole change on this side.
constexpr const char *kRuntimes[] = {"host_build_graph", "tensormap_and_ringbuffer"};

constexpr const char *kProgramFiles[] = {"libhost.so", "libaicpu.so", "libaicore.so"};

// The lib root and where it came from, so a LOAD_FAILED message can say which rule chose it.
std::pair<std::string, const char *> find_lib_root() {
  std::string root = worker::env_or_empty("PTO_RUNTIME_LIB_DIR");
  if (!root.empty()) return {root, "from PTO_RUNTIME_LIB_DIR"};
  root = worker::packaged_runtimes_dir();
  if (!root.empty()) return {root, "installed with the loaded pto_runtime library"};
  return {PTO_BUILD_RUNTIMES_DIR, "the build tree's stage directory"};
}

}  // namespace

RuntimeBuilder::RuntimeBuilder(std::string platform) : platform_(std::move(platform)) {
  // Fail at construction so a typo in the platform is reported where it was written.
  if (find_geometry(platform_.c_str()) == nullptr) {
    throw Error(PTO_INVALID_ARGUMENT,
                "unknown platform '" + platform_ + "'; use one of: " + worker::joined(platforms()));
  }
}

std::vector<std::string> RuntimeBuilder::platforms() {
  int count = 0;
  const ChipGeometry *rows = geometries(&count);
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) names.emplace_back(rows[i].platform);
  return names;
}

std::vector<std::string> RuntimeBuilder::runtimes() {
  return std::vector<std::string>(std::begin(kRuntimes), std::end(kRuntimes));
}

std::string RuntimeBuilder::lib_root() {
  return find_lib_root().first;
}

RuntimeBinaries RuntimeBuilder::get_binaries(const std::string &runtime) const {
  const ChipGeometry *geometry = find_geometry(platform_.c_str());
  if (geometry == nullptr) {  // unreachable after the constructor; kept as a cheap invariant
    throw Error(PTO_INTERNAL, "RuntimeBuilder holds unknown platform '" + platform_ + "'");
  }
  const std::vector<std::string> known = runtimes();
  bool runtime_known = false;
  for (const std::string &r : known) runtime_known = runtime_known || r == runtime;
  if (!runtime_known) {
    throw Error(PTO_INVALID_ARGUMENT,
                "unknown runtime '" + runtime + "'; use one of: " + worker::joined(known));
  }
  // The registry decides where the backend's programs live, or raises NOT_SUPPORTED with the
  // reason it is unavailable here (ascend_npu without CANN).
  const std::string backend = get_backend(geometry->backend).program_dir();

  const std::pair<std::string, const char *> root = find_lib_root();
  const std::string dir = worker::join_path(worker::join_path(root.first, backend), runtime);
  std::string paths[3];
  std::vector<std::string> missing;
  for (int i = 0; i < 3; ++i) {
    paths[i] = worker::join_path(dir, kProgramFiles[i]);
    if (!worker::is_regular_file(paths[i])) missing.push_back(paths[i]);
  }
  if (!missing.empty()) {
    throw Error(PTO_LOAD_FAILED, "runtime '" + runtime + "' for platform '" + platform_ +
                                     "' is not built: " + "missing " + worker::joined(missing) +
                                     " (lib root " + root.first + ", " + root.second +
                                     "). Build the project (`pip install .` or the CMake build), " +
                                     "or set PTO_RUNTIME_LIB_DIR to a directory holding " + backend + "/" +
                                     runtime + "/lib{host,aicpu,aicore}.so");
  }
  RuntimeBinaries binaries;
  binaries.platform = platform_;
  binaries.runtime = runtime;
  binaries.host_path = paths[0];
  binaries.aicpu_path = paths[1];
  binaries.aicore_path = paths[2];
  return binaries;
}

}  // namespace pto
