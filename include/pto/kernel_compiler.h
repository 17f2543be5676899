// include/pto/kernel_compiler.h — compiles kernel and orchestration sources into shared objects.
//
// On sim platforms the host C++ compiler builds each source into a .so. Results are cached in
// the cache directory (PTO_CACHE_DIR, else $XDG_CACHE_HOME/pto_runtime, else
// ~/.cache/pto_runtime), keyed on everything that decides the output: the source text, the
// flags (include directories and defines among them), the compiler and its version, the
// runtime's headers, and the content of every file the compilation read (the compiler's -MMD
// dependency list, re-checked on every look-up). Change a header a kernel includes and the
// next compile builds a new binary under a new path. A hit costs a hash of the source and of
// the files it included, and a stat.
//
// The cache is bypassed (every compile runs the compiler) with CompileOptions::cache = false
// or the environment variable PTO_KERNEL_CACHE=0; clear_cache() empties it.
#ifndef PTO_KERNEL_COMPILER_H
#define PTO_KERNEL_COMPILER_H

#include <string>
#include <vector>

#include "pto/types.h"

namespace pto {

struct EntryPoint;  // src/core/entry_points.h: the symbol a compiled binary must export

struct CompileOptions {
  std::vector<std::string> include_dirs;  // extra -I
  std::vector<std::string> defines;       // extra -D (NAME or NAME=VALUE)
  std::string pto_isa_root;               // optional PTO-ISA checkout: adds <root>/include
  std::string opt_level = "-O2";
  bool debug_info = false;  // adds -g (pto::backend::CompileOptions::debug sets it)
  // false: never reuse a cached binary, always run the compiler (the result is still stored).
  // PTO_KERNEL_CACHE=0 in the environment does the same for every compiler.
  bool cache = true;
};

class KernelCompiler {
 public:
  // platform: "a2a3sim" or "a5sim"; others throw NOT_SUPPORTED (no Ascend toolchain here).
  explicit KernelCompiler(std::string platform, CompileOptions options = {});

  // A compute-core kernel (defines PTO_KERNEL). Returns the path of the cached .so.
  std::string compile_incore(const std::string &source_path, pto_core_type core_type) const;
  // An orchestration source for `runtime` (defines PTO_ORCHESTRATION for host_build_graph).
  std::string compile_orchestration(const std::string &runtime, const std::string &source_path) const;
  // Same, from source text; `name` is used in messages and the file name.
  std::string compile_incore_source(const std::string &source, const std::string &name,
                                    pto_core_type core_type) const;
  std::string compile_orchestration_source(const std::string &runtime, const std::string &source,
                                           const std::string &name) const;

  const std::string &platform() const { return platform_; }
  std::string cache_dir() const;
  std::string compiler() const;  // $CXX or "c++"
  // Whether look-ups may reuse a cached binary: options.cache and PTO_KERNEL_CACHE (0/off/
  // false/no disable it; 1/on/true/yes or unset leave it on; anything else is
  // INVALID_ARGUMENT).
  bool cache_enabled() const;
  // Removes every file this compiler family wrote to cache_dir() (binaries, source copies,
  // dependency lists, temporaries of crashed compiles) and nothing else; returns how many.
  // Safe while other processes compile: they rebuild what they miss.
  size_t clear_cache() const;

 private:
  std::string compile(const std::string &source, const std::string &name,
                      const std::vector<std::string> &extra_flags, const EntryPoint &entry) const;
  std::string platform_;
  CompileOptions options_;
};

}  // namespace pto
#endif  // PTO_KERNEL_COMPILER_H
