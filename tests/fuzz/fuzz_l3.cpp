// tests/fuzz/fuzz_l3.cpp — the L3 host orchestrator's submit_sub path (include/pto/worker.h):
// random SUB tasks whose tensor arguments are byte ranges of host-heap buffers (the worker's,
// and ones the run allocates in nested scopes) and of ordinary memory, with random
// directions, explicit `after` ids, always_run / inline_body, empty functions, and scopes.
//
// Oracle: each body folds the bytes it reads (INPUT, INOUT) into an accumulator and then
// writes every byte it writes (OUTPUT, INOUT) from it, and the model does the same one task at
// a time in submission order. A run of valid calls succeeds with every buffer as the model
// leaves it (the inferred dependencies order every conflicting pair); the first invalid call
// (a bad direction, an empty function, a range not inside one live heap buffer, an `after`
// that is not an earlier task of the run, scope_end without scope_begin) fails the run with
// INVALID_ARGUMENT.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "pto/worker.h"

namespace {

constexpr uint64_t kBytes = 4096;  // every buffer
constexpr int kFixed = 4;          // buffers 0..2 on the worker's heap, 3 ordinary memory

struct Fixture {
  pto::Worker *worker;
  uint8_t *bufs[kFixed];
  std::vector<uint8_t> plain;
};

Fixture &fixture() {
  static Fixture f = [] {
    pto::WorkerOptions o;
    o.device_ids = {0};
    o.num_sub_workers = 2;
    o.platform = "a2a3sim";
    o.runtime = "tensormap_and_ringbuffer";
    o.heap_bytes = 1 << 20;
    o.heap_wait_ms = 2000;
    Fixture x;
    x.worker = new pto::Worker(o);  // never destroyed: runs end with the process
    for (int b = 0; b < 3; ++b) x.bufs[b] = static_cast<uint8_t *>(x.worker->alloc(kBytes));
    x.plain.resize(kBytes);
    x.bufs[3] = x.plain.data();
    return x;
  }();
  return f;
}

// One SUB task's byte range: in buffer `buf` (0..3 fixed, 4 + k the k-th live run buffer).
struct Range {
  int buf;
  uint64_t offset, len;
  uint32_t direction;
};

struct Op {
  enum Kind { kSub, kAlloc, kBegin, kEnd } kind;
  std::vector<Range> ranges;
  std::vector<int64_t> after;  // >= 0: the index of an earlier task; < 0: a made-up id
  bool empty_fn = false, always_run = false, inline_body = false;
  uint64_t alloc_bytes = 0;
};

// What a task does to its ranges, given where they are (the body and the model share it).
void task_body(uint64_t index, const std::vector<std::pair<uint8_t *, Range>> &ranges) {
  uint32_t acc = static_cast<uint32_t>(index) * 2654435761u;
  for (const auto &[p, r] : ranges) {
    if (r.direction == PTO_DIR_INPUT || r.direction == PTO_DIR_INOUT)
      for (uint64_t i = 0; i < r.len; ++i) acc = acc * 31u + p[i];
  }
  for (const auto &[p, r] : ranges) {
    if (r.direction != PTO_DIR_OUTPUT && r.direction != PTO_DIR_INOUT) continue;
    for (uint64_t i = 0; i < r.len; ++i) {
      const uint32_t old = r.direction == PTO_DIR_INOUT ? p[i] * 3u : 0u;
      p[i] = static_cast<uint8_t>(old + acc + static_cast<uint32_t>(i) * 131u);
    }
  }
}

std::vector<Op> make_ops(FuzzedDataProvider &in) {
  std::vector<Op> ops;
  std::vector<int> scope_of;  // each live run buffer's scope depth (as the orchestration keeps them)
  int depth = 0, tasks = 0;
  while (in.remaining_bytes() > 0 && ops.size() < 32) {
    Op op;
    const int k = in.ConsumeIntegralInRange<int>(0, 9);
    if (k == 7 && scope_of.size() < 8) {
      op.kind = Op::kAlloc;
      op.alloc_bytes = in.ConsumeIntegralInRange<uint64_t>(1, kBytes);
      scope_of.push_back(depth);
    } else if (k == 8) {
      op.kind = Op::kBegin;
      ++depth;
    } else if (k == 9) {
      op.kind = Op::kEnd;  // at depth 0: the orchestration's mistake
      while (depth > 0 && !scope_of.empty() && scope_of.back() >= depth) scope_of.pop_back();
      if (depth > 0) --depth;
    } else {
      op.kind = Op::kSub;
      op.empty_fn = in.ConsumeIntegralInRange<int>(0, 31) == 0;
      op.always_run = in.ConsumeBool();
      op.inline_body = in.ConsumeIntegralInRange<int>(0, 3) == 0;
      const int n = in.ConsumeIntegralInRange<int>(0, 4);
      for (int i = 0; i < n; ++i) {
        Range r;
        r.buf = in.ConsumeIntegralInRange<int>(0, kFixed - 1 + static_cast<int>(scope_of.size()));
        r.direction = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegralInRange<uint32_t>(3, 9)
                                                                 : in.ConsumeIntegralInRange<uint32_t>(0, 2);
        r.offset = in.ConsumeIntegralInRange<uint64_t>(0, kBytes - 1);
        r.len = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegralInRange<uint64_t>(0, 2 * kBytes)
                                                          : in.ConsumeIntegralInRange<uint64_t>(0, 64);
        op.ranges.push_back(r);
      }
      const int na = in.ConsumeIntegralInRange<int>(0, 2);
      for (int i = 0; i < na; ++i) {
        const int how = in.ConsumeIntegralInRange<int>(0, 7);
        op.after.push_back(how == 0 || tasks == 0 ? -1 - in.ConsumeIntegralInRange<int64_t>(0, 2)
                                                  : in.ConsumeIntegralInRange<int64_t>(0, tasks - 1));
      }
      ++tasks;
    }
    ops.push_back(op);
  }
  return ops;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  Fixture &f = fixture();
  const uint32_t seed = in.ConsumeIntegral<uint32_t>();
  const std::vector<Op> ops = make_ops(in);
  uint32_t x = seed | 1;
  for (int b = 0; b < kFixed; ++b)
    for (uint64_t i = 0; i < kBytes; ++i)
      f.bufs[b][i] = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 16);

  // The model: copies of the fixed buffers; each run buffer beside the real one while it lives.
  std::vector<std::vector<uint8_t>> model(kFixed);
  for (int b = 0; b < kFixed; ++b) model[b].assign(f.bufs[b], f.bufs[b] + kBytes);
  std::string expected_error;  // the first invalid call; "" when there is none
  pto_status got = PTO_OK;
  std::string message;
  try {
    f.worker->run([&](pto::HostOrchestrator &o) {
      struct Live {
        uint8_t *p;
        uint64_t bytes;  // the block: alloc's bytes rounded up to its 64-byte alignment
        int depth;
        std::vector<uint8_t> model;
      };
      std::vector<Live> live;
      std::vector<uint64_t> ids;  // each submitted task's id
      int depth = 0;
      for (const Op &op : ops) {
        if (op.kind == Op::kBegin) {
          o.scope_begin();
          ++depth;
          continue;
        }
        if (op.kind == Op::kEnd) {
          if (depth == 0 && expected_error.empty()) expected_error = "scope_end without scope_begin";
          o.scope_end();  // throws when there is no scope to end
          while (!live.empty() && live.back().depth >= depth) live.pop_back();
          --depth;
          continue;
        }
        if (op.kind == Op::kAlloc) {
          const uint64_t bytes = (op.alloc_bytes + 63) / 64 * 64;
          auto *p = static_cast<uint8_t *>(o.alloc(op.alloc_bytes));
          std::memset(p, 0, bytes);  // no task uses it yet
          live.push_back(Live{p, bytes, depth, std::vector<uint8_t>(bytes, 0)});
          continue;
        }
        pto::ChipStorageTaskArgs args;
        std::vector<std::pair<uint8_t *, Range>> where, where_model;
        std::string bad;
        for (const Range &r : op.ranges) {
          const bool fixed = r.buf < kFixed;
          Live *l = fixed ? nullptr : &live[static_cast<size_t>(r.buf - kFixed)];
          uint8_t *base = fixed ? f.bufs[r.buf] : l->p;
          uint8_t *mbase = fixed ? model[static_cast<size_t>(r.buf)].data() : l->model.data();
          const uint64_t bytes = fixed ? kBytes : l->bytes;
          Range rr = r;
          rr.offset = std::min(rr.offset, bytes - 1);
          // Ordinary memory is the caller's to vouch for: never past its end.
          if (r.buf == 3) rr.len = std::min(rr.len, bytes - rr.offset);
          if (bad.empty() && rr.direction > PTO_DIR_INOUT)
            bad = "a direction of " + std::to_string(rr.direction);
          if (bad.empty() && rr.len > 0 && rr.offset + rr.len > bytes) bad = "a range past its heap buffer";
          where.emplace_back(base + rr.offset, rr);
          where_model.emplace_back(mbase + rr.offset, rr);
          if (rr.direction <= PTO_DIR_INOUT)
            args.add_tensor(base + rr.offset, rr.len, PTO_DTYPE_U8, {static_cast<int64_t>(rr.len)},
                            static_cast<pto_direction>(rr.direction));
        }
        if (bad.empty() && op.empty_fn) bad = "an empty function";
        std::vector<uint64_t> after;
        for (int64_t a : op.after) {
          if (a >= 0) {
            after.push_back(ids[static_cast<size_t>(a)]);
          } else {
            after.push_back(ids.empty() ? uint64_t{1} << 60 : ids.back() + static_cast<uint64_t>(-a));
            if (bad.empty()) bad = "an after id that is not an earlier task of the run";
          }
        }
        const uint64_t index = ids.size();
        if (expected_error.empty() && !bad.empty()) expected_error = bad;
        if (expected_error.empty()) task_body(index, where_model);
        if (bad.find("direction") != std::string::npos) {  // what add_tensor says of it
          args.add_tensor(where.back().first, 1, PTO_DTYPE_U8, {1}, static_cast<pto_direction>(3));
        }
        pto::SubFn fn;
        if (!op.empty_fn) fn = [index, where](pto::SubContext &) { task_body(index, where); };
        ids.push_back(o.submit_sub(fn, args, "t" + std::to_string(index), after, nullptr, op.always_run,
                                   op.inline_body));
      }
    });
  } catch (const pto::Error &e) {
    got = e.code();
    message = e.what();
  }
  if (!expected_error.empty()) {
    FUZZ_CHECK(got == PTO_INVALID_ARGUMENT, "a run with %s ended %s: %s", expected_error.c_str(),
               pto_status_name(got), message.c_str());
    return 0;
  }
  FUZZ_CHECK(got == PTO_OK, "a valid run failed: %s: %s", pto_status_name(got), message.c_str());
  for (int b = 0; b < kFixed; ++b) {
    for (uint64_t i = 0; i < kBytes; ++i)
      FUZZ_CHECK(f.bufs[b][i] == model[b][i], "buffer %d byte %llu differs from sequential execution", b,
                 static_cast<unsigned long long>(i));
  }
  return 0;
}
