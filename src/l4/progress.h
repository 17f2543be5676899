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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_PROGRESS_H
