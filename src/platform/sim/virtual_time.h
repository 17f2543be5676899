// src/platform/sim/virtual_time.h — the timing model of a seeded run: each fiber's virtual clock,
// what a kernel costs and what a hand-off between simulated threads and cores takes.
//
// A fiber's clock only moves while it is off the executor's thread — when it is made runnable
// (to the ringer's clock plus the hand-off's latency), when a kernel suspends or ends (by its
// cost), when it yields (to the earliest other runnable clock) — and the executor runs the
// runnable fiber with the smallest clock next, so whatever a fiber does in one resume happens at
// one instant, and it happens only once no runnable fiber is earlier: a discrete-event simulation
// in which nothing sees an effect before its cause (docs/design/sim_execution.md, timing mode).
//
// Owned by one DeterministicExecutor::Impl (deterministic_executor.cpp). Its thread is the only
// one that touches a model while a launch runs, except where a method says "mu held": there the
// caller holds the executor's mutex, which is what orders the host's pushes and begin() against
// that thread.
#ifndef PTO_PLATFORM_SIM_VIRTUAL_TIME_H
#define PTO_PLATFORM_SIM_VIRTUAL_TIME_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fiber.h"
#include "pto_platform/device.h"

namespace pto {
namespace fibers {

class VirtualTime {
 public:
  // A launch begins (mu held, the group settled): `timing` non-null turns the model on for it
  // (copied), with every fiber's clock back at 0; null turns it off.
  void begin(const SimTiming *timing);
  void end() { on_ = false; }  // mu held
  bool on() const { return on_; }

  // f's clock (ns since the launch began); a fiber that has not run in this launch starts at 0.
  uint64_t &clock(Fiber *f) {
    if (f->vt_epoch != epoch_) {
      f->vt_epoch = epoch_;
      f->vt = 0;
      f->in_kernel = false;
    }
    return f->vt;
  }

  // f was made runnable by `ringer`, a fiber of the same launch (mu held): f goes on no earlier
  // than the ring plus the hand-off's latency between their roles.
  void rung(Fiber *f, Fiber *ringer);
  // f yielded (mu held): it waits for the others, its clock moves to the earliest of theirs.
  void yielded(Fiber *f, const std::vector<Fiber *> &runnable);

  // The index of the runnable fiber with the smallest clock (mu held, runnable not empty);
  // among ties, one drawn uniformly with draw() (reservoir sampling, one draw per tie).
  template <typename Draw>
  size_t earliest(const std::vector<Fiber *> &runnable, Draw &&draw) {
    size_t chosen = 0;
    uint64_t best = UINT64_MAX, ties = 0;
    for (size_t k = 0; k < runnable.size(); ++k) {
      const uint64_t vt = clock(runnable[k]);
      if (vt < best) {
        best = vt;
        chosen = k;
        ties = 1;
      } else if (vt == best && draw() % ++ties == 0) {
        chosen = k;
      }
    }
    return chosen;
  }

  // Around one resume of f on the executor's thread: a kernel's host compute counts while it
  // runs (scaled by the timing's kernel_factor) unless the cost table fixes its time.
  void resuming(Fiber *f) {
    if (f->in_kernel) f->segment_start = platform_now_ns();
  }
  void suspended(Fiber *f, bool done) {
    if (f->in_kernel && !done) account_segment(f);
  }

  // f's core starts the kernel at `entry` (platform_kernel_begin): prices it from the cost
  // table or its model, else from its host time, and says which in *price.
  void kernel_begin(Fiber *f, uint64_t entry, int64_t *args, uint32_t num_args, KernelPrice *price);
  // ... and it returned: f's clock moves to the kernel's end.
  void kernel_end(Fiber *f);
  // f did one piece of AICPU work of kind `what` (DeviceWork) over `units`: its clock moves on
  // by its price. True when it moved (the caller then lets earlier fibers go first).
  bool device_work(Fiber *f, uint32_t what, uint32_t units);

  // The largest clock a fiber of the launch begun last reached so far (ns); any thread.
  uint64_t makespan() const { return makespan_.load(std::memory_order_acquire); }
  // How many kernel invocations of the launch each KernelPrice source priced (mu held, the
  // launch ended).
  void priced(uint64_t (&counts)[PTO_PRICE_SOURCE_COUNT]) const;

 private:
  void reached(uint64_t vt) {
    if (vt > makespan_.load(std::memory_order_relaxed)) makespan_.store(vt, std::memory_order_release);
  }
  void account_segment(Fiber *f);

  bool on_ = false;
  uint32_t epoch_ = 0;  // fibers whose vt_epoch differs start this launch at 0
  double factor_ = 1.0;
  double cycles_per_us_ = 0;                                  // SimTiming::cycles_per_us
  std::unordered_map<uint64_t, SimKernelCost> kernel_costs_;  // by entry
  uint64_t latency_[3][3] = {};                               // [ringer role][woken role]
  uint64_t work_ns_[kDeviceWorkKinds] = {};                   // SimTiming::work_ns
  uint64_t work_unit_ns_[kDeviceWorkKinds] = {};              // SimTiming::work_unit_ns
  // Global memory as one server of gm_bytes_per_ns_ (0: unlimited): every kernel's transfers
  // queue on it in the order the kernels start, and it is free again at gm_free_ (virtual ns).
  double gm_bytes_per_ns_ = 0;
  double mte2_cube_ = 0, mte2_vector_ = 0, mte3_ = 0, fixp_ = 0;  // SimTiming's pipe rates
  uint64_t gm_free_ = 0;
  // Written by the executor's thread (release), read by makespan() on any thread.
  std::atomic<uint64_t> makespan_{0};
  // Only one fiber of the launch runs at a time, so the counters need no lock.
  uint64_t priced_[PTO_PRICE_SOURCE_COUNT] = {};  // kernel invocations of this launch by source
};

}  // namespace fibers
}  // namespace pto
#endif  // PTO_PLATFORM_SIM_VIRTUAL_TIME_H
