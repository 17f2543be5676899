// tests/common/rank_checker.h — what each rank of an mpirun test reports: one OK or FAILED line.
//
// The L4 tests run every scenario as a ctest under mpirun; each rank prints "rank R: OK ..." or
// "rank R: FAILED ...", and CMake's FAIL_REGULAR_EXPRESSION fails the test on any FAILED line.
#ifndef PTO_TESTS_RANK_CHECKER_H
#define PTO_TESTS_RANK_CHECKER_H

#include <cstdio>
#include <string>

namespace pto_test {

struct RankChecker {
  int rank = -1;
  std::string failures;
  void expect(bool ok, const std::string &what) {
    if (!ok) failures += (failures.empty() ? "" : "; ") + what;
  }
  // Prints the rank's line (ok_note after OK); 0 if every expectation held, else 1.
  int report(const std::string &ok_note = "") const {
    if (failures.empty())
      std::printf("rank %d: OK %s\n", rank, ok_note.c_str());
    else
      std::printf("rank %d: FAILED %s\n", rank, failures.c_str());
    std::fflush(stdout);
    return failures.empty() ? 0 : 1;
  }
};

inline bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

}  // namespace pto_test
#endif  // PTO_TESTS_RANK_CHECKER_H
