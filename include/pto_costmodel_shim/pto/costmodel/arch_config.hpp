// include/pto_costmodel_shim/pto/costmodel/arch_config.hpp — two names the cost model uses, declared.
//
// At the pinned PTO-ISA (cd4a3d3f), pto/costmodel/arch_config.hpp:142 and :156 and
// lightweight_costmodel.hpp:243 divide a frequency in Hz by evaluator::kMicrosPerSecond to get
// MHz, and a2a3/cce_costmodel/cce_costmodel_core.hpp:76 (at global scope) names the evaluator
// namespace as `ev::`; neither name is declared anywhere in the tree, so no cost-model build
// compiles. We declare both, then include the real header. Delete this file once PTO-ISA
// declares them (a redeclaration of the same alias stays legal; a second kMicrosPerSecond in
// pto::mocker::evaluator would not, and the compile error will say so).
#ifndef PTO_COSTMODEL_SHIM_ARCH_CONFIG_HPP
#define PTO_COSTMODEL_SHIM_ARCH_CONFIG_HPP

namespace pto::mocker::evaluator {
// Hz / kMicrosPerSecond = MHz = cycles per microsecond (CyclesToUs divides cycles by it).
inline constexpr long double kMicrosPerSecond = 1.0e6L;
}  // namespace pto::mocker::evaluator

namespace ev = ::pto::mocker::evaluator;

#include_next <pto/costmodel/arch_config.hpp>

#endif  // PTO_COSTMODEL_SHIM_ARCH_CONFIG_HPP
