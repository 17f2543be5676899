// tests/fuzz/tmr_fuzz_program.cpp — fuzz_tmr's programs, their replay and their meaning
// (tmr_fuzz_program.h).
#include "fuzz/tmr_fuzz_program.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>

#include "fuzz_common.h"
#include "pto/kernel_compiler.h"

namespace pto_fuzz {

const char *const kTmrFuzzOrch = R"(
#include <string.h>
#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(orch) {
  const int64_t *p = reinterpret_cast<const int64_t *>(orch.tensor(0).buffer);
  pto::TensorView bufs[4], temps[8];
  for (int b = 0; b < 4; ++b) bufs[b] = orch.tensor(1 + b);
  int64_t depth = 0, pos = 1, task = 0;
  for (int64_t op = 0, ops = p[0]; op < ops; ++op) {
    const int64_t kind = p[pos++];
    if (kind == 1) {
      orch.scope_begin();
      const pto::TensorView t = orch.alloc_tensor(PTO_DTYPE_I32, 32, 32);
      // A fresh temp holds what the ring held before: zero it, so that reads before writes
      // have a meaning (no task uses it yet, so this does not wait).
      if (orch.ok() && orch.wait_for_tasks_using(t, true))
        memset(reinterpret_cast<void *>(t.buffer), 0, t.buffer_bytes);
      if (depth < 8) temps[depth] = t;
      ++depth;
      continue;
    }
    if (kind == 2) {
      orch.scope_end();
      if (depth > 0) --depth;
      continue;
    }
    if (kind == 3) {
      orch.set_stream(static_cast<uint32_t>(p[pos]), static_cast<uint32_t>(p[pos + 1]));
      pos += 2;
      continue;
    }
    const int64_t func = p[pos], core = p[pos + 1], n = p[pos + 2], num_after = p[pos + 3];
    pto::TaskHandle after[2];
    after[0].id = p[pos + 4];
    after[1].id = p[pos + 5];
    pos += 6;
    pto::Arg a[2 + 6 * 8];
    a[0] = pto::Arg::i64(task);
    a[1] = pto::Arg::i64(n);
    for (int64_t t = 0; t < n; ++t) {
      const int64_t *q = p + pos;
      pos += 22;
      pto::TensorView v;
      if (q[0] >= 0 && q[0] < 4) {
        v = bufs[q[0]];
      } else if (q[0] >= 4 && q[0] - 4 < depth && q[0] - 4 < 8) {
        v = temps[q[0] - 4];
      } else {
        v = bufs[0];
        v.buffer = 64;  // never handed out
      }
      v.buffer_bytes += static_cast<uint64_t>(q[1]);
      v.offset = q[2];
      v.dtype = static_cast<pto_dtype>(q[3]);
      v.ndim = static_cast<uint32_t>(q[4]);
      uint64_t g[4] = {0, 0, 0, 0};
      for (int d = 0; d < 8; ++d) {
        v.shape[d] = q[6 + d];
        v.strides[d] = q[14 + d];
        if (static_cast<uint32_t>(d) >= v.ndim) continue;
        const uint64_t stride = v.shape[d] > 1 ? static_cast<uint64_t>(v.strides[d]) : 0;
        g[d / 4] |= (static_cast<uint64_t>(v.shape[d]) & 0xFFFF) << (16 * (d % 4));
        g[2 + d / 4] |= (stride & 0xFFFF) << (16 * (d % 4));
      }
      const uint64_t ndim = v.ndim < 8 ? v.ndim : 8;
      const uint64_t head =
          ndim | uint64_t{pto_dtype_size(v.dtype)} << 8 | (static_cast<uint64_t>(q[5]) & 255) << 16;
      a[2 + 6 * t] = pto::Arg::tensor(v, static_cast<pto::Access>(q[5]));
      a[3 + 6 * t] = pto::Arg::i64(static_cast<int64_t>(head));
      for (int k = 0; k < 4; ++k) a[4 + 6 * t + k] = pto::Arg::i64(static_cast<int64_t>(g[k]));
    }
    const pto::TaskHandle h =
        orch.submit_task(static_cast<uint32_t>(func), static_cast<pto_core_type>(core), a,
                         static_cast<uint32_t>(2 + 6 * n), after, static_cast<uint32_t>(num_after));
    if (h.valid()) ++task;
  }
}
)";

// The walk tmr_fuzz_meaning's Model::run_task does on the host, in the same order.
const char *const kTmrFuzzKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
#ifdef PTO_CORE_TYPE_MIX
  if (pto::mix_part(args) != 0) return;  // one part does the work: the same result as a single task
#endif
  const int64_t id = args[0], n = args[1];
  uint32_t acc = static_cast<uint32_t>(id) * 2654435761u;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t t = 0; t < n; ++t) {
      uint8_t *v = pto::tensor<uint8_t>(args, 2 + 6 * t);
      const uint64_t head = static_cast<uint64_t>(args[3 + 6 * t]);
      const int ndim = static_cast<int>(head & 255);
      const uint64_t esize = (head >> 8) & 255, access = (head >> 16) & 255;
      const bool reads = access == 0 || access == 2 || access == 4;
      const bool writes = access == 1 || access == 2 || access == 3;
      if (pass == 0 ? !reads : !writes) continue;
      int64_t shape[8], strides[8], idx[8], numel = 1;
      for (int d = 0; d < ndim; ++d) {
        const int shift = 16 * (d % 4);
        shape[d] = static_cast<int64_t>((static_cast<uint64_t>(args[4 + 6 * t + d / 4]) >> shift) & 0xFFFF);
        strides[d] = static_cast<int64_t>((static_cast<uint64_t>(args[6 + 6 * t + d / 4]) >> shift) & 0xFFFF);
        idx[d] = 0;
        numel *= shape[d];
      }
      for (int64_t e = 0; e < numel; ++e) {
        int64_t off = 0;
        for (int d = 0; d < ndim; ++d) off += idx[d] * strides[d];
        uint8_t *x = v + off * static_cast<int64_t>(esize);
        for (uint64_t b = 0; b < esize; ++b) {
          if (pass == 0) {
            acc = acc * 31u + x[b];
          } else {
            const uint32_t old = access == 2 ? x[b] * 3u : 0u;
            x[b] = static_cast<uint8_t>(old + acc + static_cast<uint32_t>(e) * 131u +
                                        static_cast<uint32_t>(b));
          }
        }
        for (int d = ndim; d-- > 0;) {
          if (++idx[d] < shape[d]) break;
          idx[d] = 0;
        }
      }
    }
  }
}
)";

namespace {

constexpr int kMaxDepth = 3;  // scopes open at once
constexpr uint32_t kMaxArgs = 40;
enum : int64_t { kIn = 0, kOut = 1, kInout = 2, kOutExisting = 3, kNoDep = 4 };

// One tensor argument as the program words hold it.
struct View {
  int64_t buf, delta, offset, dtype, ndim, access, shape[8], strides[8];
};

View view_at(const int64_t *q) {
  View v;
  // ndim and the access mode as the orchestration stores them: 32 bits.
  v.buf = q[0], v.delta = q[1], v.offset = q[2], v.dtype = q[3];
  v.ndim = static_cast<uint32_t>(q[4]), v.access = static_cast<uint32_t>(q[5]);
  for (int d = 0; d < 8; ++d) v.shape[d] = q[6 + d], v.strides[d] = q[14 + d];
  return v;
}

// The buffer a view names, with `depth` temps open: its size, or -1 when the runtime never
// handed it out (a run tensor of another size, a temp larger than its allocation).
__int128 known_bytes(const View &v, int64_t depth) {
  if (v.buf >= 0 && v.buf < 4) return v.delta == 0 ? kBufBytes : -1;
  if (v.buf >= 4 && v.buf - 4 < depth) {
    const uint64_t bytes = static_cast<uint64_t>(kBufBytes) + static_cast<uint64_t>(v.delta);
    return bytes <= static_cast<uint64_t>(kBufBytes) ? static_cast<__int128>(bytes) : -1;
  }
  return -1;
}

// "" when the runtime must take the view, else why not (submit_validation.cpp's rules, in
// exact arithmetic: no sum or product here can wrap).
std::string view_fault(const View &v, int64_t depth) {
  const uint32_t esize = pto_dtype_size(static_cast<pto_dtype>(v.dtype));
  if (esize == 0) return "no valid dtype";
  if (v.ndim <= 0 || v.ndim > 8) return "ndim outside 1..8";
  __int128 last = 0;
  bool empty = false;
  for (int d = 0; d < v.ndim; ++d) {
    if (v.shape[d] < 0 || v.strides[d] < 0) return "a negative extent or stride";
    empty |= v.shape[d] == 0;
    if (v.shape[d] > 0) last += static_cast<__int128>(v.shape[d] - 1) * v.strides[d];
    last = std::min<__int128>(last, static_cast<__int128>(1) << 100);  // far outside any buffer already
  }
  const __int128 bytes = known_bytes(v, depth);
  if (bytes < 0) return "a buffer the runtime did not hand out";
  if (!empty && (v.offset < 0 || (v.offset + last + 1) * esize > bytes)) return "outside its buffer";
  return "";
}

__int128 numel_of(const View &v) {
  __int128 n = 1;
  for (int d = 0; d < v.ndim && d < 8; ++d)
    n *= std::max<int64_t>(v.shape[d], 0), n = std::min<__int128>(n, 1 << 30);
  return n;
}

struct Model {
  std::vector<std::vector<uint8_t>> bufs;  // 0..2 run tensors, 3 constants
  std::vector<std::vector<uint8_t>> temps;
  uint64_t tasks = 0;

  uint8_t *base(const View &v) {
    if (v.buf < 4) return bufs[v.buf].data();
    return temps[v.buf - 4].data();
  }
  void run_task(const int64_t *views, int64_t n) {
    uint32_t acc = static_cast<uint32_t>(tasks) * 2654435761u;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t t = 0; t < n; ++t) {
        const View v = view_at(views + kViewWords * t);
        const bool reads = v.access == kIn || v.access == kInout || v.access == kNoDep;
        const bool writes = v.access == kOut || v.access == kInout || v.access == kOutExisting;
        if (pass == 0 ? !reads : !writes) continue;
        const int64_t esize = pto_dtype_size(static_cast<pto_dtype>(v.dtype));
        const int64_t numel = static_cast<int64_t>(numel_of(v));
        if (numel == 0) continue;  // an empty view may start anywhere
        uint8_t *b0 = base(v) + v.offset * esize;
        int64_t idx[8] = {};
        for (int64_t e = 0; e < numel; ++e) {
          int64_t off = 0;
          for (int d = 0; d < v.ndim; ++d) off += idx[d] * (v.shape[d] > 1 ? v.strides[d] : 0);
          uint8_t *x = b0 + off * esize;
          for (int64_t b = 0; b < esize; ++b) {
            if (pass == 0) {
              acc = acc * 31u + x[b];
            } else {
              const uint32_t old = v.access == kInout ? x[b] * 3u : 0u;
              x[b] = static_cast<uint8_t>(old + acc + static_cast<uint32_t>(e) * 131u +
                                          static_cast<uint32_t>(b));
            }
          }
          for (int d = static_cast<int>(v.ndim); d-- > 0;) {
            if (++idx[d] < v.shape[d]) break;
            idx[d] = 0;
          }
        }
      }
    }
    ++tasks;
  }
};

int64_t special(FuzzedDataProvider &in) {
  static const int64_t kSpecial[] = {-1,
                                     -2,
                                     INT64_MIN,
                                     INT64_MAX,
                                     INT64_MAX / 2 + 1,
                                     int64_t{1} << 32,
                                     int64_t{1} << 62,
                                     (int64_t{1} << 61) + 1,
                                     4096,
                                     4097,
                                     1024,
                                     65536,
                                     -4096,
                                     static_cast<int64_t>(0x8000000000000001ull)};
  return kSpecial[in.ConsumeIntegralInRange<size_t>(0, sizeof kSpecial / sizeof kSpecial[0] - 1)];
}

// A value from lo..hi, or now and then one of the values that break arithmetic.
int64_t value(FuzzedDataProvider &in, int64_t lo, int64_t hi) {
  return in.ConsumeIntegralInRange<int>(0, 15) == 0 ? special(in)
                                                    : in.ConsumeIntegralInRange<int64_t>(lo, hi);
}

void append_view(FuzzedDataProvider &in, int64_t depth, std::vector<int64_t> *w) {
  View v;
  const int b = in.ConsumeIntegralInRange<int>(0, 15);
  v.buf = b <= 8    ? b % 3
          : b == 9  ? 3
          : b <= 12 ? 4 + in.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(depth - 1, 0))
          : b == 13 ? 4 + depth + in.ConsumeIntegralInRange<int64_t>(0, 2)
          : b == 14 ? 7
                    : -1;
  v.delta = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? special(in) : 0;
  v.dtype = in.ConsumeIntegralInRange<int>(0, 9) == 0 ? in.ConsumeIntegralInRange<int64_t>(0, 15)
                                                      : in.ConsumeIntegralInRange<int64_t>(1, 13);
  v.ndim =
      in.ConsumeIntegralInRange<int>(0, 9) == 0 ? value(in, 0, 9) : in.ConsumeIntegralInRange<int64_t>(1, 3);
  v.access = in.ConsumeIntegralInRange<int>(0, 11) == 0 ? in.ConsumeIntegralInRange<int64_t>(5, 300)
                                                        : in.ConsumeIntegralInRange<int64_t>(0, 4);
  // NO_DEP vouches that nothing orders the access: only the constants, which no task writes.
  if (v.access == kNoDep) v.buf = 3;
  if (v.buf == 3 && v.access >= kOut && v.access <= kOutExisting) v.access = kIn;
  const bool contiguous = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  for (int d = 0; d < 8; ++d) v.shape[d] = value(in, 0, 8);
  int64_t expect = 1;
  for (int d = 8; d-- > 0;) {
    v.strides[d] = contiguous && d < v.ndim ? expect : value(in, 0, 8);
    if (d < v.ndim && v.shape[d] > 0)
      expect = v.shape[d] > (1 << 20) ? int64_t{1} << 40 : expect * v.shape[d];
    expect = std::min<int64_t>(expect, int64_t{1} << 40);
  }
  v.offset = value(in, 0, 256);
  // Mostly shrink a view that would reach outside its buffer until it fits (halving extents):
  // valid tasks run and are checked against their meaning. The rest stay as they were made.
  if (in.ConsumeIntegralInRange<int>(0, 3) != 0) {
    for (int d = 0; d < v.ndim && d < 8 && view_fault(v, depth) == "outside its buffer"; ++d) {
      while (v.shape[d] > 1 && view_fault(v, depth) == "outside its buffer") v.shape[d] /= 2;
    }
  }
  // A valid view stays small: the kernel walks every element.
  if (view_fault(v, depth).empty() && numel_of(v) > 4096) {
    for (int d = 0; d < v.ndim; ++d) v.shape[d] = std::min<int64_t>(v.shape[d], 4);
  }
  for (int64_t x : {v.buf, v.delta, v.offset, v.dtype, v.ndim, v.access}) w->push_back(x);
  for (int64_t x : v.shape) w->push_back(x);
  for (int64_t x : v.strides) w->push_back(x);
}

std::string view_text(const View &v) {
  std::string s = "buf " + std::to_string(v.buf) + (v.delta ? " bytes" + std::to_string(v.delta) : "") +
                  " off " + std::to_string(v.offset) + " dtype " + std::to_string(v.dtype) + " access " +
                  std::to_string(v.access) + " shape/strides";
  for (int d = 0; d < v.ndim && d < 8; ++d)
    s += " " + std::to_string(v.shape[d]) + "/" + std::to_string(v.strides[d]);
  if (v.ndim <= 0 || v.ndim > 8) s += " (ndim " + std::to_string(v.ndim) + ")";
  return s;
}

}  // namespace

TmrFuzzProgram make_tmr_fuzz_program(FuzzedDataProvider &in) {
  TmrFuzzProgram p;
  // Small ring geometries: the orchestrator waits on the window, the pools and the heap.
  const uint8_t geometry = in.ConsumeIntegral<uint8_t>();
  pto::ChipCallConfig &c = p.config;
  c.block_dim = 1 + (geometry & 1);
  c.aicpu_thread_num = 1 + (geometry >> 1 & 3) % 3;
  c.task_window = (geometry >> 3 & 3) == 0 ? 4 : (geometry >> 3 & 3) == 1 ? 16 : 64;
  c.dep_pool_entries = geometry & 0x20 ? 64 : 1024;
  c.tensormap_entries = geometry & 0x40 ? 6 : 64;
  c.batch_deps = geometry & 0x80 ? 4 : 0;
  // Five temps (so nested scopes can run out), or room for every temp a program can make.
  c.heap_bytes = kBufBytes * (in.ConsumeBool() ? 5 : 48);
  c.max_args_per_task = kMaxArgs;
  c.timeout_ms = 20000;
  const uint16_t seed = in.ConsumeIntegral<uint16_t>();
  c.sim_seed = seed % 4 == 3 ? -1 : seed;  // mostly seeded: a crash replays the same schedule
  uint32_t x = seed * 2654435761u + 1;
  p.buffers.assign(3, std::vector<uint8_t>(kBufBytes));
  p.constants.resize(kBufBytes);
  for (auto *b : {&p.buffers[0], &p.buffers[1], &p.buffers[2], &p.constants})
    for (uint8_t &v : *b) v = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 16);

  p.words.push_back(0);
  int64_t ops = 0, depth = 0, tasks = 0;
  while (in.remaining_bytes() > 0 && ops < 40) {
    const int kind = in.ConsumeIntegralInRange<int>(0, 11);
    ++ops;
    if (kind == 8 && depth < kMaxDepth) {
      p.words.push_back(kScope);
      ++depth;
    } else if (kind == 9 || (kind == 8 && depth == kMaxDepth)) {
      p.words.push_back(kEnd);
      depth = std::max<int64_t>(depth - 1, 0);  // the extra ones are the orchestration's mistake
    } else if (kind == 10) {
      p.words.push_back(kStream);
      p.words.push_back(in.ConsumeIntegralInRange<int>(0, 7) == 0
                            ? in.ConsumeIntegralInRange<int64_t>(250, 300)
                            : in.ConsumeIntegralInRange<int64_t>(0, 3));
      const int t = in.ConsumeIntegralInRange<int>(0, 7);
      p.words.push_back(t < 4   ? pto::kNoTarget
                        : t < 7 ? in.ConsumeIntegralInRange<int64_t>(0, 3)
                                : in.ConsumeIntegralInRange<int64_t>(250, 70000));
    } else {
      p.words.push_back(kTask);
      int64_t core = in.ConsumeIntegralInRange<int64_t>(0, 2), func = core;
      if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
        func = in.ConsumeIntegralInRange<int64_t>(0, 4);
        core = in.ConsumeIntegralInRange<int64_t>(0, 3);
      }
      const int64_t n = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegralInRange<int64_t>(0, 8)
                                                                   : in.ConsumeIntegralInRange<int64_t>(1, 3);
      const int64_t num_after = kind == 11 ? in.ConsumeIntegralInRange<int64_t>(1, 2) : 0;
      for (int64_t v : {func, core, n, num_after}) p.words.push_back(v);
      for (int i = 0; i < 2; ++i) {
        const int how = in.ConsumeIntegralInRange<int>(0, 7);
        p.words.push_back(how == 0 ? -1
                          : how == 1
                              ? tasks + in.ConsumeIntegralInRange<int64_t>(0, 3)
                              : in.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(tasks - 1, 0)));
      }
      for (int64_t t = 0; t < n; ++t) append_view(in, depth, &p.words);
      ++tasks;
    }
  }
  if (in.ConsumeBool()) {  // mostly close what is open; sometimes leave it (an error)
    for (; depth > 0; --depth, ++ops) p.words.push_back(kEnd);
  }
  p.words[0] = ops;
  return p;
}

pto::ChipStorageTaskArgs TmrFuzzProgram::args() {
  pto::ChipStorageTaskArgs a;
  a.add_tensor(words.data(), words.size() * 8, PTO_DTYPE_I64, {static_cast<int64_t>(words.size())},
               PTO_DIR_INPUT);
  for (auto &b : buffers) a.add_tensor(b.data(), b.size(), PTO_DTYPE_U8, {kBufBytes}, PTO_DIR_INOUT);
  a.add_tensor(constants.data(), constants.size(), PTO_DTYPE_U8, {kBufBytes}, PTO_DIR_INPUT);
  return a;
}

TmrFuzzOutcome tmr_fuzz_meaning(const TmrFuzzProgram &p) {
  TmrFuzzOutcome out;
  Model m;
  m.bufs = p.buffers;
  m.bufs.push_back(p.constants);
  const int64_t *w = p.words.data();
  int64_t pos = 1;
  std::deque<bool> ring;            // the heap ring's temps, oldest first: has its scope ended?
  std::vector<size_t> scope_first;  // each open scope's temp, as an index into ring
  auto fail = [&out](pto_status code, std::string why) {
    out.code = code;
    out.why = std::move(why);
  };
  if (p.config.sim_timing && p.config.sim_seed < 0 && !getenv("PTO_SIM_SEED"))
    fail(PTO_INVALID_ARGUMENT, "sim_timing without a seed");  // before the orchestration runs
  for (int64_t op = 0; op < w[0] && out.code == PTO_OK; ++op) {
    const int64_t kind = w[pos++];
    if (kind == kScope) {
      // The heap ring frees in allocation order: buffers of ended scopes after the first one
      // of a scope still open stay until it goes. Every temp is one 4096-byte slot.
      while (!ring.empty() && ring.front()) ring.pop_front();
      if (ring.size() + 1 > static_cast<size_t>(p.config.heap_bytes / kBufBytes)) {
        fail(PTO_RING_CAPACITY, "op " + std::to_string(op) + ": the heap ring holds " +
                                    std::to_string(ring.size()) + " temps it cannot free yet");
        continue;
      }
      scope_first.push_back(ring.size());
      ring.push_back(false);
      m.temps.emplace_back(kBufBytes, 0);
      continue;
    }
    if (kind == kEnd) {
      if (m.temps.empty()) {
        fail(PTO_INVALID_ARGUMENT, "op " + std::to_string(op) + ": scope_end without scope_begin");
        continue;
      }
      for (size_t i = scope_first.back(); i < ring.size(); ++i) ring[i] = true;
      scope_first.pop_back();
      m.temps.pop_back();
      continue;
    }
    if (kind == kStream) {
      const int64_t stream = w[pos], target = w[pos + 1];
      pos += 2;
      if (stream >= pto::kMaxStreams || (target != pto::kNoTarget && target >= pto::kMaxTargets))
        fail(PTO_INVALID_ARGUMENT, "op " + std::to_string(op) + ": set_stream out of range");
      continue;
    }
    const int64_t func = w[pos], core = w[pos + 1], n = w[pos + 2], num_after = w[pos + 3];
    const int64_t after[2] = {w[pos + 4], w[pos + 5]};
    const int64_t *views = w + pos + 6;
    pos += 6 + kViewWords * n;
    const std::string who = "op " + std::to_string(op) + " (task " + std::to_string(m.tasks) + ")";
    if (func > 2) {
      fail(PTO_UNKNOWN_KERNEL, who + ": kernel " + std::to_string(func));
      continue;
    }
    if (core != func) {
      fail(PTO_INVALID_ARGUMENT,
           who + ": core type " + std::to_string(core) + " for kernel " + std::to_string(func));
      continue;
    }
    if (2 + 6 * n > static_cast<int64_t>(p.config.max_args_per_task)) {
      fail(PTO_TOO_MANY_ARGS, who + ": " + std::to_string(2 + 6 * n) + " arguments");
      continue;
    }
    for (int64_t t = 0; t < n && out.code == PTO_OK; ++t) {
      const View v = view_at(views + kViewWords * t);
      if (v.access < 0 || v.access > kNoDep) {
        fail(PTO_INVALID_ARGUMENT,
             who + ": tensor " + std::to_string(t) + " access " + std::to_string(v.access));
      } else if (const std::string f = view_fault(v, static_cast<int64_t>(m.temps.size())); !f.empty()) {
        fail(PTO_BAD_TENSOR, who + ": tensor " + std::to_string(t) + ": " + f);
      }
    }
    if (out.code != PTO_OK) continue;
    if (n > static_cast<int64_t>(p.config.tensormap_entries)) {
      fail(PTO_RING_CAPACITY, who + ": " + std::to_string(n) + " tensors");
      continue;
    }
    for (int64_t i = 0; i < num_after && out.code == PTO_OK; ++i) {
      if (after[i] < 0 || after[i] >= static_cast<int64_t>(m.tasks))
        fail(PTO_INVALID_ARGUMENT, who + ": after " + std::to_string(after[i]));
    }
    if (out.code == PTO_OK && p.config.task_window_overflow == 2 && m.tasks >= p.config.task_window) {
      fail(PTO_CAPACITY_EXCEEDED,
           who + ": the task window (" + std::to_string(p.config.task_window) + ", overflow error) is full");
    }
    if (out.code == PTO_OK) m.run_task(views, n);
  }
  if (out.code == PTO_OK && !m.temps.empty()) fail(PTO_INVALID_ARGUMENT, "scopes left open");
  out.tasks = m.tasks;
  m.bufs.resize(3);
  out.buffers = std::move(m.bufs);
  return out;
}

std::string TmrFuzzProgram::describe() const {
  std::string s = "config (fields off their defaults):";
  const pto::ChipCallConfig def;
#define PTO_FUZZ_FIELD(type, name, d, lo, hi, doc) \
  if (config.name != def.name) s += " " #name "=" + std::to_string(config.name);
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_FUZZ_FIELD)
#undef PTO_FUZZ_FIELD
  s += "\n";
  const int64_t *w = words.data();
  int64_t pos = 1;
  for (int64_t op = 0; op < w[0]; ++op) {
    const int64_t kind = w[pos++];
    s += "op " + std::to_string(op) + ": ";
    if (kind == kScope) {
      s += "scope_begin + temp\n";
    } else if (kind == kEnd) {
      s += "scope_end\n";
    } else if (kind == kStream) {
      s += "set_stream " + std::to_string(w[pos]) + " " + std::to_string(w[pos + 1]) + "\n";
      pos += 2;
    } else {
      const int64_t n = w[pos + 2];
      s += "task func " + std::to_string(w[pos]) + " core " + std::to_string(w[pos + 1]) + " after";
      for (int64_t i = 0; i < w[pos + 3]; ++i) s += " " + std::to_string(w[pos + 4 + i]);
      s += "\n";
      for (int64_t t = 0; t < n; ++t) s += "    " + view_text(view_at(w + pos + 6 + kViewWords * t)) + "\n";
      pos += 6 + kViewWords * n;
    }
  }
  return s;
}

pto::ChipCallable &tmr_fuzz_callable() {
  static pto::ChipCallable c = [] {
    pto::KernelCompiler kc("a2a3sim");
    pto::ChipCallable k(
        kc.compile_orchestration_source("tensormap_and_ringbuffer", kTmrFuzzOrch, "tmr_fuzz_orch"));
    const pto_core_type cores[3] = {PTO_CORE_AIC, PTO_CORE_AIV, PTO_CORE_MIX};
    for (uint32_t i = 0; i < 3; ++i)
      k.add_kernel(i, cores[i], kc.compile_incore_source(kTmrFuzzKernel, "tmr_fuzz_kernel", cores[i]));
    return k;
  }();
  return c;
}

pto::ChipWorker &tmr_fuzz_worker() {
  static pto::ChipWorker *w = [] {  // never destroyed: runs end with the process
    auto *x = new pto::ChipWorker();
    x->init("a2a3sim", "tensormap_and_ringbuffer");
    x->set_device(0);
    return x;
  }();
  return *w;
}

namespace {

// Whether `message` is the dependency pool running out ("task N (kernel K) depends on M running
// tasks but the dependency pool holds ...") at a task the program reaches: any task of a valid
// program, or one submitted before the program's first invalid call (want.tasks of them were).
// Timing decides whether and where the pool runs out, so the oracle cannot say more.
bool pool_ran_out_before(const std::string &message, const TmrFuzzOutcome &want) {
  if (message.find("dependency pool holds") == std::string::npos) return false;
  if (want.code == PTO_OK || want.code == PTO_RING_CAPACITY) return true;
  const size_t at = message.find("task ");
  if (at == std::string::npos) return false;
  const unsigned long long task = strtoull(message.c_str() + at + 5, nullptr, 10);
  return task < want.tasks;
}

}  // namespace

void check_tmr_fuzz_run(TmrFuzzProgram &p, bool pool_may_run_out) {
  const TmrFuzzOutcome want = tmr_fuzz_meaning(p);
  if (getenv("PTO_FUZZ_PRINT"))  // reproducing an input: the program and what it must give
    fprintf(stderr, "%smeaning: %s %s\n", p.describe().c_str(), pto_status_name(want.code), want.why.c_str());
  pto::ChipStorageTaskArgs args = p.args();
  pto_status got = PTO_OK;
  std::string message;
  uint64_t tasks_run = 0;
  try {
    tasks_run = tmr_fuzz_worker().run(tmr_fuzz_callable(), args, p.config).tasks_run;
  } catch (const pto::Error &e) {
    got = e.code();
    message = e.what();
  }
  if (pool_may_run_out && got == PTO_RING_CAPACITY && pool_ran_out_before(message, want)) return;
  FUZZ_CHECK(got == want.code, "the run ended %s (%s), the program's meaning is %s%s%s\n%s",
             pto_status_name(got), message.c_str(), pto_status_name(want.code), want.why.empty() ? "" : ": ",
             want.why.c_str(), p.describe().c_str());
  if (got != PTO_OK) return;
  FUZZ_CHECK(tasks_run == want.tasks, "%llu tasks ran, the program has %llu\n%s",
             static_cast<unsigned long long>(tasks_run), static_cast<unsigned long long>(want.tasks),
             p.describe().c_str());
  for (size_t b = 0; b < want.buffers.size(); ++b) {
    for (size_t i = 0; i < p.buffers[b].size(); ++i) {
      FUZZ_CHECK(p.buffers[b][i] == want.buffers[b][i],
                 "buffer %zu byte %zu is %u, sequential execution gives %u\n%s", b, i, p.buffers[b][i],
                 want.buffers[b][i], p.describe().c_str());
    }
  }
}

}  // namespace pto_fuzz

// Every target linking this file (fuzz_tmr, fuzz_config) runs tmr programs: compile them and
// start the worker before the first input, so the first input is not charged for it.
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  pto_fuzz::tmr_fuzz_callable();
  pto_fuzz::tmr_fuzz_worker();
  return 0;
}
