// src/core/tensor_dump.h — enable_dump_tensor: copies of selected tasks' tensors, in device memory.
//
// Whoever builds a selected task (the host for host_build_graph, the orchestrator for the
// tensormap runtime) writes a DumpTask describing its tensor arguments and when each is
// copied: `before` the task runs (its inputs; the scheduler copies them just before dispatch,
// when every producer has finished) and/or `after` it (its outputs; copied when the scheduler
// sees the completion, before any successor is released, so nothing has overwritten them).
// Copies go to an arena: any scheduler thread claims space and a record with fetch_add; a copy
// that does not fit is counted in `dropped` and skipped. The host turns the records into .npy
// files after the run (host/tensor_dump_files.cpp).
#ifndef PTO_CORE_TENSOR_DUMP_H
#define PTO_CORE_TENSOR_DUMP_H

#include <atomic>
#include <cstdint>
#include <cstring>

#include "pto/types.h"

namespace pto {

constexpr uint32_t kDumpMaxDims = 8;
constexpr uint32_t kDumpMaxArgs = 16;  // tensor arguments dumped per task (the first ones)
enum : uint32_t { kDumpBefore = 1, kDumpAfter = 2 };

struct DumpView {
  uint64_t addr;   // device address of the first element
  uint32_t dtype;  // pto_dtype
  uint32_t ndim;
  uint32_t arg;   // the argument's index in the task
  uint32_t when;  // kDumpBefore | kDumpAfter
  int64_t shape[kDumpMaxDims];
  int64_t strides[kDumpMaxDims];  // in elements
};

struct DumpTask {  // written by the task's builder before the task is published
  int64_t task;
  uint32_t func;
  uint32_t num_views;
  DumpView views[kDumpMaxArgs];
};

struct DumpRecord {  // written by the scheduler thread that claimed it
  int64_t task;
  uint32_t func, arg;
  uint32_t phase;  // kDumpBefore or kDumpAfter
  uint32_t dtype, ndim;
  uint32_t reserved;
  int64_t shape[kDumpMaxDims];
  uint64_t offset, nbytes;  // in the arena
};

struct DumpRegion {
  // --- Host-written before launch. ---
  uint64_t tasks_addr;    // DumpTask[max_tasks]
  uint64_t records_addr;  // DumpRecord[max_records]
  uint64_t arena_addr;
  uint64_t arena_bytes;
  uint32_t max_tasks, max_records;
  int32_t select_kernel;  // func_id whose tasks are dumped, -1 for every kernel
  uint32_t select_first;  // tasks with a smaller id are not dumped
  // --- The builder of the graph (host or orchestrator): DumpTask entries handed out. ---
  uint32_t tasks_used;
  // --- Claimed by scheduler threads (fetch_add); the host reads them after the run. ---
  std::atomic<uint64_t> arena_used;
  std::atomic<uint32_t> records_used;
  std::atomic<uint32_t> dropped;  // copies that found no room
};

inline DumpTask *dump_tasks(const DumpRegion *d) {
  return reinterpret_cast<DumpTask *>(d->tasks_addr);
}

// The index of a fresh DumpTask for task `id` of kernel `func` if the run dumps it, else -1
// (also once the entries are used up); the entry is tasks[index], where `tasks` is where the
// caller sees the region's DumpTask array (the host builds it in an image before the copy).
// Called by the graph's builder, in task order, once per task.
inline int32_t dump_select(DumpRegion *d, DumpTask *tasks, int64_t id, uint32_t func) {
  if (id < static_cast<int64_t>(d->select_first) || d->tasks_used >= d->max_tasks) return -1;
  if (d->select_kernel >= 0 && static_cast<uint32_t>(d->select_kernel) != func) return -1;
  const auto index = static_cast<int32_t>(d->tasks_used++);
  DumpTask *t = tasks + index;
  t->task = id;
  t->func = func;
  t->num_views = 0;
  return index;
}

// Adds a view to a selected task (beyond kDumpMaxArgs they are left out).
inline void dump_add_view(DumpTask *t, uint32_t arg, uint64_t addr, uint32_t dtype, uint32_t ndim,
                          const int64_t *shape, const int64_t *strides, uint32_t when) {
  if (t->num_views >= kDumpMaxArgs || ndim > kDumpMaxDims) return;
  DumpView &v = t->views[t->num_views++];
  v.addr = addr;
  v.dtype = dtype;
  v.ndim = ndim;
  v.arg = arg;
  v.when = when;
  int64_t contiguous = 1;
  for (uint32_t i = ndim; i-- > 0;) {
    v.shape[i] = shape[i];
    v.strides[i] = strides ? strides[i] : contiguous;
    contiguous *= shape[i];
  }
}

// Copies the views of `t` marked for `phase` into the arena as C-contiguous arrays.
inline void dump_task_views(DumpRegion *d, const DumpTask &t, uint32_t phase) {
  for (uint32_t k = 0; k < t.num_views; ++k) {
    const DumpView &v = t.views[k];
    if (!(v.when & phase)) continue;
    const uint32_t esize = pto_dtype_size(static_cast<pto_dtype>(v.dtype));
    uint64_t n = 1;
    for (uint32_t i = 0; i < v.ndim; ++i) n *= static_cast<uint64_t>(v.shape[i]);
    const uint64_t bytes = n * esize;
    const uint32_t r = d->records_used.fetch_add(1, std::memory_order_relaxed);
    const uint64_t at = d->arena_used.fetch_add((bytes + 63) / 64 * 64, std::memory_order_relaxed);
    DumpRecord *rec = reinterpret_cast<DumpRecord *>(d->records_addr) + r;
    if (r >= d->max_records || at + bytes > d->arena_bytes) {
      d->dropped.fetch_add(1, std::memory_order_relaxed);
      if (r < d->max_records) rec->nbytes = ~0ull;  // claimed but empty: the host skips it
      continue;
    }
    char *dst = reinterpret_cast<char *>(d->arena_addr + at);
    // Walk the view in row-major order, one innermost row at a time.
    int64_t idx[kDumpMaxDims] = {};
    const int64_t inner = v.ndim ? v.shape[v.ndim - 1] : 1;
    const int64_t inner_stride = v.ndim ? v.strides[v.ndim - 1] : 1;
    for (uint64_t done = 0; done < n; done += static_cast<uint64_t>(inner)) {
      int64_t off = 0;
      for (uint32_t i = 0; i + 1 < v.ndim; ++i) off += idx[i] * v.strides[i];
      const char *src = reinterpret_cast<const char *>(v.addr) + off * esize;
      if (inner_stride == 1) {
        memcpy(dst, src, static_cast<size_t>(inner) * esize);
        dst += inner * esize;
      } else {
        for (int64_t e = 0; e < inner; ++e, dst += esize) memcpy(dst, src + e * inner_stride * esize, esize);
      }
      for (int32_t i = static_cast<int32_t>(v.ndim) - 2; i >= 0; --i) {  // next row
        if (++idx[i] < v.shape[i]) break;
        idx[i] = 0;
      }
    }
    rec->task = t.task;
    rec->func = t.func;
    rec->arg = v.arg;
    rec->phase = phase;
    rec->dtype = v.dtype;
    rec->ndim = v.ndim;
    for (uint32_t i = 0; i < v.ndim; ++i) rec->shape[i] = v.shape[i];
    rec->offset = at;
    rec->nbytes = bytes;
  }
}

}  // namespace pto
#endif  // PTO_CORE_TENSOR_DUMP_H
