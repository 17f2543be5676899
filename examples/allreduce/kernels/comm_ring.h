// examples/allreduce/kernels/comm_ring.h — what both all-reduce kernels share: their arguments,
// a peer's copy of a window address, and the barrier-free flag protocol.
//
// Arguments (orchestration.cpp passes the run's, in order):
//   tensor 0  in    float32[n]   this chip's input
//   tensor 1  out   float32[n]   the sum over every rank's input
//   tensor 2  data  float32[..]  the domain buffer "data" (this chip's window; used in place)
//   tensor 3  flags int32[..]    the domain buffer "flags" (zero when the domain is made)
//   scalar 0  n, the elements of in and out
//   scalar 1  the CommContext (ChipDomainContext.device_ctx)
//   scalar 2  epoch: 1 on a domain's first all-reduce, 2 on its second, ...
// A flag only ever grows: a peer adds 1 per epoch (TNOTIFY AtomicAdd) and a rank waits for it to
// reach the epoch (TWAIT GE), so one domain serves any number of all-reduces in a row.
#ifndef EXAMPLES_ALLREDUCE_COMM_RING_H
#define EXAMPLES_ALLREDUCE_COMM_RING_H

#include <cstdint>
#include <cstring>

#include <pto/pto-inst.hpp>

#include "platform_comm/comm_context.h"
#include "pto/comm/comm_types.hpp"
#include "pto/comm/pto_comm_inst.hpp"
#include "pto/kernel.h"

namespace allreduce {

struct Args {
  const float *in;
  float *out;
  float *data;
  int32_t *flags;
  uint64_t n;  // elements of in and out
  const CommContext *ctx;
  int32_t epoch;
  int rank, ranks;
};

inline Args args_of(int64_t *args) {
  Args a;
  a.in = pto::tensor<float>(args, 0);
  a.out = pto::tensor<float>(args, 1);
  a.data = pto::tensor<float>(args, 2);
  a.flags = pto::tensor<int32_t>(args, 3);
  a.n = static_cast<uint64_t>(args[4]);
  a.ctx = reinterpret_cast<const CommContext *>(args[5]);
  a.epoch = static_cast<int32_t>(args[6]);
  a.rank = static_cast<int>(a.ctx->rankId);
  a.ranks = static_cast<int>(a.ctx->rankNum);
  return a;
}

// Rank `peer`'s copy of `local`, an address in this rank's window.
template <class T>
T *at_peer(const CommContext *ctx, T *local, int peer) {
  const uint64_t offset = reinterpret_cast<uint64_t>(local) - ctx->windowsIn[ctx->rankId];
  return reinterpret_cast<T *>(ctx->windowsIn[peer] + offset);
}

// Writes `count` floats from `src` (this rank's memory) to `dst`, an address in a peer's window,
// with PTO-ISA's TPUT: on the sim a memcpy for a peer on this host, an MPI put for one on another
// host (an L4 domain), the data in place when it returns. The staging tile is the device's UB
// bounce buffer; the sim does not use it.
inline void put(float *dst, float *src, uint64_t count) {
  using Row = pto::GlobalTensor<float, pto::Shape<1, 1, 1, 1, pto::DYNAMIC>, pto::Stride<1, 1, 1, 1, 1>>;
  using Stage = pto::Tile<pto::TileType::Vec, float, 1, 64, pto::BLayout::RowMajor, 1, 64>;
  const pto::Shape<1, 1, 1, 1, pto::DYNAMIC> shape(1, 1, 1, 1, static_cast<int64_t>(count));
  Row to(dst, shape), from(src, shape);
  Stage stage;
  pto::comm::TPUT(to, from, stage);
}

// Adds 1 to flag `slot` of rank `peer`: what this rank wrote before is visible to whoever saw it.
inline void notify(const Args &a, int peer, int slot) {
  pto::comm::Signal s(at_peer(a.ctx, a.flags + slot, peer));
  pto::comm::TNOTIFY(s, 1, pto::comm::NotifyOp::AtomicAdd);
}

// Waits until this rank's flag `slot` reached the epoch.
inline void wait(const Args &a, int slot) {
  pto::comm::Signal s(a.flags + slot);
  pto::comm::TWAIT(s, a.epoch, pto::comm::WaitCmp::GE);
}

}  // namespace allreduce

#endif  // EXAMPLES_ALLREDUCE_COMM_RING_H
