// tests/cpp/test_backend.cpp — the backend registry and BackendOptions checks (include/pto/backend.h).
#include "pto/backend.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/expect_error.h"

#include "pto/compile_options.h"
#include "pto/error.h"
#include "pto/kernel_compiler.h"
#include "pto/runtime_builder.h"

namespace {

using pto_test::contains;

const pto::BackendInfo *row(const std::vector<pto::BackendInfo> &rows, const std::string &name) {
  for (const pto::BackendInfo &b : rows) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

TEST(Backends, ListsCpuSimAvailableWithTheSimulatedPlatforms) {
  const std::vector<pto::BackendInfo> rows = pto::backends();
  const pto::BackendInfo *sim = row(rows, "cpu_sim");
  ASSERT_NE(sim, nullptr);
  EXPECT_TRUE(sim->available);
  EXPECT_EQ(sim->reason, "");
  EXPECT_EQ(sim->platforms, (std::vector<std::string>{"a2a3sim", "a5sim"}));
}

TEST(Backends, ListsAscendAndAieUnavailableWithTheReason) {
  const std::vector<pto::BackendInfo> rows = pto::backends();
  const pto::BackendInfo *ascend = row(rows, "ascend_npu");
  ASSERT_NE(ascend, nullptr);
  EXPECT_FALSE(ascend->available);
  EXPECT_TRUE(contains(ascend->reason, "CANN")) << ascend->reason;
  EXPECT_EQ(ascend->platforms, (std::vector<std::string>{"a2a3", "a5"}));
  const pto::BackendInfo *aie = row(rows, "amd_aie");
  ASSERT_NE(aie, nullptr);
  EXPECT_FALSE(aie->available);
  EXPECT_TRUE(contains(aie->reason, "amd_aie")) << aie->reason;
  EXPECT_TRUE(aie->platforms.empty());
}

TEST(Backends, AreSortedByName) {
  const std::vector<pto::BackendInfo> rows = pto::backends();
  EXPECT_TRUE(
      std::is_sorted(rows.begin(), rows.end(),
                     [](const pto::BackendInfo &a, const pto::BackendInfo &b) { return a.name < b.name; }));
}

TEST(GetBackend, UnavailableBackendIsNotSupportedEveryTime) {
  for (const char *name : {"ascend_npu", "amd_aie"}) {
    for (int attempt = 0; attempt < 2; ++attempt) {  // the stored error, not a one-off
      const pto::Error e = pto_test::error_of([&] { pto::get_backend(name); });
      EXPECT_EQ(e.code(), PTO_NOT_SUPPORTED) << name;
      EXPECT_TRUE(contains(e.what(), name)) << e.what();
    }
  }
}

TEST(GetBackend, AscendNamesTheMissingToolkit) {
  const pto::Error e = pto_test::error_of([] { pto::get_backend("ascend_npu"); });
  EXPECT_TRUE(contains(e.what(), "CANN toolkit (ASCEND_HOME_PATH / libascendcl) not found at build time"))
      << e.what();
}

TEST(GetBackend, UnknownNameIsInvalidArgumentListingRegisteredOnes) {
  pto_test::expect_error([] { pto::get_backend("tpu"); }, PTO_INVALID_ARGUMENT,
                         {"'tpu'", "cpu_sim", "amd_aie"});
}

TEST(GetBackend, ReturnsTheSameInstanceEveryTime) {
  const pto::Backend &a = pto::get_backend("cpu_sim");
  const pto::Backend &b = pto::get_backend("cpu_sim");
  EXPECT_EQ(&a, &b);
  EXPECT_STREQ(a.name(), "cpu_sim");
  EXPECT_STREQ(a.program_dir(), "sim");
  EXPECT_TRUE(a.host_compiled_kernels());
}

TEST(BackendForPlatform, MapsEachPlatformThroughTheGeometryTable) {
  EXPECT_STREQ(pto::backend_for_platform("a2a3sim").name(), "cpu_sim");
  EXPECT_STREQ(pto::backend_for_platform("a5sim").name(), "cpu_sim");
  EXPECT_EQ(pto_test::error_of([] { pto::backend_for_platform("a2a3"); }).code(), PTO_NOT_SUPPORTED);
  pto_test::expect_error([] { pto::backend_for_platform("a9sim"); }, PTO_INVALID_ARGUMENT, {"a5sim"});
}

// A backend registered at run time, as a library that was linked would register at start-up.
int g_factory_calls = 0;
class FakeBackend final : public pto::Backend {
 public:
  const char *name() const override { return "test_fake"; }
  const char *program_dir() const override { return "fake"; }
  bool host_compiled_kernels() const override { return false; }
};
std::unique_ptr<pto::Backend> make_fake() {
  ++g_factory_calls;
  return std::make_unique<FakeBackend>();
}

TEST(RegisterBackend, RegistersOnceAndBuildsLazilyOnce) {
  pto::register_backend("test_fake", &make_fake);
  EXPECT_EQ(g_factory_calls, 0);  // nothing built at registration
  EXPECT_STREQ(pto::get_backend("test_fake").program_dir(), "fake");
  pto::get_backend("test_fake");
  pto::backends();
  EXPECT_EQ(g_factory_calls, 1);
  const std::vector<pto::BackendInfo> rows = pto::backends();
  const pto::BackendInfo *r = row(rows, "test_fake");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->available);
  EXPECT_TRUE(r->platforms.empty());  // no geometry row names it

  pto_test::expect_error([] { pto::register_backend("test_fake", &make_fake); }, PTO_INVALID_ARGUMENT,
                         {"already registered"});
  EXPECT_EQ(pto_test::error_of([] { pto::register_backend("", &make_fake); }).code(), PTO_INVALID_ARGUMENT);
  EXPECT_EQ(pto_test::error_of([] { pto::register_backend("test_null", nullptr); }).code(),
            PTO_INVALID_ARGUMENT);
}

// --- BackendOptions ---

TEST(BackendOptions, DefaultsPassTheCpuSimCheck) {
  const pto::BackendOptions o;
  EXPECT_EQ(o.target, "cpu_sim");
  pto::get_backend(o.target).check(o);
  EXPECT_EQ(pto::get_backend(o.target).platform_for(o), "a2a3sim");
}

TEST(BackendOptions, EachBadFieldIsNamedInTheError) {
  const pto::Backend &sim = pto::get_backend("cpu_sim");
  struct Case {
    std::function<void(pto::BackendOptions &)> set;
    pto_status code;
    const char *field;
  };
  const Case cases[] = {
      {[](auto &o) { o.opt_level = 4; }, PTO_INVALID_ARGUMENT, "opt_level"},
      {[](auto &o) { o.opt_level = -1; }, PTO_INVALID_ARGUMENT, "opt_level"},
      {[](auto &o) { o.host_threads = -1; }, PTO_INVALID_ARGUMENT, "host_threads"},
      {[](auto &o) { o.host_threads = 4; }, PTO_NOT_SUPPORTED, "host_threads"},
      {[](auto &o) { o.aicpu_threads = -2; }, PTO_INVALID_ARGUMENT, "aicpu_threads"},
      {[](auto &o) { o.aicpu_threads = 5; }, PTO_INVALID_ARGUMENT, "aicpu_threads"},  // a2a3sim has 4
      {[](auto &o) { o.platform = "a2a3"; }, PTO_INVALID_ARGUMENT, "platform"},
      {[](auto &o) { o.platform = "nope"; }, PTO_INVALID_ARGUMENT, "platform"},
      {[](auto &o) { o.target = "amd_aie"; }, PTO_INVALID_ARGUMENT, "target"},
  };
  for (const Case &c : cases) {
    pto::BackendOptions o;
    c.set(o);
    const pto::Error e = pto_test::error_of([&] { sim.check(o); });
    EXPECT_EQ(e.code(), c.code) << c.field << ": " << e.what();
    EXPECT_TRUE(contains(e.what(), std::string("CompileOptions.") + c.field)) << e.what();
  }
}

TEST(BackendOptions, AicpuThreadLimitFollowsThePlatform) {
  pto::BackendOptions o;
  o.platform = "a5sim";  // 5 AICPU threads
  o.aicpu_threads = 5;
  pto::get_backend("cpu_sim").check(o);
  o.platform = "a2a3sim";  // 4
  EXPECT_EQ(pto_test::error_of([&] { pto::get_backend("cpu_sim").check(o); }).code(), PTO_INVALID_ARGUMENT);
}

// --- The registry is what RuntimeBuilder and KernelCompiler consult ---

TEST(RegistryWiring, KernelCompilerRefusesAnUnavailableBackendWithItsReason) {
  pto_test::expect_error([] { pto::KernelCompiler kc("a2a3"); }, PTO_NOT_SUPPORTED,
                         {"ascend_npu", "not found at build time"});
}

TEST(RegistryWiring, RuntimeBuilderRefusesAnUnavailableBackendWithItsReason) {
  const pto::RuntimeBuilder b("a5");
  pto_test::expect_error([&] { b.get_binaries("host_build_graph"); }, PTO_NOT_SUPPORTED,
                         {"not found at build time"});
}

// --- BackendOptions applied (pto/compile_options.h) ---

TEST(BackendOptionsApplied, SetTheKernelCompilerFlagsAndThePlatform) {
  pto::BackendOptions o;
  o.platform = "a5sim";
  o.opt_level = 3;
  o.debug = true;
  pto::CompileOptions base;
  base.defines = {"KEEP=1"};
  const pto::CompileOptions k = pto::kernel_compile_options(o, base);
  EXPECT_EQ(k.opt_level, "-O3");
  EXPECT_TRUE(k.debug_info);
  EXPECT_EQ(k.defines, std::vector<std::string>{"KEEP=1"});
  EXPECT_EQ(pto::make_kernel_compiler(o).platform(), "a5sim");
  o.platform.clear();
  EXPECT_EQ(pto::make_kernel_compiler(o).platform(), "a2a3sim");
}

TEST(BackendOptionsApplied, SetTheRunConfiguration) {
  pto::BackendOptions o;
  o.profiling = true;
  o.aicpu_threads = 3;
  pto::ChipCallConfig base;
  base.block_dim = 8;
  const pto::ChipCallConfig c = pto::make_call_config(o, base);
  EXPECT_TRUE(c.enable_profiling);
  EXPECT_EQ(c.aicpu_thread_num, 3);
  EXPECT_EQ(c.block_dim, 8);
  o.aicpu_threads = 0;  // 0 keeps the base's value
  EXPECT_EQ(pto::make_call_config(o, base).aicpu_thread_num, base.aicpu_thread_num);
}

TEST(BackendOptionsApplied, AnUnavailableTargetIsNotSupported) {
  pto::BackendOptions o;
  o.target = "ascend_npu";
  EXPECT_EQ(pto_test::error_of([&] { pto::make_kernel_compiler(o); }).code(), PTO_NOT_SUPPORTED);
  EXPECT_EQ(pto_test::error_of([&] { pto::make_call_config(o); }).code(), PTO_NOT_SUPPORTED);
  o.target = "bogus";
  EXPECT_EQ(pto_test::error_of([&] { pto::make_call_config(o); }).code(), PTO_INVALID_ARGUMENT);
}

}  // namespace
