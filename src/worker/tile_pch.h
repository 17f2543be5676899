// src/worker/tile_pch.h — PTO-ISA's headers precompiled once per flag set for tile kernels.
//
// Half of a tile kernel's compile is clang reading PTO-ISA: examples/bgemm's kernel_gemm.cpp
// takes 7 s cold, 3.3 s of which is <pto/pto-inst.hpp> (-fsyntax-only on it alone), and 4 s
// with that part precompiled. Every kernel compiled with the same compiler and flags that
// begins with the same includes shares one precompiled header (clang's -include-pch) in the
// kernel cache: built once (3-4 s), then used by every later compile of those flags, in every
// process, and again after each edit of a kernel.
//
// Exactness. The header stands for the kernel's own first lines, up to and including its
// `#include <pto/pto-inst.hpp>`; the compiler reads the header and then the whole source, so
// those lines are read twice. Only lines that read the same the second time qualify:
// `#include <...>` (include-guarded), the guard idiom `#ifndef X` / `#define X ...` / `#endif`,
// `#pragma once`, comments and blank lines. Any other line before the include (a quoted
// include, a bare #define or #undef, another #if, code) and the kernel compiles as it always
// did, without one. The binary's cache entry does not depend on whether a header was used.
//
// Only for a clang tile compiler, only with the cache on. A header that cannot be built, or
// that clang refuses later (a PTO-ISA header edited since), means compiling without one.
// PTO_TILE_PCH=0 turns it off.
#ifndef PTO_WORKER_TILE_PCH_H
#define PTO_WORKER_TILE_PCH_H

#include <string>
#include <vector>

#include "worker/compile_command.h"

namespace pto {
namespace worker {

// The lines a precompiled header may stand for in `source` (after an optional leading #line),
// ending with `#include <pto/pto-inst.hpp>`, as the header's text; "" when the source does not
// qualify (see above).
std::string tile_pch_prefix(const std::string &source);

// The precompiled header of `prefix` for `cmd` with `flags` (the kernel's own, minus its
// "-iquote DIR", which the header's includes never depend on) in `cache_dir`: found, or built
// now under its own entry lock. "" when `cmd` is not clang, PTO_TILE_PCH=0 or the build fails (then the
// kernel compiles without one, and the compile reports any real error).
std::string tile_pch(const Command &cmd, const std::vector<std::string> &flags, const std::string &prefix,
                     const std::string &cache_dir);

// Whether a failed compile's output says clang refused the precompiled header itself (stale,
// corrupt, built for other options), so the compile is repeated without it.
bool is_pch_refusal(const std::string &compiler_output);

// Removes a refused header, so that the next compile of its flags builds it again.
void drop_tile_pch(const std::string &path);

}  // namespace worker
}  // namespace pto
#endif  // PTO_WORKER_TILE_PCH_H
