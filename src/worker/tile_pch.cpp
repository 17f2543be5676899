// src/worker/tile_pch.cpp — PTO-ISA's headers precompiled once per flag set (tile_pch.h).
#include "worker/tile_pch.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "worker/kernel_cache.h"
#include "worker/paths.h"
#include "worker/process.h"

namespace pto {
namespace worker {
namespace {

// Bump when the header's flags or text change meaning.
constexpr const char *kPchFormat = "pto-tile-pch-v1";
constexpr const char *kIsaInclude = "<pto/pto-inst.hpp>";

std::string trimmed(const std::string &s) {
  const std::string::size_type b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") + 1 - b);
}

// `line` without a trailing // comment; a /* in it makes it unusable (returns false).
bool without_comment(const std::string &line, std::string *out) {
  if (line.find("/*") != std::string::npos) return false;
  *out = trimmed(line.substr(0, line.find("//")));
  return true;
}

// "# include <x>" -> {"include", "<x>"}; the directive's name and the rest, trimmed.
bool directive(const std::string &line, std::string *name, std::string *rest) {
  if (line.empty() || line[0] != '#') return false;
  const std::string body = trimmed(line.substr(1));
  const std::string::size_type end = body.find_first_of(" \t");
  *name = body.substr(0, end);
  *rest = end == std::string::npos ? std::string() : trimmed(body.substr(end));
  return true;
}

std::string first_word(const std::string &s) {
  return s.substr(0, s.find_first_of(" \t("));
}

bool is_regular_nonempty(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

}  // namespace

std::string tile_pch_prefix(const std::string &source) {
  std::istringstream in(source);
  std::string raw, line, name, rest, out;
  bool first = true, in_block_comment = false;
  // The guard idiom: after `#ifndef X`, `#define X ...` then `#endif`.
  std::string guard;
  int guard_step = 0;  // 0: none open, 1: after #ifndef, 2: after its #define
  while (std::getline(in, raw)) {
    const bool was_first = first;
    first = false;
    if (in_block_comment) {
      const std::string::size_type end = raw.find("*/");
      if (end == std::string::npos) continue;
      if (!trimmed(raw.substr(end + 2)).empty()) return "";
      in_block_comment = false;
      continue;
    }
    const std::string t = trimmed(raw);
    if (t.empty() || t.compare(0, 2, "//") == 0) continue;
    if (t.compare(0, 2, "/*") == 0) {
      const std::string::size_type end = t.find("*/", 2);
      if (end == std::string::npos) {
        in_block_comment = true;
      } else if (!trimmed(t.substr(end + 2)).empty()) {
        return "";
      }
      continue;
    }
    if (!without_comment(t, &line) || !directive(line, &name, &rest)) return "";  // code, or a /* mid-line
    if (was_first && name == "line") continue;  // the compiler's own #line for error messages
    if (guard_step == 1) {
      if (name != "define" || first_word(rest) != guard) return "";
      guard_step = 2;
    } else if (guard_step == 2) {
      if (name != "endif" || !rest.empty()) return "";
      guard_step = 0;
    } else if (name == "ifndef") {
      guard = rest;
      if (guard.empty() || guard.find_first_of(" \t") != std::string::npos) return "";
      guard_step = 1;
    } else if (name == "pragma" && rest == "once") {
      continue;  // the header has no use for it
    } else if (name != "include" || rest.size() < 3 || rest.front() != '<' || rest.back() != '>') {
      return "";
    }
    out += line + "\n";
    if (name == "include" && rest == kIsaInclude) return guard_step == 0 ? out : "";
  }
  return "";  // never includes <pto/pto-inst.hpp> first-thing
}

std::string tile_pch(const Command &cmd, const std::vector<std::string> &flags, const std::string &prefix,
                     const std::string &cache_dir) {
  if (prefix.empty() || cmd.version.find("clang") == std::string::npos) return "";
  if (env_or_empty("PTO_TILE_PCH") == "0") return "";  // tile_pch.h: the way out, should one be needed
  std::vector<std::string> pch_flags;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "-iquote") {
      ++i;
      continue;
    }
    if (flags[i] != "-shared") pch_flags.push_back(flags[i]);
  }
  Fnv1a64 key;
  key.add(kPchFormat);
  key.add(cmd.cxx_text);
  key.add(cmd.version);
  key.add(std::to_string(pch_flags.size()));
  for (const std::string &f : pch_flags) key.add(f);
  key.add(prefix);
  const std::string stem = "pch-" + key.hex();
  const std::string header = join_path(cache_dir, stem + ".h");
  const std::string pch = join_path(cache_dir, stem + ".pch");
  if (is_regular_nonempty(pch)) return pch;
  EntryLock lock(join_path(cache_dir, stem + ".lock"), kEntryLockWaitSeconds);
  if (lock.held() && is_regular_nonempty(pch)) return pch;
  const std::string unique = unique_temp_name(stem);
  // Written once and never again: clang checks that the header is unchanged when it reads the
  // precompiled one, and kernels list it among the files their binaries depend on.
  if (!is_regular_nonempty(header)) {
    const std::string tmp = join_path(cache_dir, unique + ".h.tmp");
    if (write_file(tmp, prefix) != 0 || rename(tmp.c_str(), header.c_str()) != 0) {
      unlink(tmp.c_str());
      return "";
    }
  }
  const std::string tmp = join_path(cache_dir, unique + ".pch.tmp");
  std::vector<std::string> argv = cmd.cxx;
  argv.insert(argv.end(), pch_flags.begin(), pch_flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", header, "-o", tmp});
  if (!run_process(argv).ok() || rename(tmp.c_str(), pch.c_str()) != 0) {
    unlink(tmp.c_str());
    return "";
  }
  return pch;
}

bool is_pch_refusal(const std::string &compiler_output) {
  for (const char *what : {"precompiled header", "PCH file", "AST file"}) {
    if (compiler_output.find(what) != std::string::npos) return true;
  }
  return false;
}

void drop_tile_pch(const std::string &path) {
  unlink(path.c_str());
}

}  // namespace worker
}  // namespace pto
