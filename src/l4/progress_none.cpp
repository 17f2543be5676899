// src/l4/progress_none.cpp — the L4 progress thread of a build without MPI: constructing it says how to get MPI.
#include "l4/progress.h"

#include "pto/error.h"

namespace pto {
namespace l4 {

struct Progress::Impl {};

Progress::Progress(uint32_t, uint32_t, uint32_t, const void *) {
  throw Error(PTO_NOT_SUPPORTED,
              "pto::l4::Worker needs MPI, and this library was built without it (CMake's "
              "find_package(MPI COMPONENTS C) found none): install Open MPI "
              "(scripts/install_deps.sh --mpi installs libopenmpi-dev and openmpi-bin), rebuild, "
              "then launch the program with `mpirun -n N your_program`");
}
Progress::~Progress() = default;
int Progress::rank() const { return 0; }
int Progress::size() const { return 1; }
int Progress::thread_level() const { return 0; }
int Progress::ranks_on_node() const { return 1; }
void Progress::post(TransferPost) {}
void Progress::close() {}
uint64_t Progress::sent_done() const { return 0; }
uint64_t Progress::received_done() const { return 0; }
bool Progress::available() { return false; }
int Progress::create_window(void *, uint64_t, const std::string &) {
  throw Error(PTO_NOT_SUPPORTED, "communication domains across hosts need MPI");
}
void Progress::free_window(int, const std::string &) {}
int32_t Progress::rma(int, int, int, int, uint64_t, void *, uint64_t, int32_t) {
  return -1;
}
int32_t Progress::poll() {
  return 0;
}

}  // namespace l4
}  // namespace pto
