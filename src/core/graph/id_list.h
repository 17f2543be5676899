// src/core/graph/id_list.h — fixed-capacity lists over caller-provided storage (task ids, traced edges).
//
// What the graph core hands results back in instead of std::vector: the storage comes from the
// owner's Arena (or a test's array) and the capacity never grows. push_back on a full list
// stores nothing and returns false, and the list remembers it (overflowed()), so a caller that
// sized the list from a bound it can prove checks once, not per element; nothing throws.
#ifndef PTO_CORE_GRAPH_ID_LIST_H
#define PTO_CORE_GRAPH_ID_LIST_H

#include <cstdint>
#include <type_traits>

namespace pto {
namespace graph {

template <typename T>
class FixedList {
  static_assert(std::is_trivially_copyable<T>::value, "elements are plain data");

 public:
  FixedList() = default;
  FixedList(T *storage, uint32_t capacity) : data_(storage), capacity_(storage ? capacity : 0) {}

  bool push_back(const T &v) {
    if (__builtin_expect(size_ == capacity_, 0)) {
      overflowed_ = true;
      return false;
    }
    data_[size_++] = v;
    return true;
  }
  // Shrinks (or grows up to capacity, leaving the new elements unwritten). False, and the size
  // unchanged, beyond capacity.
  bool resize(uint32_t n) {
    if (n > capacity_) {
      overflowed_ = true;
      return false;
    }
    size_ = n;
    return true;
  }
  void clear() {
    size_ = 0;
    overflowed_ = false;
  }

  uint32_t size() const { return size_; }
  uint32_t capacity() const { return capacity_; }
  uint32_t room() const { return capacity_ - size_; }
  bool empty() const { return size_ == 0; }
  // A push_back or resize was refused since the last clear().
  bool overflowed() const { return overflowed_; }

  T &operator[](uint32_t i) { return data_[i]; }
  const T &operator[](uint32_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }

 private:
  T *data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
  bool overflowed_ = false;
};

// Task ids: the producers a look-up found.
using IdList = FixedList<int64_t>;

// A producer and how the new task depends on it (pto::TraceEdgeKind, core/trace.h) and where the
// edge was found (pto::TraceEdgeSource, 0 = the TensorMap): profiling. Ordered by (task, kind,
// source), so a sort + std::unique with same_edge leaves each distinct (task, kind) once, with
// the smallest source: the TensorMap's when both found it.
struct EdgeKind {
  int64_t task;
  uint32_t kind;
  uint32_t source;  // EdgeKind{task, kind} leaves it 0: trivial, for the arena (graph/arena.h)
  friend bool operator<(const EdgeKind &a, const EdgeKind &b) {
    if (a.task != b.task) return a.task < b.task;
    return a.kind != b.kind ? a.kind < b.kind : a.source < b.source;
  }
  friend bool operator==(const EdgeKind &a, const EdgeKind &b) {
    return a.task == b.task && a.kind == b.kind && a.source == b.source;
  }
  // The same dependency, wherever it was found.
  static bool same_edge(const EdgeKind &a, const EdgeKind &b) { return a.task == b.task && a.kind == b.kind; }
};
using EdgeKindList = FixedList<EdgeKind>;

}  // namespace graph
}  // namespace pto
#endif  // PTO_CORE_GRAPH_ID_LIST_H
