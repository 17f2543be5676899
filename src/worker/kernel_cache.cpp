// src/worker/kernel_cache.cpp — the kernel cache's hashing and file helpers (kernel_cache.h).
#include "worker/kernel_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "worker/paths.h"

namespace pto {
namespace worker {

std::string Fnv1a64::hex() const {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

void Fnv1a64::bytes(const void *data, size_t n) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i) {
    h_ ^= p[i];
    h_ *= 0x100000001b3ULL;
  }
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

// The files a `-MMD -MF` dependency file lists as prerequisites, in order. Make syntax as GCC
// and Clang write it: "target: a b \<newline> c", with "\ " for a space in a name, "\#" for
// '#' and "$$" for '$'.
std::vector<std::string> parse_depfile(const std::string &text) {
  std::vector<std::string> files;
  std::string::size_type i = text.find(": ");
  if (i == std::string::npos) return files;
  i += 2;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) files.push_back(cur);
    cur.clear();
  };
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char n = text[i + 1];
      if (n == '\n') {
        flush();
        ++i;
        continue;
      }
      if (n == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
        flush();
        i += 2;
        continue;
      }
      if (n == ' ' || n == '#' || n == '\\') {
        cur += n;
        ++i;
        continue;
      }
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      cur += '$';
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      if (c == '\n' && i + 1 < text.size() && text[i + 1] != ' ' && text[i + 1] != '\t') break;
      continue;
    }
    cur += c;
  }
  flush();
  return files;
}

// Digest of the files' paths and contents, or "" if one of them cannot be read (it was
// deleted or renamed: the binary built from it cannot be trusted to match any more). Contents
// are hashed once per process per version of a file, the version told by its inode, size and
// modification and change times, as make and ninja tell them.
std::string digest_of_files(const std::vector<std::string> &files) {
  struct Version {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    int64_t ctime_ns;
    bool operator==(const Version &o) const {
      return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns &&
             ctime_ns == o.ctime_ns;
    }
  };
  static std::mutex mutex;
  static std::map<std::string, std::pair<Version, uint64_t>> known;  // guarded by mutex
  Fnv1a64 h;
  for (const std::string &path : files) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
    const Version v{st.st_dev, st.st_ino, st.st_size,
                    static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                    static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
    uint64_t content = 0;
    bool have = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = known.find(path);
      if (it != known.end() && it->second.first == v) {
        content = it->second.second;
        have = true;
      }
    }
    if (!have) {
      std::string text;
      if (!read_file(path, &text)) return "";
      Fnv1a64 c;
      c.add(text);
      content = c.value();
      std::lock_guard<std::mutex> lock(mutex);
      known[path] = {v, content};
    }
    h.add(path);
    h.add(std::to_string(content));
  }
  return h.hex();
}

std::string joined_lines(const std::vector<std::string> &lines) {
  std::string out;
  for (const std::string &l : lines) out += l + "\n";
  return out;
}

Error cache_error(const std::string &what, const std::string &path, int err) {
  return Error(PTO_KERNEL_COMPILE, "cannot " + what + " '" + path + "' in the kernel cache: " +
                                       strerror(err) + "; set PTO_CACHE_DIR to a writable directory");
}

std::string joined(const std::vector<std::string> &items, const char *sep) {
  std::string out;
  for (const std::string &item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::vector<std::string> split_lines(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) lines.push_back(l);
  }
  return lines;
}

// Whether `name` is a file the cache writes: "<stem>-<16 hex>" followed by ".so", ".cpp",
// ".deps" or "-<16 hex>.so", "tile-probe-<16 hex>", or a temporary ".<...>.tmp" of one. clear_cache() removes
// only these, so a PTO_CACHE_DIR shared with other files is safe to clear.
bool is_cache_file(const std::string &name) {
  auto hex16_at = [&](std::string::size_type pos) {
    if (pos + 16 > name.size()) return false;
    for (std::string::size_type k = pos; k < pos + 16; ++k) {
      const char c = name[k];
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
  };
  auto ends_with = [&](const char *suffix) {
    const size_t n = strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  if (!name.empty() && name[0] == '.' && ends_with(".tmp")) {
    return name.find('-') != std::string::npos;
  }
  // The tile compiler probe's memo (tile_toolchain.cpp).
  if (name.size() == 27 && name.compare(0, 11, "tile-probe-") == 0 && hex16_at(11)) return true;
  // Precompiled PTO-ISA headers (tile_pch.cpp): "pch-<hash>" with .h, .pch or .lock.
  if (name.compare(0, 4, "pch-") == 0 && hex16_at(4) &&
      (name.compare(20, std::string::npos, ".h") == 0 || name.compare(20, std::string::npos, ".pch") == 0 ||
       name.compare(20, std::string::npos, ".lock") == 0)) {
    return true;
  }
  for (const char *suffix : {".so", ".cpp", ".deps", ".lock"}) {
    if (!ends_with(suffix)) continue;
    const std::string::size_type end = name.size() - strlen(suffix);
    if (end >= 17 && name[end - 17] == '-' && hex16_at(end - 16)) return true;
  }
  return false;
}

std::string unique_temp_name(const std::string &stem) {
  static std::atomic<uint64_t> counter{0};
  return "." + stem + "." + std::to_string(static_cast<long>(getpid())) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

EntryLock::EntryLock(const std::string &path, double max_wait_s) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;
  if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
    held_ = true;
    return;
  }
  if (errno != EWOULDBLOCK) return;
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(max_wait_s);
  int sleep_us = 1000;
  while (clock::now() < deadline) {
    usleep(static_cast<useconds_t>(sleep_us));
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
      held_ = true;
      return;
    }
    if (errno != EWOULDBLOCK) return;
    sleep_us = std::min(sleep_us * 2, 50000);
  }
  fprintf(stderr,
          "pto_runtime: waited %.0f s for another process compiling into the kernel cache (lock %s); "
          "compiling here too\n",
          max_wait_s, path.c_str());
}

EntryLock::~EntryLock() {
  if (fd_ >= 0) close(fd_);  // closing the descriptor releases the lock
}

namespace {

// Every file under `dir` (its relative path and content), in name order, depth first.
void hash_tree(const std::string &dir, const std::string &relative, Fnv1a64 *h) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (const dirent *e = readdir(d)) {
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());  // readdir order is file-system dependent
  for (const std::string &name : names) {
    const std::string path = join_path(dir, name);
    const std::string rel = join_path(relative, name);
    if (is_directory(path)) {
      hash_tree(path, rel, h);
      continue;
    }
    std::string text;
    if (!read_file(path, &text)) continue;
    h->add(rel);
    h->add(text);
  }
}

}  // namespace

// Hash of the runtime's own headers (pto/, the descriptor ABI's pto_abi/, the tile shim and the
// cost-model shim with its subfolders), so kernels cached against an older pto/kernel.h (a
// different package version, or a developer editing the tree) are rebuilt rather than loaded
// with a stale ABI; the tile shim also sits on a system include path, which -MMD does not list.
// Read once per process per include directory.
std::string pto_headers_digest(const std::string &include_dir) {
  static std::mutex mutex;
  static std::map<std::string, std::string> digests;  // guarded by mutex
  std::lock_guard<std::mutex> lock(mutex);
  auto it = digests.find(include_dir);
  if (it != digests.end()) return it->second;
  Fnv1a64 h;
  for (const std::string &dir : {worker::join_path(include_dir, "pto"), worker::abi_include_dir(include_dir),
                                 worker::tile_shim_dir(include_dir), worker::costmodel_shim_dir(include_dir),
                                 worker::sim_isa_dir(include_dir)}) {
    h.add(dir);
    hash_tree(dir, "", &h);
  }
  digests.emplace(include_dir, h.hex());
  return h.hex();
}

}  // namespace worker
}  // namespace pto
