// src/platform/include/pto_platform/files.h — the host file system, for the host-side parts that
// write files (kernel cache, device logs, tensor dumps).
#ifndef PTO_PLATFORM_FILES_H
#define PTO_PLATFORM_FILES_H

#include <string>

namespace pto {

// mkdir -p. Returns 0, or the errno of the component that could not be created (ENOTDIR if
// the path exists but is not a directory). Safe against another process creating the same
// directories at the same moment.
int platform_make_directories(const std::string &path);

}  // namespace pto
#endif  // PTO_PLATFORM_FILES_H
