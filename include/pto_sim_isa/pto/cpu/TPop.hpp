// include/pto_sim_isa/pto/cpu/TPop.hpp — TPOP and TFREE of a tile on the CPU simulation, releasing
// the pipe's slot when the chip does.
//
// The two chips release a popped slot at different times. On a2a3, TPOP of a tile releases it
// itself and TFREE of a tile does nothing (pto/npu/a2a3/TPop.hpp:21-37, step 3 "Free Space";
// pto/npu/a2a3/TFree.hpp:20-24, an empty body). On a5, TPOP releases it when its pop says so
// and TFREE releases the rest (pto/npu/a5/TPop.hpp, pto/npu/a5/TFree.hpp). The pinned PTO-ISA's
// CPU simulation (cd4a3d3f) has one protocol for both: TPOP never releases, TFREE does
// (pto/cpu/TPop.hpp). An a2a3 kernel that never calls TFREE, such as the reference suite's
// spmd_paged_attention, fills its pipes on the sim and stops, though it runs on the chip.
//
// On a2a3 (PTO_CHIP_ARCH_A2A3, which the kernel compiler defines for a2a3sim kernels), this
// header gives TPOP and TFREE of a tile the chip's protocol: TPOP is PTO-ISA's CPU TPOP followed
// by its CPU TFREE (the same lane rules, the same release), and TFREE of a tile does nothing. A
// popped tile's data is already copied out of the slot (the CPU pop copies it into the tile's
// own storage, pto/cpu/TPush.hpp popTileFrom*FiFo), so releasing at the pop is safe. The chip
// batches its release notices (shouldNotifyFree); the sim releases each slot, which a kernel
// cannot tell apart. A kernel written for the sim's old protocol (TPOP, then TFREE) does the same
// on the chip and here. GlobalTensor pops and frees, and every a5 kernel, keep PTO-ISA's CPU
// versions. Delete this file once PTO-ISA's CPU simulation follows each chip's protocol.
#ifndef PTO_SIM_ISA_CPU_TPOP_HPP
#define PTO_SIM_ISA_CPU_TPOP_HPP

#include <type_traits>

#include <pto/cpu/TPush.hpp>

#if defined(PTO_CHIP_ARCH_A2A3)

#pragma push_macro("TPOP_IMPL")
#pragma push_macro("TPOP_REVERSED_IMPL")
#pragma push_macro("TFREE_IMPL")
#define TPOP_IMPL pto_sim_cpu_TPOP_IMPL
#define TPOP_REVERSED_IMPL pto_sim_cpu_TPOP_REVERSED_IMPL
#define TFREE_IMPL pto_sim_cpu_TFREE_IMPL
#include_next <pto/cpu/TPop.hpp>
#pragma pop_macro("TFREE_IMPL")
#pragma pop_macro("TPOP_REVERSED_IMPL")
#pragma pop_macro("TPOP_IMPL")

namespace pto {

// TPOP of a tile: the CPU pop, then the release a2a3's TPOP makes.
template <typename Pipe, typename TileCons, TileSplitAxis Split, std::enable_if_t<!is_global_data_v<TileCons>, int> = 0>
PTO_INTERNAL void TPOP_IMPL(Pipe &pipe, TileCons &tile) {
  pto_sim_cpu_TPOP_IMPL<Pipe, TileCons, Split>(pipe, tile);
  pto_sim_cpu_TFREE_IMPL<Pipe, Split>(pipe);
}

// TPOP(tile, pipe), the reversed spelling: the same.
template <typename TileCons, typename Pipe,
          std::enable_if_t<(is_tile_data_v<TileCons> || is_conv_tile_v<TileCons>) && !is_global_data_v<TileCons>,
                           int> = 0>
PTO_INTERNAL void TPOP_REVERSED_IMPL(TileCons &tile, Pipe &pipe) {
  TPOP_IMPL<Pipe, TileCons, TileSplitAxis::TILE_NO_SPLIT>(pipe, tile);
}

// TFREE of a tile: a2a3's TPOP released the slot already.
template <typename Pipe, TileSplitAxis Split>
PTO_INTERNAL void TFREE_IMPL(Pipe &pipe) {
  (void)pipe;
}

template <typename Pipe>
PTO_INTERNAL void TFREE_IMPL(Pipe &pipe) {
  (void)pipe;
}

}  // namespace pto

#else
#include_next <pto/cpu/TPop.hpp>
#endif

#endif  // PTO_SIM_ISA_CPU_TPOP_HPP
