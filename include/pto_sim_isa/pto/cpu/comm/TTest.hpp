// include/pto_sim_isa/pto/cpu/comm/TTest.hpp — TTEST on the sim: PTO-ISA's test, and signals in
// windows of chips on other hosts read through the L4 worker.
//
// The contract is PTO-ISA's (pto/comm/pto_comm_inst.hpp, the pinned pto/cpu/comm/TTest.hpp):
// true when every int32 signal of the tensor's 5-D shape and strides compares true against
// cmpValue, without waiting. Each local signal is read with acquire ordering (PTO-ISA's reads are
// volatile); a signal at an address of another host's window (PTO_SIM_IS_REMOTE,
// include/pto/sim_tile_pipes.h) with an MPI atomic read through pto_sim_remote.
#ifndef PTO_SIM_COMM_TTEST_HPP
#define PTO_SIM_COMM_TTEST_HPP

#include <cstdint>

#include "pto/comm/comm_types.hpp"

namespace pto {
namespace comm {

PTO_INTERNAL bool TestCompareSignal(int32_t sigVal, int32_t cmpVal, WaitCmp cmp) {
  switch (cmp) {
    case WaitCmp::EQ:
      return sigVal == cmpVal;
    case WaitCmp::NE:
      return sigVal != cmpVal;
    case WaitCmp::GT:
      return sigVal > cmpVal;
    case WaitCmp::GE:
      return sigVal >= cmpVal;
    case WaitCmp::LT:
      return sigVal < cmpVal;
    case WaitCmp::LE:
      return sigVal <= cmpVal;
    default:
      return false;
  }
}

template <typename GlobalSignalData>
PTO_INTERNAL bool TTEST_IMPL(GlobalSignalData &signalData, int32_t cmpValue, WaitCmp cmp) {
  static_assert(sizeof(typename GlobalSignalData::DType) == sizeof(int32_t),
                "TTEST: signal type must be 32-bit (int32_t)");
  int64_t shape[5], stride[5];
  for (int d = 0; d < 5; ++d) {
    shape[d] = signalData.GetShape(d);
    stride[d] = signalData.GetStride(d);
  }
  auto *base = reinterpret_cast<int32_t *>(signalData.data());
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j)
      for (int64_t k = 0; k < shape[2]; ++k)
        for (int64_t l = 0; l < shape[3]; ++l)
          for (int64_t m = 0; m < shape[4]; ++m) {
            int32_t *at =
                base + i * stride[0] + j * stride[1] + k * stride[2] + l * stride[3] + m * stride[4];
            int32_t value;
            if (PTO_SIM_IS_REMOTE(at)) {
              pto_sim_remote(PTO_SIM_REMOTE_LOAD32, 0, reinterpret_cast<uint64_t>(at), &value, 4, 0);
            } else {
              value = __atomic_load_n(at, __ATOMIC_ACQUIRE);
            }
            if (!TestCompareSignal(value, cmpValue, cmp)) return false;
          }
  return true;
}

}  // namespace comm
}  // namespace pto

#endif  // PTO_SIM_COMM_TTEST_HPP
