// src/core/launch_check.h — what both runtimes accept of a non-default pto::Launch, and the
// message when they do not: one check, so tensormap and host_build_graph refuse alike.
#ifndef PTO_CORE_LAUNCH_CHECK_H
#define PTO_CORE_LAUNCH_CHECK_H

#include <string>

#include "pto/error.h"
#include "pto/orchestration.h"

namespace pto {

// "" when the launch is runnable; else the message (prefixed with `who`) and *code.
// `descriptor`: every kernel of the task is a descriptor-ABI kernel (SPMD blocks need
// get_block_idx); `element_live`: the predicate's element lies in live device memory (each
// runtime looks that up its own way; ignored without a predicate).
inline std::string launch_fault(const std::string &who, const Launch &launch, bool descriptor, bool element_live,
                                pto_status *code) {
  const std::string blocks = std::to_string(launch.block_num);
  *code = PTO_INVALID_ARGUMENT;
  if (launch.block_num < 1 || launch.block_num > 65535)
    return who + ": block_num " + blocks + " (1 .. 65535 blocks are allowed)";
  *code = PTO_NOT_SUPPORTED;
  if (launch.sync_start)
    return who + ": SPMD launch of a sync-start task (block_num " + blocks + ") is not supported by this runtime yet";
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
