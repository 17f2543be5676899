/* include/pto_abi/tensor.h — ChipTensor, the tensor descriptor of the descriptor ABI.
 *
 * A kernel written against this ABI (`extern "C" void kernel_entry(__gm__ int64_t *args)`)
 * receives, for its i-th tensor argument, args[i] = the address of a ChipTensor. The layout is
 * fixed (two 64-byte lines, offsets asserted below) because kernels compiled elsewhere read
 * it. A view's first element is at `buffer.addr + start_offset * element size`; element
 * (i0, .., in) is start_offset + sum(ik * strides[k]) elements from buffer.addr. Strides and
 * offsets count elements and strides are > 0.
 *
 * The runtime fills these from the views an orchestration passes (pto::TensorView through
 * either orchestration API); an orchestration written against the reference API
 * (pto_orchestration_api.h) also builds and slices them itself. A view operation that asks
 * for something impossible (a window outside the parent, a reshape of a strided view) cannot
 * throw on the device: it returns a descriptor whose `abi_error` says what went wrong, and
 * submitting a task with it fails the orchestration with that message. */
#ifndef PTO_ABI_TENSOR_H
#define PTO_ABI_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "data_type.h"
#include "pto_task_id.h"

#ifndef __gm__
#define __gm__ /* global-memory qualifier on Ascend; empty on the sim platform */
#endif

/* The allocation a descriptor points into. */
struct PTOBufferHandle {
  uint64_t addr; /* device address of the allocation (bytes) */
  uint64_t size; /* its size in bytes */
};

/* How a task uses a tensor argument; the values equal pto::Access (pto/orchestration.h). */
enum class TensorArgType : int32_t { INPUT = 0, OUTPUT = 1, INOUT = 2, OUTPUT_EXISTING = 3, NO_DEP = 4 };

/* Why a view operation could not make its view (ChipTensor::abi_error). */
enum ChipTensorError : uint8_t {
  CHIP_TENSOR_OK = 0,
  CHIP_TENSOR_VIEW_OUT_OF_RANGE = 1, /* view(): a window past the parent's shape */
  CHIP_TENSOR_RESHAPE_STRIDED = 2,   /* reshape() of a non-contiguous view */
  CHIP_TENSOR_RESHAPE_NUMEL = 3,     /* reshape() to a different element count */
  CHIP_TENSOR_BAD_DIM = 4,           /* a dimension index >= ndims, or ndims outside 1..5 */
  CHIP_TENSOR_SLICE_RANGE = 5,       /* slice(): empty, reversed or past the end, or step 0 */
  CHIP_TENSOR_STRIDE_OVERFLOW = 6,   /* a stride or offset beyond what the fields hold */
  CHIP_TENSOR_NOT_EXPRESSIBLE = 7,   /* the runtime's view has a dtype or rank no descriptor holds */
};

inline const char *chip_tensor_error_text(uint8_t e) {
  switch (e) {
    case CHIP_TENSOR_OK:
      return "no error";
    case CHIP_TENSOR_VIEW_OUT_OF_RANGE:
      return "view(): offset + shape exceeds the parent view's shape in some dimension";
    case CHIP_TENSOR_RESHAPE_STRIDED:
      return "reshape() of a non-contiguous view (copy it into a contiguous tensor first)";
    case CHIP_TENSOR_RESHAPE_NUMEL:
      return "reshape() to a shape with a different number of elements";
    case CHIP_TENSOR_BAD_DIM:
      return "a dimension index outside the view's dimensions, or a rank outside 1..5";
    case CHIP_TENSOR_SLICE_RANGE:
      return "slice(): the range [start, end) is empty or runs past the dimension, or step is 0";
    case CHIP_TENSOR_STRIDE_OVERFLOW:
      return "a stride does not fit the descriptor's 32-bit field";
    case CHIP_TENSOR_NOT_EXPRESSIBLE:
      return "the tensor has a dtype (float64) or a rank (> 5) that a ChipTensor cannot carry";
    default:
      return "unknown descriptor error";
  }
}

struct alignas(64) ChipTensor {
  /* --- line 1: what every consumer reads --- */
  PTOBufferHandle buffer;           /* 0 */
  PTO2TaskId owner_task_id;         /* 16: the task that created the buffer; invalid() for run tensors */
  uint64_t start_offset;            /* 24: elements from buffer.addr to the view's first element */
  int32_t version;                  /* 32: always 0 here (the runtime tracks versions itself) */
  uint32_t ndims;                   /* 36 */
  DataType dtype;                   /* 40 */
  bool manual_dep;                  /* 41: the orchestration asked for no dependency tracking */
  bool is_contiguous;               /* 42: strides are the row-major strides of shapes */
  AddressSpace address_space;       /* 43 */
  uint32_t shapes[MAX_TENSOR_DIMS]; /* 44 */
  /* --- line 2: strides, for views that are not contiguous --- */
  uint64_t extent_elem_cache;        /* 64: 1 + sum((shapes[i] - 1) * strides[i]); 0 if empty */
  uint32_t strides[MAX_TENSOR_DIMS]; /* 72 */
  uint8_t abi_error;                 /* 92: ChipTensorError of the op that made it; 0 = valid */
  uint8_t reserved_[35];

  uint64_t numel() const {
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
    return n;
  }
  /* Elements between the first and one past the last element the view can reach. */
  uint64_t extent_elem() const { return extent_elem_cache; }
  uint64_t nbytes() const { return numel() * get_element_size(dtype); }
  bool is_device_memory() const { return address_space == AddressSpace::DEVICE; }
  /* The buffer's base (not the view's first element: add start_offset for that). */
  template <typename T>
  T *data_as() const {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(buffer.addr));
  }
  /* Element offset from buffer.addr of the element at `indices` (first `n` dimensions). */
  uint64_t compute_flat_offset(const uint32_t indices[], uint32_t n) const {
    uint64_t off = start_offset;
    for (uint32_t d = 0; d < n && d < ndims; ++d) off += uint64_t{indices[d]} * strides[d];
    return off;
  }

  /* A contiguous view of `shapes` at `addr` (offset 0, row-major strides). */
  void init_external(void *addr, uint64_t buffer_bytes, const uint32_t in_shapes[], uint32_t in_ndims,
                     DataType in_dtype, int32_t in_version = 0, bool in_manual_dep = false,
                     AddressSpace space = AddressSpace::HOST) {
    memset(static_cast<void *>(this), 0, sizeof *this);
    buffer.addr = reinterpret_cast<uint64_t>(addr);
    buffer.size = buffer_bytes;
    owner_task_id = PTO2TaskId::invalid();
    version = in_version;
    dtype = in_dtype;
    manual_dep = in_manual_dep;
    address_space = space;
    if (in_ndims < 1 || in_ndims > static_cast<uint32_t>(MAX_TENSOR_DIMS)) {
      ndims = 1;
      abi_error = CHIP_TENSOR_BAD_DIM;
      return;
    }
    ndims = in_ndims;
    for (uint32_t i = 0; i < ndims; ++i) shapes[i] = in_shapes[i];
    set_row_major();
  }
  /* A copy of `other` (trivially copyable; kept for orchestrations that call it). */
  void init_from(const ChipTensor &other) { *this = other; }
  void copy(const ChipTensor &other) { *this = other; }

  /* The window at `offsets` with extent `view_shapes` (one per dimension), same strides. An
   * empty window (a zero extent) is accepted with any offsets: it covers no element. */
  ChipTensor view(const uint32_t view_shapes[], const uint32_t view_offsets[],
                  bool in_manual_dep = false) const {
    ChipTensor r = *this;
    r.manual_dep = in_manual_dep;
    bool empty = false;
    for (uint32_t i = 0; i < ndims; ++i) empty = empty || view_shapes[i] == 0;
    for (uint32_t i = 0; i < ndims; ++i) {
      if (!empty) {
        if (uint64_t{view_offsets[i]} + view_shapes[i] > shapes[i])
          r.abi_error = CHIP_TENSOR_VIEW_OUT_OF_RANGE;
        r.start_offset += uint64_t{view_offsets[i]} * strides[i];
      }
      r.shapes[i] = view_shapes[i];
    }
    r.refresh();
    return r;
  }
  /* Dimensions x and y swapped. */
  ChipTensor transpose(uint32_t x, uint32_t y, bool in_manual_dep = false) const {
    ChipTensor r = *this;
    r.manual_dep = in_manual_dep;
    if (x >= ndims || y >= ndims) {
      r.abi_error = CHIP_TENSOR_BAD_DIM;
      return r;
    }
    swap_dims(r, x, y);
    r.refresh();
    return r;
  }
  /* Dimension i of the result is dimension order[i] of this view. */
  ChipTensor permute(const uint32_t order[], bool in_manual_dep = false) const {
    ChipTensor r = *this;
    r.manual_dep = in_manual_dep;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < ndims; ++i) {
      if (order[i] >= ndims || (seen & (1u << order[i]))) {
        r.abi_error = CHIP_TENSOR_BAD_DIM;
        return r;
      }
      seen |= 1u << order[i];
      r.shapes[i] = shapes[order[i]];
      r.strides[i] = strides[order[i]];
    }
    r.refresh();
    return r;
  }
  /* Elements start, start + step, ... below end of dimension `dim`. */
  ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1,
                   bool in_manual_dep = false) const {
    ChipTensor r = *this;
    r.manual_dep = in_manual_dep;
    if (dim >= ndims) {
      r.abi_error = CHIP_TENSOR_BAD_DIM;
      return r;
    }
    if (step == 0 || end <= start || end > shapes[dim]) {
      r.abi_error = CHIP_TENSOR_SLICE_RANGE;
      return r;
    }
    const uint64_t stride = uint64_t{strides[dim]} * step;
    if (stride > UINT32_MAX) {
      r.abi_error = CHIP_TENSOR_STRIDE_OVERFLOW;
      return r;
    }
    r.start_offset += uint64_t{start} * strides[dim];
    r.shapes[dim] = (end - start + step - 1) / step;
    r.strides[dim] = static_cast<uint32_t>(stride);
    r.refresh();
    return r;
  }
  bool valid_reshape(const uint32_t new_shapes[], uint32_t new_ndims) const {
    uint64_t n = 1;
    for (uint32_t i = 0; i < new_ndims; ++i) n *= new_shapes[i];
    return n == numel();
  }
  bool valid_transpose(uint32_t x, uint32_t y) const { return x < ndims && y < ndims; }
  /* The same elements under another shape; only a contiguous view can be reshaped. */
  ChipTensor reshape(const uint32_t new_shapes[], uint32_t new_ndims, bool in_manual_dep = false) const {
    ChipTensor r = *this;
    r.manual_dep = in_manual_dep;
    if (new_ndims < 1 || new_ndims > static_cast<uint32_t>(MAX_TENSOR_DIMS)) {
      r.abi_error = CHIP_TENSOR_BAD_DIM;
      return r;
    }
    if (!is_contiguous) {
      r.abi_error = CHIP_TENSOR_RESHAPE_STRIDED;
      return r;
    }
    if (!valid_reshape(new_shapes, new_ndims)) {
      r.abi_error = CHIP_TENSOR_RESHAPE_NUMEL;
      return r;
    }
    r.ndims = new_ndims;
    for (uint32_t i = 0; i < MAX_TENSOR_DIMS; ++i) r.shapes[i] = i < new_ndims ? new_shapes[i] : 0;
    r.set_row_major();
    return r;
  }

  /* Row-major strides for shapes, contiguous, extent = numel. */
  void set_row_major() {
    uint64_t s = 1;
    for (uint32_t i = ndims; i-- > 0;) {
      if (s > UINT32_MAX) abi_error = CHIP_TENSOR_STRIDE_OVERFLOW;
      strides[i] = static_cast<uint32_t>(s);
      s *= shapes[i];
    }
    is_contiguous = true;
    extent_elem_cache = s;
  }
  /* is_contiguous and extent_elem_cache from shapes and strides. */
  void refresh() {
    uint64_t expect = 1, extent = 1;
    bool contiguous = true, empty = false;
    for (uint32_t i = ndims; i-- > 0;) {
      if (shapes[i] == 0) empty = true;
      if (shapes[i] != 1 && strides[i] != expect) contiguous = false;
      if (shapes[i] > 0) extent += uint64_t{shapes[i] - 1} * strides[i];
      expect *= shapes[i];
    }
    is_contiguous = contiguous || empty;
    extent_elem_cache = empty ? 0 : extent;
  }

 private:
  static void swap_dims(ChipTensor &r, uint32_t x, uint32_t y) {
    const uint32_t s = r.shapes[x], t = r.strides[x];
    r.shapes[x] = r.shapes[y];
    r.strides[x] = r.strides[y];
    r.shapes[y] = s;
    r.strides[y] = t;
  }
};

static_assert(std::is_trivially_copyable_v<ChipTensor>, "descriptors are copied as bytes");
static_assert(sizeof(ChipTensor) == 128, "a descriptor is two 64-byte lines");
static_assert(offsetof(ChipTensor, buffer) == 0 && offsetof(ChipTensor, owner_task_id) == 16, "layout");
static_assert(offsetof(ChipTensor, start_offset) == 24 && offsetof(ChipTensor, version) == 32, "layout");
static_assert(offsetof(ChipTensor, ndims) == 36 && offsetof(ChipTensor, dtype) == 40, "layout");
static_assert(offsetof(ChipTensor, manual_dep) == 41 && offsetof(ChipTensor, is_contiguous) == 42, "layout");
static_assert(offsetof(ChipTensor, address_space) == 43 && offsetof(ChipTensor, shapes) == 44, "layout");
static_assert(offsetof(ChipTensor, extent_elem_cache) == 64 && offsetof(ChipTensor, strides) == 72, "layout");

/* A contiguous descriptor over `shapes` at `addr` (a run tensor's data, or a buffer the
 * orchestration already knows); its buffer size is numel * element size. */
inline ChipTensor make_tensor_external(void *addr, const uint32_t shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                       int32_t version = 0, AddressSpace space = AddressSpace::HOST) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < ndims && i < static_cast<uint32_t>(MAX_TENSOR_DIMS); ++i) n *= shapes[i];
  ChipTensor t;
  t.init_external(addr, n * get_element_size(dtype), shapes, ndims, dtype, version, manual_dep, space);
  return t;
}

/* A strided descriptor at `addr` (offset 0); its buffer is the view's extent. */
inline ChipTensor make_tensor_strided(void *addr, const uint32_t shapes[], const uint32_t strides[],
                                      uint32_t ndims, DataType dtype = DataType::FLOAT32,
                                      bool manual_dep = false, int32_t version = 0,
                                      AddressSpace space = AddressSpace::HOST) {
  ChipTensor t = make_tensor_external(addr, shapes, ndims, dtype, manual_dep, version, space);
  if (t.abi_error != CHIP_TENSOR_OK) return t;
  for (uint32_t i = 0; i < t.ndims; ++i) t.strides[i] = strides[i];
  t.refresh();
  t.buffer.size = t.extent_elem_cache * get_element_size(dtype);
  return t;
}

#endif /* PTO_ABI_TENSOR_H */
