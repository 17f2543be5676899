// src/worker/cost_model_twin.cpp — PTO-ISA's formula tables and a twin's exports (cost_model_twin.h).
#include "worker/cost_model_twin.h"

#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>

#include "pto/error.h"
#include "pto/kernel.h"
#include "pto_platform/files.h"
#include "worker/kernel_cache.h"
#include "worker/paths.h"
#include "worker/process.h"

namespace pto {
namespace worker {
namespace {

// The prefix of the folders in the kernel cache that hold PTO-ISA's generated formula tables.
constexpr const char *kFormulaDirPrefix = "costmodel-formula-";

// PTO-ISA's formula-table generators, a2a3's and a5's (the cost model's lightweight_costmodel.hpp
// includes both tables), run with their output redirected from beside the script (OUT_PATH)
// to the same relative path under argv[2], each through a temporary file and a rename: other
// processes may generate, or compile against, the same folder at the same time.
constexpr const char *kFormulaGenerator = R"(import importlib.util, os, pathlib, sys
isa, out_root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for arch in ("a2a3", "a5"):
    rel = pathlib.Path("pto/costmodel") / arch / "formula_costmodel"
    script = isa / "include" / rel / "gen_formula_params_header.py"
    spec = importlib.util.spec_from_file_location("pto_gen_" + arch, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    out = out_root / rel / "formula_params_generated.hpp"
    out.parent.mkdir(parents=True, exist_ok=True)
    module.OUT_PATH = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    module.main()
    os.replace(module.OUT_PATH, out)
)";

// nftw's callback for removing a formula-table folder: files and then their folders.
size_t g_removed_formula_files = 0;  // only touched under clear_formula_mutex
std::mutex clear_formula_mutex;
int remove_entry(const char *path, const struct stat *, int type, struct FTW *) {
  if (type == FTW_DP) {
    rmdir(path);
  } else if (unlink(path) == 0) {
    ++g_removed_formula_files;
  }
  return 0;  // keep going: another process may be removing (or writing) the same folder
}

}  // namespace

// The include directory holding PTO-ISA's generated formula tables for the checkout at `root`
// (<dir>/pto/costmodel/{a2a3,a5}/formula_costmodel/formula_params_generated.hpp), generated
// into `cache_dir` unless already there. The folder is named by a digest of the generators and
// their CSV inputs, so a checkout with other tables gets another folder (and, through the -I,
// its twins another cache key); a compile's -MMD list covers the generated headers themselves.
std::string formula_tables(const std::string &root, const std::string &cache_dir) {
  std::vector<std::string> inputs, outputs;
  for (const char *arch : {"a2a3", "a5"}) {
    const std::string rel = std::string("pto/costmodel/") + arch + "/formula_costmodel/";
    const std::string dir = join_path(root, "include/" + rel);
    inputs.push_back(dir + "gen_formula_params_header.py");
    inputs.push_back(dir + "formula_params.csv");
    outputs.push_back(rel + "formula_params_generated.hpp");
  }
  const std::string digest = digest_of_files(inputs);
  if (digest.empty()) {
    throw Error(PTO_NOT_SUPPORTED, "the PTO-ISA checkout at " + root +
                                       " has no cost-model formula tables to generate (looked for " +
                                       joined(inputs) +
                                       "); cost-model twins need a PTO-ISA with its cost model, such as "
                                       "the pinned commit scripts/fetch_pto_isa.sh gets");
  }
  Fnv1a64 key;
  key.add(root);
  key.add(digest);
  const std::string out = join_path(cache_dir, kFormulaDirPrefix + key.hex());
  auto present = [&] {
    for (const std::string &rel : outputs) {
      if (!is_regular_file(join_path(out, rel))) return false;
    }
    return true;
  };
  // One generator at a time in this process: its temporaries are named by the process id.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (present()) return out;  // checked on every call: clear_cache() may have removed it
  if (const int err = platform_make_directories(cache_dir))
    throw cache_error("create directory", cache_dir, err);
  const std::vector<std::string> argv = {"python3", "-B", "-c", kFormulaGenerator, root, out};
  const ProcessResult r = run_process(argv);
  if (!r.ok() || !present()) {
    throw Error(PTO_MISSING_DEPENDENCY,
                "a cost-model twin needs the formula tables PTO-ISA's gen_formula_params_header.py "
                "writes, and python3 (3.9 or newer) could not run it (" +
                    r.describe() + ")" + (r.output.empty() ? "" : ":\n" + trimmed_output(r.output)) +
                    "\ncommand: " + shell_quoted(argv) + "\nInstall python3 or put it on PATH.");
  }
  return out;
}


bool is_formula_tables_dir(const char *name) {
  return strncmp(name, kFormulaDirPrefix, strlen(kFormulaDirPrefix)) == 0;
}

size_t remove_formula_tables(const std::string &cache_dir, const std::vector<std::string> &names) {
  std::lock_guard<std::mutex> lock(clear_formula_mutex);
  g_removed_formula_files = 0;
  for (const std::string &name : names) {
    nftw(join_path(cache_dir, name).c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }
  return g_removed_formula_files;
}

// Throws unless the cost-model twin at `so` exports what its caller uses: the descriptor ABI's
// kernel_entry and the probe's pto_costmodel_begin/end (names as in pto_costmodel_probe.h).
void check_cost_model_entries(const std::string &so, const std::string &name) {
  auto exports = [&](const char *symbol) { return platform_elf_exports(so, symbol); };
  if (!exports(PTO_ABI_KERNEL_ENTRY_SYMBOL)) {
    unlink(so.c_str());
    throw Error(PTO_INVALID_ARGUMENT,
                "the cost-model twin of '" + name + "' exports no " + PTO_ABI_KERNEL_ENTRY_SYMBOL +
                    ": a twin is called through the descriptor ABI's extern \"C\" void " +
                    PTO_ABI_KERNEL_ENTRY_SYMBOL +
                    "(__gm__ int64_t *args), which the source must define (PTO_KERNEL kernels and "
                    "kernel programs have no twin)");
  }
  for (const char *probe : {"pto_costmodel_begin", "pto_costmodel_end"}) {
    if (exports(probe)) continue;
    unlink(so.c_str());
    throw Error(PTO_INTERNAL, "the cost-model twin of '" + name + "' exports no " + probe +
                                  ": pto_costmodel_probe.h (include/pto_costmodel_shim/, "
                                  "force-included) did not define it; is the runtime's include "
                                  "directory complete?");
  }
}

}  // namespace worker
}  // namespace pto
