// tests/cpp/test_tile_kernels.cpp — the tile toolchain: detection, typed errors, real bf16, batches.
//
// Contract under test: a kernel source that includes PTO-ISA (directly or through its own
// headers) is built by the C++23 tile compiler with the core type's __DAV_* define and without
// PTO_KERNEL_CFLAGS, a scalar one by $CXX with -std=c++17 as before, and CompileOptions::tile
// overrides the guess; a missing pto-isa or C++23 compiler is MISSING_DEPENDENCY and a wrong
// pto-isa root INVALID_ARGUMENT, each naming what is missing; PTO-ISA's bfloat16_t is real
// bfloat16 in a kernel the runtime runs; compile_incore_many returns paths in input order,
// prints progress and names every kernel that failed; kernels that begin alike share one
// precompiled PTO-ISA header, which changes no binary's behaviour and is rebuilt when clang
// refuses it.
//
// Tests that need clang++-19 (or PTO_TILE_CXX) and a pto-isa checkout (PTO_ISA_ROOT, else the
// pinned copy in ../shared/third_party/pto-isa) skip saying what is missing; with
// PTO_REQUIRE_TILE=1 (scripts/test_all.sh) they fail instead, so CI cannot skip them silently.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/expect_error.h"
#include "common/scratch_dir.h"
#include "common/tile_toolchain.h"

#include "common/scoped_env.h"
#include "pto/chip_worker.h"
#include "pto/error.h"
#include "pto/kernel_compiler.h"
#include "worker/tile_pch.h"

namespace {

namespace fs = std::filesystem;
using pto_test::ScopedEnv;

#ifndef PTO_TEST_SHARED_PTO_ISA
#error "PTO_TEST_SHARED_PTO_ISA must be defined (tests/cpp/CMakeLists.txt)"
#endif

const std::string kTileKernels = PTO_TEST_TILE_KERNELS_DIR;

using pto_test::has_pto_inst;
using pto_test::isa_root;
#define REQUIRE_TILE_TOOLCHAIN() PTO_SKIP_OR_FAIL_WITHOUT(pto_test::tile_unavailable())

using pto_test::contains;

constexpr const char *kScalarKernel = R"(#include "pto/kernel.h"
PTO_KERNEL(args) { *pto::tensor<int64_t>(args, 0) = pto::scalar_i64(args, 1) + 1; }
)";

// A tile kernel in every respect but the work: it includes pto-inst.hpp and writes args[1] * 2.
constexpr const char *kTinyTileKernel = R"(#include <cstdint>
#include <pto/pto-inst.hpp>
#include "pto/kernel.h"
PTO_KERNEL(args) { *pto::tensor<int64_t>(args, 0) = pto::scalar_i64(args, 1) * 2; }
)";

int64_t call_kernel(const std::string &so_path, int64_t input) {
  void *handle = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return -1;
  auto entry = reinterpret_cast<void (*)(int64_t *)>(dlsym(handle, "pto_kernel_entry"));
  EXPECT_NE(entry, nullptr);
  int64_t out = 0;
  int64_t args[2] = {static_cast<int64_t>(reinterpret_cast<uintptr_t>(&out)), input};
  if (entry != nullptr) entry(args);
  dlclose(handle);
  return out;
}

class TileKernelTest : public ::testing::Test {
 protected:
  std::string write(const std::string &relative, const std::string &text) {
    return scratch_.write(relative, text);
  }
  // A stand-in checkout: enough for the root checks, not for compiling.
  std::string fake_isa_root() {
    write("fake_isa/include/pto/pto-inst.hpp", "#error not a real pto-isa\n");
    return root_ + "/fake_isa";
  }
  // A script that appends its arguments to `log` (compiles only, not the probe's) and runs `real`.
  std::string logging_compiler(const std::string &name, const std::string &real, const std::string &log) {
    const std::string script = write(name, "#!/bin/sh\ncase \" $* \" in *' -MMD '*) echo \"$*\" >> '" + log +
                                               "' ;; esac\nexec " + real + " \"$@\"\n");
    chmod(script.c_str(), 0755);
    return script;
  }
  static std::string read(const std::string &path) {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }
  pto::KernelCompiler compiler(pto::TileMode tile = pto::TileMode::kAuto, bool cache = true) {
    pto::CompileOptions o;
    o.tile = tile;
    o.cache = cache;
    o.include_dirs = {root_ + "/inc"};
    return pto::KernelCompiler("a2a3sim", o);
  }
  // For the precompiled-header tests: PTO_ISA_ROOT and a kernel cache of the test's own, for
  // the test's length. The tile compiler, or "" when it is not clang (then skip, saying why).
  std::string clang_with_own_cache(std::string *why_not) {
    envs_.push_back(std::make_unique<ScopedEnv>("PTO_ISA_ROOT", isa_root().c_str()));
    envs_.push_back(std::make_unique<ScopedEnv>("PTO_CACHE_DIR", (root_ + "/cache").c_str()));
    const std::string real = pto::KernelCompiler("a2a3sim").tile_compiler();
    if (contains(real, "clang")) return real;
    *why_not = "precompiled headers are clang's; the tile compiler is " + real;
    return "";
  }
  pto_test::ScratchDir scratch_{"pto_tile_test"};
  const std::string root_ = scratch_.path();
  std::vector<std::unique_ptr<ScopedEnv>> envs_;
};

// --- detection (no toolchain needed) ---------------------------------------------------------

TEST_F(TileKernelTest, SourceIncludingPtoInstIsATileKernelAndAScalarOneIsNot) {
  const pto::KernelCompiler kc = compiler();
  EXPECT_TRUE(kc.is_tile_kernel(write("a/tile.cpp", kTinyTileKernel)));
  EXPECT_FALSE(kc.is_tile_kernel(write("a/scalar.cpp", kScalarKernel)));
  EXPECT_TRUE(kc.is_tile_kernel(write("a/common.cpp", "#  include \"pto/common/pto_tile.hpp\"\n")));
  EXPECT_TRUE(kc.is_tile_kernel(write("a/npu.cpp", "#include <pto/npu/a2a3/TAdd.hpp>\n")));
  EXPECT_TRUE(kc.is_tile_kernel(write("a/pipe.cpp", "#include \"pipe_sync.h\"\n")));
}

TEST_F(TileKernelTest, IncludeThroughTheSourcesOwnHeadersCounts) {
  write("b/helpers/tiles.h", "#pragma once\n#include <pto/pto-inst.hpp>\n");
  write("b/kernel_common.h", "#include \"helpers/tiles.h\"\n");
  write("inc/from_include_dir.h", "#include <pto/cpu/TAdd.hpp>\n");
  const pto::KernelCompiler kc = compiler();
  EXPECT_TRUE(kc.is_tile_kernel(write("b/k1.cpp", "#include \"kernel_common.h\"\n")));
  EXPECT_TRUE(kc.is_tile_kernel(write("c/k2.cpp", "#include <from_include_dir.h>\n")));
  EXPECT_FALSE(kc.is_tile_kernel(write("c/k3.cpp", "#include \"kernel_common.h\"\n")))
      << "kernel_common.h is beside b/k1.cpp, not c/k3.cpp";
}

TEST_F(TileKernelTest, CommentsStringsAndIncludeCyclesDoNotCount) {
  write("d/a.h", "#include \"b.h\"\n");
  write("d/b.h", "#include \"a.h\"\n");
  const pto::KernelCompiler kc = compiler();
  EXPECT_FALSE(kc.is_tile_kernel(write("d/cycle.cpp", "#include \"a.h\"\nint x;\n")));
  EXPECT_FALSE(kc.is_tile_kernel(write("d/comments.cpp",
                                       "// #include <pto/pto-inst.hpp>\n/*\n#include <pto/pto-inst.hpp>\n*/\n"
                                       "const char *s = \"#include <pto/pto-inst.hpp>\";\n")));
}

TEST_F(TileKernelTest, TileModeOverridesDetection) {
  const std::string tile = write("e/tile.cpp", kTinyTileKernel);
  const std::string scalar = write("e/scalar.cpp", kScalarKernel);
  EXPECT_FALSE(compiler(pto::TileMode::kOff).is_tile_kernel(tile));
  EXPECT_TRUE(compiler(pto::TileMode::kOn).is_tile_kernel(scalar));
}

TEST_F(TileKernelTest, TileModeOffBuildsAGuessedTileKernelWithTheScalarCompiler) {
  // Detection does not evaluate #if: this counts as a tile kernel, yet g++ builds it fine.
  const std::string src =
      write("f/guarded.cpp", std::string("#if 0\n#include <pto/pto-inst.hpp>\n#endif\n") + kScalarKernel);
  ScopedEnv no_isa("PTO_ISA_ROOT", nullptr);
  EXPECT_EQ(compiler(pto::TileMode::kAuto).is_tile_kernel(src), true);
  EXPECT_EQ(call_kernel(compiler(pto::TileMode::kOff).compile_incore(src, PTO_CORE_AIV), 4), 5);
}

// --- typed errors -----------------------------------------------------------------------------

TEST_F(TileKernelTest, TileKernelWithoutPtoIsaIsMissingDependencySayingHowToGetIt) {
  ScopedEnv no_isa("PTO_ISA_ROOT", nullptr);
  const std::string src = write("g/needs_isa.cpp", kTinyTileKernel);
  const pto::Error e = pto_test::error_of([&] { compiler().compile_incore(src, PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_MISSING_DEPENDENCY) << e.what();
  EXPECT_STREQ(e.name(), "MISSING_DEPENDENCY");
  for (const char *needle : {"needs_isa.cpp", "PTO_ISA_ROOT", "pto_isa_root", "scripts/fetch_pto_isa.sh"}) {
    EXPECT_TRUE(contains(e.what(), needle)) << needle << " not in: " << e.what();
  }
  // A scalar kernel needs none of it.
  EXPECT_EQ(call_kernel(compiler().compile_incore(write("g/scalar.cpp", kScalarKernel), PTO_CORE_AIV), 1), 2);
}

TEST_F(TileKernelTest, PtoIsaRootWithoutPtoInstIsInvalidArgumentAtConstruction) {
  write("not_isa/include/something.h", "\n");
  pto::CompileOptions o;
  o.pto_isa_root = root_ + "/not_isa";
  const pto::Error e = pto_test::error_of([&] { pto::KernelCompiler("a2a3sim", o); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), o.pto_isa_root)) << e.what();
  EXPECT_TRUE(contains(e.what(), "include/pto/pto-inst.hpp")) << e.what();
}

TEST_F(TileKernelTest, PtoIsaRootEnvironmentWithoutPtoInstIsInvalidArgumentNamingIt) {
  ScopedEnv bad("PTO_ISA_ROOT", (root_ + "/nowhere").c_str());
  const std::string src = write("h/k.cpp", kTinyTileKernel);
  const pto::Error e = pto_test::error_of([&] { compiler().compile_incore(src, PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "PTO_ISA_ROOT=" + root_ + "/nowhere")) << e.what();
}

TEST_F(TileKernelTest, NoCxx23CompilerIsMissingDependencyNamingClang19) {
  ScopedEnv isa("PTO_ISA_ROOT", fake_isa_root().c_str());
  ScopedEnv cxx("PTO_TILE_CXX", "/nonexistent/clang++");
  const std::string src = write("i/tile_x.cpp", kTinyTileKernel);
  const pto::Error e = pto_test::error_of([&] { compiler().compile_incore(src, PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_MISSING_DEPENDENCY) << e.what();
  for (const char *needle : {"tile_x.cpp", "C++23", "clang++-19", "clang-19",
                             "PTO_TILE_CXX=/nonexistent/clang++", "install_deps.sh"}) {
    EXPECT_TRUE(contains(e.what(), needle)) << needle << " not in: " << e.what();
  }
  EXPECT_EQ(pto_test::error_of([&] { compiler().tile_compiler(); }).code(), PTO_MISSING_DEPENDENCY);
}

// --- the descriptor ABI's entry (scalar kernels: no toolchain needed) --------------------------

TEST_F(TileKernelTest, DescriptorAbiKernelEntryIsAcceptedAsAKernel) {
  const std::string src =
      write("j/abi.cpp",
            "#include <stdint.h>\n#include \"tensor.h\"\n"  // include/pto_abi, on every compile
            "extern \"C\" __attribute__((visibility(\"default\"))) void "
            "kernel_entry(int64_t *args) { (void)args; }\n");
  const std::string so = compiler().compile_incore(src, PTO_CORE_AIV);
  void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_NE(dlsym(handle, "kernel_entry"), nullptr);
  dlclose(handle);
  const pto::Error e = pto_test::error_of(
      [&] { pto::KernelCompiler("a2a3sim").compile_orchestration("host_build_graph", src); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "compile_incore")) << e.what();
}

TEST_F(TileKernelTest, BinaryExportingBothKernelEntriesIsInvalidArgumentSayingKeepOne) {
  const std::string src = std::string(kScalarKernel) +
                          "extern \"C\" PTO_EXPORT void kernel_entry(int64_t *args) { (void)args; }\n";
  const pto::Error e =
      pto_test::error_of([&] { compiler().compile_incore_source(src, "both_entries", PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "keep one")) << e.what();
  EXPECT_TRUE(contains(e.what(), "both_entries")) << e.what();
}

TEST_F(TileKernelTest, KernelWithNoEntryNamesBothAbis) {
  const pto::Error e =
      pto_test::error_of([&] { compiler().compile_incore_source("int unrelated;\n", "none", PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "PTO_KERNEL(args)")) << e.what();
  EXPECT_TRUE(contains(e.what(), "kernel_entry")) << e.what();
}

TEST_F(TileKernelTest, DescriptorKernelCompiledAsOrchestrationIsNamedAComputeKernel) {
  const pto::Error e = pto_test::error_of([&] {
    compiler().compile_orchestration_source("tensormap_and_ringbuffer",
                                            "extern \"C\" void kernel_entry(long *args) { (void)args; }\n",
                                            "abi_kernel");
  });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "kernel_entry")) << e.what();
  EXPECT_TRUE(contains(e.what(), "so it is a compute kernel")) << e.what();
}

// --- native -------------------------------------------------------------------------------------

TEST_F(TileKernelTest, NativeBuildsKernelsForThisCpuUnderAKeyOfTheirOwn) {
  const std::string log = root_ + "/cxx.log";
  ScopedEnv cxx("CXX", logging_compiler("host-cxx", pto::KernelCompiler("a2a3sim").compiler(), log).c_str());
  pto::CompileOptions o;
  const std::string portable =
      pto::KernelCompiler("a2a3sim", o).compile_incore_source(kScalarKernel, "nat", PTO_CORE_AIV);
  EXPECT_FALSE(contains(read(log), "-march=native")) << "scalar kernels are portable by default";
  o.native = pto::NativeMode::kAll;
  const pto::KernelCompiler kc("a2a3sim", o);
  const std::string native = kc.compile_incore_source(kScalarKernel, "nat", PTO_CORE_AIV);
  EXPECT_NE(native, portable) << "a binary for this CPU must not be served to a portable build";
  for (const char *flag : {"-march=native", "-ffp-contract=off", "-mno-avx512bf16", "-mno-avx512fp16"})
    EXPECT_TRUE(contains(read(log), flag)) << flag << " not in: " << read(log);
  EXPECT_EQ(call_kernel(native, 1), 2);
  fs::remove(log);
  kc.compile_orchestration_source(
      "host_build_graph", "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, a) {}\n", "native_orch");
  EXPECT_FALSE(contains(read(log), "-march=native")) << "orchestrations are host code: " << read(log);
}

// --- the tile toolchain itself ------------------------------------------------------------------

TEST_F(TileKernelTest, TileKernelIsBuiltByTheTileCompilerWithItsCoreTypeAndScalarByCxx) {
  REQUIRE_TILE_TOOLCHAIN();
  ScopedEnv isa("PTO_ISA_ROOT", isa_root().c_str());
  const std::string real_tile = pto::KernelCompiler("a2a3sim").tile_compiler();
  const std::string real_cxx = pto::KernelCompiler("a2a3sim").compiler();
  const std::string tile_log = root_ + "/tile.log", cxx_log = root_ + "/cxx.log";
  ScopedEnv tile_cxx("PTO_TILE_CXX", logging_compiler("tile-cxx", real_tile, tile_log).c_str());
  ScopedEnv cxx("CXX", logging_compiler("host-cxx", real_cxx, cxx_log).c_str());
  const pto::KernelCompiler kc = compiler(pto::TileMode::kAuto, /*cache=*/false);
  const std::string tile_src = write("k/tile.cpp", kTinyTileKernel);

  EXPECT_EQ(call_kernel(kc.compile_incore(tile_src, PTO_CORE_AIV), 21), 42);
  const std::string aiv = read(tile_log);
  for (const char *flag :
       {"-std=c++23", "-D__CPU_SIM", "-DPTO_CPU_MAX_THREADS=1", "-D__DAV_VEC__", "/pto_abi", "-march=native",
        "-ffp-contract=off", "-mno-avx512bf16"}) {  // native by default
    EXPECT_TRUE(contains(aiv, flag)) << flag << " not in: " << aiv;
  }
  EXPECT_FALSE(contains(aiv, "-D__DAV_CUBE__")) << aiv;
  EXPECT_EQ(read(cxx_log), "") << "the host compiler must not build a tile kernel";

  fs::remove(tile_log);
  EXPECT_EQ(call_kernel(kc.compile_incore(tile_src, PTO_CORE_AIC), 1), 2);
  EXPECT_TRUE(contains(read(tile_log), "-D__DAV_CUBE__")) << read(tile_log);
  EXPECT_FALSE(contains(read(tile_log), "-D__DAV_VEC__")) << read(tile_log);

  fs::remove(tile_log);
  EXPECT_EQ(call_kernel(kc.compile_incore(write("k/scalar.cpp", kScalarKernel), PTO_CORE_AIV), 1), 2);
  EXPECT_EQ(read(tile_log), "");
  const std::string scalar = read(cxx_log);
  EXPECT_TRUE(contains(scalar, "-std=c++17")) << scalar;
  EXPECT_TRUE(contains(scalar, "/pto_abi")) << scalar;
  EXPECT_FALSE(contains(scalar, "__CPU_SIM")) << scalar;
}

// --- precompiled PTO-ISA headers (src/worker/tile_pch.h) -------------------------------------

TEST(TilePch, OnlyPrefixesThatReadTheSameTwiceQualify) {
  using pto::worker::tile_pch_prefix;
  const std::string isa = "#include <pto/pto-inst.hpp>\n";
  // What the header holds: the directives, without comments, ending with the PTO-ISA include.
  EXPECT_EQ(tile_pch_prefix("#line 1 \"k.cpp\"\n// a kernel\n#include <cstdint>  // why\n\n" + isa +
                            "#include \"mine.h\"\nint x;\n"),
            "#include <cstdint>\n" + isa);
  EXPECT_EQ(
      tile_pch_prefix("/* licence\n   text */\n#pragma once\n#ifndef __gm__\n#define __gm__\n#endif\n"
                      "#ifndef __aicore__\n#define __aicore__ [aicore]\n#endif\n# include <cstdint>\n" +
                      isa),
      "#ifndef __gm__\n#define __gm__\n#endif\n#ifndef __aicore__\n#define __aicore__ [aicore]\n#endif\n"
      "# include <cstdint>\n" +
          isa);
  for (const std::string &no : {
           std::string("#include \"local.h\"\n") + isa,          // a quoted include: another directory
           std::string("#define X 1\n") + isa,                   // may change what PTO-ISA compiles to
           std::string("#ifdef M\n#undef M\n#endif\n") + isa,    // reads differently the second time
           std::string("#ifndef A\n#define B\n#endif\n") + isa,  // not the guard idiom
           std::string("#ifndef A\n#define A\n") + isa,          // guard still open
           std::string("int before;\n") + isa,                   // code
           std::string("#include <cstdint> /* mid */\n") + isa,  // a comment we do not parse
           std::string("#include <cstdint>\n#include <pto/common/type.hpp>\n"),  // no pto-inst.hpp
           std::string("#line 1 \"a\"\n#line 2 \"b\"\n") + isa,  // only the compiler's own #line
       }) {
    EXPECT_EQ(tile_pch_prefix(no), "") << no;
  }
}

TEST_F(TileKernelTest, KernelsThatBeginAlikeShareOnePrecompiledHeaderAndRunTheSame) {
  REQUIRE_TILE_TOOLCHAIN();
  std::string why_not;
  const std::string real = clang_with_own_cache(&why_not);
  if (real.empty()) GTEST_SKIP() << why_not;
  const std::string cache = root_ + "/cache";
  const std::string log = root_ + "/tile.log";
  ScopedEnv tile_cxx("PTO_TILE_CXX", logging_compiler("tile-cxx", real, log).c_str());
  const pto::KernelCompiler kc = compiler();
  auto pch_files = [&] {
    std::vector<std::string> out;
    for (const auto &e : fs::directory_iterator(cache))
      if (e.path().extension() == ".pch") out.push_back(e.path().string());
    return out;
  };
  auto compiles_with_pch = [&] {
    int n = 0;
    std::istringstream in(read(log));
    for (std::string line; std::getline(in, line);) n += contains(line, "-include-pch") ? 1 : 0;
    return n;
  };
  EXPECT_EQ(call_kernel(kc.compile_incore_source(kTinyTileKernel, "twice", PTO_CORE_AIV), 21), 42);
  const std::string src3 =
      std::string(kTinyTileKernel).replace(std::string(kTinyTileKernel).find("* 2"), 3, "* 3");
  EXPECT_EQ(call_kernel(kc.compile_incore_source(src3, "thrice", PTO_CORE_AIV), 5), 15);
  ASSERT_EQ(pch_files().size(), 1u) << "one header for one flag set and one beginning";
  EXPECT_EQ(compiles_with_pch(), 2) << read(log);
  // Another core type is another flag set: its own header.
  EXPECT_EQ(call_kernel(kc.compile_incore_source(kTinyTileKernel, "twice", PTO_CORE_AIC), 4), 8);
  EXPECT_EQ(pch_files().size(), 2u);
  // The way out.
  {
    ScopedEnv off("PTO_TILE_PCH", "0");
    EXPECT_EQ(call_kernel(kc.compile_incore_source(src3 + "\n", "thrice_off", PTO_CORE_AIV), 5), 15);
    EXPECT_EQ(compiles_with_pch(), 3) << "PTO_TILE_PCH=0 must compile without";
  }
  // clear_cache() removes the headers too.
  EXPECT_GE(kc.clear_cache(), 2u);
  EXPECT_TRUE(pch_files().empty());
}

TEST_F(TileKernelTest, APrecompiledHeaderClangRefusesIsRebuiltAndTheKernelStillCompiles) {
  REQUIRE_TILE_TOOLCHAIN();
  std::string why_not;
  const std::string real = clang_with_own_cache(&why_not);
  if (real.empty()) GTEST_SKIP() << why_not;
  const std::string cache = root_ + "/cache";
  const pto::KernelCompiler kc = compiler();
  EXPECT_EQ(call_kernel(kc.compile_incore_source(kTinyTileKernel, "first", PTO_CORE_AIV), 1), 2);
  std::string pch;
  for (const auto &e : fs::directory_iterator(cache))
    if (e.path().extension() == ".pch") pch = e.path().string();
  ASSERT_FALSE(pch.empty());
  const auto good_size = fs::file_size(pch);
  std::ofstream(pch, std::ios::trunc) << "not a precompiled header";  // as a stale one is refused
  const std::string other = std::string(kTinyTileKernel) + "// another kernel\n";
  EXPECT_EQ(call_kernel(kc.compile_incore_source(other, "second", PTO_CORE_AIV), 4), 8);
  EXPECT_FALSE(fs::exists(pch)) << "the refused header is dropped";
  const std::string third = std::string(kTinyTileKernel) + "// a third kernel\n";
  EXPECT_EQ(call_kernel(kc.compile_incore_source(third, "third", PTO_CORE_AIV), 5), 10);
  ASSERT_TRUE(fs::exists(pch)) << "and built again by the next compile";
  EXPECT_EQ(fs::file_size(pch), good_size);
}

TEST_F(TileKernelTest, KernelCflagsAreNotAppliedToTileKernelsButTileKernelCflagsAre) {
  REQUIRE_TILE_TOOLCHAIN();
  ScopedEnv isa("PTO_ISA_ROOT", isa_root().c_str());
  const char *ci = getenv("PTO_KERNEL_CFLAGS");  // CI's sanitizer flags: keep them, scalar kernels need them
  ScopedEnv scalar_flags("PTO_KERNEL_CFLAGS",
                         (std::string(ci != nullptr ? ci : "") + " -DPTO_TEST_POISON=1").c_str());
  ScopedEnv tile_flags("PTO_TILE_KERNEL_CFLAGS", "-DPTO_TEST_TILE_EXTRA=7");
  const std::string src = std::string(kTinyTileKernel) +
                          "#ifdef PTO_TEST_POISON\n#error PTO_KERNEL_CFLAGS reached a tile kernel\n#endif\n"
                          "extern \"C\" PTO_EXPORT int pto_test_extra() { return PTO_TEST_TILE_EXTRA; }\n";
  const std::string so = compiler().compile_incore_source(src, "cflags", PTO_CORE_AIV);
  void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto fn = reinterpret_cast<int (*)()>(dlsym(handle, "pto_test_extra"));
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(), 7);
  dlclose(handle);
}

// Runs a one-task host_build_graph program: kernel 0 (core `core`) with `args`' tensors and
// scalars in order.
void run_one_task(const std::string &kernel_so, pto_core_type core, pto::ChipStorageTaskArgs &args,
                  uint32_t num_tensors, uint32_t num_scalars) {
  std::string orch = "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, args) {\n  g.add_task(0, " +
                     std::string(core == PTO_CORE_AIC ? "PTO_CORE_AIC" : "PTO_CORE_AIV") + ", {";
  for (uint32_t i = 0; i < num_tensors; ++i)
    orch += "pto::TaskArg::of(args.tensor(" + std::to_string(i) + ")), ";
  for (uint32_t i = 0; i < num_scalars; ++i)
    orch += "pto::TaskArg::of_i64(args.scalar(" + std::to_string(i) + ")), ";
  orch += "});\n}\n";
  pto::ChipCallable callable(
      pto::KernelCompiler("a2a3sim").compile_orchestration_source("host_build_graph", orch, "one_task"));
  callable.add_kernel(0, core, kernel_so);
  pto::ChipWorker worker;
  worker.init("a2a3sim", "host_build_graph");
  worker.set_device(0);
  const pto::RunStats stats = worker.run(callable, args, pto::ChipCallConfig{});
  EXPECT_EQ(stats.tasks_run, 1u);
  worker.finalize();
}

// THE bfloat16 test: with clang and libstdc++ 12, PTO-ISA's bfloat16_t silently becomes IEEE
// half unless the shim is used (tile_toolchain.h); then 1.0 reads 0x3c00, not 0x3f80.
TEST_F(TileKernelTest, Bfloat16IsRealBfloat16InATileKernelRunByTheRuntime) {
  REQUIRE_TILE_TOOLCHAIN();
  pto::CompileOptions o;
  o.pto_isa_root = isa_root();
  const std::string so =
      pto::KernelCompiler("a2a3sim", o).compile_incore(kTileKernels + "/bf16_bits.cpp", PTO_CORE_AIV);
  uint16_t out[3] = {0, 0, 0};
  pto::ChipStorageTaskArgs args;
  args.add_tensor(out, sizeof out, PTO_DTYPE_U16, {3}, PTO_DIR_OUTPUT);
  args.add_scalar_f32(-2.5f);
  run_one_task(so, PTO_CORE_AIV, args, 1, 1);
  EXPECT_EQ(out[0], 0x3f80) << "bfloat16_t(1.0f); 0x3c00 means bfloat16_t is IEEE half";
  EXPECT_EQ(out[1], 0x4049) << "bfloat16_t(3.140625f)";
  EXPECT_EQ(out[2], 0xc020) << "bfloat16_t(-2.5f) converted at run time";
}

// Tile kernels are built for this CPU by default, and that must not change a result: on a CPU
// with AVX512-BF16, -march=native alone turns float -> bfloat16 into vcvtneps2bf16, which flushes
// denormals (1e-39f would read 0x0000). The default build keeps the correctly rounded 0x000b.
TEST_F(TileKernelTest, TheDefaultNativeBuildConvertsDenormalsToBfloat16LikeThePortableOne) {
  REQUIRE_TILE_TOOLCHAIN();
  for (const pto::NativeMode mode : {pto::NativeMode::kTileKernels, pto::NativeMode::kOff}) {
    pto::CompileOptions o;
    o.pto_isa_root = isa_root();
    o.native = mode;
    const std::string so =
        pto::KernelCompiler("a2a3sim", o).compile_incore(kTileKernels + "/bf16_bits.cpp", PTO_CORE_AIV);
    uint16_t out[3] = {0, 0, 0};
    pto::ChipStorageTaskArgs args;
    args.add_tensor(out, sizeof out, PTO_DTYPE_U16, {3}, PTO_DIR_OUTPUT);
    args.add_scalar_f32(1e-39f);
    run_one_task(so, PTO_CORE_AIV, args, 1, 1);
    EXPECT_EQ(out[2], 0x000b) << (mode == pto::NativeMode::kOff ? "portable" : "native") << " build";
  }
}

TEST_F(TileKernelTest, TmatmulGemmOnAnAicCoreMatchesTheReference) {
  REQUIRE_TILE_TOOLCHAIN();
  pto::CompileOptions o;
  o.pto_isa_root = isa_root();
  const std::string so =
      pto::KernelCompiler("a2a3sim", o).compile_incore(kTileKernels + "/gemm_128.cpp", PTO_CORE_AIC);
  constexpr int n = 128;
  std::vector<float> a(n * n), b(n * n), c(n * n, -1.0f);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>((i * 7) % 13) - 6.0f;  // small integers: every sum is exact in float
    b[i] = static_cast<float>((i * 5) % 11) - 5.0f;
  }
  pto::ChipStorageTaskArgs args;
  args.add_tensor(a.data(), a.size() * 4, PTO_DTYPE_F32, {n, n}, PTO_DIR_INPUT);
  args.add_tensor(b.data(), b.size() * 4, PTO_DTYPE_F32, {n, n}, PTO_DIR_INPUT);
  args.add_tensor(c.data(), c.size() * 4, PTO_DTYPE_F32, {n, n}, PTO_DIR_OUTPUT);
  run_one_task(so, PTO_CORE_AIC, args, 3, 0);
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      float ref = 0;
      for (int k = 0; k < n; ++k) ref += a[i * n + k] * b[k * n + j];
      if (c[i * n + j] != ref && wrong++ < 3)
        ADD_FAILURE() << "c[" << i << "][" << j << "] = " << c[i * n + j] << ", not " << ref;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// --- the batch call -------------------------------------------------------------------------------

TEST_F(TileKernelTest, CompileManyReturnsPathsInInputOrderAndReportsCachedOnesAsCached) {
  ScopedEnv cache("PTO_CACHE_DIR", (root_ + "/cache").c_str());
  std::vector<std::pair<std::string, pto_core_type>> kernels;
  for (int i = 0; i < 3; ++i) {
    kernels.emplace_back(write("m/k" + std::to_string(i) + ".cpp",
                               std::string(kScalarKernel) + "// " + std::to_string(i) + "\n"),
                         i == 1 ? PTO_CORE_AIC : PTO_CORE_AIV);
  }
  const pto::KernelCompiler kc = compiler();
  testing::internal::CaptureStderr();
  const std::vector<std::string> paths = kc.compile_incore_many(kernels, /*progress=*/true);
  const std::string cold = testing::internal::GetCapturedStderr();
  ASSERT_EQ(paths.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(paths[i], kc.compile_incore(kernels[i].first, kernels[i].second)) << i;
    EXPECT_TRUE(contains(cold, kernels[i].first)) << cold;
  }
  EXPECT_TRUE(contains(cold, "[3/3]")) << cold;
  EXPECT_TRUE(contains(cold, "(AIC, " + kc.compiler() + ")")) << cold;
  EXPECT_TRUE(contains(cold, "3 compiled, 0 cached")) << cold;

  testing::internal::CaptureStderr();
  EXPECT_EQ(kc.compile_incore_many(kernels, true), paths);
  const std::string warm = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(warm, "cached")) << warm;
  EXPECT_TRUE(contains(warm, "0 compiled, 3 cached")) << warm;

  testing::internal::CaptureStderr();
  kc.compile_incore_many(kernels);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "no progress unless asked";
  EXPECT_TRUE(kc.compile_incore_many({}).empty());
}

TEST_F(TileKernelTest, CompileManyTriesEveryKernelAndNamesEveryFailure) {
  ScopedEnv no_isa("PTO_ISA_ROOT", nullptr);
  const std::string good = write("n/good.cpp", kScalarKernel);
  const std::string broken =
      write("n/broken.cpp", "#include \"pto/kernel.h\"\nPTO_KERNEL(args) { nope(args); }\n");
  const std::string tile = write("n/tile_without_isa.cpp", kTinyTileKernel);
  const pto::Error e = pto_test::error_of([&] {
    compiler().compile_incore_many({{good, PTO_CORE_AIV}, {broken, PTO_CORE_AIV}, {tile, PTO_CORE_AIV}});
  });
  EXPECT_EQ(e.code(), PTO_KERNEL_COMPILE) << "the code of the first failure in input order: " << e.what();
  for (const std::string &needle : {std::string("2 of 3"), broken + " (KERNEL_COMPILE)",
                                    tile + " (MISSING_DEPENDENCY)", std::string("nope")}) {
    EXPECT_TRUE(contains(e.what(), needle)) << needle << " not in: " << e.what();
  }
  EXPECT_FALSE(contains(e.what(), good + " (")) << e.what();
  const pto::Error bad_core = pto_test::error_of([&] {
    compiler().compile_incore_many({{good, PTO_TASK_SHAPE_COUNT}});  // in the enum's range, not a core type
  });
  EXPECT_EQ(bad_core.code(), PTO_INVALID_ARGUMENT);
}

TEST_F(TileKernelTest, CompileManyBuildsTileAndScalarKernelsTogether) {
  REQUIRE_TILE_TOOLCHAIN();
  ScopedEnv isa("PTO_ISA_ROOT", isa_root().c_str());
  const pto::KernelCompiler kc = compiler();
  const std::string tile = write("p/tile.cpp", kTinyTileKernel);
  const std::string scalar = write("p/scalar.cpp", kScalarKernel);
  testing::internal::CaptureStderr();
  const std::vector<std::string> paths =
      kc.compile_incore_many({{tile, PTO_CORE_AIV}, {scalar, PTO_CORE_AIV}}, true);
  const std::string log = testing::internal::GetCapturedStderr();
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(call_kernel(paths[0], 5), 10);
  EXPECT_EQ(call_kernel(paths[1], 5), 6);
  EXPECT_TRUE(contains(log, "(AIV, " + kc.tile_compiler() + ")")) << log;
  EXPECT_TRUE(contains(log, "(AIV, " + kc.compiler() + ")")) << log;
}

}  // namespace
