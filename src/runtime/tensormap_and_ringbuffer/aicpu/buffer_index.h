// src/runtime/tensormap_and_ringbuffer/aicpu/buffer_index.h — the run tensors' buffers by identity, for
// validation.
//
// A view names its buffer by address and size (TensorView::buffer, buffer_bytes); submit_task
// checks that it is one the runtime handed out. The run tensors are fixed for the run, so they
// are sorted once and looked up by binary search: O(log tensors) per argument, instead of a
// scan of every run tensor. (alloc_tensor buffers are looked up in the heap ring: HeapRing::holds.)
// Private to the orchestrator thread.
#ifndef PTO_TMR_BUFFER_INDEX_H
#define PTO_TMR_BUFFER_INDEX_H

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "pto/orchestration.h"

namespace pto {
namespace tmr {

class RunBuffers {
 public:
  RunBuffers(const TensorView *tensors, uint32_t n) {
    buffers_.reserve(n);
    for (uint32_t i = 0; i < n; ++i) buffers_.emplace_back(tensors[i].buffer, tensors[i].buffer_bytes);
    std::sort(buffers_.begin(), buffers_.end());
  }
  // Is (buffer, bytes) a whole run tensor? (Two run tensors may share an address.)
  bool contains(uint64_t buffer, uint64_t bytes) const {
    const auto it = std::lower_bound(buffers_.begin(), buffers_.end(), std::make_pair(buffer, bytes));
    return it != buffers_.end() && it->first == buffer && it->second == bytes;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> buffers_;  // (address, bytes), sorted
};

}  // namespace tmr
}  // namespace pto
#endif  // PTO_TMR_BUFFER_INDEX_H
