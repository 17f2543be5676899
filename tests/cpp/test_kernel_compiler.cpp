// tests/cpp/test_kernel_compiler.cpp — KernelCompiler: flags, errors and the on-disk cache.
//
// Contract under test: a source compiles with the host compiler into a loadable .so whose
// name hashes source, flags and compiler; an existing .so is returned without running the
// compiler; failures throw pto::Error naming the source, the command and the compiler's
// output, and leave nothing half-written in the cache, even with compiles racing.
#include "pto/kernel_compiler.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/expect_error.h"
#include "common/scratch_dir.h"

#include "common/scoped_env.h"
#include "core/entry_points.h"
#include "pto/error.h"
#include "pto/runtime_builder.h"

namespace {

namespace fs = std::filesystem;

using pto_test::ScopedEnv;

// Increments the caller's int64 pointed to by args[0] by args[1] + 1, so a test can check
// that the loaded code is the code it wrote.
constexpr const char *kGoodKernel = R"(#include "pto/kernel.h"
PTO_KERNEL(args) { *pto::tensor<int64_t>(args, 0) = pto::scalar_i64(args, 1) + 1; }
)";

using KernelEntry = void (*)(int64_t *);

class KernelCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nested and not yet created: compile() must create it (mkdir -p).
    cache_ = root_ + "/cache/nested";
    cache_env_ = std::make_unique<ScopedEnv>("PTO_CACHE_DIR", cache_.c_str());
  }
  void TearDown() override { cache_env_.reset(); }

  std::string write(const std::string &relative, const std::string &text) {
    return scratch_.write(relative, text);
  }

  static pto::KernelCompiler fast_compiler() {
    pto::CompileOptions options;
    options.opt_level = "-O0";  // these kernels are tiny; -O0 keeps the suite fast
    return pto::KernelCompiler("a2a3sim", options);
  }

  // Files in the cache whose name ends with `suffix`.
  std::vector<std::string> cache_files(const std::string &suffix) const {
    std::vector<std::string> out;
    if (!fs::exists(cache_)) return out;
    for (const auto &entry : fs::directory_iterator(cache_)) {
      const std::string name = entry.path().filename().string();
      if (name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        out.push_back(name);
      }
    }
    return out;
  }

  // A compiler wrapper that logs every real compile (not --version) to a file, then runs
  // the compiler the test would otherwise have used.
  std::string counting_compiler() {
    const std::string original = fast_compiler().compiler();
    log_ = root_ + "/compile.log";
    const std::string script = write("counting-cxx",
                                     "#!/bin/sh\n"
                                     "case \"$1\" in --version) ;; *) echo compile >> '" +
                                         log_ + "' ;; esac\nexec " + original + " \"$@\"\n");
    chmod(script.c_str(), 0755);
    return script;
  }
  int compiles_logged() const {
    std::ifstream in(log_);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  pto_test::ScratchDir scratch_{"pto_kernel_compiler_test"};
  const std::string root_ = scratch_.path();
  std::string cache_;
  std::string log_;
  std::unique_ptr<ScopedEnv> cache_env_;
};

int64_t run_kernel(const std::string &so_path, int64_t input) {
  void *handle = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return -1;
  auto entry = reinterpret_cast<KernelEntry>(dlsym(handle, "pto_kernel_entry"));
  EXPECT_NE(entry, nullptr) << "pto_kernel_entry not exported by " << so_path;
  int64_t out = 0;
  int64_t args[2] = {static_cast<int64_t>(reinterpret_cast<uintptr_t>(&out)), input};
  if (entry != nullptr) entry(args);
  dlclose(handle);
  return out;
}

using pto_test::contains;

TEST_F(KernelCompilerTest, GoodKernelCompilesToLoadableSoExportingEntry) {
  const std::string src = write("kernels/add_one.cpp", kGoodKernel);
  const std::string so = fast_compiler().compile_incore(src, PTO_CORE_AIV);
  EXPECT_EQ(fs::path(so).parent_path(), fs::path(cache_));
  EXPECT_EQ(fs::path(so).extension(), ".so");
  EXPECT_EQ(run_kernel(so, 41), 42);
}

TEST_F(KernelCompilerTest, SecondCompileOfSameSourceHitsCacheWithoutRunningCompiler) {
  ScopedEnv cxx("CXX", counting_compiler().c_str());
  const pto::KernelCompiler kc = fast_compiler();
  const std::string src = write("add_one.cpp", kGoodKernel);
  const std::string first = kc.compile_incore(src, PTO_CORE_AIV);
  ASSERT_EQ(compiles_logged(), 1);
  struct stat before;
  ASSERT_EQ(stat(first.c_str(), &before), 0);

  const std::string second = kc.compile_incore(src, PTO_CORE_AIV);
  EXPECT_EQ(second, first);
  EXPECT_EQ(compiles_logged(), 1) << "the cached .so should have been returned as is";
  struct stat after;
  ASSERT_EQ(stat(second.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST_F(KernelCompilerTest, SecondCompileOfSameSourceTextHitsCache) {
  ScopedEnv cxx("CXX", counting_compiler().c_str());
  const pto::KernelCompiler kc = fast_compiler();
  const std::string a = kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
  const std::string b = kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
  EXPECT_EQ(a, b);
  EXPECT_EQ(compiles_logged(), 1);
}

TEST_F(KernelCompilerTest, SyntaxErrorThrowsKernelCompileWithCompilerOutputAndCommand) {
  const std::string src =
      write("broken_kernel.cpp",
            "#include \"pto/kernel.h\"\nPTO_KERNEL(args) { undeclared_identifier_xyz(args); }\n");
  const pto::KernelCompiler kc = fast_compiler();
  const pto::Error e = pto_test::error_of([&] { kc.compile_incore(src, PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_KERNEL_COMPILE);
  const std::string what = e.what();
  EXPECT_TRUE(contains(what, "broken_kernel")) << what;
  EXPECT_TRUE(contains(what, "undeclared_identifier_xyz")) << what;  // compiler output
  EXPECT_TRUE(contains(what, src + ":2")) << "diagnostics should name the user's file: " << what;
  EXPECT_TRUE(contains(what, kc.compiler() + " ")) << what;  // the command line...
  EXPECT_TRUE(contains(what, "-std=c++17 -fPIC -shared")) << what;
  EXPECT_TRUE(contains(what, "-DPTO_CORE_TYPE_AIV=1")) << what;
}

TEST_F(KernelCompilerTest, FailedCompileLeavesNoSharedObjectOrTemporaryInCache) {
  const pto::KernelCompiler kc = fast_compiler();
  pto_test::error_of([&] { kc.compile_incore_source("this is not C++", "broken", PTO_CORE_AIC); });
  EXPECT_TRUE(cache_files(".so").empty());
  EXPECT_TRUE(cache_files(".tmp").empty());
}

TEST_F(KernelCompilerTest, ChangedSourceGetsDifferentPath) {
  const pto::KernelCompiler kc = fast_compiler();
  const std::string src = write("k.cpp", kGoodKernel);
  const std::string first = kc.compile_incore(src, PTO_CORE_AIV);
  write("k.cpp", std::string(kGoodKernel) + "// edited\n");
  const std::string second = kc.compile_incore(src, PTO_CORE_AIV);
  EXPECT_NE(first, second);
  EXPECT_TRUE(fs::exists(first)) << "the old entry stays valid for other users of the cache";
  EXPECT_EQ(run_kernel(second, 1), 2);
}

TEST_F(KernelCompilerTest, CoreTypeIsVisibleToTheSourceAndPartOfTheKey) {
  const std::string only_aiv = std::string(kGoodKernel) +
                               "#ifndef PTO_CORE_TYPE_AIV\n#error built for the wrong core\n"
                               "#endif\n#ifndef PTO_PLATFORM_SIM\n#error no sim define\n#endif\n";
  const pto::KernelCompiler kc = fast_compiler();
  EXPECT_NO_THROW(kc.compile_incore_source(only_aiv, "only_aiv", PTO_CORE_AIV));
  const pto::Error e =
      pto_test::error_of([&] { kc.compile_incore_source(only_aiv, "only_aiv", PTO_CORE_AIC); });
  EXPECT_EQ(e.code(), PTO_KERNEL_COMPILE);
  EXPECT_TRUE(contains(e.what(), "built for the wrong core")) << e.what();
}

TEST_F(KernelCompilerTest, InvalidCoreTypeIsInvalidArgument) {
  const pto::Error e = pto_test::error_of(
      [] { fast_compiler().compile_incore_source(kGoodKernel, "k", static_cast<pto_core_type>(7)); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
}

TEST_F(KernelCompilerTest, QuoteIncludesResolveBesideTheOriginalSourceFile) {
  write("proj/helper.h", "#define HELPER_INCREMENT 5\n");
  const std::string src =
      write("proj/uses_helper.cpp",
            "#include \"pto/kernel.h\"\n#include \"helper.h\"\n"
            "PTO_KERNEL(args) { *pto::tensor<int64_t>(args, 0) = args[1] + HELPER_INCREMENT; }\n");
  EXPECT_EQ(run_kernel(fast_compiler().compile_incore(src, PTO_CORE_AIC), 1), 6);
}

TEST_F(KernelCompilerTest, OrchestrationGetsRuntimeDefineAndExportsEntry) {
  const std::string src = write("orch.cpp",
                                "#include \"pto/host_graph.h\"\n"
                                "#ifndef PTO_RUNTIME_HOST_BUILD_GRAPH\n#error no runtime define\n"
                                "#endif\n"
                                "PTO_ORCHESTRATION(graph, args) { (void)args; graph.fail(\"x\"); }\n");
  const std::string so = fast_compiler().compile_orchestration("host_build_graph", src);
  void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_NE(dlsym(handle, "pto_orchestration_entry"), nullptr);
  dlclose(handle);
}

TEST_F(KernelCompilerTest, OrchestrationForUnknownRuntimeIsInvalidArgumentListingRuntimes) {
  const std::string src = write("orch.cpp", "int x;\n");
  const pto::Error e =
      pto_test::error_of([&] { fast_compiler().compile_orchestration("no_such_runtime", src); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "no_such_runtime")) << e.what();
  EXPECT_TRUE(contains(e.what(), "host_build_graph")) << e.what();
}

TEST_F(KernelCompilerTest, KernelCflagsEnvironmentIsAppliedAndChangesTheKey) {
  const std::string src = std::string(kGoodKernel) +
                          "#ifndef PTO_TEST_EXTRA\n#define PTO_TEST_EXTRA 3\n#endif\n"
                          "extern \"C\" PTO_EXPORT int pto_test_extra() { return PTO_TEST_EXTRA; }\n";
  // Keep whatever CI already put there (e.g. -fsanitize=thread) so the .so still loads.
  const char *ci = getenv("PTO_KERNEL_CFLAGS");
  const std::string base = ci != nullptr ? ci : "";
  const pto::KernelCompiler kc = fast_compiler();
  const std::string plain = kc.compile_incore_source(src, "extra", PTO_CORE_AIV);
  std::string with_extra;
  {
    ScopedEnv cflags("PTO_KERNEL_CFLAGS", (base + "  -DPTO_TEST_EXTRA=7 ").c_str());
    with_extra = kc.compile_incore_source(src, "extra", PTO_CORE_AIV);
  }
  EXPECT_NE(plain, with_extra);
  void *handle = dlopen(with_extra.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto fn = reinterpret_cast<int (*)()>(dlsym(handle, "pto_test_extra"));
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(), 7);
  dlclose(handle);
}

TEST_F(KernelCompilerTest, PtoIsaRootAddsItsIncludeDirectory) {
  write("isa/include/isa_marker.h", "#define ISA_MARKER 9\n");
  write("isa/include/pto/pto-inst.hpp",
        "#error a scalar kernel must not include this\n");  // marks a checkout
  pto::CompileOptions options;
  options.opt_level = "-O0";
  options.pto_isa_root = root_ + "/isa";
  const std::string so = pto::KernelCompiler("a5sim", options)
                             .compile_incore_source(
                                 "#include \"pto/kernel.h\"\n#include <isa_marker.h>\n"
                                 "PTO_KERNEL(args) { *pto::tensor<int64_t>(args, 0) = ISA_MARKER; }\n",
                                 "isa_user", PTO_CORE_AIC);
  EXPECT_EQ(run_kernel(so, 0), 9);
}

TEST_F(KernelCompilerTest, MissingPtoIsaRootIsInvalidArgument) {
  pto::CompileOptions options;
  options.pto_isa_root = root_ + "/no_such_isa";
  const pto::Error e = pto_test::error_of([&] { pto::KernelCompiler("a2a3sim", options); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), options.pto_isa_root)) << e.what();
}

TEST_F(KernelCompilerTest, SourceNameIsSanitizedIntoTheFileName) {
  const std::string so = fast_compiler().compile_incore_source(kGoodKernel, "my kernel/v2", PTO_CORE_AIV);
  const std::string file = fs::path(so).filename().string();
  EXPECT_EQ(file.rfind("my_kernel_v2-", 0), 0u) << file;
  // <name>-<16 hex digits: the call's key>-<16 hex digits: the headers' digest>.so
  EXPECT_EQ(file.size(), std::string("my_kernel_v2-").size() + 16 + 1 + 16 + 3) << file;
}

TEST_F(KernelCompilerTest, ConcurrentCompilesOfSameSourceAgreeOnOneLoadablePathAndCompileOnce) {
  ScopedEnv cxx("CXX", counting_compiler().c_str());
  const pto::KernelCompiler kc = fast_compiler();
  constexpr int kThreads = 4;
  std::vector<std::string> paths(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      try {
        paths[i] = kc.compile_incore_source(kGoodKernel, "raced", PTO_CORE_AIV);
      } catch (const std::exception &e) {
        errors[i] = e.what();
      }
    });
  }
  for (std::thread &t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(paths[i], paths[0]);
  }
  EXPECT_EQ(run_kernel(paths[0], 1), 2);
  EXPECT_TRUE(cache_files(".tmp").empty());
  // The entry's lock made the others wait for the first compile and take its binary.
  EXPECT_EQ(compiles_logged(), 1);
}

TEST_F(KernelCompilerTest, CompilerThatCannotRunThrowsKernelCompileNamingIt) {
  ScopedEnv cxx("CXX", "/nonexistent/pto-test-cxx");
  const pto::KernelCompiler kc = fast_compiler();
  EXPECT_EQ(kc.compiler(), "/nonexistent/pto-test-cxx");
  const pto::Error e = pto_test::error_of([&] { kc.compile_incore_source(kGoodKernel, "k", PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_KERNEL_COMPILE);
  EXPECT_TRUE(contains(e.what(), "/nonexistent/pto-test-cxx")) << e.what();
  EXPECT_TRUE(contains(e.what(), "CXX")) << e.what();
}

TEST_F(KernelCompilerTest, CompilerDefaultsToCxxThenToC) {
  {
    ScopedEnv cxx("CXX", nullptr);
    EXPECT_EQ(fast_compiler().compiler(), "c++");
  }
  ScopedEnv cxx("CXX", "clang++-17");
  EXPECT_EQ(fast_compiler().compiler(), "clang++-17");
}

TEST_F(KernelCompilerTest, CacheDirFollowsPtoCacheDirThenXdgThenHome) {
  EXPECT_EQ(fast_compiler().cache_dir(), cache_);
  ScopedEnv unset_cache("PTO_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg/cache");
    EXPECT_EQ(fast_compiler().cache_dir(), "/xdg/cache/pto_runtime");
  }
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(fast_compiler().cache_dir(), "/home/someone/.cache/pto_runtime");
}

TEST_F(KernelCompilerTest, MissingSourceFileIsInvalidArgumentNamingThePath) {
  const std::string missing = root_ + "/no_such_kernel.cpp";
  const pto::Error e = pto_test::error_of([&] { fast_compiler().compile_incore(missing, PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), missing)) << e.what();
}

TEST(KernelCompiler, AscendPlatformsAreNotSupportedWithoutCann) {
  for (const char *platform : {"a2a3", "a5"}) {
    const pto::Error e = pto_test::error_of([&] { pto::KernelCompiler kc(platform); });
    EXPECT_EQ(e.code(), PTO_NOT_SUPPORTED) << platform;
    EXPECT_TRUE(contains(e.what(), "ccec")) << e.what();
  }
}

TEST(KernelCompiler, UnknownPlatformIsInvalidArgumentListingKnownOnes) {
  const pto::Error e = pto_test::error_of([] { pto::KernelCompiler kc("a9sim"); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "a9sim")) << e.what();
  EXPECT_TRUE(contains(e.what(), "a2a3sim")) << e.what();
  EXPECT_TRUE(contains(e.what(), "a5sim")) << e.what();
}

TEST(KernelCompiler, SimPlatformsAreAccepted) {
  EXPECT_EQ(pto::KernelCompiler("a2a3sim").platform(), "a2a3sim");
  EXPECT_EQ(pto::KernelCompiler("a5sim").platform(), "a5sim");
}

// Issue: a kernel that #includes a user header was served the binary built from the header's
// old content. The cache now keys on every file the compile read.
TEST_F(KernelCompilerTest, ChangedIncludedHeaderRebuildsAndGivesTheNewResult) {
  ScopedEnv cxx("CXX", counting_compiler().c_str());
  write("proj/step.h", "#define STEP 5\n");
  const std::string src = write("proj/k.cpp",
                                "#include \"pto/kernel.h\"\n#include \"step.h\"\n"
                                "PTO_KERNEL(args) { *pto::tensor<int64_t>(args, 0) = args[1] + STEP; }\n");
  const pto::KernelCompiler kc = fast_compiler();
  const std::string first = kc.compile_incore(src, PTO_CORE_AIV);
  EXPECT_EQ(run_kernel(first, 1), 6);
  EXPECT_EQ(kc.compile_incore(src, PTO_CORE_AIV), first);
  EXPECT_EQ(compiles_logged(), 1);

  write("proj/step.h", "#define STEP 7\n");
  const std::string second = kc.compile_incore(src, PTO_CORE_AIV);
  EXPECT_NE(second, first) << "a changed header must give a new binary, not the cached one";
  EXPECT_EQ(run_kernel(second, 1), 8);
  EXPECT_EQ(compiles_logged(), 2);

  // Back to the first content: the first binary is still right for it, so it is a hit again.
  write("proj/step.h", "#define STEP 5\n");
  EXPECT_EQ(kc.compile_incore(src, PTO_CORE_AIV), first);
  EXPECT_EQ(compiles_logged(), 2);
}

TEST_F(KernelCompilerTest, ChangedHeaderInAnIncludeDirectoryAndNestedIncludesRebuild) {
  // A header reached through -I and through another header, in a directory with a space in its
  // name (the compiler's dependency list escapes it).
  write("my inc/outer.h", "#include \"inner.h\"\n");
  write("my inc/inner.h", "constexpr long kStep = 10;\n");
  pto::CompileOptions options;
  options.opt_level = "-O0";
  options.include_dirs = {root_ + "/my inc"};
  const pto::KernelCompiler kc("a2a3sim", options);
  const std::string src = std::string("#include \"pto/kernel.h\"\n#include <outer.h>\n") +
                          "PTO_KERNEL(args) { *pto::tensor<int64_t>(args, 0) = args[1] + kStep; }\n";
  EXPECT_EQ(run_kernel(kc.compile_incore_source(src, "nested", PTO_CORE_AIV), 1), 11);
  write("my inc/inner.h", "constexpr long kStep = 20;\n");
  EXPECT_EQ(run_kernel(kc.compile_incore_source(src, "nested", PTO_CORE_AIV), 1), 21);
}

TEST_F(KernelCompilerTest, DeletedHeaderIsAMissAndTheCompileReportsIt) {
  write("proj/gone.h", "#define GONE 1\n");
  const std::string src = write(
      "proj/k.cpp", "#include \"pto/kernel.h\"\n#include \"gone.h\"\nPTO_KERNEL(args) { (void)args; }\n");
  const pto::KernelCompiler kc = fast_compiler();
  kc.compile_incore(src, PTO_CORE_AIV);
  fs::remove(fs::path(root_) / "proj/gone.h");
  const pto::Error e = pto_test::error_of([&] { kc.compile_incore(src, PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_KERNEL_COMPILE);
  EXPECT_TRUE(contains(e.what(), "gone.h")) << e.what();
}

TEST_F(KernelCompilerTest, CacheOffAlwaysRunsTheCompiler) {
  ScopedEnv cxx("CXX", counting_compiler().c_str());
  pto::CompileOptions options;
  options.opt_level = "-O0";
  options.cache = false;
  const pto::KernelCompiler off("a2a3sim", options);
  EXPECT_FALSE(off.cache_enabled());
  EXPECT_EQ(run_kernel(off.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV), 1), 2);
  EXPECT_EQ(run_kernel(off.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV), 1), 2);
  EXPECT_EQ(compiles_logged(), 2);
  // What it built is stored: a compiler with the cache on finds it.
  const pto::KernelCompiler on = fast_compiler();
  on.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
  EXPECT_EQ(compiles_logged(), 2);
}

TEST_F(KernelCompilerTest, CacheEnvironmentVariableTurnsReuseOffAndRejectsOtherValues) {
  ScopedEnv cxx("CXX", counting_compiler().c_str());
  const pto::KernelCompiler kc = fast_compiler();
  EXPECT_TRUE(kc.cache_enabled());
  {
    ScopedEnv off("PTO_KERNEL_CACHE", "0");
    EXPECT_FALSE(kc.cache_enabled());
    kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
    kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
    EXPECT_EQ(compiles_logged(), 2);
  }
  {
    ScopedEnv on("PTO_KERNEL_CACHE", "1");
    kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
    EXPECT_EQ(compiles_logged(), 2);
  }
  ScopedEnv bad("PTO_KERNEL_CACHE", "sometimes");
  const pto::Error e =
      pto_test::error_of([&] { kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "PTO_KERNEL_CACHE=sometimes")) << e.what();
}

TEST_F(KernelCompilerTest, ClearCacheRemovesWhatTheCompilerWroteAndNothingElse) {
  ScopedEnv cxx("CXX", counting_compiler().c_str());
  const pto::KernelCompiler kc = fast_compiler();
  EXPECT_EQ(kc.clear_cache(), 0u);  // no directory yet
  kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
  write("cache/nested/notes.txt", "mine\n");
  write("cache/nested/lib-mine.so", "not a cache file\n");
  EXPECT_EQ(kc.clear_cache(), 4u);  // the source copy, the dependency list, the binary, the lock
  EXPECT_EQ(cache_files(".so"), std::vector<std::string>{"lib-mine.so"});
  EXPECT_EQ(cache_files(".txt").size(), 1u);
  kc.compile_incore_source(kGoodKernel, "add_one", PTO_CORE_AIV);
  EXPECT_EQ(compiles_logged(), 2);
}

TEST_F(KernelCompilerTest, KernelCompiledAsOrchestrationIsInvalidArgumentSayingItIsAKernel) {
  const std::string src = write("add_one.cpp", kGoodKernel);
  const pto::Error e =
      pto_test::error_of([&] { fast_compiler().compile_orchestration("host_build_graph", src); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "PTO_ORCHESTRATION(graph, args)")) << e.what();
  EXPECT_TRUE(contains(e.what(), "compute kernel")) << e.what();
  EXPECT_TRUE(contains(e.what(), "compile_incore")) << e.what();
  EXPECT_TRUE(cache_files(".so").empty()) << "a binary without its entry must not enter the cache";
}

TEST_F(KernelCompilerTest, OrchestrationForTheOtherRuntimeOrAsKernelNamesTheRightCall) {
  const pto::KernelCompiler kc = fast_compiler();
  const std::string hbg =
      "#include \"pto/host_graph.h\"\nPTO_ORCHESTRATION(g, a) { (void)a; g.fail(\"x\"); }\n";
  pto::Error e =
      pto_test::error_of([&] { kc.compile_orchestration_source("tensormap_and_ringbuffer", hbg, "o"); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "PTO_DEVICE_ORCHESTRATION(orch)")) << e.what();
  EXPECT_TRUE(contains(e.what(), "runtime=\"host_build_graph\"")) << e.what();
  e = pto_test::error_of([&] { kc.compile_incore_source(hbg, "o", PTO_CORE_AIV); });
  EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(e.what(), "compile_orchestration(\"host_build_graph\"")) << e.what();
  e = pto_test::error_of([&] { kc.compile_incore_source("int unrelated;\n", "nothing", PTO_CORE_AIV); });
  EXPECT_TRUE(contains(e.what(), "define the entry with PTO_KERNEL(args)")) << e.what();
}

TEST(KernelCompiler, EveryRuntimeHasAnOrchestrationEntry) {
  for (const std::string &runtime : pto::RuntimeBuilder::runtimes()) {
    EXPECT_NE(pto::orchestration_entry_of(runtime), nullptr) << runtime;
  }
}

}  // namespace
