// src/worker/paths.cpp — file-system helpers shared by KernelCompiler and RuntimeBuilder.
#include "worker/paths.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <initializer_list>
#include <sstream>

#include "pto_platform/files.h"

// Where `cmake --install` puts the runtimes and the headers, relative to the directory of
// libpto_runtime.so (the top-level CMakeLists.txt computes both from GNUInstallDirs).
#ifndef PTO_INSTALL_RUNTIMES_FROM_LIBDIR
#error "PTO_INSTALL_RUNTIMES_FROM_LIBDIR must be defined (src/worker/CMakeLists.txt sets it)"
#endif
#ifndef PTO_INSTALL_INCLUDE_FROM_LIBDIR
#error "PTO_INSTALL_INCLUDE_FROM_LIBDIR must be defined (src/worker/CMakeLists.txt sets it)"
#endif

namespace pto {
namespace worker {

namespace {

// `path` with `..` and symlinks resolved, so messages and cache keys name `<prefix>/include`
// rather than `<prefix>/lib/../include`; `path` itself when it cannot be resolved.
std::string resolved(const std::string &path) {
  char *real = realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out = real;
  free(real);
  return out;
}

}  // namespace

std::string env_or_empty(const char *name) {
  const char *value = getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string packaged_runtimes_dir() {
  const std::string here = platform_directory_of_this_binary();  // pto_worker's binary
  if (here.empty()) return {};
  for (const char *relative : {"runtimes", PTO_INSTALL_RUNTIMES_FROM_LIBDIR}) {
    const std::string dir = join_path(here, relative);
    if (is_directory(dir)) return resolved(dir);
  }
  return {};
}

std::string packaged_include_dir() {
  const std::string here = platform_directory_of_this_binary();  // pto_worker's binary
  if (here.empty()) return {};
  for (const char *relative : {"include", PTO_INSTALL_INCLUDE_FROM_LIBDIR}) {
    const std::string dir = join_path(here, relative);
    if (is_regular_file(join_path(dir, "pto/kernel.h"))) return resolved(dir);
  }
  return {};
}

bool is_directory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_regular_file(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string join_path(const std::string &a, const std::string &b) {
  if (a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

std::string directory_of(const std::string &path) {
  const std::string::size_type slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

bool read_file(const std::string &path, std::string *text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  *text = buf.str();
  return !in.bad();
}

std::string abi_include_dir(const std::string &include_dir) {
  return join_path(include_dir, "pto_abi");
}

std::string tile_shim_dir(const std::string &include_dir) {
  return join_path(include_dir, "pto_tile_shim");
}

std::string costmodel_shim_dir(const std::string &include_dir) {
  return join_path(include_dir, "pto_costmodel_shim");
}

std::string sim_isa_dir(const std::string &include_dir) {
  return join_path(include_dir, "pto_sim_isa");
}

}  // namespace worker
}  // namespace pto
