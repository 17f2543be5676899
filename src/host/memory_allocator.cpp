// src/host/memory_allocator.cpp — device allocation tracking (see memory_allocator.h).
#include "host/memory_allocator.h"

namespace pto {

void *MemoryAllocator::allocate(uint64_t bytes) {
  void *p = device_->malloc(bytes);
  if (p) {
    std::lock_guard<std::mutex> lock(mu_);
    live_[reinterpret_cast<uint64_t>(p)] = bytes;
  }
  return p;
}

void MemoryAllocator::free(void *addr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reinterpret_cast<uint64_t>(addr));
  if (it == live_.end()) return;
  live_.erase(it);
  device_->free(addr);
}

bool MemoryAllocator::contains(uint64_t addr, uint64_t bytes, uint64_t *lo, uint64_t *hi) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return false;
  --it;
  if (!(addr >= it->first && addr + bytes <= it->first + it->second && addr + bytes >= addr)) return false;
  if (lo) *lo = it->first;
  if (hi) *hi = it->first + it->second;
  return true;
}

void MemoryAllocator::free_all() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto &kv : live_) device_->free(reinterpret_cast<void *>(kv.first));
  live_.clear();
}

ScopedAllocations::~ScopedAllocations() {
  for (void *p : owned_) alloc_->free(p);
}

void *ScopedAllocations::allocate(uint64_t bytes) {
  void *p = alloc_->allocate(bytes);
  if (p) owned_.push_back(p);
  return p;
}

}  // namespace pto
