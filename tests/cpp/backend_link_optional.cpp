// tests/cpp/backend_link_optional.cpp — a program that links only the amd_aie backend sees only amd_aie.
//
// Linked against pto_backend and pto_backend_amd_aie alone (tests/cpp/CMakeLists.txt), not
// pto_worker: a backend library that is not linked is not registered, and nothing else in
// the registry needs it.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pto/backend.h"
#include "pto/error.h"

namespace {

TEST(BackendLinkOptional, OnlyTheLinkedBackendIsRegistered) {
  const std::vector<pto::BackendInfo> rows = pto::backends();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "amd_aie");
  EXPECT_FALSE(rows[0].available);
}

TEST(BackendLinkOptional, AnUnlinkedBackendIsUnknown) {
  try {
    pto::get_backend("cpu_sim");
    FAIL() << "cpu_sim is not linked into this program";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("registered backends: amd_aie"), std::string::npos) << e.what();
  }
}

}  // namespace
