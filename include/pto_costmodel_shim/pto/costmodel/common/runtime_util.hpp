// include/pto_costmodel_shim/pto/costmodel/common/runtime_util.hpp — one get_block_num, one get_coreid.
//
// At the pinned PTO-ISA (cd4a3d3f) the cost model reuses the CPU simulation's stubs
// (pto/costmodel/common/qualifiers.hpp includes pto/common/cpu_stub.hpp, which defines
// `uint32_t get_block_num()` at :585 and `uint32_t get_coreid()` at :587), and then
// pto/costmodel/common/runtime_util.hpp:23-24 defines both again (`int get_coreid()`,
// `uint32_t get_block_num()`): a redefinition and an overload on the return type alone, so no
// cost-model build compiles. While the real header is read, its two definitions are renamed
// to unused names; every caller gets cpu_stub's (get_block_num() = the CPU simulation's
// configured core count, get_coreid() = get_block_idx()). A kernel's own get_block_num(args)
// from intrinsic.h takes an argument, so it overloads these and never clashed with them.
#ifndef PTO_COSTMODEL_SHIM_RUNTIME_UTIL_HPP
#define PTO_COSTMODEL_SHIM_RUNTIME_UTIL_HPP

#pragma push_macro("get_block_num")
#pragma push_macro("get_coreid")
#define get_block_num pto_costmodel_shim_unused_get_block_num
#define get_coreid pto_costmodel_shim_unused_get_coreid
#include_next <pto/costmodel/common/runtime_util.hpp>
#pragma pop_macro("get_coreid")
#pragma pop_macro("get_block_num")

#endif  // PTO_COSTMODEL_SHIM_RUNTIME_UTIL_HPP
