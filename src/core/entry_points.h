// src/core/entry_points.h — the entry points a user binary defines, and what to say when a binary
// defines the wrong one (a kernel compiled as an orchestration, an orchestration built for the
// other runtime).
//
// The symbol names are owned by the public headers that define the macros (pto/kernel.h,
// pto/host_graph.h, pto/orchestration.h); this table only pairs each with the runtime and the
// compile call it belongs to, so that the kernel compiler and both runtimes' loaders give the
// same hint.
#ifndef PTO_CORE_ENTRY_POINTS_H
#define PTO_CORE_ENTRY_POINTS_H

#include <cstring>
#include <string>

#include "pto/host_graph.h"
#include "pto/kernel.h"
#include "pto/orchestration.h"

namespace pto {

struct EntryPoint {
  const char *symbol;   // exported by the binary
  const char *macro;    // what the source writes to define it
  const char *runtime;  // the runtime an orchestration is for; nullptr for a kernel
};

inline constexpr EntryPoint kEntryPoints[] = {
    {PTO_KERNEL_ENTRY_SYMBOL, "PTO_KERNEL(args)", nullptr},
    // The descriptor ABI's entry (include/pto_abi/): a compute kernel too; the loader accepts
    // either, and entry 0 stands for both where a kernel is wanted.
    {PTO_ABI_KERNEL_ENTRY_SYMBOL, "extern \"C\" kernel_entry(__gm__ int64_t *args)", nullptr},
    {PTO_ORCHESTRATION_ENTRY_SYMBOL, "PTO_ORCHESTRATION(graph, args)", "host_build_graph"},
    {PTO_DEVICE_ORCHESTRATION_ENTRY_SYMBOL, "PTO_DEVICE_ORCHESTRATION(orch)", "tensormap_and_ringbuffer"},
};

// The orchestration entry of `runtime`, or nullptr for a runtime without one in the table.
inline const EntryPoint *orchestration_entry_of(const std::string &runtime) {
  for (const EntryPoint &e : kEntryPoints) {
    if (e.runtime != nullptr && runtime == e.runtime) return &e;
  }
  return nullptr;
}

// The entry a runtime also takes when the binary lacks its own, or nullptr: host_build_graph runs
// a device orchestration (PTO_DEVICE_ORCHESTRATION, which the reference API's header
// pto_abi/pto_orchestration_api.h defines) through its host orchestrator.
inline const EntryPoint *orchestration_fallback_of(const std::string &runtime) {
  return runtime == "host_build_graph" ? orchestration_entry_of("tensormap_and_ringbuffer") : nullptr;
}

// Why a binary lacks the entry `wanted` and what to do, from the entries it does export:
// "it defines PTO_KERNEL(args), so it is a compute kernel: compile it with compile_incore".
// `exports(symbol)` answers whether the binary exports a symbol (platform_elf_exports).
template <class Exports>
std::string entry_point_hint(const EntryPoint &wanted, Exports exports) {
  for (const EntryPoint &e : kEntryPoints) {
    if (&e == &wanted || !exports(e.symbol)) continue;
    if (e.runtime == nullptr) {
      return std::string("it defines ") + e.macro + ", so it is a compute kernel: compile it with " +
             "KernelCompiler.compile_incore and add it with add_kernel";
    }
    if (wanted.runtime == nullptr) {
      return std::string("it defines ") + e.macro + ", so it is an orchestration for " + e.runtime +
             ": compile it with KernelCompiler.compile_orchestration(\"" + e.runtime + "\", ...)";
    }
    return std::string("it defines ") + e.macro + ", the entry of a " + e.runtime +
           " orchestration; run it with runtime=\"" + e.runtime + "\", or write the source for " +
           wanted.runtime + " with " + wanted.macro;
  }
  const EntryPoint *fallback = wanted.runtime ? orchestration_fallback_of(wanted.runtime) : nullptr;
  return std::string("define the entry with ") + wanted.macro +
         (fallback ? std::string(" or ") + fallback->macro : std::string());
}

}  // namespace pto
#endif  // PTO_CORE_ENTRY_POINTS_H
