// src/worker/tile_toolchain.cpp — tile-kernel detection, the pto-isa root, the C++23 compiler probe.
#include "worker/tile_toolchain.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "pto/error.h"
#include "pto_platform/files.h"
#include "worker/kernel_cache.h"
#include "worker/paths.h"
#include "worker/process.h"

namespace pto {
namespace worker {
namespace {

constexpr int kMaxIncludeDepth = 8;
constexpr size_t kMaxScannedFiles = 64;

// What fixes a missing compiler, in every message that reports one.
constexpr const char *kCompilerHint =
    "a C++23 compiler such as clang++-19 (Debian package clang-19, with libclang-rt-19-dev; "
    "scripts/install_deps.sh installs both) or PTO_TILE_CXX naming one";

bool starts_with(const std::string &s, const char *prefix) {
  return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

bool is_tile_header(const std::string &path) {
  if (path == "pto/pto-inst.hpp") return true;
  for (const char *dir : {"pto/common/", "pto/cpu/", "pto/npu/", "pto/comm/", "pto/costmodel/"}) {
    if (starts_with(path, dir)) return true;
  }
  const std::string::size_type slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, std::string::npos, "pipe_sync.h") == 0;
}

struct Include {
  std::string path;
  bool quoted;
};

// The #include directives of a C++ source, outside comments and string literals. One pass, a
// four-state scanner: a directive is recognised only at the start of a line of code.
std::vector<Include> includes_of(const std::string &text) {
  std::vector<Include> out;
  enum { kCode, kLineComment, kBlockComment, kLiteral } state = kCode;
  char quote = 0;
  bool line_start = true;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = text[i];
    switch (state) {
      case kLineComment:
        if (c == '\n') state = kCode, line_start = true;
        continue;
      case kBlockComment:
        if (c == '*' && i + 1 < n && text[i + 1] == '/') state = kCode, ++i;
        continue;
      case kLiteral:
        if (c == '\\')
          ++i;
        else if (c == quote || c == '\n')
          state = kCode, line_start = c == '\n';
        continue;
      case kCode:
        break;
    }
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      state = kLineComment, ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      state = kBlockComment, ++i;
      continue;
    }
    if (c == '#' && line_start) {
      size_t j = i + 1;
      while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
      if (text.compare(j, 7, "include") == 0) {
        j += 7;
        while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
        const char open = j < n ? text[j] : '\0';
        const char close = open == '<' ? '>' : open == '"' ? '"' : '\0';
        const size_t end =
            close != '\0' ? text.find_first_of(std::string(1, close) + "\n", j + 1) : std::string::npos;
        if (end != std::string::npos && text[end] == close) {
          out.push_back({text.substr(j + 1, end - j - 1), open == '"'});
        }
      }
      // The rest of the directive line holds no directive; skip it like a comment.
      state = kLineComment;
      continue;
    }
    line_start = false;
    if (c == '"' || c == '\'') state = kLiteral, quote = c;
  }
  return out;
}

// Depth-first over the includes we can find; `seen` bounds the work and breaks cycles.
bool scan_for_tile(const std::string &text, const std::string &dir,
                   const std::vector<std::string> &include_dirs, int depth, std::set<std::string> *seen) {
  std::vector<std::string> nested;
  for (const Include &inc : includes_of(text)) {
    if (is_tile_header(inc.path)) return true;
    if (depth >= kMaxIncludeDepth) continue;
    // A quoted name is looked up beside the including file first, as the compiler does.
    std::vector<std::string> candidates;
    if (inc.quoted && !dir.empty()) candidates.push_back(join_path(dir, inc.path));
    for (const std::string &d : include_dirs) candidates.push_back(join_path(d, inc.path));
    for (const std::string &file : candidates) {
      if (!is_regular_file(file)) continue;
      if (seen->size() < kMaxScannedFiles && seen->insert(file).second) nested.push_back(file);
      break;
    }
  }
  for (const std::string &file : nested) {
    std::string inner;
    if (read_file(file, &inner) && scan_for_tile(inner, directory_of(file), include_dirs, depth + 1, seen)) {
      return true;
    }
  }
  return false;
}

// A scratch directory for probe files, removed with its files when the object goes.
class ScratchDir {
 public:
  ScratchDir() {
    const char *tmp = getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/pto_tile_probe.XXXXXX";
    if (mkdtemp(&tmpl[0]) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    for (const std::string &f : files_) unlink(f.c_str());
    if (!path_.empty()) rmdir(path_.c_str());
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  bool ok() const { return !path_.empty(); }
  // Path of a file in the directory that is removed with it (written when `text` is given).
  std::string file(const std::string &name, const std::string *text = nullptr) {
    const std::string p = join_path(path_, name);
    files_.push_back(p);
    if (text != nullptr) {
      FILE *f = fopen(p.c_str(), "w");
      if (f != nullptr) {
        fwrite(text->data(), 1, text->size(), f);
        fclose(f);
      }
    }
    return p;
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// Compiles only where std::bfloat16_t is a real bfloat16. The conversion is from a value the
// compiler cannot fold, so linking the probe also proves the conversion routine is available.
constexpr const char *kBf16Probe = R"(#if !defined(__has_include) || !__has_include(<stdfloat>)
#error no <stdfloat>
#endif
#include <stdfloat>
#if !defined(__STDCPP_BFLOAT16_T__)
#error no std::bfloat16_t
#endif
static_assert(sizeof(std::bfloat16_t) == 2, "bfloat16 is 16 bits");
extern "C" unsigned short pto_probe_bf16(float f) {
  std::bfloat16_t b = static_cast<std::bfloat16_t>(f);
  return __builtin_bit_cast(unsigned short, b);
}
)";

std::string first_lines(const std::string &text, int lines) {
  std::string out;
  std::istringstream in(text);
  for (std::string l; lines > 0 && std::getline(in, l); --lines) out += (out.empty() ? "" : " | ") + l;
  return out.size() > 300 ? out.substr(0, 300) + "..." : out;
}

// "19" from clang's /usr/lib/llvm-19/lib/clang/19/lib/... path, else "".
std::string clang_major_in(const std::string &path) {
  const std::string::size_type at = path.find("/clang/");
  if (at == std::string::npos) return "";
  std::string digits;
  for (size_t i = at + 7; i < path.size() && path[i] >= '0' && path[i] <= '9'; ++i) digits += path[i];
  return digits;
}

// The probe of one command: a TileCompiler, or why it cannot build tile kernels.
struct Probe {
  TileCompiler compiler;
  std::string failure;  // "" = usable
};

// What a passing probe found, kept in the cache folder so the next process need not compile
// the probe programs again: "native", or "shim" and the builtins library on the next line.
constexpr const char *kProbeMemoFormat = "pto-tile-probe-1";

std::string probe_memo_path(const std::string &cache_dir, const TileCompiler &c,
                            const std::string &shim_dir) {
  if (cache_dir.empty()) return "";
  Fnv1a64 key;
  key.add(kProbeMemoFormat);
  key.add(c.text);
  key.add(c.version);
  key.add(shim_dir);
  return join_path(cache_dir, "tile-probe-" + key.hex());
}

// True if `path` remembers a pass that still holds; fills the compiler's findings.
bool read_probe_memo(const std::string &path, TileCompiler *c) {
  std::string text;
  if (path.empty() || !read_file(path, &text)) return false;
  std::istringstream in(text);
  std::string kind, library;
  std::getline(in, kind);
  std::getline(in, library);
  if (kind == "native") return true;
  if (kind != "shim" || !is_regular_file(library)) return false;
  c->bf16_shim = true;
  c->builtins_library = library;
  return true;
}

// Best effort: a memo that cannot be written only means the next process probes again.
void write_probe_memo(const std::string &path, const TileCompiler &c) {
  if (path.empty()) return;
  const std::string::size_type slash = path.rfind('/');
  const std::string dir = path.substr(0, slash);
  if (platform_make_directories(dir) != 0) return;
  // ".<name>.<pid>.tmp": what clear_cache() takes for a temporary of the cache's (kernel_cache.cpp).
  const std::string tmp = join_path(
      dir, "." + path.substr(slash + 1) + "." + std::to_string(static_cast<long>(getpid())) + ".tmp");
  const std::string text = c.bf16_shim ? "shim\n" + c.builtins_library + "\n" : std::string("native\n");
  if (write_file(tmp, text) != 0 || rename(tmp.c_str(), path.c_str()) != 0) unlink(tmp.c_str());
}

Probe probe(const std::string &command, const std::string &shim_dir, const std::string &cache_dir) {
  Probe p;
  p.compiler.text = command;
  p.compiler.argv = split_words(command);
  if (p.compiler.argv.empty()) {
    p.failure = "is blank";
    return p;
  }
  std::vector<std::string> argv = p.compiler.argv;
  argv.push_back("--version");
  const ProcessResult version = run_process(argv);
  if (!version.ok()) {
    p.failure = version.spawn_errno != 0 ? "not found (" + version.describe() + ")"
                                         : "--version failed (" + version.describe() + ")";
    return p;
  }
  p.compiler.version = version.output;
  const std::string name = "(" + first_lines(version.output, 1) + ")";
  const std::string memo = probe_memo_path(cache_dir, p.compiler, shim_dir);
  if (read_probe_memo(memo, &p.compiler)) return p;

  ScratchDir scratch;
  if (!scratch.ok()) {
    p.failure = "cannot be probed: no writable temporary directory (set TMPDIR)";
    return p;
  }
  const std::string source_text = kBf16Probe;
  const std::string source = scratch.file("probe.cpp", &source_text);
  const std::string output = scratch.file("probe.so");
  // link: build a shared object that must resolve every symbol, as a kernel's conversions must.
  auto compile = [&](const std::vector<std::string> &extra, bool link) {
    std::vector<std::string> a = p.compiler.argv;
    a.push_back("-std=c++23");
    if (link) {
      a.insert(a.end(), {"-fPIC", "-shared", "-Wl,--no-undefined", "-o", output});
    } else {
      a.push_back("-fsyntax-only");
    }
    a.push_back(source);
    a.insert(a.end(), extra.begin(), extra.end());
    return run_process(a);
  };
  // A library with a real <stdfloat> (libstdc++ >= 13 with g++ >= 14, say) needs nothing of ours.
  const ProcessResult native = compile({}, true);
  if (native.ok()) {
    write_probe_memo(memo, p.compiler);
    return p;
  }

  // Otherwise clang's __bf16 through the shim, with clang's builtins for the conversion.
  const std::vector<std::string> shim = {"-isystem", shim_dir, "-D__STDCPP_BFLOAT16_T__=1"};
  const ProcessResult parsed = compile(shim, false);
  if (!parsed.ok()) {
    p.failure = name + ": no C++23 with bfloat16 (" + first_lines(parsed.output, 2) + ")";
    return p;
  }
  std::vector<std::string> rt = p.compiler.argv;
  rt.insert(rt.end(), {"--rtlib=compiler-rt", "-print-libgcc-file-name"});
  const ProcessResult lib = run_process(rt);
  const std::string library = lib.ok() ? first_lines(lib.output, 1) : std::string();
  if (!is_regular_file(library)) {
    const std::string major = clang_major_in(library);
    p.failure =
        name + ": its bfloat16 needs clang's runtime library libclang_rt.builtins" +
        (library.empty() ? std::string() : " (" + library + ")") + ", which is missing (Debian package " +
        (major.empty() ? std::string("libclang-rt-<version>-dev") : "libclang-rt-" + major + "-dev") + ")";
    return p;
  }
  std::vector<std::string> with_library = shim;
  with_library.push_back(library);
  const ProcessResult linked = compile(with_library, true);
  if (!linked.ok()) {
    p.failure =
        name + ": its bfloat16 does not link with " + library + " (" + first_lines(linked.output, 2) + ")";
    return p;
  }
  p.compiler.bf16_shim = true;
  p.compiler.builtins_library = library;
  write_probe_memo(memo, p.compiler);
  return p;
}

}  // namespace

bool includes_tile_headers(const std::string &text, const std::string &source_dir,
                           const std::vector<std::string> &include_dirs) {
  std::set<std::string> seen;
  return scan_for_tile(text, source_dir, include_dirs, 0, &seen);
}

std::string pto_isa_root_problem(const std::string &root) {
  if (!is_directory(root)) return "is not a directory";
  if (!is_regular_file(join_path(root, "include/pto/pto-inst.hpp"))) {
    return "has no include/pto/pto-inst.hpp, so it is not a PTO-ISA checkout";
  }
  return "";
}

std::string tile_isa_root(const std::string &option, const std::string &kernel) {
  if (!option.empty()) return option;
  const std::string env = env_or_empty("PTO_ISA_ROOT");
  if (env.empty()) {
    throw Error(PTO_MISSING_DEPENDENCY,
                "tile kernel '" + kernel +
                    "' includes PTO-ISA headers, but no PTO-ISA checkout is known: pass "
                    "KernelCompiler(..., pto_isa_root=...) or set PTO_ISA_ROOT to one. "
                    "scripts/fetch_pto_isa.sh clones the pinned commit and prints the value; a "
                    "project checkout may find it in ../shared/third_party/pto-isa");
  }
  const std::string problem = pto_isa_root_problem(env);
  if (!problem.empty()) {
    throw Error(PTO_INVALID_ARGUMENT, "PTO_ISA_ROOT=" + env + " " + problem +
                                          "; point it at the root of a PTO-ISA checkout (the "
                                          "folder holding include/pto/) or unset it");
  }
  return env;
}

const TileCompiler &tile_compiler(const std::string &shim_dir, const std::string &who,
                                  const std::string &cache_dir) {
  // Successes and failures are both kept: a process asks once per command. Entries are never
  // removed, so the references handed out stay valid.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Probe>> probes;  // guarded by mutex
  const std::string chosen = env_or_empty("PTO_TILE_CXX");
  const std::string key = chosen + '\n' + shim_dir;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = probes.find(key);
  if (it == probes.end()) {
    std::unique_ptr<Probe> found;
    std::string tried;
    if (!chosen.empty()) {
      found = std::make_unique<Probe>(probe(chosen, shim_dir, cache_dir));
      if (!found->failure.empty()) found->failure = "PTO_TILE_CXX=" + chosen + " " + found->failure;
    } else {
      for (const char *candidate : {"clang++-19", "clang++", "g++-15", "g++-14"}) {
        found = std::make_unique<Probe>(probe(candidate, shim_dir, cache_dir));
        if (found->failure.empty()) break;
        tried += std::string(tried.empty() ? "" : "; ") + candidate + " " + found->failure;
      }
      if (!found->failure.empty()) found->failure = "tried " + tried;
    }
    it = probes.emplace(key, std::move(found)).first;
  }
  const Probe &p = *it->second;
  if (!p.failure.empty()) {
    throw Error(PTO_MISSING_DEPENDENCY, who + " needs " + kCompilerHint + ": " + p.failure);
  }
  return p.compiler;
}

std::vector<std::string> tile_flags(const TileCompiler &cxx, const std::string &shim_dir,
                                    pto_core_type core_type, bool cost_model) {
  std::vector<std::string> flags;
  if (cxx.bf16_shim) flags.insert(flags.end(), {"-isystem", shim_dir, "-D__STDCPP_BFLOAT16_T__=1"});
  if (cost_model) {
    flags.insert(flags.end(), {"-D__COSTMODEL", "-D__NPU_ARCH__=2201", "-DPTO_COMM_NOT_SUPPORTED", "-include",
                               "pto_costmodel_probe.h"});
  } else {
    // PTO-ISA's CPU simulation, one thread per kernel: the runtime already runs cores in parallel.
    // The sim hooks stop a kernel at a PTO-ISA feature that would hang here (TPUSH/TPOP).
    flags.insert(flags.end(), {"-D__CPU_SIM", "-DPTO_CPU_MAX_THREADS=1", "-include",
                               join_path(shim_dir, "pto_tile_sim_hooks.h")});
  }
  switch (core_type) {
    case PTO_CORE_AIV:
      flags.push_back("-D__DAV_VEC__");
      break;
    case PTO_CORE_AIC:
      flags.push_back("-D__DAV_CUBE__");
      break;
    default:
      // MIX: one binary runs on the cluster's AIC and AIV cores, so it gets both, as PTO-ISA's
      // CPU simulation assumes when neither is given (pto/common/arch_macro.hpp). The kernel
      // tells its part at run time (pto::mix_part); pipe_sync.h then syncs the vector pipe.
      flags.insert(flags.end(), {"-D__DAV_CUBE__", "-D__DAV_VEC__"});
      break;
  }
  // What PTO-ISA's headers warn about at the compiler's default level: a switch over an enum
  // that skips new values (pto/cpu/trace.hpp), and vectorisation its loop pragmas ask for that
  // clang cannot do (shown at the kernel's entry, so it looks like the user's fault). A user's
  // own -Wall goes in PTO_TILE_KERNEL_CFLAGS, which comes after these.
  flags.insert(flags.end(), {"-Wno-switch", "-Wno-pass-failed"});
  return flags;
}

std::string host_cpu_description() {
  static const std::string description = [] {
    std::string text;
    if (!read_file("/proc/cpuinfo", &text)) return std::string("unknown");
    std::string model, flags;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line) && (model.empty() || flags.empty());) {
      if (model.empty() && starts_with(line, "model name")) model = line;
      if (flags.empty() && starts_with(line, "flags")) flags = line;
    }
    return model.empty() && flags.empty() ? std::string("unknown") : model + "\n" + flags;
  }();
  return description;
}

}  // namespace worker
}  // namespace pto
