// src/l4/orchestrator.cpp — the replicated unrolling: placement, transfers as L3 SUB tasks, the valid-copy
// table.
//
// Every rank runs each submit call: it places the task (the same answer everywhere), adds a
// transfer for each array the task reads whose copy on the task's rank is not valid (a send
// task on the source rank, a receive task on the target, both L3 SUB tasks with always_run),
// submits the task itself to the local L3 worker only on its own rank, and marks the arrays it
// writes valid on that rank only. Ordering within a rank is L3's (byte-range dependencies on
// the local copies); docs/l4.md, "Coherence", explains why that gives sequential semantics.
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

// The body of a send (send = true, to `peer`) or receive (from `peer`) SUB task: it hands the
// transfer to the rank's progress thread and defers its own completion to it. It is an inline
// body (posting takes microseconds): the thread that completed the producer runs it at once. It runs even when
// a predecessor failed (always_run): a send still sends, the error in its header; a receive
// still receives (the sender must not wait), then fails with that error.
SubFn post_body(Progress *progress, bool send, int peer, uint64_t seq, uint64_t data_index, void *payload,
                uint64_t nbytes, const std::string &what) {
  return [=](SubContext &ctx) {
    TransferPost p;
    p.send = send;
    p.peer = peer;
    p.seq = seq;
    p.data_index = data_index;
    p.payload = payload;
    p.nbytes = nbytes;
    p.error = ctx.upstream_error();
    p.what = what;
    p.event = ctx.defer();
    progress->post(std::move(p));
  };
}

// A transfer of `d` to rank `dst`: a send task on the source rank, a receive task on `dst`.
void transfer(WorkerState &w, HostOrchestrator &o3, Data &d, int dst, const std::string &purpose) {
  int src = *d.valid.begin();
  for (int r : d.valid)
    if (d.ready[r] < d.ready[src]) src = r;  // ready first, then the lowest rank (set order)
  d.ready[dst] = d.ready[src] + 1;
  d.ready[src] += 1;
  const uint64_t seq = w.next_transfer++;
  const std::string what = "transfer " + std::to_string(seq) + " of '" + d.name + "' (for " + purpose +
                           ") from rank " + std::to_string(src) + " to rank " + std::to_string(dst);
  Progress *progress = w.progress.get();
  const uint64_t index = d.index, nbytes = d.nbytes;
  char *local = d.local;
  ChipStorageTaskArgs args;
  if (w.rank == src) {
    ++w.sends_here;
    args.add_tensor(local, nbytes, PTO_DTYPE_U8, {static_cast<int64_t>(nbytes)}, PTO_DIR_INPUT);
    o3.submit_sub(
        post_body(progress, true, dst, seq, index, local, nbytes, what), args,
        "send '" + d.name + "' to rank " + std::to_string(dst) + " [L4 transfer " + std::to_string(seq) + "]",
        {}, nullptr, /*always_run=*/true, /*inline_body=*/true);
  } else if (w.rank == dst) {
    ++w.recvs_here;
    args.add_tensor(local, nbytes, PTO_DTYPE_U8, {static_cast<int64_t>(nbytes)}, PTO_DIR_OUTPUT);
    o3.submit_sub(post_body(progress, false, src, seq, index, local, nbytes, what), args,
                  "recv '" + d.name + "' from rank " + std::to_string(src) + " [L4 transfer " +
                      std::to_string(seq) + "]",
                  {}, nullptr, /*always_run=*/true, /*inline_body=*/true);
  }
  d.valid.insert(dst);
}

// An explicit edge across ranks: a token (a header-only message, no data) sent by a SUB task on
// `src` ordered after the producer (L3 id `producer`, meaningful on `src` only) and received by
// a SUB task on `dst` that the consumer is ordered after. Both always run: a failed producer
// still sends, its error in the header, and the receive fails with it, which fails the consumer
// (and through it what depends on it). Returns the receive's L3 id on `dst`, 0 elsewhere.
uint64_t token(WorkerState &w, HostOrchestrator &o3, int src, int dst, uint64_t producer,
               const std::string &purpose) {
  const uint64_t seq = w.next_transfer++;
  const std::string what = "token " + std::to_string(seq) + " (for " + purpose + ") from rank " +
                           std::to_string(src) + " to rank " + std::to_string(dst);
  Progress *progress = w.progress.get();
  const std::string label = " [L4 transfer " + std::to_string(seq) + "]";
  if (w.rank == src) {
    ++w.sends_here;
    o3.submit_sub(post_body(progress, true, dst, seq, kTokenIndex, nullptr, 0, what), ChipStorageTaskArgs{},
                  "send token to rank " + std::to_string(dst) + label, {producer}, nullptr,
                  /*always_run=*/true, /*inline_body=*/true);
  } else if (w.rank == dst) {
    ++w.recvs_here;
    return o3.submit_sub(post_body(progress, false, src, seq, kTokenIndex, nullptr, 0, what),
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
  const std::string where = std::string("submit_") + (kind[0] == 'c' ? "chip" : "sub") + " (L4)";
  std::vector<Access> acc = w.accesses(args, where.c_str());
  const int target = w.place(rank, acc, where.c_str());
  const std::string shown = name.empty() ? (kind[0] == 'c' ? "chip" : "sub") : name;
  const uint64_t gid = w.next_task;
  std::vector<uint64_t> after3;
  std::vector<std::pair<uint64_t, int>> across;  // after= tasks on other ranks: (L4 id, rank)
  for (uint64_t a : after) {
    auto it = run_->rank_of.find(a);
    if (it == run_->rank_of.end())
      throw invalid(where + ": after: " + std::to_string(a) + " is not an L4 task id of this run");
    if (it->second != target)
      across.emplace_back(a, it->second);
    else if (target == w.rank)
      after3.push_back(run_->l3_ids.at(a));
  }
  ++w.next_task;
  const std::string label =
      shown + " [L4 task " + std::to_string(gid) + ", rank " + std::to_string(target) + "]";
  for (const auto &[a, from] : across) {
    const uint64_t producer = from == w.rank ? run_->l3_ids.at(a) : 0;
    const uint64_t recv =
        token(w, *o3_, from, target, producer,
              "L4 task " + std::to_string(gid) + " '" + shown + "' after L4 task " + std::to_string(a));
    if (target == w.rank) after3.push_back(recv);
  }
  for (Access &a : acc)
    if (a.reads && !a.data->valid.count(target))
      transfer(w, *o3_, *a.data, target, "L4 task " + std::to_string(gid) + " '" + shown + "'");
  if (target == w.rank) {
    run_->l3_ids[gid] = local(label, after3);
    ++w.tasks_here;
  }
  run_->rank_of[gid] = target;
  ++w.load[static_cast<size_t>(target)];
  for (Access &a : acc)
    if (a.writes) {
      a.data->valid = {target};
      a.data->ready = {{target, 0}};
    }
  return gid;
}

void Orchestrator::fetch(const void *array, int rank) {
  WorkerState &w = *w_;
  Data *d = w.data_of(array, 0, "fetch");
  if (rank == kAllRanks) {
    for (int r = 0; r < w.size; ++r)
      if (!d->valid.count(r)) transfer(w, *o3_, *d, r, "fetch by rank " + std::to_string(r));
    return;
  }
  const int r = w.check_rank(rank, "fetch");
  if (!d->valid.count(r)) transfer(w, *o3_, *d, r, "fetch by rank " + std::to_string(r));
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
  for (const pto_arg_desc &a : args.descs()) {
    if (a.kind != PTO_ARG_TENSOR) continue;
    Data *d = data_of(a.host_ptr, a.nbytes, where);
    auto it = std::find_if(out.begin(), out.end(), [d](const Access &x) { return x.data == d; });
    if (it == out.end()) {
      out.push_back(Access{d, false, false});
      partial_write.push_back(false);
      it = out.end() - 1;
    }
    const bool reads = a.direction == PTO_DIR_INPUT || a.direction == PTO_DIR_INOUT;
    const bool writes = a.direction == PTO_DIR_OUTPUT || a.direction == PTO_DIR_INOUT;
    it->reads |= reads;
    it->writes |= writes;
    const bool whole = a.host_ptr == d->local && a.nbytes == d->nbytes;
    if (writes && !whole) partial_write[static_cast<size_t>(it - out.begin())] = true;
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (partial_write[i]) out[i].reads = true;
  return out;
}

int WorkerState::place(int r, const std::vector<Access> &acc, const char *where) const {
  if (r != kAnyRank) return check_rank(r, where);
  std::vector<uint64_t> held(static_cast<size_t>(size), 0);
  for (const Access &a : acc)
    if (a.reads)
      for (int v : a.data->valid) held[static_cast<size_t>(v)] += a.data->nbytes;
  int best = 0;
  for (int c = 1; c < size; ++c) {
    const auto cu = static_cast<size_t>(c), bu = static_cast<size_t>(best);
    if (held[cu] > held[bu] || (held[cu] == held[bu] && load[cu] < load[bu])) best = c;
  }
  return best;
}

}  // namespace l4
}  // namespace pto
