// src/core/launch_check.h — what both runtimes accept of a non-default pto::Launch, and the
// message when they do not: one check, so tensormap and host_build_graph refuse alike.
#ifndef PTO_CORE_LAUNCH_CHECK_H
#define PTO_CORE_LAUNCH_CHECK_H

#include <string>

#include "core/cluster_layout.h"
#include "pto/error.h"
#include "pto/orchestration.h"

namespace pto {

// Where the task's blocks run in a run of `block_dim` clusters of a chip laid out as `layout`:
// how many places of its `shape` (AIC or AIV cores; whole clusters for MIX) there are.
struct LaunchPlaces {
  uint32_t shape;  // pto_core_type of the task
  ClusterLayout layout;
  uint32_t block_dim;
  uint32_t count() const {
    if (shape == PTO_CORE_MIX) return block_dim;
    return block_dim * (shape == PTO_CORE_AIC ? layout.aic_per_cluster : layout.aiv_per_cluster);
  }
  const char *noun() const {
    return shape == PTO_CORE_MIX ? "clusters" : shape == PTO_CORE_AIC ? "AIC cores" : "AIV cores";
  }
};

// "" when the launch is runnable; else the message (prefixed with `who`) and *code.
// `descriptor`: every kernel of the task is a descriptor-ABI kernel (SPMD blocks need
// get_block_idx); `element_live`: the predicate's element lies in live device memory (each
// runtime looks that up its own way; ignored without a predicate). A sync-start task's blocks
// all run at once, so they must fit in the run's `places`.
inline std::string launch_fault(const std::string &who, const Launch &launch, bool descriptor, bool element_live,
                                const LaunchPlaces &places, pto_status *code) {
  const std::string blocks = std::to_string(launch.block_num);
  *code = PTO_INVALID_ARGUMENT;
  if (launch.block_num < 1 || launch.block_num > 65535)
    return who + ": block_num " + blocks + " (1 .. 65535 blocks are allowed)";
  if (launch.timing_slot < -1 || launch.timing_slot >= PTO_TASK_TIMING_SLOTS) {
    return who + ": task timing slot " + std::to_string(launch.timing_slot) + " (0 .. " +
           std::to_string(PTO_TASK_TIMING_SLOTS - 1) + " are allowed; -1: untagged)";
  }
  if (launch.sync_start && launch.block_num > places.count()) {
    return who + ": sync-start launch of block_num " + blocks + ": every block runs at once, and the run has " +
           std::to_string(places.count()) + " " + places.noun() + " (block_dim " + std::to_string(places.block_dim) +
           "); use block_num <= " + std::to_string(places.count()) + " or no sync-start";
  }
  *code = PTO_NOT_SUPPORTED;
  if (launch.block_num > 1 && !descriptor) {
    return who + ": SPMD launch (block_num " + blocks +
           ") of a PTO_KERNEL kernel: its blocks could not tell themselves apart; SPMD kernels are "
           "descriptor-ABI kernels (kernel_entry, get_block_idx)";
  }
  const DispatchPredicate &p = launch.predicate;
  if (p.op == PredicateOp::NONE) return "";
  *code = PTO_INVALID_ARGUMENT;
  const auto op = static_cast<uint32_t>(p.op);
  const bool size_ok = p.elem_size == 1 || p.elem_size == 2 || p.elem_size == 4 || p.elem_size == 8;
  if (op > static_cast<uint32_t>(PredicateOp::LE) || !size_ok || !element_live || p.addr % p.elem_size != 0) {
    return who + ": dispatch predicate (op " + std::to_string(op) + ", elem_size " + std::to_string(p.elem_size) +
           ") is invalid: op is EQ..LE, elem_size 1, 2, 4 or 8, its element in live device memory and "
           "aligned to elem_size";
  }
  return "";
}

}  // namespace pto
#endif  // PTO_CORE_LAUNCH_CHECK_H
