// src/timing_model/kernel_pricing.h — what prices each kernel of a timed run (docs/design/sim_execution.md).
//
// Three sources, first match wins, per kernel binary (its entry address):
//   table      PTO_SIM_KERNEL_COSTS lists its func_id;
//   isa_model  the callable gives its PTO-ISA cost-model twin (pto_kernel_desc.cost_model_path):
//              each invocation runs the twin's kernel_entry on the core's thread between
//              pto_costmodel_begin/_end (include/pto_costmodel_shim/pto_costmodel_probe.h) and
//              takes the cycles PTO-ISA's pipeline simulation predicts, at the model's clock;
//   host_time  its measured host time x sim_kernel_time_pct / 100.
// The sim runs the priced kernel itself for its values as before: a twin computes nothing.
#ifndef PTO_TIMING_MODEL_KERNEL_PRICING_H
#define PTO_TIMING_MODEL_KERNEL_PRICING_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host/device_runner.h"
#include "pto/c_api.h"
#include "pto_platform/device.h"

namespace pto {

// Fills t->kernel_costs for a timed run of `callable`: PTO_SIM_KERNEL_COSTS's table (read at
// each run), then an isa_model cost for every kernel with a twin whose binary the table does not
// price. Records in *stats what prices each kernel (kernel_price_func/_source) and, in
// price_note, every twin given as unusable (its cost_model_note). INVALID_ARGUMENT for a
// malformed table or one naming a func_id the callable lacks, LOAD_FAILED for a twin that cannot
// be loaded or lacks the probe's exports; *error names the variable or the kernel and the file.
// PTO_SIM_KERNEL_COSTS's value `all` read against the callable's `kernels`: one cost per kernel
// binary appended to *out. False, with *error naming the variable, when malformed or naming a
// func_id `kernels` lacks (set_kernel_costs reads the variable through it; so does tests/fuzz).
bool parse_kernel_costs(const std::string &all, const std::map<uint32_t, KernelEntry> &kernels,
                        std::vector<SimKernelCost> *out, std::string *error);

pto_status set_kernel_costs(const pto_callable_desc &callable, const std::map<uint32_t, KernelEntry> &kernels,
                            SimTiming *t, pto_run_stats *stats, std::string *error);

}  // namespace pto
#endif  // PTO_TIMING_MODEL_KERNEL_PRICING_H
