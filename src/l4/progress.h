// src/l4/progress.h — the one MPI progress thread of an L4 rank: transfers posted by SUB bodies, settled as Events.
//
// Send and receive bodies (L3 inline SUB tasks, always_run) call post() with the Event they
// deferred and return; with MPI_THREAD_MULTIPLE post() issues the MPI_Isend/MPI_Irecv itself,
// else the thread does. The thread tests the requests (MPI_Testsome) and fulfills or fails
// each Event, which retires the task in L3 and releases or poisons its dependents. It waits
// for messages on a doorbell that ranks on the same node ring after sending to this one (and
// spins for a while after each event, spin_us), polls for messages from other nodes, heartbeats
// the peers and fails receives from a peer silent for peer_timeout. With MPI_THREAD_SERIALIZED
// every MPI call of the runtime after construction is made on this thread (construction and
// close() run on the caller's thread, before it starts and after it stopped).
// Design: docs/guide/l4.md, "Messages", "Progress" and "Failures". Built from progress_mpi.cpp when
// CMake found MPI, else from progress_none.cpp (the constructor throws NOT_SUPPORTED).
#ifndef PTO_L4_PROGRESS_H
#define PTO_L4_PROGRESS_H

#include <cstdint>
#include <memory>
#include <string>

#include "pto/worker.h"

namespace pto {
namespace l4 {

// TransferPost::data_index of a token: the message of an explicit edge across ranks (after= a
// task on another rank), header only, no array.
constexpr uint64_t kTokenIndex = ~uint64_t{0};

// One half of a transfer, this rank's side.
struct TransferPost {
  bool send = false;
  int peer = 0;
  uint64_t seq = 0;         // the transfer number (global, the same on both ranks)
  uint64_t data_index = 0;  // which array (global)
  uint64_t tile = 0;        // which tile of a distributed array (0 for a replicated one)
  void *payload = nullptr;  // this rank's copy of the array, or of the tile
  uint64_t nbytes = 0;
  // send: the sender's upstream error ("" = the data is valid), carried in the header.
  // receive: a local predecessor's failure; the receive still receives, then fails with it.
  std::string error;
  std::string what;  // "transfer 7 of 'x' (for L4 task 9 'sum') from rank 2 to rank 0"
  Event event;
};

class Progress {
 public:
  // Initializes MPI if the program did not (MPI_THREAD_MULTIPLE asked; finalized at exit),
  // duplicates *comm (an MPI_Comm; null: MPI_COMM_WORLD; collective), starts the thread.
  // NOT_SUPPORTED without MPI or below MPI_THREAD_SERIALIZED.
  // After the last event (a post, a completed transfer) the thread keeps testing for spin_us,
  // yielding its CPU between tests, before it falls back to pauses of up to poll_max_us.
  Progress(uint32_t peer_timeout_ms, uint32_t poll_max_us, uint32_t spin_us, const void *comm);
  ~Progress();  // close()
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  int rank() const;
  int size() const;
  int thread_level() const;
  // From any thread (SUB bodies). Throws NOT_INITIALIZED once closed.
  void post(TransferPost p);
  // Stops the thread (failing what is outstanding), says goodbye to the peers. Idempotent.
  void close();
  // Ranks of the job on this node, this one included (1 without MPI or when unknown).
  int ranks_on_node() const;
  uint64_t sent_done() const;
  uint64_t received_done() const;

  static bool available();

  // One-sided windows, for communication domains across hosts (comm_domain_l4.cpp). Collective
  // over the runtime's communicator: every rank creates and frees the same windows in the same
  // order (the replicated orchestration does). A window exposes [base, base + bytes) of this
  // rank (bytes may be 0) and is locked for every peer (passive target) until freed.
  // create_window: the window's id; NOT_SUPPORTED below MPI_THREAD_MULTIPLE (kernels on any
  // thread call rma), CAPACITY_EXCEEDED past kMaxWindows open at once.
  static constexpr int kMaxWindows = 256;
  int create_window(void *base, uint64_t bytes, const std::string &what);
  // Frees window `id` once every rank came to free it too (a non-blocking barrier, then the
  // collective MPI_Win_free). A rank that does not come within peer_timeout (it died, or its
  // run hangs) leaves the window open here and throws RUN_TIMEOUT naming `what`: never a wait
  // without end.
  void free_window(int id, const std::string &what);
  // A kernel's access (a pto_sim_remote_op, include/pto/sim_tile_pipes.h) to `nbytes` at byte
  // `disp` of rank `target`'s part of window `id`, from any thread: 0 or a
  // pto_comm_remote_status (pto/kernel_stop.h); an MPI error is also written to stderr. The
  // atomic ones need the target's progress: its thread is rung (same node) or polls every 50 us
  // while a window is open.
  int32_t rma(int id, int op, int dtype, int target, uint64_t disp, void *local, uint64_t nbytes,
              int32_t value);
  // One turn of MPI's progress engine from any thread (an MPI_Iprobe on the runtime's
  // communicator, which receives nothing): applies peers' one-sided atomics on this rank's
  // windows now rather than at the progress thread's next wake-up. Returns 0.
  int32_t poll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_PROGRESS_H
