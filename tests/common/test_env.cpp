// tests/common/test_env.cpp — points every C++ test at the build tree's runtimes, a shared kernel cache
// and the examples, unless the environment already says otherwise (linked into each test binary).
#include <cstdlib>

namespace {
struct TestEnv {
  TestEnv() {
    setenv("PTO_RUNTIME_LIB_DIR", PTO_TEST_RUNTIMES_DIR, 0);
    setenv("PTO_CACHE_DIR", PTO_TEST_CACHE_DIR, 0);
    setenv("PTO_EXAMPLES_DIR", PTO_TEST_EXAMPLES_DIR, 0);
    setenv("PTO_LOG_DIR", PTO_TEST_LOG_DIR, 0);  // device logs of failing-kernel tests stay in the build tree
  }
} const kTestEnv;
}  // namespace
