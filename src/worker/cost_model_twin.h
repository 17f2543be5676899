// src/worker/cost_model_twin.h — what a tile kernel's cost-model twin needs beyond its compile:
// PTO-ISA's generated formula tables in the kernel cache, and the exports the runtime calls.
// KernelCompiler::compile_incore_cost_model (kernel_compiler.cpp) builds twins with these;
// docs/guide/tile_kernels.md ("Cost-model twins") says what a twin is.
#ifndef PTO_WORKER_COST_MODEL_TWIN_H
#define PTO_WORKER_COST_MODEL_TWIN_H

#include <stddef.h>

#include <string>
#include <vector>

namespace pto {
namespace worker {

// The include directory holding PTO-ISA's generated formula tables for the checkout at `root`
// (<dir>/pto/costmodel/{a2a3,a5}/formula_costmodel/formula_params_generated.hpp), generated
// into `cache_dir` unless already there. NOT_SUPPORTED for a checkout without the generators,
// MISSING_DEPENDENCY when python3 cannot run them.
std::string formula_tables(const std::string &root, const std::string &cache_dir);

// Whether `name`, an entry of the kernel cache, is a folder formula_tables made.
bool is_formula_tables_dir(const char *name);
// Removes those folders (names in `cache_dir`) and returns how many files they held.
size_t remove_formula_tables(const std::string &cache_dir, const std::vector<std::string> &names);

// Throws unless the cost-model twin at `so` (built from `name`) exports kernel_entry and the
// probe's pto_costmodel_begin/end; removes `so` first.
void check_cost_model_entries(const std::string &so, const std::string &name);

}  // namespace worker
}  // namespace pto
#endif  // PTO_WORKER_COST_MODEL_TWIN_H
