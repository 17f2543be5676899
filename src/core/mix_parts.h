// src/core/mix_parts.h — the three parts of a MIX task, as both runtimes build them: the core and
// lane each part runs on, the kernel that names the task, what a part without a kernel runs, and
// which kernel ids Orchestrator::submit_mixed accepts.
//
// A MIX task takes a whole cluster: part 0 runs on its AIC core, parts 1 and 2 on its two AIV
// cores, each with a kernel-call block of its own (mix_part, is_mix; core/mix_sync.h for the
// sync block the scheduler hands them at dispatch). A task submitted with one MIX kernel runs
// it in every part; submit_mixed gives each part its own kernel, or none.
#ifndef PTO_CORE_MIX_PARTS_H
#define PTO_CORE_MIX_PARTS_H

#include <cstdint>
#include <string>

#include "core/graph/task_record.h"  // kNoKernel
#include "pto/kernel.h"              // PTO_MIX_PARTS
#include "pto/types.h"

namespace pto {

constexpr uint32_t kMixParts = PTO_MIX_PARTS;

// The core type part p's kernel must be registered for.
constexpr pto_core_type mix_part_core_type(uint32_t part) {
  return part == 0 ? PTO_CORE_AIC : PTO_CORE_AIV;
}
// Its lane in the descriptor ABI's GlobalContext (get_sub_block_id): 0 on the AIC core, the AIV
// cores' index among the cluster's AIV cores.
constexpr int32_t mix_part_lane(uint32_t part) {
  return part == 0 ? 0 : static_cast<int32_t>(part) - 1;
}

// The kernel that names a task whose part p runs funcs[p] (-1: none) in messages, traces and
// tensor dumps: its first part's (graph::kNoKernel when it has none).
constexpr uint32_t mix_task_func(const int32_t funcs[kMixParts]) {
  return funcs[0] >= 0   ? static_cast<uint32_t>(funcs[0])
         : funcs[1] >= 0 ? static_cast<uint32_t>(funcs[1])
         : funcs[2] >= 0 ? static_cast<uint32_t>(funcs[2])
                         : graph::kNoKernel;
}

// "" when submit_mixed may run funcs (kernels for at least two parts: one kernel is an AIC or
// AIV task, submitted as such), else why not, for an INVALID_ARGUMENT naming task `id`. Each
// part's kernel is then checked as the single-core task it would be on its own core.
inline std::string mix_funcs_fault(int64_t id, const int32_t funcs[kMixParts]) {
  int active = 0;
  for (uint32_t p = 0; p < kMixParts; ++p) active += funcs[p] >= 0;
  if (active >= 2) return "";
  return "task " + std::to_string(id) +
         ": submit_mixed needs kernels for at least two cores of the cluster (aic " +
         std::to_string(funcs[0]) + ", aiv0 " + std::to_string(funcs[1]) + ", aiv1 " +
         std::to_string(funcs[2]) + "); submit one kernel with submit_task instead";
}

// The kernel of a part without one: it returns at once. The part still takes its core (the
// cluster is the task's), and the core reports it returned like any part (core/aicore_loop.h),
// so the other parts' MIX waits on it end instead of hanging. Whoever builds the task (the
// tensormap orchestrator, the host_build_graph host) hands its address to the cores: on the sim,
// device programs, kernels and host share one process.
inline void idle_mix_part(int64_t *args) {
  (void)args;
}

}  // namespace pto
#endif  // PTO_CORE_MIX_PARTS_H
