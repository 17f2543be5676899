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
//
// Two toolchains. A scalar kernel, every orchestration: $CXX (else c++), -std=c++17, then
// $PTO_KERNEL_CFLAGS (CI's sanitizer flags). A tile kernel — one including PTO-ISA's headers
// (pto/pto-inst.hpp, pto/common/..., pipe_sync.h: CompileOptions::tile decides, by default from
// the source's includes) — is built by a C++23 compiler ($PTO_TILE_CXX, else clang++-19,
// clang++, g++-15, g++-14, the first that passes a probe) against the PTO-ISA checkout
// (pto_isa_root, else $PTO_ISA_ROOT), with PTO-ISA's CPU simulation, __DAV_VEC__ (AIV) or
// __DAV_CUBE__ (AIC; MIX gets both), then $PTO_TILE_KERNEL_CFLAGS. PTO_KERNEL_CFLAGS is not
// applied to tile kernels: clang's sanitizer runtimes do not match a g++-sanitized host.
// Without a checkout or a compiler a tile compile throws MISSING_DEPENDENCY saying what to
// install. src/worker/tile_toolchain.h has the details (the bfloat16 shim among them).
// Include path of both: the runtime's include directory, CompileOptions::include_dirs, (tile:
// <root>/include, <root>/include/pto,) then the descriptor ABI's headers (include/pto_abi/).
//
// Cost-model twins (compile_incore_cost_model): a tile kernel built in PTO-ISA's cost-model
// mode, which computes no values but records each instruction's predicted cycles. The same
// command as the tile kernel's, with -D__COSTMODEL -D__NPU_ARCH__=2201 -DPTO_COMM_NOT_SUPPORTED
// -include pto_costmodel_probe.h in place of the CPU simulation (-D__CPU_SIM
// -DPTO_CPU_MAX_THREADS=1), never -march=native, and include/pto_costmodel_shim/ plus the
// formula table PTO-ISA's generator writes (python3, once per pto-isa checkout, into
// cache_dir()) ahead of <root>/include. The twin exports kernel_entry and the probe's
// pto_costmodel_begin/pto_costmodel_end; per invocation the caller runs
//   pto_costmodel_begin(); kernel_entry(args); pto_costmodel_end(&cycles, sizeof cycles);
// (include/pto_costmodel_shim/pto_costmodel_probe.h). a2a3 only: the pinned PTO-ISA's a5 model
// does not compile. Scalar kernels have no twin (they keep the table and host-time costs).
#ifndef PTO_KERNEL_COMPILER_H
#define PTO_KERNEL_COMPILER_H

#include <string>
#include <utility>
#include <vector>

#include "pto/error.h"
#include "pto/types.h"

namespace pto {

struct EntryPoint;  // src/core/entry_points.h: the symbol a compiled binary must export

// Whether compile_incore builds a source as a tile kernel (see above).
enum class TileMode {
  kAuto,  // when it includes a PTO-ISA header or pipe_sync.h, directly or through its headers
  kOn,    // always
  kOff,   // never: the scalar toolchain even for a source including PTO-ISA
};

// Which kernels are compiled for the host CPU (CompileOptions::native).
enum class NativeMode {
  kTileKernels,  // tile kernels only (the default)
  kAll,          // every kernel
  kOff,          // none: portable binaries everywhere
};

// What compile_cost_models_many says of one kernel: exactly one of the two is non-empty.
struct CostModelBuild {
  std::string path;         // the twin's .so
  std::string unavailable;  // why there is none, one line (for a twin that does not compile, the
                            // compiler's first error line, which names what the model lacks)
};

struct CompileOptions {
  std::vector<std::string> include_dirs;  // extra -I
  // Extra -D (NAME or NAME=VALUE). Every compile also gets the chip's: PTO_CHIP_ARCH_A2A3 or
  // PTO_CHIP_ARCH_A5, PTO_CHIP_CLUSTERS, PTO_CHIP_AIC_PER_CLUSTER, PTO_CHIP_AIV_PER_CLUSTER,
  // PTO_CHIP_MAX_AICPU_THREADS (the platform's geometry).
  std::vector<std::string> defines;
  // A PTO-ISA checkout (must hold include/pto/pto-inst.hpp, checked by the constructor): tile
  // kernels compile against it (else $PTO_ISA_ROOT); scalar compiles get -I<root>/include.
  std::string pto_isa_root;
  std::string opt_level = "-O2";
  bool debug_info = false;  // adds -g (pto::BackendOptions::debug sets it)
  TileMode tile = TileMode::kAuto;
  // Kernels built for this CPU: -march=native, minus what could change a result — no FMA
  // contraction (-ffp-contract=off; PTO-ISA's explicit std::fma still becomes one instruction)
  // and no AVX512-BF16/FP16 (hardware bf16 conversion flushes denormals, native half
  // arithmetic rounds per operation) — so outputs equal those of the portable build
  // (tests/python/test_tile_examples.py compares both bit for bit). The host CPU (model and
  // feature flags) joins the cache key. Orchestrations are never built natively. The default
  // builds tile kernels natively (a 128^3 float TMATMUL: 1.1 ms a call against 3.9 ms portable,
  // the difference being a library call per fma) and scalar kernels portably.
  NativeMode native = NativeMode::kTileKernels;
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

  // compile_incore for each (source path, core type), in parallel on min(CPUs, n) threads;
  // returns the paths in input order. With `progress`, prints to stderr what it compiles, with
  // which compiler, and each kernel's seconds or "cached". Every kernel is tried; if any fails,
  // throws the first failure's code with every failing kernel named and the first message.
  std::vector<std::string> compile_incore_many(
      const std::vector<std::pair<std::string, pto_core_type>> &kernels, bool progress = false) const;

  // The cost-model twin of a tile kernel (see above); returns the path of the cached .so. Throws
  // INVALID_ARGUMENT for a source that is not a tile kernel or lacks kernel_entry, NOT_SUPPORTED
  // on a5sim, MISSING_DEPENDENCY without the tile toolchain or without a python3 able to run
  // PTO-ISA's formula-table generator, and KERNEL_COMPILE (with the compiler's output, as
  // compile_incore) when the twin does not compile: the cost model lacks an instruction the
  // kernel uses, say.
  std::string compile_incore_cost_model(const std::string &source_path, pto_core_type core_type) const;
  // compile_incore_cost_model for each (source path, core type), in parallel as
  // compile_incore_many, with its progress lines ("cost model" in each); one result per kernel,
  // in input order. Never throws for one kernel: a failure becomes CostModelBuild::unavailable.
  std::vector<CostModelBuild> compile_cost_models_many(
      const std::vector<std::pair<std::string, pto_core_type>> &kernels, bool progress = false) const;

  // Whether compile_incore would build this file as a tile kernel (options.tile, else its includes).
  bool is_tile_kernel(const std::string &source_path) const;
  // The C++23 compiler tile kernels use ($PTO_TILE_CXX or the first that passes the probe);
  // throws MISSING_DEPENDENCY when there is none.
  std::string tile_compiler() const;

  const std::string &platform() const { return platform_; }
  std::string cache_dir() const;
  std::string compiler() const;  // $CXX or "c++" (scalar kernels and orchestrations)
  // Whether look-ups may reuse a cached binary: options.cache and PTO_KERNEL_CACHE (0/off/
  // false/no disable it; 1/on/true/yes or unset leave it on; anything else is
  // INVALID_ARGUMENT).
  bool cache_enabled() const;
  // Removes every file this compiler family wrote to cache_dir() (binaries, source copies,
  // dependency lists, temporaries of crashed compiles, the cost-model formula tables) and
  // nothing else; returns how many.
  // Safe while other processes compile: they rebuild what they miss.
  size_t clear_cache() const;

 private:
  struct Built {
    std::string path;
    std::string compiler;  // the command that built it (or would have, for a cache hit)
    bool cached = false;
  };
  struct Job {
    std::string source;              // the text compiled, with its #line directive
    std::string name;                // the cache file's stem, and the name in messages
    std::string origin;              // the user's file (or the name given for source text)
    std::vector<std::string> flags;  // the call's own flags: core type or runtime, -iquote
    const EntryPoint *entry = nullptr;
    bool kernel = false;  // a compute kernel (native applies), not an orchestration
    bool tile = false;
    bool cost_model = false;  // the tile kernel's cost-model twin
    pto_core_type core_type = PTO_CORE_AIV;
  };
  // One kernel of compile_batch: built, or the error it threw.
  struct Attempt {
    Built built;
    bool failed = false;
    pto_status code = PTO_OK;
    std::string message;
  };
  Built incore(const std::string &text, const std::string &origin, const std::string &name,
               const std::string &source_dir, pto_core_type core_type, bool cost_model) const;
  Built incore_file(const std::string &source_path, pto_core_type core_type) const;
  Built cost_model_file(const std::string &source_path, pto_core_type core_type) const;
  // Every kernel tried on the pool of compile_incore_many (compile_batch.cpp), with its progress.
  std::vector<Attempt> compile_batch(const std::vector<std::pair<std::string, pto_core_type>> &kernels,
                                     bool progress, bool cost_model) const;
  Built compile(const Job &job) const;
  std::string platform_;
  CompileOptions options_;
};

}  // namespace pto
#endif  // PTO_KERNEL_COMPILER_H
