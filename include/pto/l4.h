// include/pto/l4.h — many hosts (L4) on MPI in C++: pto::l4::Worker, Orchestrator, WorkerOptions.
//
//   pto::l4::WorkerOptions o;  o.device_ids = {0, 1};  o.peer_timeout_ms = 30000;
//   pto::l4::Worker w(o);                          // collective: every rank of the job
//   auto *x = static_cast<float *>(w.alloc(n * 4, "x"));   // a copy on every rank
//   w.run([&](pto::l4::Orchestrator &orch) {       // the same calls on every rank
//     orch.submit_sub(fill, args_writing_x, /*rank=*/1, "fill");
//     orch.submit_sub(sum, args_reading_x, /*rank=*/0, "sum");   // x moves from rank 1 to 0
//   });
// Every rank runs the same program (mpirun -n N prog) and owns an L3 pto::Worker. The
// orchestration function is replicated: every rank unrolls the same task sequence and keeps the
// same table of which rank holds a valid copy of which array, so no message is needed for the
// graph; a rank runs only its own tasks and adds send/receive SUB tasks where data crosses
// ranks. Python's pto_runtime.Worker(level=4) binds this class: docs/guide/l4.md.
//
// MPI is optional at build time: without it (CMake found no MPI C library) constructing a
// Worker throws NOT_SUPPORTED saying how to enable it. When the program has not initialized MPI
// the Worker does (MPI_Init_thread asking for MPI_THREAD_MULTIPLE) and finalizes it at exit.
#ifndef PTO_L4_H
#define PTO_L4_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pto/worker.h"

namespace pto {
namespace l4 {

struct WorkerState;

// Placement of a task: a rank 0..size-1, or kAnyRank (the same deterministic choice on every
// rank: the rank holding the most bytes the task reads, then the fewest tasks, then the lowest).
constexpr int kAnyRank = -1;
// alloc(valid=) and fetch(rank=): every rank.
constexpr int kAllRanks = -2;

// Limits the L4 options are checked against (INVALID_ARGUMENT naming the option otherwise).
constexpr uint32_t kMinPeerTimeoutMs = 50;
constexpr uint32_t kMaxPeerTimeoutMs = 86400u * 1000u;
constexpr uint32_t kMinPollMaxUs = 50;
constexpr uint32_t kMaxPollMaxUs = 100000;
constexpr uint32_t kMaxSpinUs = 1000000;
constexpr uint64_t kMinLandingBytes = 4096;        // one page
constexpr uint64_t kMaxLandingBytes = 1ull << 40;  // as heap_bytes' bound

// How alloc_distributed cuts an array into tiles (docs/guide/l4.md, "Distributed arrays"). Tile k is
// owned by rank k % size; only its owner may write it, and only the pages a rank writes (its own
// tiles, the remote tiles it receives) take memory.
//   kBlock: one tile per rank, ceil(nbytes / size) rounded up to 4096 bytes (the last one may be
//           short, and with a small array the last ranks may own none).
//   kBlockCyclic: tiles of tile_bytes (> 0), dealt round-robin: tile k on rank k % size.
enum class Distribution { kBlock, kBlockCyclic };

// The options of L3 (pto::WorkerOptions, the same field names) plus those of L4. Python's
// Worker(level=4, ...) takes the same names, in seconds where these say _ms/_us.
struct WorkerOptions : pto::WorkerOptions {
  WorkerOptions() { num_sub_workers = 2; }  // >= 1: transfers are SUB tasks
  // How long a receive waits on a silent rank before failing ("rank r died or hangs"). Every
  // rank heartbeats the others every peer_timeout/4 (at most 5 s). kMin..kMaxPeerTimeoutMs.
  uint32_t peer_timeout_ms = 30000;
  // How the progress thread waits for messages while transfers are pending: for spin_us after
  // the last event (a transfer posted or completed) it tests MPI continuously, yielding its CPU
  // between tests, so a message is noticed within microseconds of landing; after that it
  // pauses between tests, 50 us doubling up to poll_max_us. CPU against latency: docs/guide/l4.md,
  // "Progress". 0..kMaxSpinUs.
  uint32_t spin_us = 100;
  uint32_t poll_max_us = 1000;
  // The communicator whose ranks form the job: a pointer to an MPI_Comm (kept out of this
  // header so that it does not need mpi.h), read during construction only; null means
  // MPI_COMM_WORLD. The Worker duplicates it (collective over it), so its messages never meet
  // the program's. From mpi4py: MPI._addressof(comm).
  const void *mpi_comm = nullptr;
  // Bytes of remote tiles of distributed arrays a rank may hold at once (tiles it received to
  // read). A receive that would exceed it first evicts that rank's least recently received tiles
  // (their pages are released). kMin..kMaxLandingBytes. Tiles landed by fetch() are not counted.
  uint64_t landing_bytes = 256ull << 20;
};

// What this rank did so far (posted transfers, and those whose MPI requests completed).
struct TransferCounts {
  uint64_t tasks = 0;  // L4 tasks that ran on this rank
  uint64_t sends = 0;
  uint64_t recvs = 0;
  uint64_t sent_done = 0;
  uint64_t received_done = 0;
  uint64_t evictions = 0;  // landed tiles of distributed arrays released to make room (landing_bytes)
};

// A member of a communication domain across hosts: chip `chip` of rank `rank`.
struct DomainMember {
  int rank = 0;
  int chip = 0;
};

struct GlobalDomainState;

// A communication domain over chips of several ranks (Orchestrator::allocate_domain): a window
// per member, in its own rank's host heap, that every member's kernels reach through PTO-ISA's
// comm instructions (TPUT, TGET, TNOTIFY, TWAIT, TTEST). A member's peers on its own rank are
// plain memory; a peer on another rank is at an address no load reaches, served by MPI
// one-sided operations (docs/design/comm_domains.md, "Across hosts"). Copies share the domain.
class GlobalCommDomain {
 public:
  GlobalCommDomain() = default;
  const std::string &name() const;
  const std::vector<DomainMember> &members() const;  // a member's domain rank is its position
  // Member (rank, chip)'s context. On its own rank, the real one: its CommContext (device_ctx)
  // and buffers, for its chip tasks. On any other rank a stand-in with the same buffers'
  // offsets, device_ctx 0 and the addresses this rank would use: the replicated orchestration
  // builds every task's arguments on every rank, and only the task's rank runs it.
  // INVALID_ARGUMENT if (rank, chip) is no member or the domain was released.
  const ChipDomainContext &operator()(int rank, int chip) const;
  // Whether (rank, chip)'s context is the real one (its rank is this one).
  bool is_local(int rank, int chip) const;
  // No new task may name the domain. The windows stay until the run has finished (see
  // Orchestrator::allocate_domain). Idempotent.
  void release();
  bool released() const;

 private:
  friend class Orchestrator;
  std::shared_ptr<GlobalDomainState> s_;
};

// Submits the tasks of one L4 run on every rank; valid only during the orchestration function.
// Every rank must make the same calls in the same order (what a task's body does may differ).
// Tensor arguments must lie inside arrays of Worker::alloc or alloc_distributed
// (INVALID_ARGUMENT otherwise), so every rank can tell where their valid copy is. A task may
// write a tile of a distributed array only on the tile's owner: kAnyRank places such a task
// there; an explicit other rank, or writing tiles of two owners, is INVALID_ARGUMENT naming the
// task, the array, the tile, its owner and the rank asked.
class Orchestrator {
 public:
  int rank() const;
  int size() const;
  // A chip task on `rank` (or kAnyRank), chip index `chip` of that rank. Returns the L4 task id
  // (the same on every rank). `after`: L4 task ids of this run, on any rank; an edge from a task
  // on another rank is a token message (no data) sent once that task is done, and a failure of
  // that task fails this one as a data edge would.
  uint64_t submit_chip(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                       const ChipCallConfig &config = ChipCallConfig{}, int rank = kAnyRank,
                       int chip = kAnyChip, const std::string &name = "",
                       const std::vector<uint64_t> &after = {});
  // A SUB task `fn` on a SUB worker of `rank`. The directions of `args`' tensors drive the
  // dependencies and the data movement between ranks.
  uint64_t submit_sub(SubFn fn, const ChipStorageTaskArgs &args = ChipStorageTaskArgs{},
                      int rank = kAnyRank, const std::string &name = "",
                      const std::vector<uint64_t> &after = {});
  // Makes `rank`'s copy (or every rank's: kAllRanks) of the array holding `array` valid once
  // the run is done; the data moves there if it is elsewhere. To read results after run().
  // For a distributed array every tile lands there and stays (pinned: not counted against
  // landing_bytes, never evicted) until its owner writes it again: a way to gather for
  // checking, which needs the whole array's memory on that rank (not scalable).
  void fetch(const void *array, int rank = 0);
  // A communication domain over `members` (chips of any ranks; their order gives the domain
  // ranks): a zeroed window of window_size bytes per member, `buffers` carved from each in
  // order, as L3's allocate_domain (include/pto/comm_domain.h). Collective: every rank makes
  // the same call (the replicated orchestration does); each allocates its own members' windows
  // and exposes them in one MPI window. The windows live until the run has finished: the next
  // submit() (or close()) waits for that run, then frees them on every rank.
  // INVALID_ARGUMENT before anything is allocated for a bad member, size or buffer;
  // NOT_SUPPORTED in process mode (chip processes have no MPI) and below MPI_THREAD_MULTIPLE.
  GlobalCommDomain allocate_domain(const std::string &name, const std::vector<DomainMember> &members,
                                   uint64_t window_size, const std::vector<CommBufferSpec> &buffers = {});

 private:
  friend class Worker;
  Orchestrator(WorkerState *w, HostOrchestrator *o3);
  struct RunTasks;
  // Submits the task to the local L3 worker (on its own rank only): label, L3 `after` ids.
  using LocalSubmit = std::function<uint64_t(const std::string &, const std::vector<uint64_t> &)>;
  uint64_t submit(const char *kind, const ChipStorageTaskArgs &args, int rank, const std::string &name,
                  const std::vector<uint64_t> &after, const LocalSubmit &local);
  WorkerState *w_;
  HostOrchestrator *o3_;
  std::shared_ptr<RunTasks> run_;
};

// L4: one rank of an MPI job, owning an L3 worker. Construction and close() are collective
// over the communicator of WorkerOptions::mpi_comm, MPI_COMM_WORLD by default (the runtime
// duplicates it: its messages never meet the program's).
class Worker {
 public:
  // Throws NOT_SUPPORTED when built without MPI or when MPI gives less than
  // MPI_THREAD_SERIALIZED; INVALID_ARGUMENT naming a bad option.
  explicit Worker(const WorkerOptions &options);
  ~Worker();  // close(), reporting nothing
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  int level() const { return 4; }
  int rank() const;
  int size() const;
  int mpi_thread_level() const;  // what MPI provided (MPI_THREAD_* value)

  // A replicated array of nbytes: every rank gets its own copy (in its L3 host heap; 64-byte
  // aligned, not zeroed). `valid`: which copies hold the value at first, kAllRanks (every rank
  // wrote the same values, as a replicated program does) or one rank. Every rank must allocate
  // the same arrays in the same order.
  void *alloc(uint64_t nbytes, const std::string &name = "", int valid = kAllRanks);
  // A distributed array of nbytes cut into tiles (Distribution), each owned by one rank. Every
  // rank reserves the whole address range in its L3 host heap (4096-byte aligned; heap_bytes
  // must hold it), so a pointer into the array names the same bytes on every rank, but only the
  // pages a rank writes take memory: its own tiles, and the remote tiles it receives to read
  // (bounded by landing_bytes). Zeroed; each tile is valid on its owner at first (the owner may
  // set its tiles directly before a run). tile_bytes: kBlockCyclic's tile size (> 0); kBlock
  // takes 0. INVALID_ARGUMENT for a bad kind/tile_bytes or an array larger than heap_bytes,
  // OUT_OF_MEMORY when the heap has no free range that large. Every rank must allocate the same
  // arrays in the same order.
  void *alloc_distributed(uint64_t nbytes, const std::string &name, Distribution kind,
                          uint64_t tile_bytes = 0);
  // The ranks whose copy holds the current value once submitted work is done (the same answer
  // on every rank): of the whole array, or for a distributed array of the tile holding the byte
  // `array` points to.
  std::vector<int> valid_ranks(const void *array) const;

  using OrchFn = std::function<void(Orchestrator &)>;
  // Runs `orch` here (every rank runs it); this rank's tasks start as they are submitted. The
  // handle (an L3 RunHandle) waits for this rank's part only: its tasks and its transfers. A
  // task that failed on another rank and whose data was needed here fails the receive, naming
  // that task and its rank.
  RunHandle submit(const OrchFn &orch);
  WorkerRunStats run(const OrchFn &orch, int64_t timeout_ms = -1) { return submit(orch).wait(timeout_ms); }

  TransferCounts transfers() const;
  pto::Worker &l3();  // this rank's L3 worker (its chips and SUB workers)

  // Closes the L3 worker (waiting for its runs), stops the progress thread and says goodbye to
  // the peers. Not a barrier: a peer still waiting for data from this rank then fails
  // (divergence) instead of hanging. Idempotent; rethrows the L3 close's RUN_TIMEOUT.
  // timeout_ms: how long the L3 worker waits for its runs (default close_timeout_ms).
  void close();
  void close(uint32_t timeout_ms);
  bool closed() const;

  // True when this library was built with MPI (otherwise the constructor throws NOT_SUPPORTED).
  static bool mpi_available();

 private:
  std::unique_ptr<WorkerState> w_;
};

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_H
