// tests/common/tmr_program.cpp — generator, interpreter sources and sequential reference (tmr_program.h).
#include "common/tmr_program.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "pto/kernel_compiler.h"

namespace pto_test {

// args: task_id, n_tensors, then per tensor: view address, packed geometry
//   packed = rows | cols << 8 | rstride << 16 (elements) | cstride << 32 | access << 40
const char *const kTmrMixKernel = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
#ifdef PTO_CORE_TYPE_MIX
  if (pto::mix_part(args) != 0) return;  // one part does the work: the same result as a single task
#endif
  const int64_t id = args[0], n = args[1];
  uint32_t acc = static_cast<uint32_t>(id) * 2654435761u;
  for (int64_t t = 0; t < n; ++t) {
    const int32_t *v = pto::tensor<int32_t>(args, 2 + 2 * t);
    const int64_t g = args[3 + 2 * t];
    const int64_t rows = g & 255, cols = (g >> 8) & 255, rs = (g >> 16) & 0xFFFF, cs = (g >> 32) & 255, a = g >> 40;
    if (a != 0 && a != 2 && a != 4) continue;  // reads: INPUT, INOUT, NO_DEP
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) acc = acc * 31u + static_cast<uint32_t>(v[r * rs + c * cs]);
  }
  for (int64_t t = 0; t < n; ++t) {
    int32_t *v = pto::tensor<int32_t>(args, 2 + 2 * t);
    const int64_t g = args[3 + 2 * t];
    const int64_t rows = g & 255, cols = (g >> 8) & 255, rs = (g >> 16) & 0xFFFF, cs = (g >> 32) & 255, a = g >> 40;
    if (a != 1 && a != 2 && a != 3) continue;  // writes: OUTPUT, INOUT, OUTPUT_EXISTING
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int32_t &x = v[r * rs + c * cs];
        const uint32_t old = a == 2 ? static_cast<uint32_t>(x) * 3u : 0u;
        x = static_cast<int32_t>(old + acc + static_cast<uint32_t>(r * 131 + c));
      }
  }
}
)";

// Tensors: 0 = program, 1..3 = buffers 0..2, 4 = constants. Kernels 0 (AIC), 1 (AIV), 2 (MIX).
const char *const kTmrProgramOrch = R"(
#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(orch) {
  const int64_t *p = reinterpret_cast<const int64_t *>(orch.tensor(0).buffer);
  pto::TensorView bufs[5];
  for (int b = 0; b < 3; ++b) bufs[b] = orch.tensor(1 + b);
  bufs[4] = orch.tensor(4);
  const int64_t ops = p[0];
  int64_t pos = 1, task = 0;
  for (int64_t op = 0; op < ops; ++op) {
    const int64_t kind = p[pos++];
    if (kind == 1) {
      orch.scope_begin();
      bufs[3] = orch.alloc_tensor(PTO_DTYPE_I32, 32, 32);
      continue;
    }
    if (kind == 2) {
      orch.scope_end();
      continue;
    }
    if (kind == 3) {
      orch.set_stream(static_cast<uint32_t>(p[pos++]));
      continue;
    }
    const int64_t core = p[pos++], n = p[pos++];
    pto::Arg a[2 + 2 * 8];
    a[0] = pto::Arg::i64(task++);
    a[1] = pto::Arg::i64(n);
    for (int64_t t = 0; t < n; ++t) {
      const int64_t *q = p + pos;
      pos += 8;
      const pto::TensorView v = bufs[q[0]].tile(q[1], q[2], q[3], q[4]);
      pto::TensorView w = v;
      w.shape[0] = q[3];
      w.shape[1] = q[4];
      w.strides[0] = v.strides[0] * q[5];
      w.strides[1] = v.strides[1] * q[6];
      const int64_t packed = q[3] | (q[4] << 8) | (w.strides[0] << 16) | (w.strides[1] << 32) | (q[7] << 40);
      a[2 + 2 * t] = pto::Arg::tensor(w, static_cast<pto::Access>(q[7]));
      a[3 + 2 * t] = pto::Arg::i64(packed);
    }
    orch.submit_task(static_cast<uint32_t>(core), static_cast<pto_core_type>(core), a, static_cast<uint32_t>(2 + 2 * n));
  }
}
)";

TmrProgram make_tmr_program(int64_t tasks, uint64_t seed, bool batchy, bool mix) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  TmrProgram p;
  p.words.push_back(0);  // op count, patched below
  int64_t ops = 0;
  bool in_scope = false;
  bool temp_written = false;
  int64_t core = 0;
  // batchy: fixed views {buf, r0, c0, rows, cols, rstep, cstep}, nested and identical.
  const int64_t fixed[6][7] = {{0, 0, 0, 8, 8, 1, 1}, {0, 0, 0, 4, 4, 1, 1}, {0, 4, 4, 4, 4, 1, 1},
                               {1, 0, 0, 8, 8, 2, 2}, {1, 1, 1, 8, 8, 2, 2}, {2, 0, 0, 1, 32, 1, 1}};
  while (p.tasks < tasks) {
    if (batchy && pick(0, 19) == 0) {
      p.words.push_back(kOpStream);
      p.words.push_back(pick(0, 3));
      ++ops;
      continue;
    }
    if (!in_scope && pick(0, 15) == 0) {
      p.words.push_back(kOpScope);
      ++ops;
      in_scope = true;
      temp_written = false;
      continue;
    }
    if (in_scope && temp_written && pick(0, 7) == 0) {
      p.words.push_back(kOpEnd);
      ++ops;
      in_scope = false;
      continue;
    }
    p.words.push_back(kOpTask);
    if (!batchy || pick(0, 7) == 0)
      core = pick(0, 7) == 0 && mix ? 2 : pick(0, 1);  // 2: a MIX task on a whole cluster
    p.words.push_back(core);
    const int64_t n = pick(1, 4);
    p.words.push_back(n);
    bool writes_temp = false;  // the temp counts as written only after this whole task
    for (int64_t t = 0; t < n; ++t) {
      int64_t buf = pick(0, 2), access = pick(0, 3);
      if (in_scope && !temp_written && t == 0) {
        buf = 3, access = kAccOut;  // a fresh temp is fully written before anyone reads it
      } else if (in_scope && temp_written && pick(0, 3) == 0) {
        buf = 3;
      } else if (pick(0, 9) == 0) {
        buf = 4, access = kAccNoDep;
      }
      int64_t rstep = pick(1, 2), cstep = pick(1, 2);
      int64_t rows = pick(1, 8), cols = pick(1, 8);
      if (buf == 3 && !temp_written) rstep = cstep = 1, rows = cols = kDim;
      int64_t r0 = pick(0, kDim - 1 - (rows - 1) * rstep), c0 = pick(0, kDim - 1 - (cols - 1) * cstep);
      if (batchy && buf < 3 && pick(0, 1) == 0) {
        const int64_t *f = fixed[pick(0, 5)];
        buf = f[0], r0 = f[1], c0 = f[2], rows = f[3], cols = f[4], rstep = f[5], cstep = f[6];
      }
      for (int64_t v : {buf, r0, c0, rows, cols, rstep, cstep, access}) p.words.push_back(v);
      writes_temp |= buf == 3 && access == kAccOut && rows == kDim;
    }
    temp_written |= writes_temp;
    ++ops;
    ++p.tasks;
  }
  if (in_scope) {
    p.words.push_back(kOpEnd);
    ++ops;
  }
  p.words[0] = ops;
  return p;
}

std::vector<std::vector<int32_t>> run_sequential(const TmrProgram &p,
                                                 const std::vector<std::vector<int32_t>> &init,
                                                 const std::vector<int32_t> &consts) {
  std::vector<std::vector<int32_t>> bufs = init;
  bufs.resize(5);
  bufs[3].assign(kDim * kDim, 0);
  bufs[4] = consts;
  const int64_t *w = p.words.data();
  int64_t pos = 1, task = 0;
  for (int64_t op = 0; op < w[0]; ++op) {
    const int64_t kind = w[pos++];
    if (kind == kOpStream) ++pos;
    if (kind != kOpTask) continue;
    ++pos;  // core
    const int64_t n = w[pos++];
    const int64_t *views = w + pos;
    pos += 8 * n;
    uint32_t acc = static_cast<uint32_t>(task++) * 2654435761u;
    auto each = [&](const int64_t *q, auto fn) {
      for (int64_t r = 0; r < q[3]; ++r)
        for (int64_t c = 0; c < q[4]; ++c) fn(bufs[q[0]][(q[1] + r * q[5]) * kDim + q[2] + c * q[6]], r, c);
    };
    for (int64_t t = 0; t < n; ++t) {
      const int64_t *q = views + 8 * t;
      if (q[7] == kAccIn || q[7] == kAccInout || q[7] == kAccNoDep)
        each(q, [&](int32_t &x, int64_t, int64_t) { acc = acc * 31u + static_cast<uint32_t>(x); });
    }
    for (int64_t t = 0; t < n; ++t) {
      const int64_t *q = views + 8 * t;
      if (q[7] == kAccOut || q[7] == kAccInout || q[7] == kAccOutExisting)
        each(q, [&](int32_t &x, int64_t r, int64_t c) {
          const uint32_t old = q[7] == kAccInout ? static_cast<uint32_t>(x) * 3u : 0u;
          x = static_cast<int32_t>(old + acc + static_cast<uint32_t>(r * 131 + c));
        });
    }
  }
  bufs.resize(3);
  return bufs;
}

TmrData::TmrData(const TmrProgram &p, uint64_t seed)
    : bufs(3, std::vector<int32_t>(kDim * kDim)), consts(kDim * kDim), words(p.words) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (auto &b : bufs)
    for (auto &x : b) x = static_cast<int32_t>(rng());
  for (auto &x : consts) x = static_cast<int32_t>(rng());
}

pto::ChipStorageTaskArgs TmrData::args() {
  pto::ChipStorageTaskArgs a;
  a.add_tensor(words.data(), words.size() * 8, PTO_DTYPE_I64, {static_cast<int64_t>(words.size())},
               PTO_DIR_INPUT);
  for (auto &b : bufs) a.add_tensor(b.data(), b.size() * 4, PTO_DTYPE_I32, {kDim, kDim}, PTO_DIR_INOUT);
  a.add_tensor(consts.data(), consts.size() * 4, PTO_DTYPE_I32, {kDim, kDim}, PTO_DIR_INPUT);
  return a;
}

pto::ChipCallable make_tmr_program_callable(const char *platform, const char *runtime) {
  pto::KernelCompiler kc(platform);
  const bool tmr = std::string(runtime) == "tensormap_and_ringbuffer";
  pto::ChipCallable callable(kc.compile_orchestration_source(
      runtime, kTmrProgramOrch, tmr ? "tmr_program_orch" : "tmr_program_orch_hbg"));
  const pto_core_type cores[3] = {PTO_CORE_AIC, PTO_CORE_AIV, PTO_CORE_MIX};
  for (uint32_t k = 0; k < (tmr ? 3u : 2u); ++k)
    callable.add_kernel(k, cores[k], kc.compile_incore_source(kTmrMixKernel, "tmr_mix", cores[k]));
  return callable;
}

void expect_same_buffers(const std::vector<std::vector<int32_t>> &got,
                         const std::vector<std::vector<int32_t>> &expected, const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t b = 0; b < got.size(); ++b) {
    for (size_t i = 0; i < got[b].size(); ++i) {
      ASSERT_EQ(got[b][i], expected[b][i]) << "buffer " << b << " element " << i << " (" << what << ")";
    }
  }
}

}  // namespace pto_test
