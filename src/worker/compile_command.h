// src/worker/compile_command.h — what runs the compiler for each kind of compile: command, flags, key.
//
// KernelCompiler (kernel_compiler.cpp) adds the call's own flags after these, hashes the lot
// into the cache key and runs it. Scalar kernels and orchestrations take the host compiler
// ($CXX, C++17); tile kernels the probed C++23 compiler against a PTO-ISA checkout
// (tile_toolchain.h).
#ifndef PTO_WORKER_COMPILE_COMMAND_H
#define PTO_WORKER_COMPILE_COMMAND_H

#include <string>
#include <vector>

#include "pto/kernel_compiler.h"
#include "pto/types.h"

namespace pto {
namespace worker {

// What runs the compiler for one kind of compile, before the call's own flags.
struct Command {
  std::vector<std::string> cxx;    // the compiler command, split into words
  std::string cxx_text;            // ... as written ($CXX, $PTO_TILE_CXX or the probe's pick)
  std::string version;             // its --version output (key only)
  std::vector<std::string> flags;  // language, optimisation, include directories, defines
  std::vector<std::string> link;   // after the source: libraries the binary needs
  const char *cflags_env;          // the environment variable whose words come last
};

// The directory holding pto/kernel.h: the environment (PTO_RUNTIME_INCLUDE_DIR), then the
// installed layout this binary belongs to (the Python package or `cmake --install`,
// worker/paths.h), then the source tree we were built from.
std::string pto_include_dir();

// Scalar kernels and orchestrations: the host compiler, C++17.
Command scalar_command(const CompileOptions &o, const std::string &include_dir);

// Tile kernels: the probed C++23 compiler against a PTO-ISA checkout (tile_toolchain.h). A
// cost-model twin also gets the cost-model shims and the formula tables ahead of PTO-ISA's
// headers (the shims #include_next theirs), and the cost-model flags of tile_flags. With
// `reuse` (the cache is on), the compiler probe's result is remembered in `cache_dir` too.
Command tile_command(const CompileOptions &o, const std::string &origin, pto_core_type core_type,
                     const std::string &include_dir, bool cost_model, const std::string &cache_dir,
                     bool reuse);

}  // namespace worker
}  // namespace pto
#endif  // PTO_WORKER_COMPILE_COMMAND_H
