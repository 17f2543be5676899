// src/hierarchical/host_heap.cpp — first-fit blocks in a MAP_SHARED mapping, freed by owner + users.
#include "hierarchical/host_heap.h"

#include <sys/mman.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "core/check.h"
#include "hierarchical/shm_bell.h"  // now_ns
#include "pto/error.h"

namespace pto {
namespace l3 {

HostHeap::HostHeap(uint64_t bytes) {
  if (bytes < kAlign) {  // Worker checks heap_bytes against its documented range first
    throw Error(PTO_INVALID_ARGUMENT, "host heap of " + std::to_string(bytes) + " bytes is too small");
  }
  bytes = (bytes + 4095) & ~uint64_t{4095};
  // MAP_NORESERVE: pages are only backed once touched, so a large default costs nothing.
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw Error(PTO_OUT_OF_MEMORY, "cannot map a host heap of " + std::to_string(bytes) + " bytes: " +
                                       std::strerror(errno) + "; lower heap_bytes (the Worker option)");
  }
  base_ = static_cast<char *>(p);
  bytes_ = bytes;
  free_[0] = bytes;
}

HostHeap::~HostHeap() {
  if (base_) munmap(base_, bytes_);
}

HostHeap::Block *HostHeap::try_alloc(uint64_t nbytes) {
  const uint64_t need = nbytes == 0 ? kAlign : (nbytes + kAlign - 1) & ~(kAlign - 1);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const uint64_t off = it->first, size = it->second;
    free_.erase(it);
    if (size > need) free_[off + need] = size - need;
    Block &b = live_[off];
    b.offset = off;
    b.size = need;
    b.users = 0;
    b.released = false;
    in_use_ += need;
#if PTO_DCHECK_IS_ON
    check_invariants_locked();
#endif
    return &b;
  }
  return nullptr;
}

HostHeap::Block *HostHeap::alloc_wait(uint64_t nbytes, uint64_t deadline_ns) {
  for (;;) {
    if (Block *b = try_alloc(nbytes)) return b;
    std::unique_lock<std::mutex> lock(mu_);
    bool pending = false;  // is anything going to come back?
    for (const auto &kv : live_) pending = pending || (kv.second.released && kv.second.users > 0);
    if (!pending) return nullptr;
    const uint64_t now = platform_now_ns();
    if (now >= deadline_ns) return nullptr;
    freed_.wait_for(lock, std::chrono::nanoseconds(deadline_ns - now));
  }
}

HostHeap::Block *HostHeap::find(const void *p, uint64_t n) {
  // Outside the heap: nullptr. A range that starts outside but reaches in, or starts inside and
  // runs past the heap's end, is refused like any range not inside one live block (it was taken
  // for memory outside the heap once, and its bytes in the heap went untracked).
  const uintptr_t at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(base_);
  if (at < base) {
    if (n <= base - at) return nullptr;
    throw Error(PTO_INVALID_ARGUMENT, "tensor of " + std::to_string(n) + " bytes starts " +
                                          std::to_string(base - at) +
                                          " bytes before the host heap and reaches into it; a tensor lies "
                                          "inside one live host-heap buffer or wholly outside the heap");
  }
  if (at - base >= bytes_) return nullptr;
  const uint64_t off = at - base;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(off);
  if (it != live_.begin()) {
    --it;
    const uint64_t in = off - it->second.offset;  // off >= the block's offset (upper_bound)
    if (in <= it->second.size && n <= it->second.size - in) return &it->second;
  }
  throw Error(PTO_INVALID_ARGUMENT, "tensor at heap offset " + std::to_string(off) + " (" +
                                        std::to_string(n) +
                                        " bytes) is not inside one live host-heap buffer: it was freed, or "
                                        "spans two buffers; allocate one buffer per tensor");
}

void HostHeap::add_user(Block *b) {
  std::lock_guard<std::mutex> lock(mu_);
  ++b->users;
}

void HostHeap::drop_user(Block *b) {
  std::lock_guard<std::mutex> lock(mu_);
  PTO_CHECK(b->users > 0, "HostHeap: drop_user without a matching add_user");
  if (--b->users == 0 && b->released) free_locked(b);
}

void HostHeap::release(Block *b) {
  std::lock_guard<std::mutex> lock(mu_);
  b->released = true;
  if (b->users == 0) free_locked(b);
}

void HostHeap::release_ptr(const void *p) {
  const char *c = static_cast<const char *>(p);
  if (c < base_ || c >= base_ + bytes_) {
    throw Error(PTO_INVALID_ARGUMENT, "Worker.free: the pointer is not in this worker's host heap");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(static_cast<uint64_t>(c - base_));
  if (it == live_.end() || it->second.released) {
    throw Error(PTO_INVALID_ARGUMENT,
                "Worker.free: the pointer does not start a live host-heap buffer (freed twice, or not "
                "the address alloc returned)");
  }
  it->second.released = true;
  if (it->second.users == 0) free_locked(&it->second);
}

void HostHeap::free_locked(Block *b) {
  uint64_t off = b->offset, size = b->size;
  PTO_CHECK(in_use_ >= size, "HostHeap: freeing more bytes than are in use");
  in_use_ -= size;
  live_.erase(off);
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += size;
      size = 0;  // merged
    }
  }
  if (size != 0) free_[off] = size;
#if PTO_DCHECK_IS_ON
  check_invariants_locked();
#endif
  freed_.notify_all();
}

void HostHeap::check_invariants() const {
  std::lock_guard<std::mutex> lock(mu_);
  check_invariants_locked();
}

void HostHeap::check_invariants_locked() const {
  // Walk free and live blocks together in offset order: they must tile [0, bytes_).
  uint64_t at = 0, live_bytes = 0;
  bool prev_free = false;
  auto f = free_.begin();
  auto l = live_.begin();
  while (f != free_.end() || l != live_.end()) {
    const bool take_free = l == live_.end() || (f != free_.end() && f->first < l->first);
    const uint64_t off = take_free ? f->first : l->first;
    const uint64_t size = take_free ? f->second : l->second.size;
    PTO_CHECK(off == at, "HostHeap: a gap or an overlap between blocks");
    PTO_CHECK(size > 0 && size % kAlign == 0 && off % kAlign == 0, "HostHeap: block not 64-byte aligned");
    if (take_free) {
      PTO_CHECK(!prev_free, "HostHeap: two free blocks touch (not coalesced)");
      ++f;
    } else {
      PTO_CHECK(l->second.offset == off, "HostHeap: live block keyed under the wrong offset");
      live_bytes += size;
      ++l;
    }
    prev_free = take_free;
    at = off + size;
  }
  PTO_CHECK(at == bytes_, "HostHeap: blocks do not reach the end of the heap");
  PTO_CHECK(live_bytes == in_use_, "HostHeap: in_use differs from the live blocks");
}

uint64_t HostHeap::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

uint64_t HostHeap::awaiting_users() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto &kv : live_)
    if (kv.second.released && kv.second.users > 0) n += kv.second.size;
  return n;
}

}  // namespace l3
}  // namespace pto
