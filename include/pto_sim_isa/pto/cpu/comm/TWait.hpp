// include/pto_sim_isa/pto/cpu/comm/TWait.hpp — TWAIT on the sim: the waiting core's fiber is
// suspended, never its OS thread, and the wait ends when its run is stopped.
//
// PTO-ISA's own CPU TWAIT (the pinned pto/cpu/comm/TWait.hpp) sleeps its OS thread 10 us per
// look and, after 100 000 looks, returns as if the signals were set. Neither suits the sim: it
// runs every core as a fiber on as many OS threads as CPUs, so a sleeping waiter holds one of
// those threads (with 2 CPUs, two waiters stop every other core, the notifier among them), and a
// wait that gives up silently lets the kernel go on with data that is not there.
//
// KernelCompiler puts include/pto_sim_isa before PTO-ISA's include directory for sim tile
// kernels only (src/worker/compile_command.cpp), so PTO-ISA's `#include
// "pto/cpu/comm/TWait.hpp"` (pto/comm/pto_comm_instr_impl.hpp) comes here. The contract is
// PTO-ISA's (pto/comm/pto_comm_inst.hpp): every int32 signal of the tensor's 5-D shape and
// strides must compare true against cmpValue; each is read with acquire ordering, so what the
// notifier wrote before its TNOTIFY (a seq_cst read-modify-write or store) is visible once the
// wait returns. Between two looks the kernel calls pto_sim_signal_pause (the force-included
// pto_tile_sim_hooks.h): the core's fiber yields to every other runnable fiber, and when the
// device stops its run (time-out, cancel, a failed peer) the kernel is stopped with
// pto::KernelStop and the run's report names the signal (docs/design/comm_domains.md). A signal
// in the window of a chip on another host (PTO_SIM_IS_REMOTE) is read through the L4 worker.
#ifndef TWAIT_HPP
#define TWAIT_HPP
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "pto/comm/comm_types.hpp"
#include "pto/cpu/comm/TTest.hpp"  // TestCompareSignal

namespace pto {
namespace comm {

template <typename GlobalSignalData>
inline void TWAIT_IMPL(GlobalSignalData &signalData, int32_t cmpValue, WaitCmp cmp) {
  static_assert(std::is_same_v<typename GlobalSignalData::RawDType, int32_t>,
                "TWAIT: signal type must be int32_t");
  int shape[5];
  int64_t stride[5];
  for (int d = 0; d < 5; ++d) {
    shape[d] = static_cast<int>(signalData.GetShape(d));
    stride[d] = signalData.GetStride(d);
  }
  PTO_ASSERT(shape[0] > 0 && shape[1] > 0 && shape[2] > 0 && shape[3] > 0 && shape[4] > 0,
             "TWAIT: invalid signal data shape, all dimensions must be positive.");
  int32_t *base = reinterpret_cast<int32_t *>(signalData.data());
  const int64_t total = int64_t{shape[0]} * shape[1] * shape[2] * shape[3] * shape[4];
  // Every look reads every signal: all must hold at once, as on the device.
  for (unsigned long long polls = 0;; ++polls) {
    int64_t i = 0;
    for (; i < total; ++i) {
      int64_t rest = i, offset = 0;
      for (int d = 4; d >= 0; --d) {
        offset += (rest % shape[d]) * stride[d];
        rest /= shape[d];
      }
      int32_t value;
      if (PTO_SIM_IS_REMOTE(base + offset)) {  // a chip on another host: an MPI atomic read
        pto_sim_remote(PTO_SIM_REMOTE_LOAD32, 0, reinterpret_cast<uint64_t>(base + offset), &value, 4, 0);
      } else {
        value = __atomic_load_n(base + offset, __ATOMIC_ACQUIRE);
      }
      if (!TestCompareSignal(value, cmpValue, cmp)) {
        pto_sim_signal_pause(base + offset, value, static_cast<int>(cmp), cmpValue, polls);
        break;
      }
    }
    if (i == total) {
      if (polls > 0) pto_sim_signal_pause(nullptr, 0, 0, 0, polls);  // the wait is over
      return;
    }
  }
}

}  // namespace comm
}  // namespace pto

#endif  // TWAIT_HPP
