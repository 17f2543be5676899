// src/l4/worker.cpp — pto::l4::Worker: options, replicated and distributed arrays, runs on L3, close.
#include <sched.h>
#include <sys/mman.h>

#include <cmath>

#include "hierarchical/worker_core.h"
#include "l4/worker_state.h"
#include "pto/error.h"

namespace pto {
namespace l4 {

namespace {

void check_options(const WorkerOptions &o) {
  if (o.num_sub_workers < 1)
    throw Error(PTO_INVALID_ARGUMENT, "l4::WorkerOptions.num_sub_workers = " + std::to_string(o.num_sub_workers) +
                                          "; L4 needs at least 1 (transfers run as SUB tasks), 2 or more "
                                          "if your SUB tasks run long");
  if (o.peer_timeout_ms < kMinPeerTimeoutMs || o.peer_timeout_ms > kMaxPeerTimeoutMs)
    throw Error(PTO_INVALID_ARGUMENT, "l4::WorkerOptions.peer_timeout_ms = " + std::to_string(o.peer_timeout_ms) +
                                          " is out of range; allowed " + std::to_string(kMinPeerTimeoutMs) +
                                          ".." + std::to_string(kMaxPeerTimeoutMs));
  if (o.poll_max_us < kMinPollMaxUs || o.poll_max_us > kMaxPollMaxUs)
    throw Error(PTO_INVALID_ARGUMENT, "l4::WorkerOptions.poll_max_us = " + std::to_string(o.poll_max_us) +
                                          " is out of range; allowed " + std::to_string(kMinPollMaxUs) + ".." +
                                          std::to_string(kMaxPollMaxUs) +
                                          " (the longest pause of the progress thread while transfers are pending)");
  if (o.spin_us > kMaxSpinUs)
    throw Error(PTO_INVALID_ARGUMENT, "l4::WorkerOptions.spin_us = " + std::to_string(o.spin_us) +
                                          " is out of range; allowed 0.." + std::to_string(kMaxSpinUs) +
                                          " (how long the progress thread spins after a transfer event)");
  if (o.landing_bytes < kMinLandingBytes || o.landing_bytes > kMaxLandingBytes)
    throw Error(PTO_INVALID_ARGUMENT,
                "l4::WorkerOptions.landing_bytes = " + std::to_string(o.landing_bytes) +
                    " is out of range; allowed " + std::to_string(kMinLandingBytes) + ".." +
                    std::to_string(kMaxLandingBytes) +
                    " (bytes of remote tiles of distributed arrays a rank may hold at once)");
}

// Every rank of the node runs its SUB workers, an L3 scheduler and an L4 progress thread (the
// main thread aside); more of them than this process may use CPUs is oversubscribed. A rank
// alone on its node keeps L3's yields: its threads hand work to each other.
bool oversubscribed(int ranks_on_node, int num_sub_workers) {
  if (ranks_on_node < 2) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return static_cast<int64_t>(ranks_on_node) * (num_sub_workers + 2) > cpus;
}

WorkerState &open_state(const std::unique_ptr<WorkerState> &w, const char *call) {
  if (w->closed)
    throw Error(PTO_NOT_INITIALIZED, std::string("l4::Worker.") + call + ": the worker is closed");
  return *w;
}

}  // namespace

Worker::Worker(const WorkerOptions &options) : w_(new WorkerState) {
  check_options(options);
  WorkerState &w = *w_;
  w.options = options;
  // MPI first (NOT_SUPPORTED without it, before any chip is started), then the L3 worker.
  w.progress = std::make_unique<Progress>(options.peer_timeout_ms, options.poll_max_us, options.spin_us,
                                          options.mpi_comm);
  w.rank = w.progress->rank();
  w.size = w.progress->size();
  w.load.assign(static_cast<size_t>(w.size), 0);
  w.landing.resize(static_cast<size_t>(w.size));
  try {
    w.l3 = std::make_unique<pto::Worker>(static_cast<const pto::WorkerOptions &>(options));
    // More runtime threads on this node than CPUs: idle threads park at once instead of
    // yielding, which would take the CPU from the thread running the critical path.
    if (oversubscribed(w.progress->ranks_on_node(), options.num_sub_workers))
      l3::WorkerCore::of(*w.l3).idle_yields.store(0, std::memory_order_relaxed);
  } catch (...) {
    w.progress->close();
    throw;
  }
}

Worker::~Worker() {
  try {
    close();
  } catch (...) {
  }
}

int Worker::rank() const { return w_->rank; }
int Worker::size() const { return w_->size; }
int Worker::mpi_thread_level() const { return w_->progress->thread_level(); }
bool Worker::mpi_available() { return Progress::available(); }
bool Worker::closed() const { return w_->closed; }
pto::Worker &Worker::l3() { return *open_state(w_, "l3").l3; }

void *Worker::alloc(uint64_t nbytes, const std::string &name, int valid) {
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  WorkerState &w = open_state(w_, "alloc");
  if (valid != kAllRanks) w.check_rank(valid, "alloc(valid=)");
  auto d = std::make_unique<Data>();
  d->index = w.data.size();
  d->name = name.empty() ? "array " + std::to_string(d->index) : name;
  d->nbytes = nbytes;
  d->local = static_cast<char *>(w.l3->alloc(nbytes == 0 ? 1 : nbytes));
  d->units.resize(1);
  for (int r = 0; r < w.size; ++r)
    if (valid == kAllRanks || valid == r) d->units[0].valid.push_back(Copy{r, 0});
  w.by_start[reinterpret_cast<uintptr_t>(d->local)] = d.get();
  void *p = d->local;
  w.data.push_back(std::move(d));
  return p;
}

void *Worker::alloc_distributed(uint64_t nbytes, const std::string &name, Distribution kind,
                                uint64_t tile_bytes) {
  constexpr uint64_t kPage = 4096;
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  WorkerState &w = open_state(w_, "alloc_distributed");
  auto d = std::make_unique<Data>();
  d->index = w.data.size();
  d->name = name.empty() ? "array " + std::to_string(d->index) : name;
  const std::string where = "alloc_distributed('" + d->name + "')";
  const auto size = static_cast<uint64_t>(w.size);
  if (kind == Distribution::kBlock) {
    if (tile_bytes != 0)
      throw Error(PTO_INVALID_ARGUMENT,
                  where + ": tile_bytes = " + std::to_string(tile_bytes) +
                      " with kBlock, which makes one tile per rank of its own size; give 0, "
                      "or kBlockCyclic for tiles of a chosen size");
    // ceil(nbytes / size) rounded up to a page (a page for an empty array).
    tile_bytes = std::max(kPage, ((nbytes + size - 1) / size + kPage - 1) / kPage * kPage);
  } else if (kind == Distribution::kBlockCyclic) {
    if (tile_bytes == 0)
      throw Error(PTO_INVALID_ARGUMENT, where +
                                            ": kBlockCyclic needs tile_bytes > 0 (the size of a tile; tile k "
                                            "is owned by rank k % size)");
  } else {
    throw Error(PTO_INVALID_ARGUMENT, where + ": kind = " + std::to_string(static_cast<int>(kind)) +
                                          " is not a Distribution (kBlock or kBlockCyclic)");
  }
  // The whole range, page-aligned: over-allocate by a page and align inside the heap block, so
  // no page of the array is shared with another buffer (an eviction releases whole pages).
  const uint64_t heap = w.options.heap_bytes;
  const uint64_t span =
      (std::min(std::max<uint64_t>(nbytes, 1), kMaxHeapBytes + 1) + kPage - 1) / kPage * kPage;
  const uint64_t reserve = span + kPage;
  const std::string need = "'" + d->name + "' (" + std::to_string(nbytes) +
                           " bytes) needs an address range of " + std::to_string(reserve) +
                           " bytes in every rank's L3 host heap";
  const std::string hint =
      "raise heap_bytes (WorkerOptions.heap_bytes, Python heap_bytes=; up to 1 TiB): the "
      "range is only reserved, pages that no task writes take no memory";
  if (reserve > heap)
    throw Error(PTO_INVALID_ARGUMENT,
                where + ": " + need + ", more than heap_bytes = " + std::to_string(heap) + "; " + hint);
  void *raw;
  try {
    raw = w.l3->alloc(reserve);
  } catch (const Error &e) {
    if (e.code() != PTO_OUT_OF_MEMORY) throw;
    throw Error(PTO_OUT_OF_MEMORY, where + ": " + need + " and heap_bytes = " + std::to_string(heap) +
                                       " has no free range that large (" +
                                       std::to_string(w.l3->heap_bytes_in_use()) + " bytes in use); " + hint);
  }
  const auto aligned = (reinterpret_cast<uintptr_t>(raw) + kPage - 1) & ~uintptr_t{kPage - 1};
  d->local = reinterpret_cast<char *>(aligned);
  // Zero pages the heap may have backed for an earlier, freed buffer: untouched, they cost nothing.
  madvise(d->local, span, MADV_REMOVE);
  d->nbytes = nbytes;
  d->distributed = true;
  d->tile_bytes = tile_bytes;
  d->units.resize(nbytes == 0 ? 0 : (nbytes - 1) / tile_bytes + 1);
  for (uint64_t u = 0; u < d->units.size(); ++u) d->units[u].valid.push_back(Copy{d->owner(u, w.size), 0});
  w.by_start[aligned] = d.get();
  void *p = d->local;
  w.data.push_back(std::move(d));
  return p;
}

std::vector<int> Worker::valid_ranks(const void *array) const {
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  const Data *d = w_->data_of(array, 0, "valid_ranks");
  uint64_t u = 0;
  if (d->distributed) {
    const auto off = static_cast<uint64_t>(static_cast<const char *>(array) - d->local);
    if (d->units.empty()) return {};
    u = std::min<uint64_t>(off / d->tile_bytes, d->units.size() - 1);
  }
  std::vector<int> out;
  for (const Copy &c : d->units[u].valid) out.push_back(c.rank);
  return out;
}

RunHandle Worker::submit(const OrchFn &orch) {
  if (!orch) throw Error(PTO_INVALID_ARGUMENT, "l4::Worker.submit: orch is empty");
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  WorkerState &w = open_state(w_, "submit");
  w.free_domains();  // those of earlier runs: waits for those runs (comm_domain_l4.cpp)
  const size_t before = w.domains.size();
  RunHandle h = w.l3->submit([&](HostOrchestrator &o3) {
    Orchestrator o(&w, &o3);
    orch(o);
  });
  for (size_t i = before; i < w.domains.size(); ++i) {
    w.domains[i]->run = h;
    w.domains[i]->submitted = true;
  }
  return h;
}

TransferCounts Worker::transfers() const {
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  TransferCounts c;
  c.tasks = w_->tasks_here;
  c.sends = w_->sends_here;
  c.recvs = w_->recvs_here;
  c.evictions = w_->evictions_here;
  if (w_->progress) {
    c.sent_done = w_->progress->sent_done();
    c.received_done = w_->progress->received_done();
  }
  return c;
}

void Worker::close() { close(w_->options.close_timeout_ms); }

void Worker::close(uint32_t timeout_ms) {
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  WorkerState &w = *w_;
  if (w.closed) return;
  w.closed = true;
  // L3 first: its tasks wait for Events the progress thread settles; then the thread stops
  // (failing anything left) and says goodbye. Windows of domains across hosts before either:
  // freeing them waits for their runs and is collective.
  try {
    w.free_domains();
    w.l3->close(timeout_ms);
  } catch (...) {
    w.progress->close();
    throw;
  }
  w.progress->close();
}

}  // namespace l4
}  // namespace pto
