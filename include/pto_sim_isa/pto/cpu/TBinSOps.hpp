// include/pto_sim_isa/pto/cpu/TBinSOps.hpp — tile-scalar operations (TADDS, TMULS, ...) on the
// CPU simulation, accepting the column-major tiles the chips accept.
//
// At the pinned PTO-ISA (cd4a3d3f, and still at its head of 2026-12) the CPU simulation refuses
// a column-major tile for TADDS, TMULS, TDIVS, TMAXS and TLRELU (pto/cpu/TBinSOps.hpp:74,
// static_assert "... must be Row Major."). Neither chip does: pto/npu/a2a3/ and pto/npu/a5/
// TAddS.hpp, TMulS.hpp, TDivS.hpp, TMaxS.hpp (a5: TMaxs.hpp) and TLRelu.hpp check the tiles'
// location, type and extents, not their layout. The CPU implementation already handles a
// column-major tile (UnaryTileScalarOpImpl, :120-129 and :141-149, walks it column by column).
// So a kernel written for the chip, such as the reference suite's spmd_paged_attention (TMULS
// on a [rows x 1] ColMajor tile of per-row scalars), did not compile on the sim though its
// arithmetic is defined. TSELS and TPOWS stay row-major only, as on the chips
// (pto/npu/a2a3/TSels.hpp:60, pto/npu/a2a3/TPow.hpp:262); so do TRDIVS and any operation added
// later, until someone checks the chips.
//
// While the real header is read, every static_assert in it goes through scalar_op_check, which
// passes that one assertion for those five operations and keeps every other assertion (data
// type, tile location, extents) as it is. Each static_assert of the real header sits in a
// function template with a parameter `ElementOp op`, which the macro names (a new assertion
// outside one would fail to compile, loudly). The headers the real one includes are read first,
// so the macro never reaches them. Delete this file once PTO-ISA drops the assertion.
#ifndef PTO_SIM_ISA_CPU_TBINSOPS_HPP
#define PTO_SIM_ISA_CPU_TBINSOPS_HPP

// What pto/cpu/TBinSOps.hpp includes, included before static_assert is redefined.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <type_traits>

#include <pto/common/pto_tile.hpp>
#include "pto/cpu/tile_offsets.hpp"

#include "pto/cpu/ElementOp.h"  // ElementOp, for the check below

namespace pto_sim_isa {
// The operations both chips run on a tile of any layout.
consteval bool layout_free(pto::ElementOp op) {
  return op == pto::ElementOp::OP_ADDS || op == pto::ElementOp::OP_MULS || op == pto::ElementOp::OP_DIVS ||
         op == pto::ElementOp::OP_MAXS || op == pto::ElementOp::OP_LRELU;
}
// An assertion of pto/cpu/TBinSOps.hpp, made inside a function on operation Op.
template <pto::ElementOp Op>
consteval bool scalar_op_check(bool holds, std::string_view message = {}) {
  constexpr std::string_view kRowMajorOnly =
      "UnaryTileScalarOpImpl: TileType of src and dst tiles must be Row Major.";
  return holds || (layout_free(Op) && message == kRowMajorOnly);
}
}  // namespace pto_sim_isa

#pragma push_macro("static_assert")
// Variadic: an assertion's condition may hold commas (std::is_same_v<A, B>), which the call
// below parses as C++, not as macro arguments.
#define static_assert(...) static_assert(::pto_sim_isa::scalar_op_check<op>(__VA_ARGS__))
#include_next <pto/cpu/TBinSOps.hpp>
#pragma pop_macro("static_assert")

#endif  // PTO_SIM_ISA_CPU_TBINSOPS_HPP
