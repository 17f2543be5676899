// src/core/graph/arena.h — one aligned allocation made at construction, carved into typed arrays.
//
// The graph core's structures (TensorMap, the orchestrator's per-slot arrays) size everything
// from the run's configuration once and never allocate again: the AICPU program has no STL
// containers and no exceptions, and an allocation in the submit path would cost more than the
// look-up it serves. Use: reserve<T>(n) for each array (offsets only), allocate(what) once,
// then at<T>(offset). Memory is not written: the arrays' types are trivial, and each owner
// initialises what it reads (a new TensorMap writes its bucket array, not its 16k entries).
//
// Blocks outlive their arena: a freed block is kept (ArenaCache, per process) and handed to
// the next arena of the same size, so the structures a run builds reuse the previous run's
// memory. A fresh block of megabytes costs a mapping, a page fault at each first touch of a
// page (the TensorMap's entries are touched as the run goes) and an unmapping at the end:
// measured on a 2-CPU VM, a 5-task run took ~130 us until the allocator's thresholds adapted,
// and pages first touched mid-run showed in the orchestrator's time per task.
#ifndef PTO_CORE_GRAPH_ARENA_H
#define PTO_CORE_GRAPH_ARENA_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <type_traits>

#include "core/check.h"

namespace pto {
namespace graph {

// Freed arena blocks, by size, for the next arena of that size (at most kBlocks blocks and
// kMaxBytes in all; the rest are freed). A spinlock: taken twice per arena, never contended
// for long.
class ArenaCache {
 public:
  static constexpr size_t kAlign = 64;
  static constexpr int kBlocks = 16;
  static constexpr size_t kMaxBytes = size_t{256} << 20;

  // One per program that includes this (the AICPU program, a test): destroyed, with the blocks
  // it keeps, when that program is unloaded or exits, after its last arena is gone.
  static ArenaCache &instance() {
    static ArenaCache cache;
    return cache;
  }

  void *take(size_t bytes) {
    lock();
    void *p = nullptr;
    for (Block &b : blocks_) {
      if (b.ptr != nullptr && b.bytes == bytes) {
        p = b.ptr;
        b.ptr = nullptr;
        held_ -= bytes;
        break;
      }
    }
    unlock();
    return p != nullptr ? p : ::operator new(bytes, std::align_val_t{kAlign}, std::nothrow);
  }

  void give(void *p, size_t bytes) {
    lock();
    for (Block &b : blocks_) {
      if (b.ptr == nullptr && held_ + bytes <= kMaxBytes) {
        b.ptr = p;
        b.bytes = bytes;
        held_ += bytes;
        p = nullptr;
        break;
      }
    }
    unlock();
    if (p != nullptr) ::operator delete(p, std::align_val_t{kAlign});
  }

 private:
  ArenaCache() = default;
  ~ArenaCache() {
    for (Block &b : blocks_) {
      if (b.ptr != nullptr) ::operator delete(b.ptr, std::align_val_t{kAlign});
    }
  }
  void lock() {
    while (busy_.exchange(true, std::memory_order_acquire)) {
    }
  }
  void unlock() { busy_.store(false, std::memory_order_release); }

  struct Block {
    void *ptr = nullptr;
    size_t bytes = 0;
  };
  std::atomic<bool> busy_{false};
  Block blocks_[kBlocks];
  size_t held_ = 0;
};

class Arena {
 public:
  // A cache line: the block and every array start on one.
  static constexpr size_t kAlign = ArenaCache::kAlign;

  Arena() = default;
  ~Arena() {
    if (base_) ArenaCache::instance().give(base_, bytes_ ? bytes_ : 1);
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
    base_ = static_cast<unsigned char *>(ArenaCache::instance().take(bytes_ ? bytes_ : 1));
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
