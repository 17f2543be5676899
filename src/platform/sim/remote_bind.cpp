// src/platform/sim/remote_bind.cpp — the exported entry that binds who serves windows of other hosts.
//
// Compiled into each sim host program rather than the static platform library, as exec_bind.cpp
// is: the programs link with --exclude-libs, which hides every symbol of a static library, and the
// chip worker finds this one with dlsym (src/worker/chip_worker.cpp, ChipWorker::init).
#include "pto/sim_tile_pipes.h"
#include "tile_pipes_sim.h"

extern "C" __attribute__((visibility("default"))) void pto_sim_bind_remote_windows(
    pto_sim_remote_server server) {
  pto::bind_remote_window_server(server);
}
