// src/core/region.h — the bytes a strided tensor view touches, and whether two views overlap.
//
// Used by the TensorMap to decide which earlier tasks a new task must wait for. The test is
// exact where that is cheap and conservative (reports an overlap) where it is not:
//   1. disjoint byte ranges          -> no overlap (exact)
//   2. both contiguous               -> overlap (exact)
//      one contiguous                -> overlap iff the other (nested, see 3) has an element
//                                       in its bytes: the largest element below its end,
//                                       digit by digit (exact); not nested: 3 to 5
//   3. same element size and strides, both "nested" (each stride holds the extent of the
//      dimensions inside it): decompose offsets into coordinates, overlap iff every
//      dimension's index intervals meet (exact)
//   4. both small (<= kEnumerateLimit elements): enumerate and compare (exact)
//   5. otherwise                     -> overlap (conservative)
#ifndef PTO_CORE_REGION_H
#define PTO_CORE_REGION_H

#include <cstdint>

namespace pto {

struct Region {
  static constexpr int kMaxDims = 8;
  uint64_t buffer = 0;     // identity of the buffer (its device address)
  int64_t base = 0;        // byte offset of the first element in the buffer
  int64_t lo = 0, hi = 0;  // touched bytes: [lo, hi); empty when lo == hi
  uint32_t esize = 1;
  uint32_t ndim = 0;
  // Only the first ndim are set (make_region); left uninitialized so a pool of regions
  // costs nothing to create.
  int64_t shape[kMaxDims];
  int64_t stride[kMaxDims];  // in bytes, all >= 0
  bool contiguous = false;   // the touched bytes are exactly [lo, hi) (exact: touches_every_byte)

  bool empty() const { return lo == hi; }
};

constexpr int64_t kEnumerateLimit = 4096;

// a * b and a + b wrapping as unsigned arithmetic does. A region's byte offsets come from a
// view's, which validation bounds for every view with elements; an empty view (an extent 0)
// may carry any offset and strides (nothing is touched), and its products may wrap: its region
// is empty whatever they come to, but a signed overflow would be undefined behaviour.
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Builds a region; element strides are converted to bytes. Shapes and strides must be >= 0.
// fill_region writes it into *out (the caller's own object: no copy of ~180 bytes).
void fill_region(Region *out, uint64_t buffer, int64_t elem_offset, uint32_t esize, uint32_t ndim,
                 const int64_t *shape, const int64_t *elem_strides);
Region make_region(uint64_t buffer, int64_t elem_offset, uint32_t esize, uint32_t ndim, const int64_t *shape,
                   const int64_t *elem_strides);

// Do the elements (esize bytes each, strides in bytes, shapes >= 0) touch every byte from the
// first to the last? Exact: dimensions of extent 1 or stride 0 are ignored (they add no byte),
// the others sorted by stride must each start within the bytes the inner ones span. One pass
// for strides that ascend from the innermost dimension (row-major views), a sort otherwise.
bool touches_every_byte(uint32_t esize, uint32_t ndim, const int64_t *shape, const int64_t *stride);

// Does some element of the strided region s have a byte in [lo, hi)? 1 or 0 (exact), or -1 when
// that is not cheap to tell (s's dimensions are not nested; regions_overlap then decides).
int region_meets_bytes(const Region &s, int64_t lo, int64_t hi);

// May report true for views that do not share a byte (see the header comment), never false for
// views that do.
bool regions_overlap(const Region &a, const Region &b);

// True only if every byte `inner` touches is touched by `outer` (exact for a contiguous outer).
bool region_covers(const Region &outer, const Region &inner);

}  // namespace pto
#endif  // PTO_CORE_REGION_H
