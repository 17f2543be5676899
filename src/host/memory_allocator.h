// src/host/memory_allocator.h — tracks every device allocation of a context; frees leftovers at finalize.
#ifndef PTO_HOST_MEMORY_ALLOCATOR_H
#define PTO_HOST_MEMORY_ALLOCATOR_H

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "pto_platform/device.h"

namespace pto {

class MemoryAllocator {
 public:
  explicit MemoryAllocator(Device *device) : device_(device) {}
  ~MemoryAllocator() { free_all(); }
  MemoryAllocator(const MemoryAllocator &) = delete;
  MemoryAllocator &operator=(const MemoryAllocator &) = delete;

  void *allocate(uint64_t bytes);  // nullptr when the device is out of memory
  void free(void *addr);           // ignores addresses it did not hand out
  // True when [addr, addr + bytes) lies inside one live allocation; then *lo, *hi (if given)
  // are that allocation's bounds.
  bool contains(uint64_t addr, uint64_t bytes, uint64_t *lo = nullptr, uint64_t *hi = nullptr) const;
  void free_all();

 private:
  Device *device_;
  mutable std::mutex mu_;
  std::map<uint64_t, uint64_t> live_;  // address -> size
};

// Frees, at scope exit, what a run allocated (also on every error path).
class ScopedAllocations {
 public:
  explicit ScopedAllocations(MemoryAllocator *a) : alloc_(a) {}
  ~ScopedAllocations();
  ScopedAllocations(const ScopedAllocations &) = delete;
  ScopedAllocations &operator=(const ScopedAllocations &) = delete;
  void *allocate(uint64_t bytes);
  // Forgets the allocations without freeing them (device still using them; see DEVICE_BROKEN).
  void leak() { owned_.clear(); }

 private:
  MemoryAllocator *alloc_;
  std::vector<void *> owned_;
};

}  // namespace pto
#endif  // PTO_HOST_MEMORY_ALLOCATOR_H
