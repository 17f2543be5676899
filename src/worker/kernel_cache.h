// src/worker/kernel_cache.h — the kernel cache's hashing and file helpers (protocol: kernel_compiler.cpp).
#ifndef PTO_WORKER_KERNEL_CACHE_H
#define PTO_WORKER_KERNEL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "pto/error.h"

namespace pto {
namespace worker {

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
  std::string hex() const;

 private:
  void bytes(const void *data, size_t n);
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

// Writes `text` to `path` in one go; returns 0 or an errno.
int write_file(const std::string &path, const std::string &text);

// The files a `-MMD -MF` dependency file lists as prerequisites, in order.
std::vector<std::string> parse_depfile(const std::string &text);

// Digest of the files' paths and contents, or "" if one of them cannot be read (it was deleted
// or renamed: the binary built from it cannot be trusted to match any more). Thread-safe.
std::string digest_of_files(const std::vector<std::string> &files);

std::string joined_lines(const std::vector<std::string> &lines);
std::string joined(const std::vector<std::string> &items, const char *sep = ", ");
std::vector<std::string> split_lines(const std::string &text);  // without empty lines

// The error of a file operation `what` ("create directory", ...) on `path` in the cache that
// failed with errno `err`: KERNEL_COMPILE, pointing at PTO_CACHE_DIR.
Error cache_error(const std::string &what, const std::string &path, int err);

// Whether `name` is a file the cache writes (clear_cache() removes only these).
bool is_cache_file(const std::string &name);

// An advisory lock on one cache entry ("<stem>.lock"), so that processes (and threads) about to
// compile the same thing compile it once: the second waits, then finds the first's binary. Only
// an economy: the cache protocol is safe without it, so a lock that cannot be had (a read-only
// or NFS directory, a holder stuck for longer than `max_wait_s`) means compiling anyway, and a
// process that dies holding it releases it (flock(2)). Released by the destructor.
// How long a compile waits for another process's compile of the same entry before doing it
// itself: far more than any compile takes.
constexpr double kEntryLockWaitSeconds = 600;

// A name for a temporary beside `stem`'s files, unique per process and per call, so that
// concurrent writers never share one: ".<stem>.<pid>.<n>". is_cache_file() knows it once
// ".tmp" is appended.
std::string unique_temp_name(const std::string &stem);

class EntryLock {
 public:
  EntryLock(const std::string &path, double max_wait_s);
  ~EntryLock();
  EntryLock(const EntryLock &) = delete;
  EntryLock &operator=(const EntryLock &) = delete;
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

// Hash of the runtime's own headers under `include_dir` (pto/, pto_abi/, pto_tile_shim/,
// pto_costmodel_shim/).
std::string pto_headers_digest(const std::string &include_dir);

}  // namespace worker
}  // namespace pto
#endif  // PTO_WORKER_KERNEL_CACHE_H
