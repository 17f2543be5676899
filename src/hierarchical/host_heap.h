// src/hierarchical/host_heap.h — the L3 host heap: one shared mapping every chip process sees.
//
// Mapped MAP_SHARED | MAP_ANONYMOUS when the Worker is built, before any chip process is
// forked, so a buffer the parent allocates later has the same address in every child. Blocks
// are carved first-fit (64-byte aligned) from a free list that coalesces neighbours. A block is
// returned to the free list once its owner let go of it (scope end or Worker::free: `release`)
// AND no task that uses it is unfinished (`users`). One mutex: alloc and release come from the
// orchestrating thread and the Python GC, user counts from submit and the scheduler; none of
// them is on a path that needs more than a few hundred nanoseconds.
#ifndef PTO_HIERARCHICAL_HOST_HEAP_H
#define PTO_HIERARCHICAL_HOST_HEAP_H

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

namespace pto {
namespace l3 {

class HostHeap {
 public:
  struct Block {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t users = 0;     // unfinished tasks using the block (guarded by mu_)
    bool released = false;  // the owner let go (guarded by mu_)
  };
  static constexpr uint64_t kAlign = 64;

  explicit HostHeap(uint64_t bytes);  // throws OUT_OF_MEMORY if the mapping fails
  ~HostHeap();
  HostHeap(const HostHeap &) = delete;
  HostHeap &operator=(const HostHeap &) = delete;

  // A block of at least nbytes, or nullptr if none fits now.
  Block *try_alloc(uint64_t nbytes);
  // Like try_alloc, but waits until deadline_ns (monotonic) for blocks to come back, as long as
  // some released block still has users. Returns nullptr if it still does not fit.
  Block *alloc_wait(uint64_t nbytes, uint64_t deadline_ns);
  // The live block holding [p, p + n), or nullptr when the range is wholly outside the heap.
  // Throws INVALID_ARGUMENT if any of it is inside the heap but not all of it inside one live
  // block (across blocks, in freed space, or past either end of the heap).
  Block *find(const void *p, uint64_t n);
  void add_user(Block *b);
  void drop_user(Block *b);  // frees b if released and this was the last user
  void release(Block *b);    // frees b now or when its last user finishes
  // release() of the block starting at p; INVALID_ARGUMENT if p does not start a live block.
  void release_ptr(const void *p);

  bool contains(const void *p, uint64_t n) const {
    const char *c = static_cast<const char *>(p);
    return c >= base_ && n <= bytes_ && c <= base_ + bytes_ - n;
  }
  void *address(const Block *b) const { return base_ + b->offset; }
  uint64_t capacity() const { return bytes_; }
  uint64_t in_use() const;          // bytes in live blocks
  uint64_t awaiting_users() const;  // bytes released but still used by unfinished tasks
  // Aborts (PTO_CHECK) unless the free list is sorted, non-overlapping and coalesced (no two
  // blocks touch), free and live blocks tile the heap exactly, and in_use() is the live sum.
  // O(blocks): run after every alloc and free in debug builds (PTO_DCHECK), and by tests.
  void check_invariants() const;

 private:
  void free_locked(Block *b);            // caller holds mu_
  void check_invariants_locked() const;  // caller holds mu_
  char *base_ = nullptr;
  uint64_t bytes_ = 0;
  mutable std::mutex mu_;
  std::condition_variable freed_;      // notified whenever a block returns to the free list
  std::map<uint64_t, uint64_t> free_;  // offset -> size, coalesced
  std::map<uint64_t, Block> live_;     // offset -> block (node addresses are stable)
  uint64_t in_use_ = 0;
};

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_HOST_HEAP_H
