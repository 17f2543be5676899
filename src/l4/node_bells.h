// src/l4/node_bells.h — the doorbells of the ranks on one node: how a rank wakes a peer's progress thread.
//
// The progress thread parks on its own bell (a futex word, l3::ShmBell); post() and close() ring
// it, and so does every rank on the same node that sends to this one (after its Isend) or
// completes a receive from it. Messages from other nodes are noticed by polling
// (docs/guide/l4.md, "Progress"). The bells of a node sit in one POSIX shared-memory segment.
#ifndef PTO_L4_NODE_BELLS_H
#define PTO_L4_NODE_BELLS_H

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "hierarchical/shm_bell.h"

namespace pto {
namespace l4 {

class NodeBells {
 public:
  // Maps the bells of the ranks of `comm` that share this node, one 64-byte slot each, in a
  // segment that node rank 0 creates and names (unlinked once every rank mapped it). Not an
  // MPI shared window: MPI_Finalize frees windows collectively, which hangs once a peer died.
  // On any failure this rank has no peers' bells (its messages are then polled for) and parks
  // on a bell of its own. Collective over the node. The segment stays mapped for the process's
  // life: a peer may still ring this rank's bell after it closed.
  void make(MPI_Comm comm, int rank, int size);

  // How many ranks of the job share this node (this one included; 1 when unknown).
  int node_size() const { return node_size_; }
  // Every other rank of the job shares this node: each message for this rank rings its bell.
  bool rings_every_peer() const { return rings_every_peer_; }
  // This rank's bell: what its progress thread parks on.
  l3::ShmBell &mine() { return *bell_; }
  // Rings `peer`'s bell if it shares this node; nothing otherwise.
  void ring(int peer) const {
    if (l3::ShmBell *b = peer_bell_.empty() ? nullptr : peer_bell_[static_cast<size_t>(peer)]) b->ring();
  }

 private:
  l3::ShmBell own_bell_;  // when the shared segment could not be made
  l3::ShmBell *bell_ = &own_bell_;
  std::vector<l3::ShmBell *> peer_bell_;  // [rank]: its bell when it shares this node, else null
  MPI_Comm node_comm_ = MPI_COMM_NULL;    // never freed: MPI_Comm_free may wait for a dead peer
  int node_size_ = 1;
  bool rings_every_peer_ = false;  // set by make()
};

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_NODE_BELLS_H
