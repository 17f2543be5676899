// src/worker/tile_toolchain.h — telling tile kernels apart; the pto-isa checkout, C++23 compiler, flags.
//
// A tile kernel includes PTO-ISA's C++23 headers, which the host compiler KernelCompiler uses for
// scalar kernels ($CXX, -std=c++17; g++ 12 on Debian 12) cannot compile. So tile kernels get a
// toolchain of their own: clang++-19 (or g++ >= 14), -std=c++23, PTO-ISA's CPU simulation
// (-D__CPU_SIM) and the core type as the Ascend compiler spells it (__DAV_VEC__ / __DAV_CUBE__).
//
// The bfloat16 trap: with clang and libstdc++ 12 there is no <stdfloat> and clang does not
// define __STDCPP_BFLOAT16_T__, so pto/common/type.hpp silently makes bfloat16_t an IEEE half
// (_Float16): bfloat16_t(1.0f) would hold 0x3c00, not 0x3f80. A probe compile tells, once per
// compiler per process, whether the compiler has a real std::bfloat16_t; when it has not, tile
// compiles put our include/pto_tile_shim/ (a <stdfloat> defining std::bfloat16_t as clang's
// __bf16) first on the system include path, define __STDCPP_BFLOAT16_T__, and link clang's
// builtins library into the kernel for the float->bf16 conversion (__truncsfbf2), which the
// host process (built by g++ 12) does not provide.
#ifndef PTO_WORKER_TILE_TOOLCHAIN_H
#define PTO_WORKER_TILE_TOOLCHAIN_H

#include <string>
#include <vector>

#include "pto/types.h"

namespace pto {
namespace worker {

// Whether a kernel source includes a PTO-ISA header (pto/pto-inst.hpp, pto/{common,cpu,npu,comm,
// costmodel}/...) or pipe_sync.h, directly or through a header it includes that is found beside
// the including file, in `source_dir` ("" for source text) or in `include_dirs` (at most 8
// levels and 64 files deep: a bound, not a limit anyone should meet). Comments and string
// literals are skipped; #if is not evaluated (a tile header under #if 0 still counts: the
// explicit CompileOptions::tile overrides the guess).
bool includes_tile_headers(const std::string &text, const std::string &source_dir,
                           const std::vector<std::string> &include_dirs);

// "" when `root` is a pto-isa checkout (has include/pto/pto-inst.hpp), else what is wrong with it.
std::string pto_isa_root_problem(const std::string &root);

// The pto-isa checkout a tile kernel compiles against: `option` (CompileOptions::pto_isa_root,
// checked when the compiler was made), else $PTO_ISA_ROOT. Neither: MISSING_DEPENDENCY naming
// `kernel` and how to get one; a PTO_ISA_ROOT that is no checkout: INVALID_ARGUMENT.
std::string tile_isa_root(const std::string &option, const std::string &kernel);

// A C++23 compiler able to build tile kernels, as the probe found it.
struct TileCompiler {
  std::vector<std::string> argv;  // the command, split into words ("ccache clang++-19")
  std::string text;               // the command as given or found
  std::string version;            // its --version output (part of the cache key)
  bool bf16_shim = false;         // no real std::bfloat16_t: compile with include/pto_tile_shim/
  std::string builtins_library;   // with the shim: clang's libclang_rt.builtins, linked into kernels
};

// $PTO_TILE_CXX, else the first of clang++-19, clang++, g++-15, g++-14 that passes the probe
// (C++23 and a bfloat16 that is really bfloat16, natively or through `shim_dir`). Probed once
// per process per (command, shim_dir); concurrent first callers wait for one probe. None:
// MISSING_DEPENDENCY saying `who` ("tile kernel 'x.cpp'") needs one, what was tried and how to
// install clang-19.
// With a `cache_dir`, a command that passed is remembered there across processes (the probe
// compiles and links three programs, about half a second), by its text, its --version output
// and the shim; a remembered builtins library that is gone, or any failure, probes again.
const TileCompiler &tile_compiler(const std::string &shim_dir, const std::string &who,
                                  const std::string &cache_dir = std::string());

// The flags every tile compile gets besides -std, include directories and the user's flags:
// the bf16 shim when the compiler needs it, PTO-ISA's CPU simulation with our hooks into it
// (-include pto_tile_sim_hooks.h from `shim_dir`: TPUSH/TPOP fail the task), the core type's defines,
// and targeted -Wno-... for PTO-ISA's own warnings. A cost-model twin (cost_model) gets, in
// place of the CPU simulation (-D__CPU_SIM -DPTO_CPU_MAX_THREADS=1), PTO-ISA's cost model for
// a2a3 (-D__COSTMODEL -D__NPU_ARCH__=2201), no communication instructions
// (-DPTO_COMM_NOT_SUPPORTED) and the probe exporting pto_costmodel_begin/end (-include
// pto_costmodel_probe.h, include/pto_costmodel_shim/).
std::vector<std::string> tile_flags(const TileCompiler &cxx, const std::string &shim_dir,
                                    pto_core_type core_type, bool cost_model = false);

// The host CPU for the cache key of -march=native builds: the "model name" and "flags" lines of
// /proc/cpuinfo (read once per process), or "unknown".
std::string host_cpu_description();

}  // namespace worker
}  // namespace pto
#endif  // PTO_WORKER_TILE_TOOLCHAIN_H
