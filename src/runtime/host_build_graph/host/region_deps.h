// src/runtime/host_build_graph/host/region_deps.h — which earlier tasks of a host-built graph touched a
// region: the dependencies the host orchestrator (host_orchestrator.h) infers.
//
// The rules are the tensormap runtime's (pto/orchestration.h): a read waits for earlier writers
// of an overlapping region, a write for earlier writers and readers. Its TensorMap
// (core/graph/tensor_map.h) is a fixed pool sized per run whose entries go as tasks retire; a
// graph built on the host retires nothing before it is complete, so here every access is kept
// until the graph is, in growing arrays per buffer, writers apart from readers (a read looks
// only at the writers). Overlap is core/region.h's: exact for disjoint byte ranges and for
// contiguous or nested views, conservative otherwise — a false "overlap" adds an edge, it never
// loses one. A write drops the entries it covers (region_covers): their tasks are ordered before
// it, so it stands for them from then on, and a buffer rewritten tile by tile keeps one entry
// per tile.
//
// Index: as in the TensorMap, an entry is filed at the level (a power-of-two granule size) where
// its bytes span at most two granules, under the granule of its first byte; a look-up probes, at
// each level that holds entries, the granules its own bytes span plus the one before, so a
// buffer written in thousands of tiles costs a few short buckets per access, not a scan. A
// look-up that would probe more than kMaxProbes granules of a level scans the list instead.
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
  int64_t youngest_conflict(const Region &r, bool write);

 private:
  static constexpr int kMinLevel = 3;  // 8-byte granules: an element's at the finest
  static constexpr int kLevels = 64;
  static constexpr int64_t kMaxProbes = 64;
  struct Entry {
    int64_t lo, hi;  // the region's bytes (r.lo, r.hi): what a look-up compares first
    uint32_t task;
    uint8_t level;
    bool contiguous;
    bool live;
    Region region;  // read only when the bytes meet and either region is strided
  };
  // One buffer's readers or writers: entries in slots (a freed slot is reused), indexed by
  // (level, granule of the first byte).
  struct List {
    std::vector<Entry> slots;
    std::vector<uint32_t> free;
    std::unordered_map<uint64_t, std::vector<uint32_t>> buckets;
    uint32_t per_level[kLevels] = {};
    uint64_t levels = 0;  // bit l: per_level[l] != 0
    void add(const Region &r, uint32_t task);
    void remove(uint32_t slot);
    // The live entries whose bytes may meet r's, each once, into *out (cleared first).
    void candidates(const Region &r, std::vector<uint32_t> *out) const;
    bool meets(uint32_t slot, const Region &r) const;
  };
  struct Buffer {
    List writers, readers;
  };
  static int level_of(int64_t lo, int64_t hi);
  static uint64_t key(int level, int64_t granule) {
    return static_cast<uint64_t>(granule) * kLevels +
           static_cast<uint64_t>(level);  // may wrap: only merges buckets
  }
  // Conflicting tasks of `list` into *out (other than `task`) as edges of `kind`; with `drop`,
  // the covered entries go.
  void scan(List &list, const Region &r, uint32_t task, uint32_t kind, bool drop, std::vector<Producer> *out);
  int64_t youngest(const List &list, const Region &r);

  std::unordered_map<uint64_t, Buffer> buffers_;  // by buffer address
  std::vector<uint32_t> scratch_;                 // candidates of one look-up
};

}  // namespace hbg
}  // namespace pto
#endif  // PTO_HBG_REGION_DEPS_H
