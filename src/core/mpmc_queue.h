// src/core/mpmc_queue.h — bounded multi-producer multi-consumer queue over caller-provided cells.
//
// Dmitry Vyukov's bounded MPMC queue ("Bounded MPMC queue", 1024cores.net, 2010): each cell
// carries a sequence number that says whether it is free for the producer of ticket t
// (seq == t) or full for the consumer of ticket t (seq == t + 1). One CAS per operation, no
// locks, no allocation. The cells live wherever the caller puts them (device memory), so the
// queue is a view: `init` lays the cells out, the class itself holds only positions.
#ifndef PTO_CORE_MPMC_QUEUE_H
#define PTO_CORE_MPMC_QUEUE_H

#include <atomic>
#include <cstdint>

#include "core/handshake.h"  // kCacheLine

namespace pto {

struct MpmcCell {
  std::atomic<uint64_t> seq;
  uint64_t value;
};

class MpmcQueue {
 public:
  // Lays out `capacity` cells (a power of two) holding initial[0..n) in order, n <= capacity.
  // Run on the memory image before it is copied to the device.
  static void format(MpmcCell *cells, uint64_t capacity, const uint64_t *initial, uint64_t n) {
    for (uint64_t i = 0; i < capacity; ++i) {
      const bool full = i < n;
      cells[i].seq.store(full ? i + 1 : i, std::memory_order_relaxed);
      cells[i].value = full ? initial[i] : 0;
    }
  }
  // Points the queue at cells laid out by format() with n items (device addresses).
  void attach(MpmcCell *cells, uint64_t capacity, uint64_t n) {
    cells_ = cells;
    mask_ = capacity - 1;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(n, std::memory_order_relaxed);
  }

  // Points the queue at cells left empty at position `pos` by an earlier user of the same
  // cells (head == tail == pos when it stopped): nothing to lay out again.
  void attach_at(MpmcCell *cells, uint64_t capacity, uint64_t pos) {
    cells_ = cells;
    mask_ = capacity - 1;
    head_.store(pos, std::memory_order_relaxed);
    tail_.store(pos, std::memory_order_relaxed);
  }
  // Where the queue stands (read when nobody pushes or pops any more).
  uint64_t head() const { return head_.load(std::memory_order_relaxed); }
  uint64_t tail() const { return tail_.load(std::memory_order_relaxed); }

  bool try_push(uint64_t value) {
    uint64_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      MpmcCell &c = cells_[pos & mask_];
      const uint64_t seq = c.seq.load(std::memory_order_acquire);
      const int64_t dif = static_cast<int64_t>(seq) - static_cast<int64_t>(pos);
      if (dif == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = value;
          c.seq.store(pos + 1, std::memory_order_release);  // publishes value to the consumer
          return true;
        }
      } else if (dif < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Pushes values[0..n) in order with one CAS on the tail (n <= capacity); false, and nothing
  // pushed, when fewer than n cells are free. For a producer that has several items at once:
  // the tail's line and the cells' lines move once per batch instead of once per item.
  bool try_push_many(const uint64_t *values, uint64_t n) {
    if (n == 0) return true;
    uint64_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      // Every cell of [pos, pos + n) must be free for this lap: the last one freed is enough
      // only if all before it are too, so each is checked (n is small).
      int64_t dif = 0;
      for (uint64_t k = 0; k < n && dif == 0; ++k) {
        const uint64_t seq = cells_[(pos + k) & mask_].seq.load(std::memory_order_acquire);
        dif = static_cast<int64_t>(seq) - static_cast<int64_t>(pos + k);
      }
      if (dif == 0) {
        if (tail_.compare_exchange_weak(pos, pos + n, std::memory_order_relaxed)) {
          for (uint64_t k = 0; k < n; ++k) {
            MpmcCell &c = cells_[(pos + k) & mask_];
            c.value = values[k];
            c.seq.store(pos + k + 1, std::memory_order_release);  // publishes value k
          }
          return true;
        }
      } else if (dif < 0) {
        return false;  // not enough free cells
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  bool try_pop(uint64_t *value) {
    uint64_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      MpmcCell &c = cells_[pos & mask_];
      const uint64_t seq = c.seq.load(std::memory_order_acquire);
      const int64_t dif = static_cast<int64_t>(seq) - static_cast<int64_t>(pos + 1);
      if (dif == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          *value = c.value;
          c.seq.store(pos + mask_ + 1, std::memory_order_release);  // frees the cell
          return true;
        }
      } else if (dif < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // A hint only: may be stale by the time the caller acts on it.
  bool probably_empty() const {
    return head_.load(std::memory_order_relaxed) == tail_.load(std::memory_order_relaxed);
  }
  // A hint too: the tasks claimed by pushers and not yet claimed by poppers. head is read first
  // and tail never falls behind it, so the difference cannot wrap; a push or pop between the
  // two loads makes it at most one of them off. A push still writing its cell already counts.
  uint64_t size_hint() const {
    const uint64_t h = head_.load(std::memory_order_relaxed);
    const uint64_t t = tail_.load(std::memory_order_relaxed);
    return t > h ? t - h : 0;
  }

 private:
  MpmcCell *cells_ = nullptr;
  uint64_t mask_ = 0;
  alignas(kCacheLine) std::atomic<uint64_t> head_{0};  // writers: consumers
  alignas(kCacheLine) std::atomic<uint64_t> tail_{0};  // writers: producers
};

}  // namespace pto
#endif  // PTO_CORE_MPMC_QUEUE_H
