// src/worker/kernel_compiler.cpp — builds kernel/orchestration sources into cached .so files.
//
// Cache protocol (safe across threads and processes without locks; a per-entry advisory lock
// only keeps two of them from compiling the same thing at once). A compile has two keys:
//  - the *stem* "<name>-<hash>" ("<name>-costmodel-<hash>" for a cost-model twin) hashes what
//    the call itself decides: source text, flags, compiler and version, the runtime's headers;
//  - the *dependency digest* hashes the content of every file the compiler read for it, listed
//    by the compiler itself (-MMD) and kept beside the binary in "<stem>.deps".
// The binary is "<stem>-<digest>.so". A look-up reads <stem>.deps, hashes the files it lists
// as they are now and takes the binary only if that name exists, so a changed header (or a
// header that is gone) misses. A file newly shadowing one in an earlier include directory
// cannot be seen this way; that is the one change a rebuild does not notice, as with make.
// What runs the compiler for each kind of compile is compile_command.cpp; the tile toolchain
// probe, the cache's helpers, child processes, parallel batches and cost-model twins' extras
// each have a file of their own beside it too, and so do the precompiled PTO-ISA headers tile
// kernels share (tile_pch.h).
// Every file is written as a uniquely named temporary and rename()d into place: a reader sees
// no file or a complete one, and racing writers of one name write identical content. A
// .deps replaced by a racing compile is still a true list for that stem, because the list can
// only change when a listed file changed, which changes the digest of the old list too.
#include "pto/kernel_compiler.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "core/entry_points.h"
#include "core/geometry.h"
#include "pto/backend.h"
#include "pto/error.h"
#include "pto/kernel_list.h"
#include "pto/runtime_builder.h"
#include "pto_platform/files.h"
#include "worker/compile_command.h"
#include "worker/cost_model_twin.h"
#include "worker/kernel_cache.h"
#include "worker/paths.h"
#include "worker/process.h"
#include "worker/tile_pch.h"
#include "worker/tile_toolchain.h"

namespace pto {
namespace {

using worker::cache_error;
using worker::Command;
using worker::digest_of_files;
using worker::directory_of;
using worker::Fnv1a64;
using worker::is_cache_file;
using worker::joined;
using worker::joined_lines;
using worker::parse_depfile;
using worker::ProcessResult;
using worker::pto_headers_digest;
using worker::pto_include_dir;
using worker::read_file;
using worker::run_process;
using worker::shell_quoted;
using worker::split_lines;
using worker::split_words;
using worker::trimmed_output;
using worker::write_file;

// Bump when the layout of the cache key or of the flags changes meaning.
constexpr const char *kCacheFormat = "pto-kernel-cache-v3";

// A file-name-safe stem: the name appears in the cache and in `ls`, so keep it readable.
std::string sanitized(const std::string &name) {
  std::string out;
  for (char c : name) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out += safe ? c : '_';
    if (out.size() == 64) break;
  }
  return out.empty() ? std::string("kernel") : out;
}

std::string file_stem(const std::string &path) {
  const std::string::size_type slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string::size_type dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0) base.erase(dot);
  return base;
}

// `#line 1 "<origin>"` makes diagnostics and __FILE__ name the user's file rather than the
// copy in the cache that is actually compiled.
std::string line_directive(const std::string &origin) {
  std::string out = "#line 1 \"";
  for (char c : origin) {
    if (c == '"' || c == '\\') out += '\\';
    out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  }
  return out + "\"\n";
}

std::string read_source(const std::string &source_path) {
  if (source_path.empty()) {
    throw Error(PTO_INVALID_ARGUMENT, "empty source path; pass the path of a .cpp file");
  }
  if (!worker::is_regular_file(source_path)) {
    throw Error(PTO_INVALID_ARGUMENT, "source file '" + source_path +
                                          "' does not exist or is not a regular file; check "
                                          "the path (relative paths are taken from the "
                                          "current directory)");
  }
  std::string text;
  if (!read_file(source_path, &text)) {
    throw Error(PTO_INVALID_ARGUMENT, "cannot read source file '" + source_path + "': " + strerror(errno) +
                                          "; check its permissions");
  }
  return text;
}

std::string core_type_define(pto_core_type core_type) {
  switch (core_type) {
    case PTO_CORE_AIC:
      return "-DPTO_CORE_TYPE_AIC=1";
    case PTO_CORE_AIV:
      return "-DPTO_CORE_TYPE_AIV=1";
    case PTO_CORE_MIX:
      return "-DPTO_CORE_TYPE_MIX=1";
    default:
      break;
  }
  throw Error(PTO_INVALID_ARGUMENT, "invalid core type " + std::to_string(static_cast<int>(core_type)) +
                                        "; use PTO_CORE_AIC, PTO_CORE_AIV or PTO_CORE_MIX");
}

// "-DPTO_RUNTIME_HOST_BUILD_GRAPH=1" for "host_build_graph", after checking the name against
// the one runtime list in RuntimeBuilder.
std::string runtime_define(const std::string &runtime) {
  const std::vector<std::string> known = RuntimeBuilder::runtimes();
  if (std::find(known.begin(), known.end(), runtime) == known.end()) {
    throw Error(PTO_INVALID_ARGUMENT, "unknown runtime '" + runtime + "' for an orchestration; " +
                                          "use one of: " + joined(known, ", "));
  }
  std::string define = "-DPTO_RUNTIME_";
  for (char c : runtime) define += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  return define + "=1";
}

// The entry an orchestration for `runtime` must export; runtime_define() has checked the name.
const EntryPoint &orchestration_entry(const std::string &runtime) {
  const EntryPoint *e = orchestration_entry_of(runtime);
  if (e == nullptr) {
    throw Error(PTO_INTERNAL, "runtime '" + runtime + "' has no orchestration entry in core/entry_points.h");
  }
  return *e;
}

// Throws unless the binary at `so` exports what `entry` asks for. A compute kernel may export
// pto_kernel_entry (PTO_KERNEL), the descriptor ABI's kernel_entry, or a kernel program's table
// (PTO_KERNEL_PROGRAM, pto/kernel_list.h), but not both entries: the loader could not tell
// which ABI the binary speaks.
void check_entry(const std::string &so, const std::string &name, const EntryPoint &entry) {
  auto exports = [&](const char *symbol) { return platform_elf_exports(so, symbol); };
  const bool kernel = entry.runtime == nullptr;
  if (kernel) {
    const bool ours = exports(PTO_KERNEL_ENTRY_SYMBOL);
    const bool abi = exports(PTO_ABI_KERNEL_ENTRY_SYMBOL);
    if (ours && abi) {
      unlink(so.c_str());
      throw Error(PTO_INVALID_ARGUMENT, "'" + name +
                                            "' exports both " PTO_KERNEL_ENTRY_SYMBOL " (PTO_KERNEL) and " +
                                            PTO_ABI_KERNEL_ENTRY_SYMBOL +
                                            " (the descriptor ABI); the runtime picks the ABI by "
                                            "the entry, so keep one");
    }
    if (ours || abi || exports(PTO_KERNEL_TABLE_SYMBOL)) return;
  } else if (exports(entry.symbol)) {
    return;
  } else if (const EntryPoint *fallback = orchestration_fallback_of(entry.runtime)) {
    if (exports(fallback->symbol)) return;  // host_build_graph runs a device orchestration too
  }
  std::string hint = entry_point_hint(entry, exports);
  if (kernel && hint.rfind("define the entry with", 0) == 0) {
    hint += ", or export the descriptor ABI's extern \"C\" void " PTO_ABI_KERNEL_ENTRY_SYMBOL
            "(__gm__ int64_t *args)";
  }
  unlink(so.c_str());
  const std::string what =
      kernel ? std::string("a compute kernel") : std::string("an orchestration for ") + entry.runtime;
  throw Error(PTO_INVALID_ARGUMENT, "'" + name + "' was compiled as " + what + " but does not define " +
                                        entry.macro + " (no exported " + entry.symbol + "): " + hint);
}

}  // namespace

KernelCompiler::KernelCompiler(std::string platform, CompileOptions options)
    : platform_(std::move(platform)), options_(std::move(options)) {
  const ChipGeometry *geometry = find_geometry(platform_.c_str());
  if (geometry == nullptr) {
    throw Error(PTO_INVALID_ARGUMENT, "unknown platform '" + platform_ +
                                          "'; use one of: " + joined(RuntimeBuilder::platforms(), ", "));
  }
  const Backend *backend = nullptr;
  try {
    backend = &get_backend(geometry->backend);
  } catch (const Error &e) {
    if (e.code() != PTO_NOT_SUPPORTED) throw;
    throw Error(PTO_NOT_SUPPORTED, "compiling kernels for platform '" + platform_ + "' needs backend '" +
                                       geometry->backend + "' and its kernel compiler (ccec): " + e.what());
  }
  if (!backend->host_compiled_kernels()) {
    throw Error(PTO_NOT_SUPPORTED, "compiling kernels for platform '" + platform_ + "' (backend '" +
                                       backend->name() +
                                       "') needs its device toolchain (ccec), which "
                                       "KernelCompiler does not drive yet; use the simulated platform '" +
                                       geometry->arch + "sim'");
  }
  if (!options_.pto_isa_root.empty()) {
    const std::string problem = worker::pto_isa_root_problem(options_.pto_isa_root);
    if (!problem.empty()) {
      throw Error(PTO_INVALID_ARGUMENT, "pto_isa_root '" + options_.pto_isa_root + "' " + problem +
                                            "; pass the root of a PTO-ISA checkout (the folder "
                                            "holding include/pto/) or leave it empty");
    }
  }
  // What the chip is, for headers that kernels include (include/pto_abi/common/platform_config.h):
  // from the geometry table, its one owner.
  std::string arch = geometry->arch;
  for (char &c : arch) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  options_.defines.insert(options_.defines.end(),
                          {"PTO_CHIP_ARCH_" + arch + "=1", "PTO_CHIP_CLUSTERS=" + std::to_string(geometry->num_clusters),
                           "PTO_CHIP_AIC_PER_CLUSTER=" + std::to_string(geometry->aic_per_cluster),
                           "PTO_CHIP_AIV_PER_CLUSTER=" + std::to_string(geometry->aiv_per_cluster),
                           "PTO_CHIP_MAX_AICPU_THREADS=" + std::to_string(geometry->max_aicpu_threads)});
  switch (options_.tile) {
    case TileMode::kAuto:
    case TileMode::kOn:
    case TileMode::kOff:
      break;
    default:
      throw Error(PTO_INVALID_ARGUMENT, "CompileOptions.tile " +
                                            std::to_string(static_cast<int>(options_.tile)) +
                                            " is not a TileMode; use kAuto, kOn or kOff");
  }
}

std::string KernelCompiler::compiler() const {
  const std::string cxx = worker::env_or_empty("CXX");
  return cxx.empty() ? std::string("c++") : cxx;
}

std::string KernelCompiler::cache_dir() const {
  std::string dir = worker::env_or_empty("PTO_CACHE_DIR");
  if (!dir.empty()) return dir;
  dir = worker::env_or_empty("XDG_CACHE_HOME");
  if (!dir.empty()) return worker::join_path(dir, "pto_runtime");
  dir = worker::env_or_empty("HOME");
  if (!dir.empty()) return worker::join_path(dir, ".cache/pto_runtime");
  // No HOME (some CI containers and daemons): a per-user directory under /tmp.
  return "/tmp/pto_runtime-" + std::to_string(static_cast<long>(getuid()));
}

bool KernelCompiler::cache_enabled() const {
  if (!options_.cache) return false;
  const std::string env = worker::env_or_empty("PTO_KERNEL_CACHE");
  if (env.empty() || env == "1" || env == "on" || env == "true" || env == "yes") return true;
  if (env == "0" || env == "off" || env == "false" || env == "no") return false;
  throw Error(PTO_INVALID_ARGUMENT, "PTO_KERNEL_CACHE=" + env +
                                        " is not understood; use 0 (always compile) or 1 (reuse "
                                        "cached binaries, the default), or unset it");
}

size_t KernelCompiler::clear_cache() const {
  const std::string dir = cache_dir();
  DIR *d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return 0;
    throw cache_error("open directory", dir, errno);
  }
  std::vector<std::string> names, formula_dirs;
  while (const dirent *e = readdir(d)) {
    if (is_cache_file(e->d_name)) names.emplace_back(e->d_name);
    if (worker::is_formula_tables_dir(e->d_name)) formula_dirs.emplace_back(e->d_name);
  }
  closedir(d);
  // The formula tables of cost-model twins, regenerated when next needed.
  size_t removed = worker::remove_formula_tables(dir, formula_dirs);
  for (const std::string &name : names) {
    const std::string path = worker::join_path(dir, name);
    if (unlink(path.c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT) {  // ENOENT: another process cleared it first
      throw cache_error("remove", path, errno);
    }
  }
  return removed;
}

std::string KernelCompiler::tile_compiler() const {
  return worker::tile_compiler(worker::tile_shim_dir(pto_include_dir()), "compiling a tile kernel",
                               cache_enabled() ? cache_dir() : std::string())
      .text;
}

bool KernelCompiler::is_tile_kernel(const std::string &source_path) const {
  if (options_.tile != TileMode::kAuto) return options_.tile == TileMode::kOn;
  return worker::includes_tile_headers(read_source(source_path), directory_of(source_path),
                                       options_.include_dirs);
}

KernelCompiler::Built KernelCompiler::incore(const std::string &text, const std::string &origin,
                                             const std::string &name, const std::string &source_dir,
                                             pto_core_type core_type, bool cost_model) const {
  Job job;
  job.source = line_directive(origin) + text;
  job.name = name;
  job.origin = origin;
  job.flags = {core_type_define(core_type)};
  // The compiled copy lives in the cache, so name the original's directory for "..." includes.
  if (!source_dir.empty()) job.flags.insert(job.flags.end(), {"-iquote", source_dir});
  job.entry = &kEntryPoints[0];
  job.kernel = true;
  job.tile = options_.tile == TileMode::kAuto
                 ? worker::includes_tile_headers(text, source_dir, options_.include_dirs)
                 : options_.tile == TileMode::kOn;
  job.core_type = core_type;
  if (cost_model && !job.tile) {
    throw Error(PTO_INVALID_ARGUMENT,
                "'" + origin + "' is not a tile kernel (" +
                    (options_.tile == TileMode::kOff ? std::string("the compiler was made with tile off")
                                                     : std::string("it includes no PTO-ISA header")) +
                    "), so it has no cost-model twin: PTO-ISA's cost model prices PTO-ISA "
                    "instructions only. A scalar kernel keeps timing mode's costs (the cost table, "
                    "PTO_SIM_KERNEL_COSTS, else its measured host time)");
  }
  job.cost_model = cost_model;
  return compile(job);
}

KernelCompiler::Built KernelCompiler::incore_file(const std::string &source_path,
                                                  pto_core_type core_type) const {
  core_type_define(core_type);  // a bad core type is reported before the file is read
  return incore(read_source(source_path), source_path, file_stem(source_path), directory_of(source_path),
                core_type, false);
}

KernelCompiler::Built KernelCompiler::cost_model_file(const std::string &source_path,
                                                      pto_core_type core_type) const {
  core_type_define(core_type);
  const ChipGeometry *geometry = find_geometry(platform_.c_str());  // checked by the constructor
  if (std::string(geometry->arch) != "a2a3") {
    throw Error(PTO_NOT_SUPPORTED,
                "pto-isa has no cost model for " + std::string(geometry->arch) + " at this pin: its " +
                    geometry->arch +
                    " cost-model headers do not compile (a twin built with __NPU_ARCH__=3510 "
                    "stops at 136 errors inside PTO-ISA), so '" +
                    source_path + "' has no cost-model twin for " + platform_ +
                    "; twins are built for a2a3sim only");
  }
  return incore(read_source(source_path), source_path, file_stem(source_path), directory_of(source_path),
                core_type, true);
}

std::string KernelCompiler::compile_incore_cost_model(const std::string &source_path,
                                                      pto_core_type core_type) const {
  return cost_model_file(source_path, core_type).path;
}

std::string KernelCompiler::compile_incore(const std::string &source_path, pto_core_type core_type) const {
  return incore_file(source_path, core_type).path;
}

std::string KernelCompiler::compile_orchestration(const std::string &runtime,
                                                  const std::string &source_path) const {
  Job job;
  job.flags = {runtime_define(runtime), "-iquote", directory_of(source_path)};
  job.source = line_directive(source_path) + read_source(source_path);
  job.name = file_stem(source_path);
  job.origin = source_path;
  job.entry = &orchestration_entry(runtime);
  return compile(job).path;
}

std::string KernelCompiler::compile_incore_source(const std::string &source, const std::string &name,
                                                  pto_core_type core_type) const {
  return incore(source, name, name, "", core_type, false).path;
}

std::string KernelCompiler::compile_orchestration_source(const std::string &runtime,
                                                         const std::string &source,
                                                         const std::string &name) const {
  Job job;
  job.flags = {runtime_define(runtime)};
  job.source = line_directive(name) + source;
  job.name = name;
  job.origin = name;
  job.entry = &orchestration_entry(runtime);
  return compile(job).path;
}

KernelCompiler::Built KernelCompiler::compile(const Job &job) const {
  const std::string include_dir = pto_include_dir();
  const std::string dir = cache_dir();
  const bool reuse = cache_enabled();
  const Command cmd = job.tile ? worker::tile_command(options_, job.origin, job.core_type, include_dir,
                                                      job.cost_model, dir, reuse)
                               : worker::scalar_command(options_, include_dir);
  std::vector<std::string> flags = cmd.flags;
  // Never for a twin: it computes no values, and its price must not depend on the host.
  const bool native =
      job.kernel && !job.cost_model &&
      (options_.native == NativeMode::kAll || (options_.native == NativeMode::kTileKernels && job.tile));
  if (native) {  // this CPU's instructions, minus those that could change a result (kernel_compiler.h)
    for (const char *f : {"-march=native", "-ffp-contract=off", "-mno-avx512bf16", "-mno-avx512fp16"})
      flags.push_back(f);
  }
  flags.insert(flags.end(), job.flags.begin(), job.flags.end());
  // Last, so CI's sanitizer flags (PTO_KERNEL_CFLAGS=-fsanitize=thread) override the rest.
  for (const std::string &w : split_words(worker::env_or_empty(cmd.cflags_env))) flags.push_back(w);
  const std::string &name = job.name;
  const std::string &source = job.source;
  const EntryPoint &entry = *job.entry;

  Fnv1a64 key;
  key.add(kCacheFormat);
  key.add(cmd.cxx_text);
  key.add(cmd.version);
  // Also covers the runtime's headers when they sit in a system directory, where -MMD does not
  // list them.
  key.add(pto_headers_digest(include_dir));
  key.add(std::to_string(flags.size()));
  for (const std::string &f : flags) key.add(f);
  key.add(std::to_string(cmd.link.size()));
  for (const std::string &f : cmd.link) key.add(f);
  // -march=native means "this CPU": a binary built on another one must miss.
  if (native) key.add(worker::host_cpu_description());
  key.add(source);
  Built built;
  built.compiler = cmd.cxx_text;

  // The flags already tell a twin's key from its kernel's; the name tells them apart in `ls`.
  const std::string stem = sanitized(name) + (job.cost_model ? "-costmodel-" : "-") + key.hex();
  const std::string deps_path = worker::join_path(dir, stem + ".deps");
  auto binary_path = [&](const std::string &digest) {
    return worker::join_path(dir, stem + "-" + digest + ".so");
  };
  const std::string cpp_path = worker::join_path(dir, stem + ".cpp");
  auto look_up = [&] {  // a hash, the .deps, a hash of the files it lists, a stat
    std::string listed;
    if (!read_file(deps_path, &listed)) return false;
    const std::string digest = digest_of_files(split_lines(listed));
    if (digest.empty() || !worker::is_regular_file(binary_path(digest))) return false;
    built.path = binary_path(digest);
    built.cached = true;
    return true;
  };
  if (reuse && look_up()) return built;  // the common case

  if (const int err = platform_make_directories(dir)) throw cache_error("create directory", dir, err);
  // One compile per entry at a time: a process (or thread) that finds another compiling the
  // same stem waits for it and takes its binary (two test processes, two scene cases, pytest
  // workers starting together). The wait is bounded by far more than any compile takes.
  std::unique_ptr<worker::EntryLock> lock;
  if (reuse) {
    lock = std::make_unique<worker::EntryLock>(worker::join_path(dir, stem + ".lock"),
                                               worker::kEntryLockWaitSeconds);
    // Again, whether or not it had to wait: the holder may have finished between our look-up
    // and the lock.
    if (lock->held() && look_up()) return built;
  }

  const std::string unique = worker::unique_temp_name(stem);
  auto put = [&](const std::string &path, const std::string &text) {
    const std::string tmp = worker::join_path(dir, unique + "." + path.substr(path.rfind('.') + 1) + ".tmp");
    if (const int err = write_file(tmp, text)) {
      unlink(tmp.c_str());
      throw cache_error("write", tmp, err);
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      unlink(tmp.c_str());
      throw cache_error("create", path, err);
    }
  };
  // The source copy stays beside the .so: the command line in an error message then still
  // works when pasted into a shell, and a cached .so can be traced to what built it.
  // Identical content for identical names, so a racing rename over it is harmless.
  put(cpp_path, source);

  const std::string so_tmp = worker::join_path(dir, unique + ".so.tmp");
  const std::string dep_tmp = worker::join_path(dir, unique + ".d.tmp");
  auto command = [&](const std::string &pch) {
    std::vector<std::string> argv = cmd.cxx;
    argv.insert(argv.end(), flags.begin(), flags.end());
    if (!pch.empty()) argv.insert(argv.end(), {"-include-pch", pch});
    argv.insert(argv.end(), {"-MMD", "-MF", dep_tmp, "-MT", "pto-binary", "-o", so_tmp, cpp_path});
    argv.insert(argv.end(), cmd.link.begin(), cmd.link.end());
    return argv;
  };
  // PTO-ISA's headers precompiled for these flags, shared with every kernel that begins as
  // this one does (tile_pch.h). Refused by clang (a PTO-ISA header changed since): once more
  // without, and the next compile builds it again.
  const std::string pch =
      job.tile && reuse ? worker::tile_pch(cmd, flags, worker::tile_pch_prefix(source), dir) : std::string();
  std::vector<std::string> argv = command(pch);
  ProcessResult r = run_process(argv);
  if (!r.ok() && !pch.empty() && worker::is_pch_refusal(r.output)) {
    worker::drop_tile_pch(pch);
    argv = command("");
    r = run_process(argv);
  }
  std::string depfile;
  const bool have_deps = read_file(dep_tmp, &depfile);
  unlink(dep_tmp.c_str());
  if (!r.ok()) {
    unlink(so_tmp.c_str());
    throw Error(PTO_KERNEL_COMPILE,
                "failed to compile " +
                    std::string(job.cost_model ? "the cost-model twin of tile kernel '"
                                : job.tile     ? "tile kernel '"
                                               : "'") +
                    name + "' for " + platform_ + " (compiler " + r.describe() +
                    ").\ncommand: " + shell_quoted(argv) + "\ncompiler output:\n" +
                    (r.output.empty() ? std::string("(none)\n") : trimmed_output(r.output)));
  }
  check_entry(so_tmp, name, entry);
  if (job.cost_model) worker::check_cost_model_entries(so_tmp, name);
  // What the compiler read besides the cache's own copy of the source, which the stem covers.
  std::vector<std::string> deps;
  for (std::string &f : parse_depfile(depfile)) {
    if (f != cpp_path) deps.push_back(std::move(f));
  }
  const std::string digest = have_deps ? digest_of_files(deps) : std::string();
  if (digest.empty()) {
    unlink(so_tmp.c_str());
    throw Error(
        PTO_KERNEL_COMPILE,
        "compiling '" + name + "' gave no readable dependency list (" +
            (have_deps ? "a listed header vanished during the compile" : "the compiler ignored -MMD -MF") +
            "); the kernel cache cannot key the binary on its headers.\ncommand: " + shell_quoted(argv));
  }
  const std::string so_path = binary_path(digest);
  if (rename(so_tmp.c_str(), so_path.c_str()) != 0) {
    const int err = errno;
    unlink(so_tmp.c_str());
    throw cache_error("create", so_path, err);
  }
  // After the binary, so a reader that finds the list also finds what it names.
  put(deps_path, joined_lines(deps));
  built.path = so_path;
  return built;
}

}  // namespace pto
