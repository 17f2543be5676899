// src/core/check.h — invariant checks in two levels (as Highway's HWY_ASSERT / HWY_DASSERT).
//
//   PTO_CHECK(cond, msg)   always on. For cheap checks (a compare or two) off the hot paths:
//                          a broken invariant there would corrupt state silently otherwise.
//   PTO_DCHECK(cond, msg)  on in debug builds (!NDEBUG) or with PTO_DEBUG_CHECKS defined (the
//                          white-box tests define it for the structures they compile in), off
//                          in the dev/release presets. For expensive checks (walking a list)
//                          and for checks on hot paths. `cond` is not evaluated when off.
//
// A failed check prints "file:line: check failed: cond: msg" to stderr and aborts: these are
// bugs in the runtime, not bad input (bad input gets a pto::Error with a code). `msg` is a
// string literal. No OS calls beyond stdio, so the core stays portable.
#ifndef PTO_CORE_CHECK_H
#define PTO_CORE_CHECK_H

#include <cstdio>
#include <cstdlib>

namespace pto {
namespace detail {

[[noreturn]] inline void check_failed(const char *file, int line, const char *cond, const char *msg) {
  std::fprintf(stderr, "%s:%d: check failed: %s: %s\n", file, line, cond, msg);
  std::fflush(stderr);
  std::abort();
}

}  // namespace detail
}  // namespace pto

#define PTO_CHECK(cond, msg)                                                                       \
  do {                                                                                             \
    if (__builtin_expect(!(cond), 0)) ::pto::detail::check_failed(__FILE__, __LINE__, #cond, msg); \
  } while (0)

#if !defined(NDEBUG) || defined(PTO_DEBUG_CHECKS)
#define PTO_DCHECK_IS_ON 1
#define PTO_DCHECK(cond, msg) PTO_CHECK(cond, msg)
#else
#define PTO_DCHECK_IS_ON 0
// Still compiled (names stay checked), never evaluated.
#define PTO_DCHECK(cond, msg) \
  do {                        \
    (void)sizeof(!(cond));    \
    (void)sizeof(msg);        \
  } while (0)
#endif

#endif  // PTO_CORE_CHECK_H
