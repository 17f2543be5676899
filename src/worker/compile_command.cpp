// src/worker/compile_command.cpp — what runs the compiler for each kind of compile (compile_command.h).
#include "worker/compile_command.h"

#include <map>
#include <mutex>

#include "pto/error.h"
#include "worker/cost_model_twin.h"
#include "worker/paths.h"
#include "worker/process.h"
#include "worker/tile_toolchain.h"

#ifndef PTO_SOURCE_INCLUDE_DIR
#error "PTO_SOURCE_INCLUDE_DIR must be defined (src/worker/CMakeLists.txt sets it)"
#endif

namespace pto {
namespace worker {
namespace {

// `<compiler> --version`, asked once per process per compiler: it costs a process spawn,
// which would otherwise dominate a cache hit. The mutex is held while the query runs so
// that racing first compiles spawn it once, not once per thread.
std::string compiler_version(const std::vector<std::string> &cxx, const std::string &cxx_text) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;  // guarded by mutex
  std::lock_guard<std::mutex> lock(mutex);
  auto it = versions.find(cxx_text);
  if (it != versions.end()) return it->second;
  std::vector<std::string> argv = cxx;
  argv.push_back("--version");
  const ProcessResult r = run_process(argv);
  if (!r.ok()) {
    throw Error(PTO_KERNEL_COMPILE, "cannot run the C++ compiler '" + cxx_text + "' (`" + shell_quoted(argv) +
                                        "` " + r.describe() + ")" +
                                        (r.output.empty() ? "" : ":\n" + trimmed_output(r.output)) +
                                        "\nInstall a C++ compiler or set CXX to one (e.g. CXX=g++).");
  }
  versions.emplace(cxx_text, r.output);
  return r.output;
}

// Every call of sched_yield in a binary for the sim goes to the sim (pto/sim_kernel_yield.h).
constexpr const char *kWrapSchedYield = "-Wl,--wrap=sched_yield";
// A tile kernel's condition-variable waits and notifies go to the sim's TPUSH/TPOP pipes
// (pto_tile_sim_hooks.h): std::condition_variable's wait(unique_lock<mutex>&), notify_one and
// notify_all, by their mangled names.
constexpr const char *kWrapConditionVariable =
    "-Wl,--wrap=_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE,"
    "--wrap=_ZNSt18condition_variable10notify_oneEv,--wrap=_ZNSt18condition_variable10notify_allEv";

bool has_kernel_header(const std::string &include_dir) {
  return is_regular_file(join_path(include_dir, "pto/kernel.h"));
}

// Language, optimisation and debug flags, then the include path both toolchains share:
// ours, the user's, `middle` (PTO-ISA's), the descriptor ABI's. Then the user's defines.
void common_flags(const CompileOptions &o, const std::string &include_dir,
                  const std::vector<std::string> &middle, std::vector<std::string> *flags) {
  flags->insert(flags->end(), {"-fPIC", "-shared"});
  if (!o.opt_level.empty()) flags->push_back(o.opt_level);
  if (o.debug_info) flags->push_back("-g");
  flags->push_back("-I" + include_dir);
  for (const std::string &dir : o.include_dirs) flags->push_back("-I" + dir);
  for (const std::string &dir : middle) flags->push_back("-I" + dir);
  flags->push_back("-I" + abi_include_dir(include_dir));
  for (const std::string &d : o.defines) flags->push_back("-D" + d);
  flags->push_back("-DPTO_PLATFORM_SIM=1");
}

}  // namespace

std::string pto_include_dir() {
  const std::string env = env_or_empty("PTO_RUNTIME_INCLUDE_DIR");
  if (!env.empty()) {
    if (!has_kernel_header(env)) {
      throw Error(PTO_INVALID_ARGUMENT, "PTO_RUNTIME_INCLUDE_DIR=" + env +
                                            " does not contain pto/kernel.h; point it at the "
                                            "runtime's include directory or unset it");
    }
    return env;
  }
  const std::string packaged = packaged_include_dir();
  if (!packaged.empty()) return packaged;
  return PTO_SOURCE_INCLUDE_DIR;
}

Command scalar_command(const CompileOptions &o, const std::string &include_dir) {
  Command c;
  c.cxx_text = env_or_empty("CXX");
  if (c.cxx_text.empty()) c.cxx_text = "c++";
  c.cxx = split_words(c.cxx_text);  // CXX="ccache g++" is common
  if (c.cxx.empty()) throw Error(PTO_INVALID_ARGUMENT, "CXX is blank; set it to a C++ compiler or unset it");
  c.version = compiler_version(c.cxx, c.cxx_text);
  c.flags.push_back("-std=c++17");
  std::vector<std::string> isa;
  if (!o.pto_isa_root.empty()) isa.push_back(join_path(o.pto_isa_root, "include"));
  common_flags(o, include_dir, isa, &c.flags);
  // A kernel's sched_yield lets the sim's other cores run (pto/sim_kernel_yield.h).
  c.flags.insert(c.flags.end(), {"-include", join_path(include_dir, "pto/sim_kernel_yield.h")});
  c.link.push_back(kWrapSchedYield);
  c.cflags_env = "PTO_KERNEL_CFLAGS";
  return c;
}

Command tile_command(const CompileOptions &o, const std::string &origin, pto_core_type core_type,
                     const std::string &include_dir, bool cost_model, const std::string &cache_dir,
                     bool reuse) {
  const std::string root = tile_isa_root(o.pto_isa_root, origin);
  const std::string shim = tile_shim_dir(include_dir);
  const TileCompiler &tc =
      tile_compiler(shim, "tile kernel '" + origin + "'", reuse ? cache_dir : std::string());
  Command c;
  c.cxx = tc.argv;
  c.cxx_text = tc.text;
  c.version = tc.version;
  c.flags.push_back("-std=c++23");
  std::vector<std::string> isa;
  if (cost_model) {
    isa = {costmodel_shim_dir(include_dir), formula_tables(root, cache_dir)};
  } else {
    isa = {sim_isa_dir(include_dir)};  // the sim's TWAIT (include/pto_sim_isa/pto/cpu/comm/TWait.hpp)
  }
  isa.push_back(join_path(root, "include"));
  isa.push_back(join_path(root, "include/pto"));
  common_flags(o, include_dir, isa, &c.flags);
  const std::vector<std::string> tile = tile_flags(tc, shim, core_type, cost_model);
  c.flags.insert(c.flags.end(), tile.begin(), tile.end());
  if (!tc.builtins_library.empty()) c.link.push_back(tc.builtins_library);
  // pto_tile_sim_hooks.h includes pto/sim_kernel_yield.h and wraps the pipes' waits; a twin
  // runs off the pool and has neither.
  if (!cost_model) c.link.insert(c.link.end(), {kWrapSchedYield, kWrapConditionVariable});
  c.cflags_env = "PTO_TILE_KERNEL_CFLAGS";
  return c;
}

}  // namespace worker
}  // namespace pto
