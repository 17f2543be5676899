// src/runtime/tensormap_and_ringbuffer/aicpu/heap_alloc.cpp — alloc_tensor: buffers on the heap ring,
// with the waiting and the errors (the ring's arithmetic is heap_ring.h).
#include <algorithm>

#include "back_pressure.h"
#include "core/align.h"
#include "orchestrator.h"

namespace pto {
namespace tmr {

void DeviceOrchestrator::reclaim_heap() {
  heap_.reclaim(live_from());
  h_->heap_tail.store(heap_.tail(), std::memory_order_relaxed);
}

TensorView DeviceOrchestrator::alloc_tensor(pto_dtype dtype, uint32_t ndim, const int64_t *shape) {
  TensorView v;
  if (!ok()) return v;
  const uint32_t esize = pto_dtype_size(dtype);
  if (esize == 0 || ndim == 0 || ndim > static_cast<uint32_t>(kMaxViewDims) || !shape) {
    error(PTO_INVALID_ARGUMENT, "alloc_tensor: needs a concrete dtype and 1..8 dimensions");
    return v;
  }
  int64_t numel = 1;
  for (uint32_t d = 0; d < ndim; ++d) {
    if (shape[d] < 0) {
      error(PTO_INVALID_ARGUMENT, "alloc_tensor: shape[" + std::to_string(d) + "] is " +
                                      std::to_string(shape[d]) + "; extents must be 0 or more");
      return v;
    }
    // The byte size must fit in 63 bits; an overflowing product would wrap to a small buffer.
    if (shape[d] != 0 && numel > INT64_MAX / esize / shape[d]) {
      error(PTO_INVALID_ARGUMENT, "alloc_tensor: shape[" + std::to_string(d) + "] = " +
                                      std::to_string(shape[d]) + " makes the tensor larger than 2^63 bytes");
      return v;
    }
    numel *= shape[d];
  }
  const uint64_t bytes = align_up(std::max<uint64_t>(static_cast<uint64_t>(numel) * esize, 1), 64);
  // Could it ever fit? Only allocations of closed scopes come back; the first one of a still
  // open scope blocks everything after it (the ring frees in order).
  if (!heap_.could_fit(bytes)) {
    error(PTO_RING_CAPACITY,
          "heap ring: alloc_tensor needs " + std::to_string(bytes) + " bytes but heap_bytes is " +
              std::to_string(heap_.size()) + " and the open scopes hold " +
              std::to_string(heap_.top() - heap_.best_tail()) +
              " bytes that cannot be freed before they end; raise ChipCallConfig.heap_bytes or "
              "end scopes sooner");
    return v;
  }
  if (!wait_until(kStallHeap, [&] {
        reclaim_heap();
        return heap_.fits(bytes);
      })) {
    return v;
  }
  const uint64_t offset = heap_.allocate(bytes);
  note_use(kStallHeap, heap_.used());
  h_->heap_top.store(heap_.top(), std::memory_order_relaxed);
  v.buffer = h_->heap_addr + offset;
  v.buffer_bytes = static_cast<uint64_t>(numel) * esize;
  v.dtype = dtype;
  v.ndim = ndim;
  int64_t stride = 1;
  for (uint32_t d = ndim; d-- > 0;) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

}  // namespace tmr
}  // namespace pto
