// tests/cpp/test_runtime_builder.cpp — RuntimeBuilder: name lists, lib root and binary lookup.
#include "pto/runtime_builder.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/expect_error.h"

#include "common/scoped_env.h"
#include "common/scratch_dir.h"
#include "pto/error.h"

namespace {

using pto_test::ScopedEnv;

using pto_test::contains;

bool listed(const std::vector<std::string> &names, const std::string &name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Points PTO_RUNTIME_LIB_DIR at a fresh, empty directory for the test.
class RuntimeBuilderTest : public ::testing::Test {
 protected:
  // An empty file is enough: get_binaries checks presence, the loader checks content.
  void touch(const std::string &relative) { dir_.write(relative, ""); }

  pto_test::ScratchDir dir_{"pto_runtime_builder_test"};
  const std::string root_ = dir_.path();
  ScopedEnv lib_env_{"PTO_RUNTIME_LIB_DIR", root_.c_str()};
};

TEST(RuntimeBuilder, PlatformsListsEveryGeometryRow) {
  const std::vector<std::string> names = pto::RuntimeBuilder::platforms();
  for (const char *name : {"a2a3sim", "a5sim", "a2a3", "a5"}) {
    EXPECT_TRUE(listed(names, name)) << name;
  }
}

TEST(RuntimeBuilder, RuntimesListsHostBuildGraph) {
  EXPECT_TRUE(listed(pto::RuntimeBuilder::runtimes(), "host_build_graph"));
}

TEST(RuntimeBuilder, UnknownPlatformIsInvalidArgumentListingValidNames) {
  pto_test::expect_error([] { pto::RuntimeBuilder b("a9sim"); }, PTO_INVALID_ARGUMENT, {"a9sim", "a2a3sim"});
}

TEST_F(RuntimeBuilderTest, UnknownRuntimeIsInvalidArgumentListingValidNames) {
  const pto::RuntimeBuilder b("a2a3sim");
  pto_test::expect_error([&] { b.get_binaries("no_such_runtime"); }, PTO_INVALID_ARGUMENT,
                         {"no_such_runtime", "host_build_graph"});
}

TEST_F(RuntimeBuilderTest, AscendPlatformsAreNotSupported) {
  for (const char *platform : {"a2a3", "a5"}) {
    const pto::RuntimeBuilder b(platform);
    const pto::Error e = pto_test::error_of([&] { b.get_binaries("host_build_graph"); });
    EXPECT_EQ(e.code(), PTO_NOT_SUPPORTED) << platform;
    EXPECT_TRUE(contains(e.what(), "CANN")) << e.what();
  }
}

TEST_F(RuntimeBuilderTest, LibRootFollowsPtoRuntimeLibDir) {
  EXPECT_EQ(pto::RuntimeBuilder::lib_root(), root_);
}

TEST_F(RuntimeBuilderTest, MissingBinariesAreLoadFailedNamingTheFileAndTheFix) {
  const pto::RuntimeBuilder b("a2a3sim");
  const pto::Error e = pto_test::error_of([&] { b.get_binaries("host_build_graph"); });
  EXPECT_EQ(e.code(), PTO_LOAD_FAILED);
  const std::string what = e.what();
  EXPECT_TRUE(contains(what, root_ + "/sim/host_build_graph/libhost.so")) << what;
  EXPECT_TRUE(contains(what, "pip install .")) << what;
  EXPECT_TRUE(contains(what, "PTO_RUNTIME_LIB_DIR")) << what;
}

TEST_F(RuntimeBuilderTest, OnlyTheMissingBinaryIsNamed) {
  touch("sim/host_build_graph/libhost.so");
  touch("sim/host_build_graph/libaicpu.so");
  const pto::Error e =
      pto_test::error_of([] { pto::RuntimeBuilder("a5sim").get_binaries("host_build_graph"); });
  EXPECT_EQ(e.code(), PTO_LOAD_FAILED);
  EXPECT_TRUE(contains(e.what(), "libaicore.so")) << e.what();
  EXPECT_FALSE(contains(e.what(), "libhost.so")) << e.what();
  EXPECT_FALSE(contains(e.what(), "libaicpu.so")) << e.what();
}

TEST_F(RuntimeBuilderTest, PresentBinariesAreFoundUnderBackendAndRuntime) {
  for (const char *file : {"libhost.so", "libaicpu.so", "libaicore.so"}) {
    touch(std::string("sim/host_build_graph/") + file);
  }
  const pto::RuntimeBinaries bins = pto::RuntimeBuilder("a2a3sim").get_binaries("host_build_graph");
  const std::string dir = root_ + "/sim/host_build_graph/";
  EXPECT_EQ(bins.platform, "a2a3sim");
  EXPECT_EQ(bins.runtime, "host_build_graph");
  EXPECT_EQ(bins.host_path, dir + "libhost.so");
  EXPECT_EQ(bins.aicpu_path, dir + "libaicpu.so");
  EXPECT_EQ(bins.aicore_path, dir + "libaicore.so");
}

TEST(RuntimeBuilder, LibRootFallsBackToBuildTreeWhenUnset) {
  ScopedEnv unset("PTO_RUNTIME_LIB_DIR", nullptr);
  // The test binary has no runtimes/ beside it, so the compile-time build directory is used
  // (the build stages it as <build>/stage/runtimes).
  const std::string root = pto::RuntimeBuilder::lib_root();
#ifdef PTO_BUILD_RUNTIMES_DIR
  EXPECT_EQ(root, PTO_BUILD_RUNTIMES_DIR);
#else
  EXPECT_FALSE(root.empty());
#endif
}

}  // namespace
