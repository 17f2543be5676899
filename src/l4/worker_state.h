// src/l4/worker_state.h — one L4 rank's state: its L3 worker, its progress thread, and the replicated
// coherence table.
//
// The replicated part (arrays and their units' valid sets, every rank's landed tiles, task and
// transfer numbering, per-rank load) is the same on every rank: each computes it from the same
// sequence of alloc() and submit calls, without messages (docs/guide/l4.md, "Coherence"). It is
// written only by the thread running alloc() or an orchestration function, under `mu` (submit
// holds it for the whole orchestration function, as Python's Worker does).
#ifndef PTO_L4_WORKER_STATE_H
#define PTO_L4_WORKER_STATE_H

#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "l4/progress.h"
#include "pto/l4.h"

namespace pto {
namespace l4 {

// A copy of a unit that holds its current value: the rank, and when (in transfer steps) it can
// serve the next reader: arrival plus the sends it already has. A new reader takes the copy
// ready first, so many readers of one value form a binomial tree.
struct Copy {
  int rank = 0;
  uint64_t ready = 0;
};

// The unit of coherence: a whole replicated array, or one tile of a distributed array.
struct Unit {
  std::vector<Copy> valid;  // sorted by rank
  bool has(int r) const;
  void add(int r, uint64_t ready);  // r joins (or keeps its place with this ready step)
  void drop(int r);
};

// One array of alloc() (replicated: every rank has a copy, one unit) or alloc_distributed()
// (tiles, tile k owned by rank k % size; every rank reserves the whole address range).
struct Data {
  uint64_t index = 0;
  std::string name;
  char *local = nullptr;  // this rank's copy (distributed: its address range, 4096-aligned)
  uint64_t nbytes = 0;
  bool distributed = false;
  uint64_t tile_bytes = 0;                    // distributed: bytes per tile (the last may be short)
  std::vector<Unit> units;                    // replicated: one; distributed: one per tile
  std::map<uint64_t, std::vector<int>> pins;  // distributed: tile -> ranks where fetch() pinned it

  uint64_t unit_lo(uint64_t u) const { return distributed ? u * tile_bytes : 0; }
  uint64_t unit_bytes(uint64_t u) const {
    return distributed ? std::min(tile_bytes, nbytes - u * tile_bytes) : nbytes;
  }
  int owner(uint64_t u, int size) const {
    return distributed ? static_cast<int>(u % static_cast<uint64_t>(size)) : -1;
  }
  // "'A'" or "'A' tile 3 (bytes 4096..8191)", as messages name a unit.
  std::string unit_name(uint64_t u) const;
};

// How one task touches one unit (its tensor arguments on that unit merged).
struct Access {
  Data *data = nullptr;
  uint64_t unit = 0;
  bool reads = false;
  bool writes = false;
};

// "L4 task 9 'sum'", as messages name a task (built only when a message needs it: every rank
// unrolls every task).
inline std::string task_text(uint64_t gid, const std::string &shown) {
  return "L4 task " + std::to_string(gid) + " '" + shown + "'";
}

// A landed tile: (array index, tile index).
using TileKey = std::pair<uint64_t, uint64_t>;

// The remote tiles of distributed arrays one rank holds (landed by receives). Replicated: every
// rank keeps every rank's, computed from the same calls, so evictions are decided alike.
struct Landing {
  std::list<TileKey> lru;  // counted against landing_bytes, least recently received first
  std::map<TileKey, std::list<TileKey>::iterator> counted;
  std::set<TileKey> pinned;  // landed by fetch(): not counted, never evicted
  uint64_t bytes = 0;        // of the counted tiles
};

// A communication domain across hosts (comm_domain_l4.cpp): this rank's part of it.
struct GlobalDomainState {
  std::string name;
  std::vector<DomainMember> members;
  std::vector<ChipDomainContext> contexts;  // by domain rank: real for this rank's members
  std::vector<int> owner;                   // by domain rank: its MPI rank
  std::vector<uint64_t> index;              // by domain rank: its window's place on its rank
  uint64_t win = 0;                         // bytes of each window
  void *block = nullptr;                    // this rank's contexts and windows (L3 heap), or null
  int window_id = -1;                       // Progress::create_window
  int slot = -1;                            // the address tag's slot (remote addresses)
  Progress *progress = nullptr;
  RunHandle run;  // the run that allocated it (once submitted)
  bool submitted = false;
  bool released = false;
};

struct WorkerState {
  WorkerOptions options;
  std::unique_ptr<Progress> progress;  // declared before l3: destroyed after it
  std::unique_ptr<pto::Worker> l3;
  int rank = 0, size = 1;

  // alloc, valid_ranks, transfers, submit (held for the whole orchestration function), close.
  // Recursive: an orchestration function may call alloc() or valid_ranks() on its own thread.
  mutable std::recursive_mutex mu;
  std::vector<std::unique_ptr<Data>> data;
  std::map<uintptr_t, Data *> by_start;
  uint64_t next_task = 0;
  uint64_t next_transfer = 0;
  std::vector<uint64_t> load;  // tasks placed per rank
  std::vector<Landing> landing;  // per rank
  uint64_t tasks_here = 0, sends_here = 0, recvs_here = 0, evictions_here = 0;
  bool closed = false;
  // Communication domains across hosts whose windows are open, oldest first; free_domains()
  // waits for their runs and frees them (collective: called at the same points on every rank).
  std::vector<std::shared_ptr<GlobalDomainState>> domains;
  void free_domains();

  // The array holding [ptr, ptr + nbytes); INVALID_ARGUMENT naming `where` otherwise.
  Data *data_of(const void *ptr, uint64_t nbytes, const char *where) const;
  int check_rank(int rank, const char *where) const;
  // The tensor arguments of a task, merged per unit (a replicated array, or each tile of a
  // distributed array a tensor touches). A partial write of a unit reads it too (it keeps the
  // rest of the unit, so this rank's copy must be current).
  std::vector<Access> accesses(const ChipStorageTaskArgs &args, const char *where) const;
  // rank, or for kAnyRank: the owner of the distributed tiles the task writes (owner computes),
  // else the most bytes read already held, then the fewest tasks, then the lowest. Writing tiles
  // of two owners, or of an owner other than an explicit rank, is INVALID_ARGUMENT naming the
  // task (task_text(gid, shown), e.g. "L4 task 9 'gemm'"), the array, the tile, its owner and
  // the rank asked.
  int place(int rank, const std::vector<Access> &acc, const char *where, uint64_t gid,
            const std::string &shown) const;
};

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_WORKER_STATE_H
