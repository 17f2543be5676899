// include/pto_sim_isa/pto/cpu/TPush.hpp — the CPU simulation's TPUSH/TPOP pipes, with the
// consumer's entry-offset setter spelled as the chips spell it, and each lane known to the pipes'
// bookkeeping on a2a3, whose lane register reads 0 (below).
//
// At the pinned PTO-ISA (cd4a3d3f, and still at its head of 2026-12) the CPU simulation's
// TPipe::Consumer names its setter `setentryOffset` (pto/cpu/TPush.hpp:660), while its
// Producer (:557) and both chips' pipes (pto/npu/a2a3/TPush.hpp:495, pto/npu/a5/TPush.hpp) call
// it `setEntryOffset`. A kernel written for the chip, such as the reference suite's
// spmd_paged_attention (`sij_pipe.cons.setEntryOffset(...)`), does not compile on the sim. While
// the real header is read the lower-case name is spelled as the chip's; nothing in PTO-ISA
// calls the lower-case one. Delete this file once PTO-ISA renames it (the compile will then say
// setEntryOffset is declared twice).
//
// The kernel compiler puts include/pto_sim_isa/ before PTO-ISA's include directory for sim tile
// kernels only (src/worker/compile_command.cpp), so pto_instr_impl.hpp's
// `#include "pto/cpu/TPush.hpp"` reads this file, which reads the real one.
#ifndef PTO_SIM_ISA_CPU_TPUSH_HPP
#define PTO_SIM_ISA_CPU_TPUSH_HPP

// The pipes' protocol (which lane claimed, produced or consumed a slot) needs each AIV core's
// true lane, which PTO-ISA's cpu_pipe helpers read through get_subblockid(). On a2a3 that function
// returns the chip's unprogrammed register, 0 on both lanes (pto_tile_sim_hooks.h,
// pto_sim_get_subblock_id), so the helpers get their own: declared here, in their namespace, it is
// the one their unqualified calls find. The address arithmetic outside cpu_pipe (TPush_gm,
// popTileFromGMFiFo) still reads the register, as the chip's does.
extern "C" unsigned pto_sim_pipe_lane(void);
namespace pto {
namespace cpu_pipe {
inline unsigned get_subblockid() { return pto_sim_pipe_lane(); }
}  // namespace cpu_pipe
}  // namespace pto

#pragma push_macro("setentryOffset")
#define setentryOffset setEntryOffset
#include_next <pto/cpu/TPush.hpp>
#pragma pop_macro("setentryOffset")

#endif  // PTO_SIM_ISA_CPU_TPUSH_HPP
