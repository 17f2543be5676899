// src/worker/paths.h — file-system helpers shared by KernelCompiler and RuntimeBuilder.
//
// Both find their inputs relative to the binary that holds the worker code. Two installed
// layouts are known (the one place that knows them is packaged_runtimes_dir() and
// packaged_include_dir() below):
//   Python package:  pto_runtime/_native*.so  with  include/  and  runtimes/  beside it
//   cmake --install: <prefix>/<libdir>/libpto_runtime.so  with  <libdir>/pto_runtime/runtimes/
//                    and the headers in <prefix>/<includedir>/pto/
#ifndef PTO_WORKER_PATHS_H
#define PTO_WORKER_PATHS_H

#include <string>

namespace pto {
namespace worker {

// The value of an environment variable, or "" when it is unset. Empty counts as unset so
// that `PTO_CACHE_DIR= cmd` falls back to the default rather than to the current directory.
std::string env_or_empty(const char *name);

// The runtimes/ tree (<backend>/<runtime>/lib{host,aicpu,aicore}.so) of the installed layout
// this binary belongs to, or "" when neither layout is found beside it.
std::string packaged_runtimes_dir();

// The directory holding pto/kernel.h (what kernels and orchestrations are compiled against)
// of the installed layout this binary belongs to, or "" when neither layout is found.
std::string packaged_include_dir();

bool is_directory(const std::string &path);
bool is_regular_file(const std::string &path);

// `a/b` without doubling the separator.
std::string join_path(const std::string &a, const std::string &b);

// The directory part of `path`: "." for a bare name, "/" for a file in the root.
std::string directory_of(const std::string &path);

// The whole file into *text; false when it cannot be opened or read (errno says why).
bool read_file(const std::string &path, std::string *text);

// The folders beside pto/ in the include directory KernelCompiler uses (pto_include_dir()):
// the descriptor ABI's headers, put on every compile's include path after the user's own, the
// <stdfloat> shim of tile kernels (src/worker/tile_toolchain.h) and the shims and probe of
// cost-model twins (include/pto_costmodel_shim/). Installed next to pto/ in both layouts, so
// they are found the way pto/kernel.h is.
std::string abi_include_dir(const std::string &include_dir);
std::string tile_shim_dir(const std::string &include_dir);
std::string costmodel_shim_dir(const std::string &include_dir);
// PTO-ISA headers the sim replaces (include/pto_sim_isa/: TWAIT), before PTO-ISA's own include
// directory on the path of sim tile kernels only.
std::string sim_isa_dir(const std::string &include_dir);

}  // namespace worker
}  // namespace pto
#endif  // PTO_WORKER_PATHS_H
