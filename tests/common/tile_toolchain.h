// tests/common/tile_toolchain.h — whether tile kernels can be built here, for the suites that need them.
//
// A test needing clang++-19 and a pto-isa checkout skips saying what is missing, unless
// PTO_REQUIRE_TILE=1 (scripts/test_all.sh, hence CI) makes the absence a failure.
#ifndef PTO_TESTS_TILE_TOOLCHAIN_H
#define PTO_TESTS_TILE_TOOLCHAIN_H

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "pto/error.h"
#include "pto/kernel_compiler.h"

#ifndef PTO_TEST_SHARED_PTO_ISA
#error "PTO_TEST_SHARED_PTO_ISA must be defined (tests/cpp/CMakeLists.txt)"
#endif

namespace pto_test {

inline bool has_pto_inst(const std::string &root) {
  return !root.empty() &&
         std::filesystem::is_regular_file(std::filesystem::path(root) / "include/pto/pto-inst.hpp");
}

// PTO_ISA_ROOT, else the pinned copy beside the checkout, else "".
inline std::string isa_root() {
  const char *env = getenv("PTO_ISA_ROOT");
  if (env != nullptr && *env != '\0') return env;
  return has_pto_inst(PTO_TEST_SHARED_PTO_ISA) ? PTO_TEST_SHARED_PTO_ISA : "";
}

inline bool tile_required() {
  const char *env = getenv("PTO_REQUIRE_TILE");
  return env != nullptr && std::string(env) == "1";
}

// "" when tile kernels can be built here, else what is missing.
inline std::string tile_unavailable() {
  if (!has_pto_inst(isa_root())) {
    return "no pto-isa checkout (set PTO_ISA_ROOT; scripts/fetch_pto_isa.sh gets the pinned commit)";
  }
  try {
    pto::KernelCompiler("a2a3sim").tile_compiler();
  } catch (const pto::Error &e) {
    return std::string("no C++23 compiler for tile kernels: ") + e.what();
  }
  return "";
}

}  // namespace pto_test

// In a test body: skip when `why` (a missing tool, "" if none) says so, fail under PTO_REQUIRE_TILE=1.
#define PTO_SKIP_OR_FAIL_WITHOUT(why)                                                        \
  do {                                                                                       \
    const std::string pto_why_ = (why);                                                      \
    if (!pto_why_.empty()) {                                                                 \
      if (pto_test::tile_required()) GTEST_FAIL() << "PTO_REQUIRE_TILE=1, but " << pto_why_; \
      GTEST_SKIP() << "tile toolchain unavailable: " << pto_why_;                            \
    }                                                                                        \
  } while (0)

#endif  // PTO_TESTS_TILE_TOOLCHAIN_H
