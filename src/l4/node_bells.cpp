// src/l4/node_bells.cpp — the doorbells of the ranks on one node (node_bells.h).
#include "l4/node_bells.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace pto {
namespace l4 {

void NodeBells::make(MPI_Comm comm, int rank, int size) {
  peer_bell_.assign(static_cast<size_t>(size), nullptr);
  rings_every_peer_ = size == 1;  // no peer to ring
  if (size == 1 ||
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm_) != MPI_SUCCESS)
    return;
  int node_size = 0, node_rank = 0;
  MPI_Comm_size(node_comm_, &node_size);
  node_size_ = node_size;
  MPI_Comm_rank(node_comm_, &node_rank);
  const size_t bytes = 64 * static_cast<size_t>(node_size);
  char name[64] = {0};
  if (node_rank == 0) {
    std::snprintf(
        name, sizeof name, "/pto_l4_bells_%d_%llx", static_cast<int>(getpid()),
        static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()));
    const int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) name[0] = 0;  // zero-filled: idle bells
    if (fd >= 0) ::close(fd);
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, node_comm_);
  char *base = nullptr;
  if (name[0]) {
    const int fd = shm_open(name, O_RDWR, 0600);
    if (fd >= 0) {
      void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) base = static_cast<char *>(p);
      ::close(fd);
    }
  }
  MPI_Barrier(node_comm_);  // every rank mapped it (or gave up)
  if (node_rank == 0 && name[0]) shm_unlink(name);
  if (base == nullptr) return;
  bell_ = reinterpret_cast<l3::ShmBell *>(base + 64 * static_cast<size_t>(node_rank));
  MPI_Group node_group, group;
  MPI_Comm_group(node_comm_, &node_group);
  MPI_Comm_group(comm, &group);
  for (int j = 0; j < node_size; ++j) {
    int r = MPI_UNDEFINED;
    MPI_Group_translate_ranks(node_group, 1, &j, group, &r);
    if (r != MPI_UNDEFINED && r != rank)
      peer_bell_[static_cast<size_t>(r)] =
          reinterpret_cast<l3::ShmBell *>(base + 64 * static_cast<size_t>(j));
  }
  MPI_Group_free(&node_group);
  MPI_Group_free(&group);
  rings_every_peer_ = node_size == size;
}

}  // namespace l4
}  // namespace pto
