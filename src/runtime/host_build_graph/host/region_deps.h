// src/runtime/host_build_graph/host/region_deps.h — which earlier tasks of a host-built graph touched a
// region: the dependencies the host orchestrator (host_orchestrator.h) infers.
//
// The rules are the tensormap runtime's (pto/orchestration.h): a read waits for earlier writers
// of an overlapping region, a write for earlier writers and readers. Its TensorMap
// (core/graph/tensor_map.h) is a fixed pool sized per run whose entries go as tasks retire; a
// graph built on the host retires nothing before it is complete, so here every access is kept
// until the graph is, per buffer, in growing arrays, writers apart from readers (a read scans
// only the writers). Overlap is core/region.h's: exact for disjoint byte ranges and for
// contiguous or nested views, conservative otherwise — a false "overlap" adds an edge, it never
// loses one. A write drops the entries it covers (region_covers): their tasks are ordered before
// it, so it stands for them from then on, and a buffer rewritten tile by tile keeps one entry
// per tile.
#ifndef PTO_HBG_REGION_DEPS_H
#define PTO_HBG_REGION_DEPS_H

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/region.h"
#include "core/trace.h"

namespace pto {
namespace hbg {

class RegionDeps {
 public:
  // A task an access must wait for, and why (TraceEdgeKind: RAW, WAW or WAR).
  struct Producer {
    uint32_t task;
    uint32_t kind;
  };
  // Task `task`'s access to r: appends to *out every other task whose recorded access to an
  // overlapping region conflicts with it (writers for a read; writers and readers for a write),
  // then records the access. *out may list a task more than once (the caller deduplicates).
  void access(const Region &r, bool write, uint32_t task, std::vector<Producer> *out);
  // Records the access without a look-up (inside a manual scope): nothing is dropped, since the
  // task was not ordered after the entries it covers.
  void insert(const Region &r, bool write, uint32_t task);
  // The youngest task whose recorded access conflicts with one by `write` to r, or -1.
  int64_t youngest_conflict(const Region &r, bool write) const;

 private:
  // One buffer's readers or writers. A scan reads `spans` (bytes and task: compact) and looks at
  // the whole region only when the byte ranges meet and either is strided.
  struct Span {
    int64_t lo, hi;
    uint32_t task;
    bool contiguous;
  };
  struct List {
    std::vector<Span> spans;
    std::vector<Region> regions;  // by the same index
    void add(const Region &r, uint32_t task);
    void remove(size_t i);  // the last takes its place (order carries no meaning)
    bool meets(size_t i, const Region &r) const;
  };
  struct Buffer {
    List writers, readers;
  };
  // Conflicting tasks of `list` into *out (other than `task`) as edges of `kind`; with `drop`,
  // the covered entries go.
  static void scan(List &list, const Region &r, uint32_t task, uint32_t kind, bool drop,
                   std::vector<Producer> *out);
  static int64_t youngest(const List &list, const Region &r);

  std::unordered_map<uint64_t, Buffer> buffers_;  // by buffer address
};

}  // namespace hbg
}  // namespace pto
#endif  // PTO_HBG_REGION_DEPS_H
