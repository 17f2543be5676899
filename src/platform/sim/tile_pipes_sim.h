// src/platform/sim/tile_pipes_sim.h — PTO-ISA's TPUSH/TPOP pipes on the sim's cores.
//
// A tile kernel's pipe calls reach this file through the table the device hands each kernel it
// loads (include/pto/sim_tile_pipes.h, bind_tile_pipes). Three things make them work here:
//   - the state: PTO-ISA keeps a pipe's ring in a SharedState it asks the sim for by key; the
//     device keeps one per (cluster, key), zeroed on first use, until its next launch. The AIC
//     and AIV parts of a MIX task run on one cluster, so they meet in it; a later task on the
//     cluster finds what the earlier one left (PTO-ISA's model of the hardware FIFO);
//   - the lane: pto_sim_get_subblock_id is the core's lane among its cluster's AIV cores;
//   - the waits: PTO-ISA waits on a condition variable in the state. Here a wait is the
//     runtime's (pto_platform/kernel_call.h, KernelWaits, given for a MIX part's call): it
//     suspends the core, not the OS thread, and fails the task when no other part can end it.
//     A pipe wait in a task that is not MIX stops the kernel: nothing could end it.
// Each core has a SimCoreSlot; the OS thread that runs a core (the fiber pool's worker that
// resumed its fiber, or its own thread) points at it, so the hooks know the calling core.
#ifndef PTO_PLATFORM_SIM_TILE_PIPES_SIM_H
#define PTO_PLATFORM_SIM_TILE_PIPES_SIM_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "pto/sim_tile_pipes.h"
#include "pto_platform/kernel_call.h"

namespace pto {

// The pipes' states of one device, by (cluster, PTO-ISA pipe key).
class TilePipes {
 public:
  TilePipes() = default;
  TilePipes(const TilePipes &) = delete;
  TilePipes &operator=(const TilePipes &) = delete;
  ~TilePipes() { clear(); }

  void *state(uint32_t cluster, uint64_t key, size_t size);
  // The key of the state of `cluster` that holds `addr`; false if none does.
  bool key_of(uint32_t cluster, const void *addr, uint64_t *key);
  // Frees every state: only while no kernel of the device runs (a launch, shutdown).
  void clear();

 private:
  struct State {
    void *mem;
    size_t size;
  };
  std::mutex mu_;
  std::map<std::pair<uint32_t, uint64_t>, State> states_;  // mu_
};

// One core of a device, as the pipe hooks see it.
struct SimCoreSlot {
  TilePipes *pipes = nullptr;  // its device's
  uint32_t cluster = 0;
  uint32_t subblock = 0;  // its lane among its cluster's AIV cores; 0 on an AIC core
  bool aic = false;
  const KernelWaits *waits = nullptr;  // the runtime's, during a MIX part's call; else null
  // PTO-ISA's tile memory while the core's kernel waits on a pipe (pto/sim_tile_pipes.h,
  // core_memory): allocated at the first wait, ended and freed by release_core_memory.
  void *memory = nullptr;
  size_t memory_size = 0;
  void (*destroy_memory)(void *) = nullptr;
  // Its device's: true from the moment the device stops a run (time-out, cancel) until the next
  // launch; a TWAIT seeing it stops its kernel (pto/sim_tile_pipes.h, signal_wait).
  const std::atomic<bool> *stop_waits = nullptr;
  // The signal its kernel's TWAIT waits for now (null: none), what it read, the condition and
  // since when: read by the device's report from another thread, hence atomics.
  std::atomic<const void *> wait_signal{nullptr};
  std::atomic<int32_t> wait_value{0}, wait_cmp{0}, wait_want{0};
  std::atomic<uint64_t> wait_since_ns{0};
};

// "core AIV 5 (cluster 2): TWAIT on signal 0x... = 0, waiting for >= 1 for 1.20 s" for each of
// `n` slots whose kernel waits on a signal now, a line each; empty if none does.
std::string signal_waits_report(const SimCoreSlot *slots, uint32_t n, uint64_t now_ns);

// Ends and frees slot.memory: when no kernel of the device runs any more and before the kernel
// binaries (whose code `destroy_memory` is) are unloaded.
void release_core_memory(SimCoreSlot &slot);

// The core whose code runs on this OS thread from now on (null: none): set by the fiber pool's
// resume hook, on every resume, and by a core's own thread (PTO_SIM_EXEC=threads).
extern __attribute__((tls_model("initial-exec"))) thread_local SimCoreSlot *t_sim_core_slot;
inline void sim_core_set_current(SimCoreSlot *slot) {
  t_sim_core_slot = slot;
}

// The calling core's kernel call starts (waits non-null) or ends (null): how platform_call_kernel
// in a device program reaches the slot (sim_exec.h, SimCoreHooks).
void sim_core_set_kernel_waits(const KernelWaits *waits);

// Hands a loaded kernel binary the pipe hooks, if it has the entry (tile kernels do).
void bind_tile_pipes(void *lib);

// Who serves the kernels' accesses to windows of other hosts (pto/sim_tile_pipes.h, `remote`):
// set through the host program's exported pto_sim_bind_remote_windows (remote_bind.cpp).
void bind_remote_window_server(pto_sim_remote_server server);

}  // namespace pto
#endif  // PTO_PLATFORM_SIM_TILE_PIPES_SIM_H
