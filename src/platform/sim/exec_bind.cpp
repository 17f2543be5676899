// src/platform/sim/exec_bind.cpp — the exported entries of the sim's exec and core hooks (sim_exec.h).
//
// Compiled into each program rather than the static platform library: the programs link with
// --exclude-libs, which hides every symbol of a static library, and these must be found by
// dlsym.
#include "sim_exec.h"

extern "C" __attribute__((visibility("default"))) void pto_sim_bind_exec(const pto::SimExecHooks *hooks) {
  pto::g_platform_timed_runs.store(hooks->timed_runs, std::memory_order_relaxed);
  pto::g_sim_exec.store(hooks, std::memory_order_release);
}

extern "C" __attribute__((visibility("default"))) void pto_sim_bind_core(const pto::SimCoreHooks *hooks) {
  pto::g_sim_core.store(hooks, std::memory_order_release);
}
