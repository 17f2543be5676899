// src/l4/orchestrator.cpp — the replicated unrolling: placement, transfers, valid copies, landed tiles.
//
// Every rank runs each submit call: it places the task (the same answer everywhere), adds a
// transfer for each unit it reads (a replicated array, or a tile of a distributed one) whose copy
// on the task's rank is not valid (a send task on the source rank, a receive task on the target,
// both L3 SUB tasks with always_run; a tile receive first evicts older landed tiles when the
// target's landing_bytes would be exceeded), submits the task itself to the local L3 worker only
// on its own rank, and marks the units it writes valid on that rank only. Ordering within a rank
// is L3's (byte-range dependencies on the local copies); docs/guide/l4.md, "Coherence" and
// "Distributed arrays", explains why that gives sequential semantics.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "l4/worker_state.h"
#include "pto/error.h"

namespace pto {
namespace l4 {

struct Orchestrator::RunTasks {
  std::unordered_map<uint64_t, uint64_t> l3_ids;  // L4 task id -> L3 task id (this rank's tasks)
  std::unordered_map<uint64_t, int> rank_of;      // L4 task id -> rank (every task of the run)
};

namespace {

Error invalid(const std::string &msg) {
  return Error(PTO_INVALID_ARGUMENT, msg);
}

// Whom a transfer serves, as its messages say: "L4 task 9 'sum'", "L4 task 9 'sum' after L4
// task 7" (a token) or "fetch by rank 2". Every rank unrolls every transfer, so the text is made
// only on the two ranks that move data.
struct Purpose {
  uint64_t gid = 0;
  const std::string *shown = nullptr;  // the task's name; null: a fetch
  int fetch_rank = 0;
  uint64_t after = ~uint64_t{0};  // a token: the task on the other rank
  std::string str() const {
    if (shown == nullptr) return "fetch by rank " + std::to_string(fetch_rank);
    std::string s = task_text(gid, *shown);
    if (after != ~uint64_t{0}) s += " after L4 task " + std::to_string(after);
    return s;
  }
};

// The body of a send (send = true, to `peer`) or receive (from `peer`) SUB task: it hands the
// transfer to the rank's progress thread and defers its own completion to it. It is an inline
// body (posting takes microseconds): the thread that completed the producer runs it at once. It
// runs even when a predecessor failed (always_run): a send still sends, the error in its header;
// a receive still receives (the sender must not wait), then fails with that error.
SubFn post_body(Progress *progress, bool send, int peer, uint64_t seq, uint64_t data_index, uint64_t tile,
                void *payload, uint64_t nbytes, const std::string &what) {
  return [=](SubContext &ctx) {
    TransferPost p;
    p.send = send;
    p.peer = peer;
    p.seq = seq;
    p.data_index = data_index;
    p.tile = tile;
    p.payload = payload;
    p.nbytes = nbytes;
    p.error = ctx.upstream_error();
    p.what = what;
    p.event = ctx.defer();
    progress->post(std::move(p));
  };
}

// A transfer of unit `u` of `d` to rank `dst`: a send task on the source rank, a receive task
// on `dst` (ordered after `after`, L3 ids meaningful on `dst` only: the evictions that made
// room for it).
void transfer(WorkerState &w, HostOrchestrator &o3, Data &d, uint64_t u, int dst, const Purpose &purpose,
              const std::vector<uint64_t> &after = {}) {
  Unit &unit = d.units[u];
  const Copy *from = &unit.valid.front();
  for (const Copy &c : unit.valid)
    if (c.ready < from->ready) from = &c;  // ready first, then the lowest rank (sorted)
  const int src = from->rank;
  const uint64_t step = from->ready;
  unit.add(src, step + 1);
  unit.add(dst, step + 1);
  const uint64_t seq = w.next_transfer++;
  if (w.rank != src && w.rank != dst) return;  // the bookkeeping above is all this rank does
  const std::string what = "transfer " + std::to_string(seq) + " of " + d.unit_name(u) + " (for " +
                           purpose.str() + ") from rank " + std::to_string(src) + " to rank " +
                           std::to_string(dst);
  Progress *progress = w.progress.get();
  const uint64_t index = d.index, nbytes = d.unit_bytes(u);
  char *local = d.local + d.unit_lo(u);
  const std::string shown = "'" + d.name + "'" + (d.distributed ? " tile " + std::to_string(u) : "");
  const std::string label = " [L4 transfer " + std::to_string(seq) + "]";
  ChipStorageTaskArgs args;
  if (w.rank == src) {
    ++w.sends_here;
    args.add_tensor(local, nbytes, PTO_DTYPE_U8, {static_cast<int64_t>(nbytes)}, PTO_DIR_INPUT);
    o3.submit_sub(post_body(progress, true, dst, seq, index, u, local, nbytes, what), args,
                  "send " + shown + " to rank " + std::to_string(dst) + label, {}, nullptr,
                  /*always_run=*/true, /*inline_body=*/true);
  } else if (w.rank == dst) {
    ++w.recvs_here;
    args.add_tensor(local, nbytes, PTO_DTYPE_U8, {static_cast<int64_t>(nbytes)}, PTO_DIR_OUTPUT);
    o3.submit_sub(post_body(progress, false, src, seq, index, u, local, nbytes, what), args,
                  "recv " + shown + " from rank " + std::to_string(src) + label, after, nullptr,
                  /*always_run=*/true, /*inline_body=*/true);
  }
}

// Releases the pages of tile `k` that lie wholly inside it (a page shared with a neighbour is
// kept: its other bytes may be live). MADV_REMOVE frees the shared mapping's backing memory;
// the pages read as zeros afterwards. Failure only means the memory stays.
void release_pages(char *lo, uint64_t nbytes) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t a = (reinterpret_cast<uintptr_t>(lo) + page - 1) & ~(page - 1);
  const uintptr_t b = (reinterpret_cast<uintptr_t>(lo) + nbytes) & ~(page - 1);
  if (b > a) madvise(reinterpret_cast<void *>(a), b - a, MADV_REMOVE);
}

// Evicts landed tile `k` from rank r: r's copy leaves the tile's valid set, and on r an L3 SUB
// task with an INOUT tensor on the tile (so L3 orders it after every earlier reader, sender or
// receive of the tile there) releases its pages. Returns that task's L3 id on r, 0 elsewhere.
uint64_t evict(WorkerState &w, HostOrchestrator &o3, int r, const TileKey &k) {
  Landing &l = w.landing[static_cast<size_t>(r)];
  Data &d = *w.data[k.first];
  const uint64_t nbytes = d.unit_bytes(k.second);
  auto it = l.counted.find(k);
  l.lru.erase(it->second);
  l.counted.erase(it);
  l.bytes -= nbytes;
  d.units[k.second].drop(r);
  if (w.rank != r) return 0;
  ++w.evictions_here;
  char *lo = d.local + d.unit_lo(k.second);
  ChipStorageTaskArgs args;
  args.add_tensor(lo, nbytes, PTO_DTYPE_U8, {static_cast<int64_t>(nbytes)}, PTO_DIR_INOUT);
  // always_run: the pages go even if a reader failed; the eviction itself then succeeds, so it
  // poisons nothing. Inline: one madvise, run by the thread that released it.
  return o3.submit_sub([lo, nbytes](SubContext &) { release_pages(lo, nbytes); }, args,
                       "evict '" + d.name + "' tile " + std::to_string(k.second) + " (landing_bytes)", {},
                       nullptr, /*always_run=*/true, /*inline_body=*/true);
}

// `need` more bytes of landed tiles are about to be counted on rank r: evicts r's least
// recently received tiles, except those in `keep` (the task's own), until the count fits in
// landing_bytes. Returns the evictions' L3 ids (on r). The caller checked that the task's own
// tiles fit together.
std::vector<uint64_t> make_room(WorkerState &w, HostOrchestrator &o3, int r, uint64_t need,
                                const std::set<TileKey> &keep) {
  Landing &l = w.landing[static_cast<size_t>(r)];
  std::vector<uint64_t> ids;
  auto it = l.lru.begin();
  while (l.bytes + need > w.options.landing_bytes && it != l.lru.end()) {
    const TileKey victim = *it++;
    if (keep.count(victim)) continue;
    const uint64_t id = evict(w, o3, r, victim);
    if (w.rank == r) ids.push_back(id);
  }
  return ids;
}

// Unit u of d must be valid on `dst` for a task (or for fetch when `pin`): a transfer if it is
// not. A distributed tile landing on a rank other than its owner is counted against that rank's
// landing_bytes (making room first) or, when pinned, held outside it.
void bring(WorkerState &w, HostOrchestrator &o3, Data &d, uint64_t u, int dst, const Purpose &purpose,
           bool pin, const std::set<TileKey> &keep) {
  const bool valid = d.units[u].has(dst);
  if (!d.distributed || d.owner(u, w.size) == dst) {
    if (!valid) transfer(w, o3, d, u, dst, purpose);
    return;
  }
  Landing &l = w.landing[static_cast<size_t>(dst)];
  const TileKey k{d.index, u};
  const uint64_t nbytes = d.unit_bytes(u);
  if (l.pinned.count(k)) {  // pinned copies stay valid until the owner writes the tile
    if (!valid) transfer(w, o3, d, u, dst, purpose);
    return;
  }
  auto counted = l.counted.find(k);
  if (pin) {
    if (counted != l.counted.end()) {  // its pages are already there: now outside the bound
      l.lru.erase(counted->second);
      l.counted.erase(counted);
      l.bytes -= nbytes;
    }
    l.pinned.insert(k);
    d.pins[u].push_back(dst);
    if (!valid) transfer(w, o3, d, u, dst, purpose);
    return;
  }
  if (valid) return;  // landed and current (counted: a valid non-owner copy is landed)
  // A stale landed copy is received into the same pages (nothing more to count); the count may
  // still be over the bound after pins were dropped (written()), so room is made either way.
  const bool stale = counted != l.counted.end();
  const std::vector<uint64_t> after = make_room(w, o3, dst, stale ? 0 : nbytes, keep);
  if (stale) {
    l.lru.splice(l.lru.end(), l.lru, counted->second);  // now the most recently received
  } else {
    l.counted[k] = l.lru.insert(l.lru.end(), k);
    l.bytes += nbytes;
  }
  transfer(w, o3, d, u, dst, purpose, after);
}

// A task on `target` wrote unit u of d: its copy is the only valid one. Copies of the tile
// pinned by fetch() elsewhere are now stale landed copies, the first to be evicted.
void written(WorkerState &w, Data &d, uint64_t u, int target) {
  d.units[u].valid.assign(1, Copy{target, 0});
  if (!d.distributed) return;
  auto pins = d.pins.find(u);
  if (pins == d.pins.end()) return;
  const TileKey k{d.index, u};
  for (int r : pins->second) {
    Landing &l = w.landing[static_cast<size_t>(r)];
    l.pinned.erase(k);
    l.counted[k] = l.lru.insert(l.lru.begin(), k);
    l.bytes += d.unit_bytes(u);
  }
  d.pins.erase(pins);
}

// An explicit edge across ranks: a token (a header-only message, no data) sent by a SUB task on
// `src` ordered after the producer (L3 id `producer`, meaningful on `src` only) and received by
// a SUB task on `dst` that the consumer is ordered after. Both always run: a failed producer
// still sends, its error in the header, and the receive fails with it, which fails the consumer
// (and through it what depends on it). Returns the receive's L3 id on `dst`, 0 elsewhere.
uint64_t token(WorkerState &w, HostOrchestrator &o3, int src, int dst, uint64_t producer,
               const Purpose &purpose) {
  const uint64_t seq = w.next_transfer++;
  if (w.rank != src && w.rank != dst) return 0;
  const std::string what = "token " + std::to_string(seq) + " (for " + purpose.str() + ") from rank " +
                           std::to_string(src) + " to rank " + std::to_string(dst);
  Progress *progress = w.progress.get();
  const std::string label = " [L4 transfer " + std::to_string(seq) + "]";
  if (w.rank == src) {
    ++w.sends_here;
    o3.submit_sub(post_body(progress, true, dst, seq, kTokenIndex, 0, nullptr, 0, what),
                  ChipStorageTaskArgs{}, "send token to rank " + std::to_string(dst) + label, {producer},
                  nullptr, /*always_run=*/true, /*inline_body=*/true);
  } else if (w.rank == dst) {
    ++w.recvs_here;
    return o3.submit_sub(post_body(progress, false, src, seq, kTokenIndex, 0, nullptr, 0, what),
                         ChipStorageTaskArgs{}, "recv token from rank " + std::to_string(src) + label, {},
                         nullptr, /*always_run=*/true, /*inline_body=*/true);
  }
  return 0;
}

}  // namespace

Orchestrator::Orchestrator(WorkerState *w, HostOrchestrator *o3)
    : w_(w), o3_(o3), run_(std::make_shared<RunTasks>()) {}

int Orchestrator::rank() const {
  return w_->rank;
}
int Orchestrator::size() const {
  return w_->size;
}

uint64_t Orchestrator::submit_chip(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                                   const ChipCallConfig &config, int rank, int chip, const std::string &name,
                                   const std::vector<uint64_t> &after) {
  return submit("chip", args, rank, name, after,
                [&](const std::string &label, const std::vector<uint64_t> &after3) {
                  return o3_->submit_chip(callable, args, config, chip, label, after3);
                });
}

uint64_t Orchestrator::submit_sub(SubFn fn, const ChipStorageTaskArgs &args, int rank,
                                  const std::string &name, const std::vector<uint64_t> &after) {
  if (!fn) throw invalid("submit_sub (L4): fn is empty");
  return submit("SUB", args, rank, name, after,
                [&](const std::string &label, const std::vector<uint64_t> &after3) {
                  return o3_->submit_sub(std::move(fn), args, label, after3);
                });
}

uint64_t Orchestrator::submit(const char *kind, const ChipStorageTaskArgs &args, int rank,
                              const std::string &name, const std::vector<uint64_t> &after,
                              const LocalSubmit &local) {
  WorkerState &w = *w_;
  const bool chip = kind[0] == 'c';
  const char *where = chip ? "submit_chip (L4)" : "submit_sub (L4)";
  static const std::string kChip = "chip", kSub = "sub";
  const std::string &shown = name.empty() ? (chip ? kChip : kSub) : name;
  const uint64_t gid = w.next_task;
  std::vector<Access> acc = w.accesses(args, where);
  const int target = w.place(rank, acc, where, gid, shown);
  // The remote tiles the task reads must land on its rank together (none of them can be evicted
  // to make room for another); pinned ones are outside the bound.
  std::set<TileKey> keep;
  uint64_t remote = 0;
  const Landing &landing = w.landing[static_cast<size_t>(target)];
  for (const Access &a : acc) {
    if (!a.reads || !a.data->distributed || a.data->owner(a.unit, w.size) == target) continue;
    const TileKey k{a.data->index, a.unit};
    if (landing.pinned.count(k)) continue;
    keep.insert(k);
    remote += a.data->unit_bytes(a.unit);
  }
  if (remote > w.options.landing_bytes) {
    const Data &first = *w.data[keep.begin()->first];
    throw invalid(std::string(where) + ": " + task_text(gid, shown) + " on rank " + std::to_string(target) +
                  " reads " +
                  std::to_string(keep.size()) + " remote tile(s) of " + std::to_string(remote) +
                  " bytes together (the first: " + first.unit_name(keep.begin()->second) +
                  "), more than landing_bytes = " + std::to_string(w.options.landing_bytes) +
                  " (WorkerOptions.landing_bytes, Python landing_bytes=): raise it, or read fewer or "
                  "smaller remote tiles per task");
  }
  std::vector<uint64_t> after3;
  std::vector<std::pair<uint64_t, int>> across;  // after= tasks on other ranks: (L4 id, rank)
  for (uint64_t a : after) {
    auto it = run_->rank_of.find(a);
    if (it == run_->rank_of.end())
      throw invalid(std::string(where) + ": after: " + std::to_string(a) +
                    " is not an L4 task id of this run");
    if (it->second != target)
      across.emplace_back(a, it->second);
    else if (target == w.rank)
      after3.push_back(run_->l3_ids.at(a));
  }
  ++w.next_task;
  for (const auto &[a, from] : across) {
    const uint64_t producer = from == w.rank ? run_->l3_ids.at(a) : 0;
    Purpose p{gid, &shown};
    p.after = a;
    const uint64_t recv = token(w, *o3_, from, target, producer, p);
    if (target == w.rank) after3.push_back(recv);
  }
  for (Access &a : acc)
    if (a.reads) bring(w, *o3_, *a.data, a.unit, target, Purpose{gid, &shown}, /*pin=*/false, keep);
  if (target == w.rank) {
    const std::string label =
        shown + " [L4 task " + std::to_string(gid) + ", rank " + std::to_string(target) + "]";
    run_->l3_ids[gid] = local(label, after3);
    ++w.tasks_here;
  }
  run_->rank_of[gid] = target;
  ++w.load[static_cast<size_t>(target)];
  for (Access &a : acc)
    if (a.writes) written(w, *a.data, a.unit, target);
  return gid;
}

void Orchestrator::fetch(const void *array, int rank) {
  WorkerState &w = *w_;
  Data *d = w.data_of(array, 0, "fetch");
  const int only = rank == kAllRanks ? -1 : w.check_rank(rank, "fetch");
  for (uint64_t u = 0; u < d->units.size(); ++u)
    for (int r = 0; r < w.size; ++r)
      if (only < 0 || r == only) {
        Purpose p;
        p.fetch_rank = r;
        bring(w, *o3_, *d, u, r, p, true, {});
      }
}

// --- WorkerState: lookups and placement (replicated state only) ----------------------------

Data *WorkerState::data_of(const void *ptr, uint64_t nbytes, const char *where) const {
  const auto lo = reinterpret_cast<uintptr_t>(ptr);
  auto it = by_start.upper_bound(lo);
  if (it != by_start.begin()) {
    --it;
    Data *d = it->second;
    const auto start = reinterpret_cast<uintptr_t>(d->local);
    if (lo >= start && lo + nbytes <= start + d->nbytes) return d;
  }
  throw invalid(std::string(where) +
                ": a tensor is not (a part of) an array of this L4 worker's alloc(); tasks at L4 may only "
                "use distributed arrays, so that every rank knows where its valid copy is");
}

int WorkerState::check_rank(int r, const char *where) const {
  if (r < 0 || r >= size)
    throw invalid(std::string(where) + ": rank = " + std::to_string(r) + " is out of range; this job has " +
                  std::to_string(size) + " rank(s), 0.." + std::to_string(size - 1) + " (or kAnyRank)");
  return r;
}

std::vector<Access> WorkerState::accesses(const ChipStorageTaskArgs &args, const char *where) const {
  std::vector<Access> out;
  std::vector<bool> partial_write;
  out.reserve(args.descs().size());
  partial_write.reserve(args.descs().size());
  // Most tasks name a few units, where a linear search beats a map (every rank runs this for
  // every task); past kLinear units the map takes over.
  constexpr size_t kLinear = 16;
  std::map<std::pair<const Data *, uint64_t>, size_t> at;  // (array, unit) -> index in out
  auto touch = [&](Data *d, uint64_t u, bool reads, bool writes, bool whole) {
    size_t i = 0;
    if (out.size() <= kLinear) {
      while (i < out.size() && (out[i].data != d || out[i].unit != u)) ++i;
    } else {
      if (at.empty())
        for (size_t j = 0; j < out.size(); ++j) at.emplace(std::make_pair(out[j].data, out[j].unit), j);
      i = at.emplace(std::make_pair(d, u), out.size()).first->second;
    }
    if (i == out.size()) {
      out.push_back(Access{d, u, false, false});
      partial_write.push_back(false);
    }
    Access &x = out[i];
    x.reads |= reads;
    x.writes |= writes;
    if (writes && !whole) partial_write[i] = true;
  };
  for (const pto_arg_desc &a : args.descs()) {
    // A window buffer of a communication domain is not an array: no copies to keep coherent.
    if (a.kind == PTO_ARG_SCALAR || a.kind == PTO_ARG_DEVICE_TENSOR) continue;
    Data *d = data_of(a.host_ptr, a.nbytes, where);
    const bool reads = a.direction == PTO_DIR_INPUT || a.direction == PTO_DIR_INOUT;
    const bool writes = a.direction == PTO_DIR_OUTPUT || a.direction == PTO_DIR_INOUT;
    if (!d->distributed) {
      touch(d, 0, reads, writes, a.host_ptr == d->local && a.nbytes == d->nbytes);
      continue;
    }
    if (a.nbytes == 0) continue;  // touches no tile
    const uint64_t lo = static_cast<uint64_t>(static_cast<const char *>(a.host_ptr) - d->local);
    const uint64_t hi = lo + a.nbytes;
    for (uint64_t u = lo / d->tile_bytes; u <= (hi - 1) / d->tile_bytes; ++u)
      touch(d, u, reads, writes, lo <= d->unit_lo(u) && hi >= d->unit_lo(u) + d->unit_bytes(u));
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (partial_write[i]) out[i].reads = true;
  return out;
}

int WorkerState::place(int r, const std::vector<Access> &acc, const char *where, uint64_t gid,
                       const std::string &shown) const {
  if (r != kAnyRank) check_rank(r, where);
  auto asked = [r] { return r == kAnyRank ? std::string("any") : std::to_string(r); };
  const auto task = [&] { return task_text(gid, shown); };
  // Owner computes: a task writing distributed tiles runs on their owner, never elsewhere.
  const Access *first = nullptr;
  for (const Access &a : acc) {
    if (!a.writes || !a.data->distributed) continue;
    const int owner = a.data->owner(a.unit, size);
    if (first == nullptr) {
      first = &a;
      if (r != kAnyRank && r != owner)
        throw invalid(std::string(where) + ": " + task() + " writes " + a.data->unit_name(a.unit) +
                      ", owned by rank " + std::to_string(owner) + ", but asks for rank " + asked() +
                      ": a task may write a tile of a distributed array only on its owner (give rank " +
                      std::to_string(owner) + ", or any rank: kAnyRank / \"any\" places it there)");
    } else if (owner != first->data->owner(first->unit, size)) {
      throw invalid(std::string(where) + ": " + task() + " (rank " + asked() + ") writes " +
                    first->data->unit_name(first->unit) + ", owned by rank " +
                    std::to_string(first->data->owner(first->unit, size)) + ", and " +
                    a.data->unit_name(a.unit) + ", owned by rank " + std::to_string(owner) +
                    ": a task may write tiles of one owner only (split it into one task per owner)");
    }
  }
  if (r != kAnyRank) return r;
  if (first != nullptr) return first->data->owner(first->unit, size);
  std::vector<uint64_t> held(static_cast<size_t>(size), 0);
  for (const Access &a : acc)
    if (a.reads)
      for (const Copy &c : a.data->units[a.unit].valid)
        held[static_cast<size_t>(c.rank)] += a.data->unit_bytes(a.unit);
  int best = 0;
  for (int c = 1; c < size; ++c) {
    const auto cu = static_cast<size_t>(c), bu = static_cast<size_t>(best);
    if (held[cu] > held[bu] || (held[cu] == held[bu] && load[cu] < load[bu])) best = c;
  }
  return best;
}

// --- Units ----------------------------------------------------------------------------------

bool Unit::has(int r) const {
  auto it = std::lower_bound(valid.begin(), valid.end(), r, [](const Copy &c, int x) { return c.rank < x; });
  return it != valid.end() && it->rank == r;
}

void Unit::add(int r, uint64_t ready) {
  auto it = std::lower_bound(valid.begin(), valid.end(), r, [](const Copy &c, int x) { return c.rank < x; });
  if (it != valid.end() && it->rank == r)
    it->ready = ready;
  else
    valid.insert(it, Copy{r, ready});
}

void Unit::drop(int r) {
  auto it = std::lower_bound(valid.begin(), valid.end(), r, [](const Copy &c, int x) { return c.rank < x; });
  if (it != valid.end() && it->rank == r) valid.erase(it);
}

std::string Data::unit_name(uint64_t u) const {
  if (!distributed) return "'" + name + "'";
  const uint64_t lo = unit_lo(u);
  return "'" + name + "' tile " + std::to_string(u) + " (bytes " + std::to_string(lo) + ".." +
         std::to_string(lo + unit_bytes(u) - 1) + ")";
}

}  // namespace l4
}  // namespace pto
