// src/worker/remote_windows.h — who serves kernels' accesses to windows of chips on other hosts.
//
// A sim host program (one per runtime, loaded by ChipWorker::init) asks its chip worker for the
// server through the getter it was bound to (include/pto/sim_tile_pipes.h,
// pto_sim_bind_remote_windows). The L4 worker sets the server when it allocates its first
// communication domain across hosts (src/l4/comm_domain_l4.cpp); until then, and in chip
// processes (forked before), there is none and such an access stops its kernel as not supported.
#ifndef PTO_WORKER_REMOTE_WINDOWS_H
#define PTO_WORKER_REMOTE_WINDOWS_H

#include "pto/sim_tile_pipes.h"

namespace pto {

void set_remote_window_server(pto_sim_remote_fn fn);
// The getter bound into every host program that exports PTO_SIM_BIND_REMOTE_WINDOWS_SYMBOL.
pto_sim_remote_fn remote_window_server();

}  // namespace pto
#endif  // PTO_WORKER_REMOTE_WINDOWS_H
