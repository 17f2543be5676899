// include/pto_sim_isa/pto/cpu/comm/TNotify.hpp — TNOTIFY on the sim: PTO-ISA's update of the
// signal, then a wake-up for the cores waiting on it.
//
// The update is PTO-ISA's (the pinned pto/cpu/comm/TNotify.hpp): a seq_cst fetch_add for
// NotifyOp::AtomicAdd, a seq_cst store for NotifyOp::Set. A core in TWAIT (TWait.hpp here) looks
// at its signal a few times, yielding its fiber between looks, then sleeps on the signal's
// address with a futex (src/platform/sim/tile_pipes_sim.cpp, hook_signal_wait); the FUTEX_WAKE
// below ends that sleep at once instead of at its time-out. The futex is the shared kind, not
// FUTEX_PRIVATE_FLAG: in process mode the notifier and the waiter are different processes that
// map the same window. Signals written without TNOTIFY (a plain store) are seen at the waiter's
// next look, after at most its sleep's time-out.
//
// A signal in the window of a chip on another host (PTO_SIM_IS_REMOTE) is updated through the L4
// worker instead: an MPI atomic (MPI_Accumulate) completed before TNOTIFY returns
// (docs/design/comm_domains.md, "Across hosts").
#ifndef PTO_COMM_TNOTIFY_HPP
#define PTO_COMM_TNOTIFY_HPP
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

#include "pto/comm/comm_types.hpp"

namespace pto {
namespace comm {

template <typename GlobalSignalData>
inline void TNOTIFY_IMPL(GlobalSignalData &dstSignalData, int32_t value, NotifyOp op) {
  using DType = typename GlobalSignalData::DType;
  if (PTO_SIM_IS_REMOTE(dstSignalData.data())) {  // a chip on another host: through the L4 worker
    static_assert(sizeof(DType) == 4, "TNOTIFY: signal type must be 32-bit");
    const int remote_op = op == NotifyOp::AtomicAdd ? PTO_SIM_REMOTE_NOTIFY_ADD : PTO_SIM_REMOTE_NOTIFY_SET;
    if (op != NotifyOp::AtomicAdd && op != NotifyOp::Set) return;
    pto_sim_remote(remote_op, 0, reinterpret_cast<uint64_t>(dstSignalData.data()), nullptr, 4, value);
    return;
  }
  auto *signal = reinterpret_cast<std::atomic<DType> *>(dstSignalData.data());
  switch (op) {
    case NotifyOp::AtomicAdd:
      signal->fetch_add(static_cast<DType>(value), std::memory_order_seq_cst);
      break;
    case NotifyOp::Set:
      signal->store(static_cast<DType>(value), std::memory_order_seq_cst);
      break;
    default:
      return;
  }
  if constexpr (sizeof(DType) == 4) {
    syscall(SYS_futex, reinterpret_cast<int32_t *>(dstSignalData.data()), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
  }
}

}  // namespace comm
}  // namespace pto
#endif  // PTO_COMM_TNOTIFY_HPP
