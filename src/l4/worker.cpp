// src/l4/worker.cpp — pto::l4::Worker: options, distributed arrays, runs on the rank's L3 worker, close.
#include <cmath>

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
  try {
    w.l3 = std::make_unique<pto::Worker>(static_cast<const pto::WorkerOptions &>(options));
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
  for (int r = 0; r < w.size; ++r)
    if (valid == kAllRanks || valid == r) {
      d->valid.insert(r);
      d->ready[r] = 0;
    }
  w.by_start[reinterpret_cast<uintptr_t>(d->local)] = d.get();
  void *p = d->local;
  w.data.push_back(std::move(d));
  return p;
}

std::vector<int> Worker::valid_ranks(const void *array) const {
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  const Data *d = w_->data_of(array, 0, "valid_ranks");
  return std::vector<int>(d->valid.begin(), d->valid.end());
}

RunHandle Worker::submit(const OrchFn &orch) {
  if (!orch) throw Error(PTO_INVALID_ARGUMENT, "l4::Worker.submit: orch is empty");
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  WorkerState &w = open_state(w_, "submit");
  return w.l3->submit([&](HostOrchestrator &o3) {
    Orchestrator o(&w, &o3);
    orch(o);
  });
}

TransferCounts Worker::transfers() const {
  std::lock_guard<std::recursive_mutex> lk(w_->mu);
  TransferCounts c;
  c.tasks = w_->tasks_here;
  c.sends = w_->sends_here;
  c.recvs = w_->recvs_here;
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
  // (failing anything left) and says goodbye.
  try {
    w.l3->close(timeout_ms);
  } catch (...) {
    w.progress->close();
    throw;
  }
  w.progress->close();
}

}  // namespace l4
}  // namespace pto
