// src/worker/paths.cpp — file-system helpers shared by KernelCompiler and RuntimeBuilder.
#include "worker/paths.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

namespace pto {
namespace worker {

std::string env_or_empty(const char *name) {
  const char *value = getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string directory_of_this_binary() {
  // Any object defined in this translation unit lives in the same binary as every other
  // part of pto_worker (it is one static library), so its address identifies that binary.
  static const char anchor = 0;
  Dl_info info{};
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == nullptr) return {};
  std::string file = info.dli_fname;
  // dli_fname is the path the loader was given; resolve it so a relative argv[0] or a
  // symlinked package still yields the directory that actually holds the files.
  if (char *resolved = realpath(file.c_str(), nullptr)) {
    file = resolved;
    free(resolved);
  }
  const std::string::size_type slash = file.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? std::string("/") : file.substr(0, slash);
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

}  // namespace worker
}  // namespace pto
