// src/core/region.cpp — overlap of strided views (see region.h for the rules and their costs).
#include "core/region.h"

#include <algorithm>
#include <vector>

namespace pto {
namespace {

// Dimensions sorted by stride, outermost first (stable, so equal stride arrays sort alike).
struct Dims {
  int n = 0;
  int64_t shape[Region::kMaxDims];
  int64_t stride[Region::kMaxDims];
};

// r's dimensions (all, or only those that shape the touched bytes: `touching`), sorted by
// descending stride, outermost first (insertion sort: ndim <= 8).
Dims sorted_dims(const Region &r, bool touching) {
  Dims d;
  for (uint32_t i = 0; i < r.ndim; ++i) {
    if (touching && (r.shape[i] <= 1 || r.stride[i] == 0)) continue;
    d.shape[d.n] = r.shape[i];
    d.stride[d.n] = r.stride[i];
    ++d.n;
  }
  for (int i = 1; i < d.n; ++i) {
    for (int j = i; j > 0 && d.stride[j - 1] < d.stride[j]; --j) {
      std::swap(d.stride[j - 1], d.stride[j]);
      std::swap(d.shape[j - 1], d.shape[j]);
    }
  }
  return d;
}

Dims canonical(const Region &r) {
  return sorted_dims(r, false);
}

// The dimensions that shape the touched bytes, sorted by stride, outermost first: those of
// extent 1 (one index) and of stride 0 (the same elements again) are left out.
Dims touching_dims(const Region &r) {
  return sorted_dims(r, true);
}

int64_t numel(const Region &r) {
  int64_t n = 1;
  for (uint32_t i = 0; i < r.ndim; ++i) n *= r.shape[i];
  return n;
}

// Each stride must leave room for the whole extent of the dimension inside it, and the
// innermost stride must hold one element: then element addresses are a mixed-radix number.
bool nested(const Dims &d, uint32_t esize) {
  int64_t inner = esize;
  for (int i = d.n; i-- > 0;) {
    if (d.stride[i] < inner) return false;
    inner = d.stride[i] * d.shape[i];
  }
  return true;
}

// Case 3: same strides and element size. Coordinates of each view's first element in the
// common radix (byte offsets from the buffer's start, which is where the parent tensor's
// index space starts); the views overlap iff the index intervals meet in every dimension and
// the byte offsets left inside the innermost slot meet.
int same_layout_overlap(const Region &a, const Region &b) {
  if (a.esize != b.esize) return -1;
  Dims da = canonical(a), db = canonical(b);
  if (da.n != db.n) return -1;
  for (int i = 0; i < da.n; ++i) {
    if (da.stride[i] != db.stride[i]) return -1;
  }
  if (!nested(da, a.esize)) return -1;
  int64_t oa = a.base, ob = b.base;
  bool disjoint = false;
  for (int i = 0; i < da.n; ++i) {
    const int64_t s = da.stride[i];
    const int64_t ca = oa / s, cb = ob / s;
    oa -= ca * s;
    ob -= cb * s;
    // Does this dimension's index range stay within the parent's radix? If the start plus the
    // extent spills past the next-outer stride, the decomposition says nothing: give up. Every
    // dimension must pass before a disjoint one counts: a view whose rows start mid-row and
    // spill into the next one reaches outer coordinates its own interval does not show.
    if (i > 0) {
      const int64_t room = da.stride[i - 1] / s;
      if (ca + da.shape[i] > room || cb + db.shape[i] > room) return -1;
    }
    disjoint |= ca + da.shape[i] <= cb || cb + db.shape[i] <= ca;  // disjoint in this dim
  }
  if (disjoint) return 0;
  // Remaining byte offsets lie inside one element slot: elements overlap iff they meet.
  return (oa < ob + static_cast<int64_t>(b.esize) && ob < oa + static_cast<int64_t>(a.esize)) ? 1 : 0;
}

// Does some element of the strided region s have a byte in [lo, hi)? -1 when s is not nested.
// Nested, element offsets in increasing order are the mixed-radix numbers in increasing order,
// so the largest offset <= hi - 1 is found digit by digit, outermost first (each digit as large
// as it can be); s meets [lo, hi) iff that element's last byte reaches lo.
int meets_bytes(const Region &s, int64_t lo, int64_t hi) {
  const Dims d = touching_dims(s);
  if (!nested(d, s.esize)) return -1;
  int64_t rest = hi - 1 - s.base;  // room left below hi for the inner digits
  if (rest < 0) return 0;
  int64_t at = s.base;
  for (int i = 0; i < d.n; ++i) {
    int64_t k = rest / d.stride[i];
    if (k > d.shape[i] - 1) k = d.shape[i] - 1;
    at += k * d.stride[i];
    rest -= k * d.stride[i];
  }
  return at + static_cast<int64_t>(s.esize) > lo ? 1 : 0;
}

void element_offsets(const Region &r, std::vector<int64_t> *out) {
  out->clear();
  int64_t idx[Region::kMaxDims] = {};
  const int64_t n = numel(r);
  out->reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = r.base;
    for (uint32_t d = 0; d < r.ndim; ++d) off += idx[d] * r.stride[d];
    out->push_back(off);
    for (uint32_t d = r.ndim; d-- > 0;) {
      if (++idx[d] < r.shape[d]) break;
      idx[d] = 0;
    }
  }
  std::sort(out->begin(), out->end());
}

bool enumerate_overlap(const Region &a, const Region &b) {
  std::vector<int64_t> ea, eb;
  element_offsets(a, &ea);
  element_offsets(b, &eb);
  // Two sorted lists of [off, off + esize) intervals: sweep.
  size_t i = 0, j = 0;
  while (i < ea.size() && j < eb.size()) {
    const int64_t a0 = ea[i], a1 = a0 + a.esize, b0 = eb[j], b1 = b0 + b.esize;
    if (a0 < b1 && b0 < a1) return true;
    if (a1 <= b1)
      ++i;
    else
      ++j;
  }
  return false;
}

}  // namespace

int region_meets_bytes(const Region &s, int64_t lo, int64_t hi) {
  return s.empty() || s.hi <= lo || hi <= s.lo ? 0 : meets_bytes(s, lo, hi);
}

void fill_region(Region *out, uint64_t buffer, int64_t elem_offset, uint32_t esize, uint32_t ndim,
                 const int64_t *shape, const int64_t *elem_strides) {
  Region &r = *out;
  r.buffer = buffer;
  r.esize = esize;
  r.ndim = ndim > static_cast<uint32_t>(Region::kMaxDims) ? Region::kMaxDims : ndim;
  r.base = wrapping_mul(elem_offset, esize);  // wraps only for an empty view (region.h)
  // Innermost first: the span from the first element's first byte to the last one's last, and
  // (touches_every_byte) whether the strides that matter ascend and each starts within the span
  // of the inner dimensions. (Locals: the stores into *out might alias shape and strides.)
  int64_t span = esize, prev = 0;
  bool empty = false, dense = true, ascending = true;
  for (uint32_t d = r.ndim; d-- > 0;) {
    const int64_t n = shape[d], stride = wrapping_mul(elem_strides[d], esize);
    r.shape[d] = n;
    r.stride[d] = stride;
    empty |= n == 0;
    if (n <= 1 || stride == 0) continue;
    ascending &= stride >= prev;
    dense &= stride <= span;
    span = wrapping_add(span, wrapping_mul(n - 1, stride));
    prev = stride;
  }
  r.lo = r.base;
  r.hi = empty ? r.base : r.base + span;
  r.contiguous = empty || ascending ? empty || dense : touches_every_byte(esize, r.ndim, r.shape, r.stride);
}

Region make_region(uint64_t buffer, int64_t elem_offset, uint32_t esize, uint32_t ndim, const int64_t *shape,
                   const int64_t *elem_strides) {
  Region r;
  fill_region(&r, buffer, elem_offset, esize, ndim, shape, elem_strides);
  return r;
}

// Innermost dimension first, the strides of the dimensions that matter (extent > 1, stride > 0)
// usually ascend (row-major): then one pass decides. Sorted ascending, the bytes touched by the
// dimensions so far are [0, span) exactly while each next stride is at most span (its copies of
// that interval then leave no gap); a larger stride leaves the gap [span, stride), which no
// outer dimension fills (its copies start at multiples of a stride at least as large).
bool touches_every_byte(uint32_t esize, uint32_t ndim, const int64_t *shape, const int64_t *stride) {
  int64_t span = esize, prev = 0;
  bool dense = true, ascending = true;
  for (uint32_t d = ndim; d-- > 0;) {
    if (shape[d] <= 1 || stride[d] == 0) continue;
    ascending &= stride[d] >= prev;
    dense &= stride[d] <= span;
    span += (shape[d] - 1) * stride[d];
    prev = stride[d];
  }
  if (ascending) return dense;
  Dims s;  // out of order (a transposed view): sort the dimensions first, ascending strides
  for (uint32_t d = 0; d < ndim; ++d) {
    if (shape[d] <= 1 || stride[d] == 0) continue;
    int i = s.n++;
    for (; i > 0 && s.stride[i - 1] > stride[d]; --i) {
      s.stride[i] = s.stride[i - 1];
      s.shape[i] = s.shape[i - 1];
    }
    s.stride[i] = stride[d];
    s.shape[i] = shape[d];
  }
  span = esize;
  for (int i = 0; i < s.n; ++i) {
    if (s.stride[i] > span) return false;
    span += (s.shape[i] - 1) * s.stride[i];
  }
  return true;
}

bool regions_overlap(const Region &a, const Region &b) {
  if (a.buffer != b.buffer || a.empty() || b.empty()) return false;
  if (a.hi <= b.lo || b.hi <= a.lo) return false;
  if (a.contiguous && b.contiguous) return true;
  if (a.contiguous || b.contiguous) {  // does the strided one have an element in the other's bytes?
    const int meets = a.contiguous ? meets_bytes(b, a.lo, a.hi) : meets_bytes(a, b.lo, b.hi);
    if (meets >= 0) return meets == 1;
  }
  const int same = same_layout_overlap(a, b);
  if (same >= 0) return same == 1;
  if (numel(a) <= kEnumerateLimit && numel(b) <= kEnumerateLimit) return enumerate_overlap(a, b);
  // A contiguous view overlaps a strided one whose byte range it meets only if some element of
  // the strided one falls inside; without enumerating, say yes.
  return true;
}

bool region_covers(const Region &outer, const Region &inner) {
  if (outer.buffer != inner.buffer) return false;
  if (inner.empty()) return true;
  return outer.contiguous && outer.lo <= inner.lo && inner.hi <= outer.hi;
}

}  // namespace pto
