// include/pto_costmodel_shim/pto/costmodel/trace.hpp — a home for TraceState's missing vector_count_mode.
//
// At the pinned PTO-ISA (cd4a3d3f), pto/costmodel/trace.hpp:138/140 define IsVectorCountMode()
// and SetVectorCountMode() over g_trace_state.vector_count_mode, but struct TraceState
// (trace.hpp:57) has no such member, so the header does not compile. A member cannot be added
// from outside, so while the real header is read, `vector_count_mode` expands to a comma
// expression whose value is a thread_local flag of ours (thread_local like g_trace_state);
// get_allocator() is a member call that is neither [[nodiscard]] nor an unused value:
//   return g_trace_state.active_pto_stack.get_allocator(), flag;   -> reads the flag
//   g_trace_state.active_pto_stack.get_allocator(), flag = active; -> sets it (= binds before ,)
// Nothing in PTO-ISA calls SetVectorCountMode (cce_costmodel_core.hpp:137-145 says
// set_mask_count/set_vector_mask should; cce_costmodel_sync.hpp:115/:150 do not), so the flag
// stays false and EstimateCountModeFloor (cce_costmodel_core.hpp:146) adds nothing, as a
// default-initialised member would. ResetTrace() does not clear it; nothing sets it.
#ifndef PTO_COSTMODEL_SHIM_TRACE_HPP
#define PTO_COSTMODEL_SHIM_TRACE_HPP

namespace pto_costmodel_shim {
inline thread_local bool vector_count_mode = false;
}  // namespace pto_costmodel_shim

#pragma push_macro("vector_count_mode")
#define vector_count_mode active_pto_stack.get_allocator(), ::pto_costmodel_shim::vector_count_mode
#include_next <pto/costmodel/trace.hpp>
#pragma pop_macro("vector_count_mode")

#endif  // PTO_COSTMODEL_SHIM_TRACE_HPP
