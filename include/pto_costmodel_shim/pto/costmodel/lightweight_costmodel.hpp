// include/pto_costmodel_shim/pto/costmodel/lightweight_costmodel.hpp — the formula backend, quiet.
//
// At the pinned PTO-ISA (cd4a3d3f) the pipeline simulation prices every recorded instruction
// twice: from the CCE-level trace it measured, and from the fitted formulas of
// lightweight::EstimateCycles (pto/costmodel/pto_instr.hpp:131-132, through
// perf_sim/costmodel_provider.hpp:116). It uses the formula only when the trace measured 0
// cycles (pto_instr.hpp:134-138), but the formula is always evaluated, and for every shape its
// tables lack (most of them: TLOAD/TSTORE/TEXTRACT of 64x64 float, TADD of 128x128...) it
// writes a "[WARN] lightweight::EstimateCycles fallback to 0 cycles" line to std::cerr
// (lightweight_costmodel.hpp:227-236): one line per instruction of every kernel invocation.
// The only writer to std::cerr in namespace pto::mocker::lightweight is that function, so a
// namespace pto::mocker::lightweight::std that re-exports ::std but declares its own `cerr`
// (qualified lookup finds a name declared in the namespace itself before one brought in by a
// using-directive) sends those lines to a sink. The fallback is still taken, silently.
#ifndef PTO_COSTMODEL_SHIM_LIGHTWEIGHT_COSTMODEL_HPP
#define PTO_COSTMODEL_SHIM_LIGHTWEIGHT_COSTMODEL_HPP

namespace pto::mocker::lightweight::std {
using namespace ::std;
struct DiscardingStream {
  template <typename T>
  DiscardingStream &operator<<(const T &) {
    return *this;
  }
};
inline thread_local DiscardingStream cerr;
}  // namespace pto::mocker::lightweight::std

#include_next <pto/costmodel/lightweight_costmodel.hpp>

#endif  // PTO_COSTMODEL_SHIM_LIGHTWEIGHT_COSTMODEL_HPP
