// src/runtime/tensormap_and_ringbuffer/aicpu/heap_ring.h — the heap ring: where alloc_tensor buffers go,
// and when their bytes come back.
//
// Private to the orchestrator thread (no atomics); the orchestrator owns the waiting
// (back-pressure) and the errors, this class only the arithmetic. Positions are bytes ever
// allocated (monotonic); a buffer sits at position % size. A buffer that would straddle the end
// starts at the ring's beginning instead, the skipped bytes counted as its padding. Buffers come
// back strictly in allocation order: a buffer is freed once its scope has ended (close_scope
// stamps it with the number of tasks submitted by then) and every one of those tasks retired
// (reclaim(last_task_alive)); the first buffer of a still open scope holds back every later one.
#ifndef PTO_TMR_HEAP_RING_H
#define PTO_TMR_HEAP_RING_H

#include <algorithm>
#include <cstdint>
#include <deque>

#include "core/check.h"

namespace pto {
namespace tmr {

class HeapRing {
 public:
  explicit HeapRing(uint64_t size) : size_(size) {}

  uint64_t size() const { return size_; }
  uint64_t top() const { return top_; }    // position after the newest buffer
  uint64_t tail() const { return tail_; }  // position of the oldest buffer not freed
  uint64_t used() const { return top_ - tail_; }

  // How far a buffer of `bytes` placed now advances the top: its bytes, plus the padding to the
  // ring's start when it would straddle the end.
  uint64_t need(uint64_t bytes) const {
    const uint64_t pos = top_ % size_;
    return (pos + bytes > size_ ? size_ - pos : 0) + bytes;
  }
  // Fits now, without waiting for anything to come back.
  bool fits(uint64_t bytes) const { return top_ + need(bytes) - tail_ <= size_; }
  // The tail once every buffer of an ended scope came back (before the first of an open scope).
  uint64_t best_tail() const {
    uint64_t t = tail_;
    for (const Alloc &a : allocs_) {
      if (a.release < 0) break;
      t = a.end;
    }
    return t;
  }
  // Could ever fit, given that buffers of still open scopes stay: false means waiting is futile.
  bool could_fit(uint64_t bytes) const { return bytes <= size_ && top_ + need(bytes) - best_tail() <= size_; }

  // Places a buffer of `bytes` (fits() must hold) and returns its offset in the ring.
  uint64_t allocate(uint64_t bytes) {
    PTO_CHECK(fits(bytes), "heap ring: allocate() without room (the caller waits for fits())");
    const uint64_t n = need(bytes);
    allocs_.push_back(Alloc{top_, top_ + n, bytes, -1});
    top_ += n;
    PTO_DCHECK(consistent(), "heap ring: buffers are not back to back from tail to top");
    return (top_ - bytes) % size_;
  }
  // Absolute index of the next buffer allocate() places (a scope records it at its start).
  uint64_t next_index() const { return popped_ + allocs_.size(); }
  // The scope whose first buffer was number `first` ended after `release` tasks were submitted:
  // stamps its buffers (and those of scopes nested in it) that are not stamped yet.
  void close_scope(uint64_t first, int64_t release) {
    for (uint64_t i = std::max(first, popped_); i < popped_ + allocs_.size(); ++i) {
      Alloc &a = allocs_[i - popped_];
      if (a.release < 0) a.release = release;
    }
  }
  // Frees, oldest first, the buffers whose scope ended and whose tasks all retired
  // (live_from = last_task_alive); stops at the first that cannot go yet.
  void reclaim(int64_t live_from) {
    while (!allocs_.empty() && allocs_.front().release >= 0 && allocs_.front().release <= live_from) {
      tail_ = allocs_.front().end;
      allocs_.pop_front();
      ++popped_;
    }
    PTO_CHECK(tail_ <= top_ && top_ - tail_ <= size_,
              "heap ring: tail passed top, or more held than the ring");
  }
  // Is there a live buffer at `offset` of at least `bytes`? O(log live buffers): the one
  // position in [tail, tail + size) that lies at `offset` is looked up among the buffers'
  // starts, which grow with allocation order.
  bool holds(uint64_t offset, uint64_t bytes) const {
    if (offset >= size_ || allocs_.empty()) return false;
    uint64_t start = tail_ - tail_ % size_ + offset;
    if (start < tail_) start += size_;
    const auto it = std::lower_bound(allocs_.begin(), allocs_.end(), start,
                                     [](const Alloc &a, uint64_t s) { return a.end - a.bytes < s; });
    return it != allocs_.end() && it->end - it->bytes == start && bytes <= it->bytes;
  }
  // The same answer by looking at every live buffer (validation mode: checks the one above).
  bool holds_scan(uint64_t offset, uint64_t bytes) const {
    for (const Alloc &a : allocs_) {
      if (offset == (a.end - a.bytes) % size_ && bytes <= a.bytes) return true;
    }
    return false;
  }
  size_t live_buffers() const { return allocs_.size(); }

 private:
  struct Alloc {
    uint64_t begin, end;  // positions; begin includes the padding
    uint64_t bytes;       // the buffer itself: [end - bytes, end)
    int64_t release;      // tasks submitted when its scope ended; -1 while the scope is open
  };
  bool consistent() const {
    uint64_t at = tail_;
    for (const Alloc &a : allocs_) {
      if (a.begin != at || a.end - a.begin < a.bytes) return false;
      at = a.end;
    }
    return at == top_ && top_ - tail_ <= size_;
  }

  uint64_t size_;
  uint64_t top_ = 0, tail_ = 0;
  std::deque<Alloc> allocs_;
  uint64_t popped_ = 0;  // absolute index of allocs_.front()
};

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_HEAP_RING_H
