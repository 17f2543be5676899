// include/pto/dispatch_predicate.h — a task's dispatch predicate (Launch::predicate,
// pto/orchestration.h), evaluated by the schedulers when the task is ready.
#ifndef PTO_DISPATCH_PREDICATE_H
#define PTO_DISPATCH_PREDICATE_H

#include <stdint.h>
#include <string.h>

namespace pto {

// A dispatch predicate: when the task is ready, the element at `addr` (elem_size bytes: 1, 2, 4
// or 8, sign-extended) is compared with `target`; false retires the task without running it,
// as if it had run, and its consumers are released. op NONE: always run. The element's
// producer must be a producer of the task, so the value is final when it is read.
enum class PredicateOp : uint8_t { NONE = 0, EQ, NE, GT, LT, GE, LE };

struct DispatchPredicate {
  uint64_t addr = 0;
  int64_t target = 0;
  uint8_t elem_size = 0;
  PredicateOp op = PredicateOp::NONE;

  bool pass() const {
    if (op == PredicateOp::NONE) return true;
    int64_t v = 0;
    memcpy(&v, reinterpret_cast<const void *>(static_cast<uintptr_t>(addr)), elem_size);
    if (elem_size < 8) {
      const unsigned shift = 64u - 8u * elem_size;
      v = static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
    }
    switch (op) {
      case PredicateOp::EQ: return v == target;
      case PredicateOp::NE: return v != target;
      case PredicateOp::GT: return v > target;
      case PredicateOp::LT: return v < target;
      case PredicateOp::GE: return v >= target;
      case PredicateOp::LE: return v <= target;
      default: return true;
    }
  }
};

}  // namespace pto
#endif  // PTO_DISPATCH_PREDICATE_H
