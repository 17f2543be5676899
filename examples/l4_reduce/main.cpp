// examples/l4_reduce/main.cpp — many hosts (L4) from C++: parts filled on each rank, a chip task per part, a cross-rank tree sum.
//
// Usage: mpirun -n 4 --oversubscribe build/dev/examples/l4_reduce_cpp [a2a3sim|a5sim]
//        (as root add --allow-run-as-root; run alone it is one rank)
// The C++ twin of main.py. Shard s belongs to rank s % size: a SUB task fills x[s] there, a chip
// task computes y[s] = relu(a*x[s] + b) (the tiled graph of examples/vector), a SUB task sums
// y[s] into partial[s]; a binary tree of SUB tasks then adds the partial sums across ranks,
// always in the same order, so the total is the same bit for bit on any number of ranks. Every
// dependency and every message is inferred from what the tasks read and write; no task calls
// MPI. Rank 0 checks y and the total against a serial reference and prints the SUCCESS line.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "pto/kernel_compiler.h"
#include "pto/l4.h"

namespace {

constexpr int kShards = 8;
constexpr int64_t kShard = 1 << 12;  // float32 elements per shard
constexpr int64_t kChunks = 4;       // tiles per shard (chip tasks of the vector graph)
constexpr float kA = 1.5f, kB = -0.25f;

// The input, a function of the element's global index (no RNG: every rank and the reference agree).
float input(int s, int64_t i) {
  const uint64_t k = static_cast<uint64_t>(s) * kShard + static_cast<uint64_t>(i);
  return static_cast<float>((k * 2654435761u) % 1000u) / 250.0f - 2.0f;
}

// The tree the tasks use, applied serially: partial[0] after every step.
double tree_sum(std::vector<double> partial) {
  for (int step = 1; step < kShards; step *= 2)
    for (int s = 0; s < kShards; s += 2 * step) partial[static_cast<size_t>(s)] += partial[static_cast<size_t>(s + step)];
  return partial[0];
}

pto::ChipStorageTaskArgs tensor_args(std::initializer_list<std::pair<void *, pto_direction>> ts, uint64_t nbytes,
                                     pto_dtype dtype, int64_t n) {
  pto::ChipStorageTaskArgs a;
  for (const auto &[p, d] : ts) a.add_tensor(p, nbytes, dtype, {n}, d);
  return a;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string platform = argc > 1 ? argv[1] : "a2a3sim";
  const std::string runtime = "tensormap_and_ringbuffer";
  const std::string vector_dir = std::string(PTO_EXAMPLES_DIR) + "/vector";
  try {
    pto::KernelCompiler kc(platform);
    pto::ChipCallable callable(kc.compile_orchestration(runtime, vector_dir + "/orchestration.cpp"));
    callable.add_kernel(0, PTO_CORE_AIV, kc.compile_incore(vector_dir + "/kernels/kernel_axpb.cpp", PTO_CORE_AIV));
    callable.add_kernel(1, PTO_CORE_AIV, kc.compile_incore(vector_dir + "/kernels/kernel_relu.cpp", PTO_CORE_AIV));
    pto::ChipCallConfig config;
    config.block_dim = 2;
    config.aicpu_thread_num = 2;

    pto::l4::WorkerOptions o;
    o.device_ids = {0};
    o.num_sub_workers = 2;
    o.platform = platform;
    o.runtime = runtime;
    o.heap_bytes = 64ull << 20;
    o.peer_timeout_ms = 60000;
    pto::l4::Worker w(o);  // collective
    if (w.rank() == 0)
      std::printf("=== l4_reduce (C++): %d rank(s), %d shards of %lld ===\n", w.size(), kShards,
                  static_cast<long long>(kShard));
    // Every rank allocates the same arrays in the same order; nothing holds a value yet, so
    // "valid everywhere" is true of the (unused) initial contents.
    const uint64_t shard_bytes = kShard * sizeof(float);
    std::vector<float *> x, y;
    std::vector<double *> partial;
    for (int s = 0; s < kShards; ++s) {
      x.push_back(static_cast<float *>(w.alloc(shard_bytes, "x" + std::to_string(s))));
      y.push_back(static_cast<float *>(w.alloc(shard_bytes, "y" + std::to_string(s))));
      partial.push_back(static_cast<double *>(w.alloc(sizeof(double), "partial" + std::to_string(s))));
    }

    pto::WorkerRunStats stats = w.run(
        [&](pto::l4::Orchestrator &orch) {
          for (int s = 0; s < kShards; ++s) {
            const int home = s % orch.size();
            float *xs = x[static_cast<size_t>(s)], *ys = y[static_cast<size_t>(s)];
            double *ps = partial[static_cast<size_t>(s)];
            orch.submit_sub(
                [=](pto::SubContext &) {
                  for (int64_t i = 0; i < kShard; ++i) xs[i] = input(s, i);
                },
                tensor_args({{xs, PTO_DIR_OUTPUT}}, shard_bytes, PTO_DTYPE_F32, kShard), home,
                "fill x" + std::to_string(s));
            pto::ChipStorageTaskArgs args = tensor_args({{xs, PTO_DIR_INPUT}, {ys, PTO_DIR_OUTPUT}}, shard_bytes,
                                                        PTO_DTYPE_F32, kShard);
            args.add_scalar_f32(kA);
            args.add_scalar_f32(kB);
            args.add_scalar(kShard / kChunks);
            orch.submit_chip(callable, args, config, home, pto::kAnyChip, "relu(ax+b) shard " + std::to_string(s));
            pto::ChipStorageTaskArgs sum_args = tensor_args({{ys, PTO_DIR_INPUT}}, shard_bytes, PTO_DTYPE_F32, kShard);
            sum_args.add_tensor(ps, sizeof(double), PTO_DTYPE_F64, {1}, PTO_DIR_OUTPUT);
            orch.submit_sub(
                [=](pto::SubContext &) {
                  double t = 0;
                  for (int64_t i = 0; i < kShard; ++i) t += ys[i];
                  *ps = t;
                },
                sum_args, home, "sum " + std::to_string(s));
          }
          for (int step = 1; step < kShards; step *= 2)  // the same tree on any number of ranks
            for (int s = 0; s < kShards; s += 2 * step) {
              double *dst = partial[static_cast<size_t>(s)], *src = partial[static_cast<size_t>(s + step)];
              pto::ChipStorageTaskArgs a;
              a.add_tensor(src, sizeof(double), PTO_DTYPE_F64, {1}, PTO_DIR_INPUT);
              a.add_tensor(dst, sizeof(double), PTO_DTYPE_F64, {1}, PTO_DIR_INOUT);
              orch.submit_sub([=](pto::SubContext &) { *dst += *src; }, a, s % orch.size(),
                              "partial" + std::to_string(s) + " += partial" + std::to_string(s + step));
            }
          for (int s = 0; s < kShards; ++s) orch.fetch(y[static_cast<size_t>(s)], 0);  // rank 0 checks all
          orch.fetch(partial[0], 0);
        },
        300000);
    if (w.rank() != 0) return 0;  // only rank 0 prints: mpirun may interleave the ranks' lines
    const pto::l4::TransferCounts c = w.transfers();
    std::printf("rank 0 ran %llu tasks (%llu chip) and %llu sends + %llu receives of the transfers\n",
                static_cast<unsigned long long>(c.tasks), static_cast<unsigned long long>(stats.chip_tasks),
                static_cast<unsigned long long>(c.sends), static_cast<unsigned long long>(c.recvs));
    // The serial reference: the same formula in float, the same sums in double, the same tree.
    std::vector<double> ref_partial(kShards, 0.0);
    for (int s = 0; s < kShards; ++s)
      for (int64_t i = 0; i < kShard; ++i) {
        const float want = std::fmax(kA * input(s, i) + kB, 0.0f);
        const float got = y[static_cast<size_t>(s)][i];
        if (std::fabs(got - want) > 1e-6f) {
          std::printf("FAILED: y%d[%lld] is %.9g, expected %.9g\n", s, static_cast<long long>(i), got, want);
          return 1;
        }
        ref_partial[static_cast<size_t>(s)] += want;
      }
    const double want = tree_sum(ref_partial), total = *partial[0];
    if (std::fabs(total - want) > 1e-9 * std::fabs(want)) {
      std::printf("FAILED: total is %.17g, expected %.17g\n", total, want);
      return 1;
    }
    std::printf("SUCCESS: %d shards of relu(a*x + b) on %d rank(s) and their tree sum (%.17g) match the serial "
                "reference\n",
                kShards, w.size(), total);
  } catch (const pto::Error &e) {
    std::fprintf(stderr, "error %s: %s\nhint: %s\n", e.name(), e.what(), e.hint());
    return 1;
  }
  return 0;
}
