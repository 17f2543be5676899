"""tests/python/orch_snippets.py — C++ shared by the tests' orchestration and kernel sources.

``ADD_KERNEL`` is a descriptor-ABI kernel (no PTO-ISA): out = a + b over out's elements; SPMD
blocks may run it (each computes the whole tensor, the same values).

``SET_BLOCKS`` is the reference's portable way to set a task's block count: its launch spec has
``set_core_num`` in a5's tensormap_and_ringbuffer and ``set_block_num`` everywhere else, and an
orchestration picks whichever exists by SFINAE. Used here, it also checks that each platform
shows exactly one of the two (both would make the call ambiguous)."""

SET_BLOCKS = r"""
template <class S>
static auto set_blocks(S &s, int16_t n) -> decltype(s.set_block_num(n), void()) {
  s.set_block_num(n);
}
template <class S>
static auto set_blocks(S &s, int16_t n) -> decltype(s.set_core_num(n), void()) {
  s.set_core_num(n);
}
"""

ADD_KERNEL = r"""
#include "tensor.h"
#include "pto/kernel.h"
extern "C" PTO_EXPORT void kernel_entry(__gm__ int64_t *args) {
  const ChipTensor *a = reinterpret_cast<const ChipTensor *>(args[0]);
  const ChipTensor *b = reinterpret_cast<const ChipTensor *>(args[1]);
  const ChipTensor *o = reinterpret_cast<const ChipTensor *>(args[2]);
  const float *x = reinterpret_cast<const float *>(a->buffer.addr) + a->start_offset;
  const float *y = reinterpret_cast<const float *>(b->buffer.addr) + b->start_offset;
  float *z = reinterpret_cast<float *>(o->buffer.addr) + o->start_offset;
  for (uint64_t i = 0; i < o->numel(); ++i) z[i] = x[i] + y[i];
}
"""
