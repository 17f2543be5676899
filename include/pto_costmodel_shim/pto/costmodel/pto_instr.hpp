// include/pto_costmodel_shim/pto/costmodel/pto_instr.hpp — MrgSortExecutedNumList, TFILLPAD's and TEXPANDS' impls.
//
// With __COSTMODEL, pto/pto-inst.hpp includes pto/costmodel/pto_instr.hpp "as a drop-in
// replacement" for pto/common/pto_instr.hpp (it reuses that header's PTO_INSTR_HPP guard), but
// at the pinned PTO-ISA (cd4a3d3f) only the common header defines pto::MrgSortExecutedNumList
// (pto/common/pto_instr.hpp:23), while the cost model's TMRGSORT overloads
// (pto/costmodel/pto_instr.hpp:750-779) and the a2a3 implementation it includes
// (pto/npu/a2a3/TMrgSort.hpp:212-261) take it by reference: unknown type, no build compiles.
// We define it as the common header does (same members, same order: a kernel's TMRGSORT
// receives what it would on the CPU simulation), then include the real header.
#ifndef PTO_COSTMODEL_SHIM_PTO_INSTR_HPP
#define PTO_COSTMODEL_SHIM_PTO_INSTR_HPP

#include <cstdint>

namespace pto {
struct MrgSortExecutedNumList {
  uint16_t mrgSortList0;
  uint16_t mrgSortList1;
  uint16_t mrgSortList2;
  uint16_t mrgSortList3;
};
}  // namespace pto

#include_next <pto/costmodel/pto_instr.hpp>

// TFILLPAD_INPLACE / TFILLPAD (pto/costmodel/pto_instr.hpp:919-959) call TFILLPAD_*_IMPL, but
// the cost model's subset of a2a3 implementations (pto/common/pto_instr_impl.hpp:19-69) leaves
// out pto/npu/a2a3/TFillPad.hpp, which defines them. The calls are dependent, so declaring the
// implementations after the instruction templates is enough (found by ADL at instantiation).
// TEXPANDS (pto/costmodel/pto_instr.hpp:382-387) likewise calls TEXPANDS_IMPL, which only
// pto/npu/a2a3/TExpandS.hpp defines, also left out of the subset.
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 2201
#include <pto/npu/a2a3/TFillPad.hpp>
#include <pto/npu/a2a3/TExpandS.hpp>
#endif

#endif  // PTO_COSTMODEL_SHIM_PTO_INSTR_HPP
