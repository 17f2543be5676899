// tests/common/expect_error.h — the one way a test expects a pto::Error: its code and its words.
#ifndef PTO_TESTS_EXPECT_ERROR_H
#define PTO_TESTS_EXPECT_ERROR_H

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "pto/error.h"

namespace pto_test {

inline bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

// The pto::Error `fn` throws; a test failure (and an error with code OK) when it throws none.
inline pto::Error error_of(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const pto::Error &e) {
    return e;
  }
  ADD_FAILURE() << "expected pto::Error, nothing was thrown";
  return pto::Error(PTO_OK, "");
}

// Expects `fn` to throw pto::Error with `code` and a message containing every fragment; returns it.
inline pto::Error expect_error(const std::function<void()> &fn, pto_status code,
                               const std::vector<std::string> &fragments) {
  const pto::Error e = error_of(fn);
  if (e.code() == PTO_OK) return e;  // error_of has reported it
  EXPECT_EQ(e.code(), code) << "expected " << pto_status_name(code) << ": " << e.what();
  for (const std::string &f : fragments)
    EXPECT_TRUE(contains(e.what(), f)) << "'" << f << "' not in: " << e.what();
  return e;
}

}  // namespace pto_test
#endif  // PTO_TESTS_EXPECT_ERROR_H
