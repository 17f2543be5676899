// src/l4/worker_state.h — one L4 rank's state: its L3 worker, its progress thread, and the replicated coherence table.
//
// The replicated part (arrays, valid sets, task and transfer numbering, per-rank load) is the
// same on every rank: each computes it from the same sequence of alloc() and submit calls,
// without messages (docs/l4.md, "Coherence"). It is written only by the thread running
// alloc() or an orchestration function, under `mu` (submit holds it for the whole
// orchestration function, as Python's Worker does).
#ifndef PTO_L4_WORKER_STATE_H
#define PTO_L4_WORKER_STATE_H

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "l4/progress.h"
#include "pto/l4.h"

namespace pto {
namespace l4 {

// One distributed array: every rank has a copy; `valid` says which hold the current value.
struct Data {
  uint64_t index = 0;
  std::string name;
  char *local = nullptr;  // this rank's copy
  uint64_t nbytes = 0;
  std::set<int> valid;
  // Per valid rank, when (in transfer steps) its copy can serve the next reader: arrival plus
  // the sends it already has. A new reader takes the copy ready first, so many readers of one
  // value form a binomial tree.
  std::map<int, uint64_t> ready;
};

// How one task touches one array (its tensor arguments on that array merged).
struct Access {
  Data *data = nullptr;
  bool reads = false;
  bool writes = false;
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
  uint64_t tasks_here = 0, sends_here = 0, recvs_here = 0;
  bool closed = false;

  // The array holding [ptr, ptr + nbytes); INVALID_ARGUMENT naming `where` otherwise.
  Data *data_of(const void *ptr, uint64_t nbytes, const char *where) const;
  int check_rank(int rank, const char *where) const;
  // The tensor arguments of a task, merged per array. A partial write reads too (it keeps the
  // rest of the array, so this rank's copy must be current).
  std::vector<Access> accesses(const ChipStorageTaskArgs &args, const char *where) const;
  // rank, or for kAnyRank: the most bytes read already held, then the fewest tasks, then lowest.
  int place(int rank, const std::vector<Access> &acc, const char *where) const;
};

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_WORKER_STATE_H
