// src/worker/kernel_compiler.cpp — builds kernel/orchestration sources into cached .so files.
//
// Cache protocol (safe across threads and processes without locks): the file name carries a
// hash of everything that decides the output, so an existing <name>-<hash>.so is by
// construction the right one. Writers produce a uniquely named temporary in the cache
// directory and rename() it into place; rename is atomic within one file system, so a reader
// sees either no file or a complete one, and two racing writers leave identical content.
#include "pto/kernel_compiler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "core/geometry.h"
#include "pto/error.h"
#include "pto/runtime_builder.h"
#include "pto_platform/files.h"
#include "worker/paths.h"

#ifndef PTO_SOURCE_INCLUDE_DIR
#error "PTO_SOURCE_INCLUDE_DIR must be defined (src/worker/CMakeLists.txt sets it)"
#endif

extern char **environ;

namespace pto {
namespace {

// Compiler output kept in an error message: enough for the first errors, which are the ones
// that matter, without turning one exception into megabytes of template backtraces.
constexpr size_t kMaxOutputInMessage = 8 * 1024;
// Output read from a child beyond this is drained and dropped so a runaway compiler cannot
// exhaust memory.
constexpr size_t kMaxOutputCaptured = 1024 * 1024;

// Bump when the layout of the cache key or of the flags changes meaning.
constexpr const char *kCacheFormat = "pto-kernel-cache-v1";

// FNV-1a, 64-bit (http://www.isthe.com/chongo/tech/comp/fnv/). Not cryptographic: the cache
// only needs distinct inputs to get distinct names with overwhelming probability, and a user
// who can write the cache directory can replace the .so anyway. Each field is prefixed by its
// length so that ("ab", "c") and ("a", "bc") hash differently.
class Fnv1a64 {
 public:
  void add(const std::string &field) {
    const uint64_t n = field.size();
    bytes(&n, sizeof n);
    bytes(field.data(), field.size());
  }
  uint64_t value() const { return h_; }
  std::string hex() const {
    char buf[17];
    snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  void bytes(const void *data, size_t n) {
    const unsigned char *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ULL;
    }
  }
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::vector<std::string> split_words(const std::string &text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string joined(const std::vector<std::string> &names, const char *sep) {
  std::string out;
  for (const std::string &n : names) {
    if (!out.empty()) out += sep;
    out += n;
  }
  return out;
}

// A command line a user can paste into a shell to reproduce the compile.
std::string shell_quoted(const std::vector<std::string> &argv) {
  std::string out;
  for (const std::string &arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

bool read_file(const std::string &path, std::string *text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  *text = buf.str();
  return !in.bad();
}

// Writes `text` to `path` in one go; returns 0 or an errno.
int write_file(const std::string &path, const std::string &text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return err;
    }
    done += static_cast<size_t>(n);
  }
  return close(fd) == 0 ? 0 : errno;
}

struct ProcessResult {
  int spawn_errno = 0;  // non-zero: the program could not be started at all
  int wait_status = 0;  // as from waitpid
  std::string output;   // stdout and stderr interleaved, as a terminal would show them
  bool ok() const { return spawn_errno == 0 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }
  std::string describe() const {
    if (spawn_errno != 0) return std::string("could not be started: ") + strerror(spawn_errno);
    if (WIFEXITED(wait_status)) return "exit status " + std::to_string(WEXITSTATUS(wait_status));
    if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
    return "wait status " + std::to_string(wait_status);
  }
};

// Runs argv[0] (looked up in PATH) without a shell, so no argument is ever re-split or
// expanded. The pipe is close-on-exec so that a child spawned by another thread at the same
// moment does not inherit its write end and hold our read open past this child's exit.
ProcessResult run_process(const std::vector<std::string> &argv) {
  ProcessResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.spawn_errno = errno;
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);

  std::vector<char *> cargv;
  for (const std::string &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.spawn_errno = rc;
    return result;
  }

  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < kMaxOutputCaptured) result.output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, &result.wait_status, 0) < 0) {
    if (errno != EINTR) {
      result.spawn_errno = errno;
      break;
    }
  }
  return result;
}

std::string trimmed_output(const std::string &output) {
  if (output.size() <= kMaxOutputInMessage) return output;
  return output.substr(0, kMaxOutputInMessage) + "\n... [" +
         std::to_string(output.size() - kMaxOutputInMessage) + " more bytes of compiler output omitted]\n";
}

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

// Hash of the runtime's own headers, so kernels cached against an older pto/kernel.h (a
// different package version, or a developer editing the tree) are rebuilt rather than
// loaded with a stale ABI. Read once per process per include directory.
std::string pto_headers_digest(const std::string &include_dir) {
  static std::mutex mutex;
  static std::map<std::string, std::string> digests;  // guarded by mutex
  std::lock_guard<std::mutex> lock(mutex);
  auto it = digests.find(include_dir);
  if (it != digests.end()) return it->second;
  const std::string dir = worker::join_path(include_dir, "pto");
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (const dirent *e = readdir(d)) {
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());  // readdir order is file-system dependent
  Fnv1a64 h;
  for (const std::string &name : names) {
    std::string text;
    if (!read_file(worker::join_path(dir, name), &text)) continue;
    h.add(name);
    h.add(text);
  }
  digests.emplace(include_dir, h.hex());
  return h.hex();
}

bool has_kernel_header(const std::string &include_dir) {
  return worker::is_regular_file(worker::join_path(include_dir, "pto/kernel.h"));
}

// The directory holding pto/kernel.h: the environment, then the Python package layout
// (pto_runtime/_native*.so beside pto_runtime/include/), then the source tree we were built
// from.
std::string pto_include_dir() {
  const std::string env = worker::env_or_empty("PTO_RUNTIME_INCLUDE_DIR");
  if (!env.empty()) {
    if (!has_kernel_header(env)) {
      throw Error(PTO_INVALID_ARGUMENT, "PTO_RUNTIME_INCLUDE_DIR=" + env +
                                            " does not contain pto/kernel.h; point it at the "
                                            "runtime's include directory or unset it");
    }
    return env;
  }
  const std::string here = worker::directory_of_this_binary();
  if (!here.empty()) {
    const std::string packaged = worker::join_path(here, "include");
    if (has_kernel_header(packaged)) return packaged;
  }
  return PTO_SOURCE_INCLUDE_DIR;
}

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

std::string directory_of(const std::string &path) {
  const std::string::size_type slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? std::string("/") : path.substr(0, slash);
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

Error cache_error(const std::string &what, const std::string &path, int err) {
  return Error(PTO_KERNEL_COMPILE, "cannot " + what + " '" + path + "' in the kernel cache: " +
                                       strerror(err) + "; set PTO_CACHE_DIR to a writable directory");
}

}  // namespace

KernelCompiler::KernelCompiler(std::string platform, CompileOptions options)
    : platform_(std::move(platform)), options_(std::move(options)) {
  const ChipGeometry *geometry = find_geometry(platform_.c_str());
  if (geometry == nullptr) {
    throw Error(PTO_INVALID_ARGUMENT, "unknown platform '" + platform_ +
                                          "'; use one of: " + joined(RuntimeBuilder::platforms(), ", "));
  }
  if (strcmp(geometry->backend, "sim") != 0) {
    throw Error(PTO_NOT_SUPPORTED,
                "compiling kernels for platform '" + platform_ + "' needs the CANN toolkit " +
                    "(ccec), which is not installed; use the simulated platform '" + geometry->arch + "sim'");
  }
  if (!options_.pto_isa_root.empty() &&
      !worker::is_directory(worker::join_path(options_.pto_isa_root, "include"))) {
    throw Error(PTO_INVALID_ARGUMENT, "pto_isa_root '" + options_.pto_isa_root +
                                          "' has no include/ directory; pass the root of a "
                                          "PTO-ISA checkout or leave it empty");
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

std::string KernelCompiler::compile_incore(const std::string &source_path, pto_core_type core_type) const {
  const std::string define = core_type_define(core_type);
  const std::string text = read_source(source_path);
  // The compiled copy lives in the cache, so name the original's directory for "..." includes.
  return compile(line_directive(source_path) + text, file_stem(source_path),
                 {define, "-iquote", directory_of(source_path)});
}

std::string KernelCompiler::compile_orchestration(const std::string &runtime,
                                                  const std::string &source_path) const {
  const std::string define = runtime_define(runtime);
  const std::string text = read_source(source_path);
  return compile(line_directive(source_path) + text, file_stem(source_path),
                 {define, "-iquote", directory_of(source_path)});
}

std::string KernelCompiler::compile_incore_source(const std::string &source, const std::string &name,
                                                  pto_core_type core_type) const {
  return compile(line_directive(name) + source, name, {core_type_define(core_type)});
}

std::string KernelCompiler::compile_orchestration_source(const std::string &runtime,
                                                         const std::string &source,
                                                         const std::string &name) const {
  return compile(line_directive(name) + source, name, {runtime_define(runtime)});
}

std::string KernelCompiler::compile(const std::string &source, const std::string &name,
                                    const std::vector<std::string> &extra_flags) const {
  const std::string cxx_text = compiler();
  const std::vector<std::string> cxx = split_words(cxx_text);  // CXX="ccache g++" is common
  if (cxx.empty()) {
    throw Error(PTO_INVALID_ARGUMENT, "CXX is blank; set it to a C++ compiler or unset it");
  }
  const std::string include_dir = pto_include_dir();

  std::vector<std::string> flags = {"-std=c++17", "-fPIC", "-shared"};
  if (!options_.opt_level.empty()) flags.push_back(options_.opt_level);
  flags.push_back("-I" + include_dir);
  for (const std::string &dir : options_.include_dirs) flags.push_back("-I" + dir);
  if (!options_.pto_isa_root.empty()) {
    flags.push_back("-I" + worker::join_path(options_.pto_isa_root, "include"));
  }
  for (const std::string &d : options_.defines) flags.push_back("-D" + d);
  flags.push_back("-DPTO_PLATFORM_SIM=1");
  flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
  // Last, so CI's sanitizer flags (PTO_KERNEL_CFLAGS=-fsanitize=thread) override the rest.
  for (const std::string &w : split_words(worker::env_or_empty("PTO_KERNEL_CFLAGS"))) {
    flags.push_back(w);
  }

  Fnv1a64 key;
  key.add(kCacheFormat);
  key.add(cxx_text);
  key.add(compiler_version(cxx, cxx_text));
  key.add(pto_headers_digest(include_dir));
  key.add(std::to_string(flags.size()));
  for (const std::string &f : flags) key.add(f);
  key.add(source);

  const std::string dir = cache_dir();
  const std::string stem = sanitized(name) + "-" + key.hex();
  const std::string so_path = worker::join_path(dir, stem + ".so");
  if (worker::is_regular_file(so_path)) return so_path;  // the common case: a hash and a stat

  if (const int err = platform_make_directories(dir)) throw cache_error("create directory", dir, err);

  // Unique per process and per call, so concurrent compiles never share a temporary.
  static std::atomic<uint64_t> counter{0};
  const std::string unique = "." + stem + "." + std::to_string(static_cast<long>(getpid())) + "." +
                             std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  // The source copy stays beside the .so: the command line in an error message then still
  // works when pasted into a shell, and a cached .so can be traced to what built it.
  // Identical content for identical names, so a racing rename over it is harmless.
  const std::string cpp_path = worker::join_path(dir, stem + ".cpp");
  const std::string cpp_tmp = worker::join_path(dir, unique + ".cpp.tmp");
  if (const int err = write_file(cpp_tmp, source)) {
    unlink(cpp_tmp.c_str());
    throw cache_error("write", cpp_tmp, err);
  }
  if (rename(cpp_tmp.c_str(), cpp_path.c_str()) != 0) {
    const int err = errno;
    unlink(cpp_tmp.c_str());
    throw cache_error("create", cpp_path, err);
  }

  const std::string so_tmp = worker::join_path(dir, unique + ".so.tmp");
  std::vector<std::string> argv = cxx;
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("-o");
  argv.push_back(so_tmp);
  argv.push_back(cpp_path);
  const ProcessResult r = run_process(argv);
  if (!r.ok()) {
    unlink(so_tmp.c_str());
    throw Error(PTO_KERNEL_COMPILE,
                "failed to compile '" + name + "' for " + platform_ + " (compiler " + r.describe() +
                    ").\ncommand: " + shell_quoted(argv) + "\ncompiler output:\n" +
                    (r.output.empty() ? std::string("(none)\n") : trimmed_output(r.output)));
  }
  if (rename(so_tmp.c_str(), so_path.c_str()) != 0) {
    const int err = errno;
    unlink(so_tmp.c_str());
    throw cache_error("create", so_path, err);
  }
  return so_path;
}

}  // namespace pto
