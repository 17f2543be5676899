// src/host/tensor_dump_files.cpp — see tensor_dump_files.h.
#include "host/tensor_dump_files.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "core/align.h"
#include "core/handshake.h"
#include "pto_platform/files.h"

namespace pto {
namespace {

constexpr uint32_t kRecordsPerTask = 2 * kDumpMaxArgs;  // every argument before and after

// NumPy's dtype string for each pto_dtype (bf16 has none: stored as its 16-bit pattern).
const char *numpy_descr(uint32_t dtype) {
  switch (dtype) {
    case PTO_DTYPE_F32:
      return "<f4";
    case PTO_DTYPE_F16:
      return "<f2";
    case PTO_DTYPE_BF16:
      return "<u2";
    case PTO_DTYPE_F64:
      return "<f8";
    case PTO_DTYPE_I8:
      return "|i1";
    case PTO_DTYPE_I16:
      return "<i2";
    case PTO_DTYPE_I32:
      return "<i4";
    case PTO_DTYPE_I64:
      return "<i8";
    case PTO_DTYPE_U8:
      return "|u1";
    case PTO_DTYPE_U16:
      return "<u2";
    case PTO_DTYPE_U32:
      return "<u4";
    case PTO_DTYPE_U64:
      return "<u8";
    case PTO_DTYPE_BOOL:
      return "|b1";
    default:
      return "|u1";
  }
}

// NPY format 1.0: magic, version, header length, a Python-dict header padded to 64 bytes.
bool write_npy(const std::string &path, const DumpRecord &r, const char *data, std::string *error) {
  std::string shape = "(";
  for (uint32_t i = 0; i < r.ndim; ++i)
    shape += std::to_string(r.shape[i]) + (r.ndim == 1 || i + 1 < r.ndim ? "," : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + numpy_descr(r.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  FILE *f = fopen(path.c_str(), "wb");
  if (!f) {
    *error = "cannot write " + path + ": " + strerror(errno);
    return false;
  }
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const uint16_t len = static_cast<uint16_t>(header.size());
  const unsigned char len_le[2] = {static_cast<unsigned char>(len & 0xff),
                                   static_cast<unsigned char>(len >> 8)};
  bool ok = fwrite(magic, 1, 8, f) == 8 && fwrite(len_le, 1, 2, f) == 2 &&
            fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (r.nbytes == 0 || fwrite(data, 1, r.nbytes, f) == r.nbytes);
  ok = fclose(f) == 0 && ok;
  if (!ok) *error = "cannot write " + path + ": " + strerror(errno);
  return ok;
}

std::string run_dir_name() {
  static std::atomic<uint32_t> seq{0};
  char buf[64];
  const time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  snprintf(buf, sizeof buf, "run-%04d%02d%02d-%02d%02d%02d-%d-%u", local.tm_year + 1900, local.tm_mon + 1,
           local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, static_cast<int>(getpid()),
           seq.fetch_add(1, std::memory_order_relaxed));
  return buf;
}

struct Offsets {
  uint64_t tasks, records, arena, total;
};

Offsets offsets_of(const pto_call_config &cfg) {
  Offsets o;
  o.tasks = align_up(sizeof(DumpRegion), kCacheLine);
  o.records = align_up(o.tasks + uint64_t{cfg.dump_max_tasks} * sizeof(DumpTask), kCacheLine);
  o.arena =
      align_up(o.records + uint64_t{cfg.dump_max_tasks} * kRecordsPerTask * sizeof(DumpRecord), kCacheLine);
  o.total = o.arena + align_up(cfg.dump_bytes, kCacheLine);
  return o;
}

}  // namespace

uint64_t dump_region_bytes(const pto_call_config &cfg) {
  return cfg.enable_dump_tensor ? offsets_of(cfg).total : 0;
}

void init_dump_region(char *image, uint64_t off, uint64_t dev, const pto_call_config &cfg) {
  const Offsets o = offsets_of(cfg);
  auto *d = new (image + off) DumpRegion();
  d->tasks_addr = dev + off + o.tasks;
  d->records_addr = dev + off + o.records;
  d->arena_addr = dev + off + o.arena;
  d->arena_bytes = align_up(cfg.dump_bytes, kCacheLine);
  d->max_tasks = cfg.dump_max_tasks;
  d->max_records = cfg.dump_max_tasks * kRecordsPerTask;
  d->select_kernel = cfg.dump_kernel;
  d->select_first = cfg.dump_first_task;
  d->tasks_used = 0;
}

namespace {

// The directory written, or "" with *error set.
std::string write_files(DeviceRunner &runner, const RunInputs &in, const void *dev_region,
                        const char *runtime, std::string *error) {
  Device &device = runner.device();
  const Offsets o = offsets_of(in.cfg);
  std::vector<char> region(o.total);
  device.copy_from_device(region.data(), dev_region, o.total);
  const auto *d = reinterpret_cast<const DumpRegion *>(region.data());
  const uint32_t nrec = std::min(d->records_used.load(std::memory_order_relaxed), d->max_records);
  const auto *records = reinterpret_cast<const DumpRecord *>(region.data() + o.records);
  const char *arena = region.data() + o.arena;

  const char *env = getenv("PTO_DUMP_DIR");
  const std::string dir = std::string(env && *env ? env : "pto_dump") + "/device-" +
                          std::to_string(device.device_id()) + "/" + run_dir_name();
  if (const int err = platform_make_directories(dir)) {
    *error = "cannot create " + dir + ": " + strerror(err);
    return "";
  }
  std::string index = "{\"version\": 1, \"runtime\": \"" + std::string(runtime) +
                      "\", \"dropped\": " + std::to_string(d->dropped.load(std::memory_order_relaxed)) +
                      ", \"tasks_selected\": " + std::to_string(d->tasks_used) + ", \"tensors\": [";
  bool first = true;
  for (uint32_t i = 0; i < nrec; ++i) {
    const DumpRecord &r = records[i];
    if (r.nbytes == ~0ull || r.offset + r.nbytes > d->arena_bytes) continue;  // a dropped copy
    const char *phase = r.phase == kDumpBefore ? "before" : "after";
    const std::string file =
        "task" + std::to_string(r.task) + "_arg" + std::to_string(r.arg) + "_" + phase + ".npy";
    if (!write_npy(dir + "/" + file, r, arena + r.offset, error)) return "";
    auto k = in.kernels.find(r.func);
    std::string kernel =
        k == in.kernels.end() ? "" : k->second.path.substr(k->second.path.find_last_of('/') + 1);
    std::string shape = "[";
    for (uint32_t s = 0; s < r.ndim; ++s) shape += (s ? ", " : "") + std::to_string(r.shape[s]);
    index += std::string(first ? "\n" : ",\n") + "{\"task\": " + std::to_string(r.task) +
             ", \"func\": " + std::to_string(r.func) + ", \"kernel_binary\": \"" + kernel +
             "\", \"arg\": " + std::to_string(r.arg) + ", \"phase\": \"" + phase + "\", \"dtype\": \"" +
             pto_dtype_name(static_cast<pto_dtype>(r.dtype)) + "\", \"shape\": " + shape + "], \"file\": \"" +
             file + "\"}";
    first = false;
  }
  index += "]}\n";
  FILE *f = fopen((dir + "/index.json").c_str(), "w");
  if (!f || fwrite(index.data(), 1, index.size(), f) != index.size()) {
    if (f) fclose(f);
    *error = "cannot write " + dir + "/index.json: " + strerror(errno);
    return "";
  }
  fclose(f);
  return dir;
}

}  // namespace

pto_status write_dump_files(DeviceRunner &runner, const RunInputs &in, const void *dev_region,
                            const char *runtime, pto_run_stats *stats, std::string *error) {
  std::string why;
  const std::string dir = write_files(runner, in, dev_region, runtime, &why);
  if (dir.empty()) {
    *error = "enable_dump_tensor: " + why;
    return PTO_INTERNAL;
  }
  snprintf(stats->dump_dir, sizeof stats->dump_dir, "%s", dir.c_str());
  return PTO_OK;
}

}  // namespace pto
