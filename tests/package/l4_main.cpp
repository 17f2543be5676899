// tests/package/l4_main.cpp — a user of the installed package's L4 (pto_runtime::l4): one rank, one SUB task.
//
// Run without mpirun it is a singleton MPI job of one rank (the worker initializes MPI itself).
// Prints "OK l4: ..." when the task's write reached the array.
#include <cstdint>
#include <cstdio>
#include <exception>

#include "pto/l4.h"

int main() {
  try {
    pto::l4::WorkerOptions o;
    o.device_ids = {0};
    o.num_sub_workers = 1;
    pto::l4::Worker w(o);
    auto *x = static_cast<int64_t *>(w.alloc(sizeof(int64_t), "x"));
    *x = 20;
    w.run(
        [&](pto::l4::Orchestrator &orch) {
          pto::ChipStorageTaskArgs a;
          a.add_tensor(x, sizeof(int64_t), PTO_DTYPE_I64, {1}, PTO_DIR_INOUT);
          orch.submit_sub([x](pto::SubContext &) { *x += 22; }, a, 0, "add");
        },
        60000);
    const int64_t got = *x;
    const int rank = w.rank(), size = w.size();
    w.close();
    if (got != 42) {
      std::fprintf(stderr, "l4: x = %lld, expected 42\n", static_cast<long long>(got));
      return 1;
    }
    std::printf("OK l4: rank %d of %d, x = %lld\n", rank, size, static_cast<long long>(got));
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "l4: %s\n", e.what());
    return 1;
  }
}
