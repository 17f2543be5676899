// tests/fuzz/fuzz_common.h — what every fuzz target shares: the oracle's way of failing.
//
// A target calls fuzz_check(cond, ...) for what must hold; a failure prints the message and
// aborts, which libFuzzer reports as a crash and saves as a reproducer (docs/fuzzing.md).
#ifndef PTO_TESTS_FUZZ_COMMON_H
#define PTO_TESTS_FUZZ_COMMON_H

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace pto_fuzz {

[[noreturn]] inline void fuzz_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fuzz_failed(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("fuzz oracle: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::abort();
}

}  // namespace pto_fuzz

#define FUZZ_CHECK(cond, ...)                        \
  do {                                               \
    if (!(cond)) pto_fuzz::fuzz_failed(__VA_ARGS__); \
  } while (0)

#endif  // PTO_TESTS_FUZZ_COMMON_H
