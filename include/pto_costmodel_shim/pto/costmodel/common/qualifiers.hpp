// include/pto_costmodel_shim/pto/costmodel/common/qualifiers.hpp — CPU-sim stubs out of the model's way.
//
// At the pinned PTO-ISA (cd4a3d3f) pto/costmodel/common/qualifiers.hpp:13 includes
// pto/common/cpu_stub.hpp, the CPU simulation's intrinsics, for the cost model to reuse. Two
// of its parts get in the cost model's way:
//
// 1. cpu_stub.hpp:123-124 defines no-op `set_flag(pipe_t, pipe_t, int)` and
//    `wait_flag(pipe_t, pipe_t, int)` with pipe_t = int. The cost model's recording versions
//    (a2a3/cce_costmodel/cce_costmodel_sync.hpp:94 and :155, which feed
//    perf_sim::SyncRecorder) are templates, so for every call — PIPE_* and EVENT_ID* are
//    ints — overload resolution prefers the no-ops and the pipeline simulation never sees a
//    kernel's flags (0 sync events). While cpu_stub.hpp is read, its two are renamed away, so
//    set_flag/wait_flag reach the cost model. (qualifiers.hpp:49-54 #undefs set_flag and
//    wait_flag, as if they were once macros; push/pop_macro below restores "undefined".)
// 2. With __DAV_CUBE__ (every AIC kernel), cpu_stub.hpp:158 pulls in pto/cpu/trace.hpp and so
//    pto/common/pto_tile.hpp, whose Tile::SetMadTF32Mode/ResetMadMode (:1651-1663) call
//    get_ctrl/set_ctrl/sbitset0/sbitset1: names two-phase lookup must find there. cpu_stub.hpp
//    defines them only without __COSTMODEL (:147-150) and the a2a3 cost model defines its own
//    later (cce_costmodel_core.hpp:56-59, cce_costmodel_sync.hpp:79). We declare the cost
//    model's, exactly as it defines them, first.
#ifndef PTO_COSTMODEL_SHIM_QUALIFIERS_HPP
#define PTO_COSTMODEL_SHIM_QUALIFIERS_HPP

#if defined(__COSTMODEL) && defined(__NPU_ARCH__) && __NPU_ARCH__ == 2201
inline int sbitset0(int val, int bit);
inline int sbitset1(int val, int bit);
inline int get_ctrl(...);
inline void set_ctrl(auto ctrl);
#endif

#pragma push_macro("set_flag")
#pragma push_macro("wait_flag")
#define set_flag pto_costmodel_shim_cpu_sim_set_flag
#define wait_flag pto_costmodel_shim_cpu_sim_wait_flag
#include_next <pto/costmodel/common/qualifiers.hpp>
#pragma pop_macro("wait_flag")
#pragma pop_macro("set_flag")

#endif  // PTO_COSTMODEL_SHIM_QUALIFIERS_HPP
