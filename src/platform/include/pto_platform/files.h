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

// Whether the ELF shared object at `path` defines and exports `symbol` (a global or weak entry
// of its dynamic symbol table that is not undefined). Reads the file; loads nothing, so no
// code of the object runs. Returns false for a file that is missing or not a 64-bit ELF.
bool platform_elf_exports(const std::string &path, const char *symbol);

// The directory, symlinks resolved, of the shared object or executable this code is linked
// into (each binary linking the platform library has its own copy, found with dladdr); "" when
// the loader cannot tell. How installed binaries find the files laid out beside them.
std::string platform_directory_of_this_binary();

}  // namespace pto
#endif  // PTO_PLATFORM_FILES_H
