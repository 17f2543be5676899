// src/platform/sim/files_posix.cpp — pto_platform/files.h on POSIX.
#include <errno.h>
#include <sys/stat.h>

#include "pto_platform/files.h"

namespace pto {

int platform_make_directories(const std::string &path) {
  if (path.empty()) return ENOENT;
  // Create each prefix in turn; EEXIST is success because another process (or thread) may
  // create the same directory at the same moment.
  for (std::string::size_type pos = 1;; ++pos) {
    pos = path.find('/', pos);
    const std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return errno;
    if (pos == std::string::npos) break;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

}  // namespace pto
