// src/core/graph/arena.h — one aligned allocation made at construction, carved into typed arrays.
//
// The graph core's structures (TensorMap, the orchestrator's per-slot arrays) size everything
// from the run's configuration once and never allocate again: the AICPU program has no STL
// containers and no exceptions, and an allocation in the submit path would cost more than the
// look-up it serves. Use: reserve<T>(n) for each array (offsets only), allocate(what) once,
// then at<T>(offset). Memory is not written: the arrays' types are trivial, and each owner
// initialises what it reads (a new TensorMap writes its bucket array, not its 16k entries).
#ifndef PTO_CORE_GRAPH_ARENA_H
#define PTO_CORE_GRAPH_ARENA_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <type_traits>

#include "core/check.h"

namespace pto {
namespace graph {

class Arena {
 public:
  static constexpr size_t kAlign = 64;  // a cache line: the block and every array start on one

  Arena() = default;
  ~Arena() {
    if (base_) ::operator delete(base_, std::align_val_t{kAlign});
  }
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;

  // Plans n elements of T, cache-line aligned; returns their offset in the block. Before allocate().
  template <typename T>
  size_t reserve(size_t n) {
    static_assert(std::is_trivially_destructible<T>::value, "the arena never runs destructors");
    static_assert(alignof(T) <= kAlign, "an array's alignment is at most a cache line");
    PTO_CHECK(base_ == nullptr, "Arena: reserve after allocate");
    const size_t at = (bytes_ + kAlign - 1) & ~(kAlign - 1);
    bytes_ = at + n * sizeof(T);
    return at;
  }

  // The one allocation. Aborts naming `what` when memory is short: the sizes come from a
  // configuration the host already checked, so a failure here is the device being out of memory.
  void allocate(const char *what) {
    PTO_CHECK(base_ == nullptr, "Arena: allocated twice");
    base_ = static_cast<unsigned char *>(
        ::operator new(bytes_ ? bytes_ : 1, std::align_val_t{kAlign}, std::nothrow));
    if (!base_) {
      std::fprintf(stderr, "%s: cannot allocate %zu bytes\n", what, bytes_);
      PTO_CHECK(base_ != nullptr, "Arena: out of memory");
    }
  }

  // The array planned at `offset` (trivially default constructible types: no constructor runs).
  template <typename T>
  T *at(size_t offset) const {
    static_assert(std::is_trivially_default_constructible<T>::value, "memory is handed out unwritten");
    return reinterpret_cast<T *>(base_ + offset);
  }

  size_t bytes() const { return bytes_; }

 private:
  unsigned char *base_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_ARENA_H
