// bench/submit/submit_bench.cpp — the tensormap runtime's submit path alone: ns per submit (p50/p99).
//
// Runs the device orchestrator (aicpu/orchestrator*.cpp, compiled in) on this thread over a
// hand-built shared-memory header, with no device, no cores and no scheduler threads. Between
// submissions it plays the schedulers' part inline (untimed): it keeps `--lag` tasks in flight
// and retires older ones in order — closes the fanout list, releases the consumers, advances
// last_task_alive — so the TensorMap, the dependency pool and the task window see the steady
// state of a run whose tasks finish `lag` submissions after they were submitted. Each
// submit_task call is timed alone (rdtsc, its own overhead subtracted); a whole rep is timed too.
//
// What it leaves out (bench/run.py's orch_ns_per_task has it): cache lines the schedulers write
// on other cores (fanout heads, last_task_alive, the ready queue), and waits for ring space.
//
//   bench_submit --workload independent|stencil|tiles|temps|accumulate|reads [--tasks N] [--lag L]
//                [--reps R] [--batch B]
// --batch B: batch_deps = B (0, the default, is off); the JSON line then carries the batch counters.
//
// Instruction counts (stable on a noisy machine), only inside submit_task:
//   valgrind --tool=callgrind --toggle-collect='pto::tmr::DeviceOrchestrator::submit_task*'
//       build/release/bench/bench_submit --workload stencil --reps 1   (one command line)
// then divide the Ir total by --tasks (x (reps + 1): the warm-up rep is counted too).
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/align.h"
#include "orchestrator.h"
#include "tmr_layout.h"

namespace {

using pto::tmr::Header;

struct Options {
  std::string workload = "stencil";
  int64_t tasks = 20000;
  int64_t lag = 64;
  int reps = 5;
  uint32_t window = 1024;
  uint32_t batch = 0;  // batch_deps
};

uint64_t ticks() {
  _mm_lfence();
  const uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

// One shared-memory image laid out like host/tmr_runtime_host.cpp's (the parts the
// orchestrator touches), rebuilt before every rep.
class Image {
 public:
  Image(const Options &o, uint64_t cells_bytes) : o_(o), cells_(cells_bytes / 8 + 1, 0) {
    const uint64_t call_stride = pto::align_up(offsetof(pto_kernel_call, args) + 8 * 16, 8);
    uint64_t off = pto::align_up(sizeof(Header), 64);
    auto take = [&off](uint64_t bytes) {
      const uint64_t at = off;
      off = pto::align_up(off + bytes, 64);
      return at;
    };
    kernels_ = take(sizeof(pto::tmr::KernelSlot));
    tensors_ = take(sizeof(pto::TensorView));
    scalars_ = take(4 * sizeof(int64_t));
    for (auto &q : queue_) q = take(o.window * sizeof(pto::MpmcCell));
    slots_ = take(o.window * sizeof(pto::tmr::TaskSlot));
    calls_ = take(o.window * 3 * call_stride);
    deps_ = take(kDeps * sizeof(pto::tmr::DepEntry));
    sched_ = take(kSchedulers * sizeof(pto::SchedulerSlot));
    call_stride_ = call_stride;
    bytes_ = off;
    mem_.reset(static_cast<char *>(std::aligned_alloc(64, pto::align_up(bytes_, 64))));
    heap_.reset(static_cast<char *>(std::aligned_alloc(64, kHeap)));
    cells_bytes_ = cells_bytes;
  }

  Header *build(uint64_t orch_entry, const std::vector<int64_t> &scalars) {
    char *base = mem_.get();
    std::memset(base, 0, slots_);  // what the host copies in; slots and the rest are not zeroed
    auto *h = new (base) Header();
    const auto dev = reinterpret_cast<uint64_t>(base);
    h->window = o_.window;
    h->block_dim = 24;
    h->num_clusters = 24;
    h->aicpu_threads = kSchedulers + 1;
    h->sched_threads = kSchedulers;
    h->max_args = 16;
    h->dep_capacity = kDeps;
    h->tensormap_entries = 16384;
    h->num_kernels = 1;
    h->num_tensors = 1;
    h->num_scalars = static_cast<uint32_t>(scalars.size());
    h->call_stride = call_stride_;
    h->slots_addr = dev + slots_;
    h->calls_addr = dev + calls_;
    h->deps_addr = dev + deps_;
    h->kernels_addr = dev + kernels_;
    h->tensors_addr = dev + tensors_;
    h->scalars_addr = dev + scalars_;
    h->sched_addr = dev + sched_;
    h->heap_addr = reinterpret_cast<uint64_t>(heap_.get());
    h->heap_bytes = kHeap;
    h->orch_entry = orch_entry;
    h->sched.batch_deps = o_.batch;
    h->failed_task.store(-1, std::memory_order_relaxed);
    h->orch_wake_at.store(INT64_MAX, std::memory_order_relaxed);
    auto *k = reinterpret_cast<pto::tmr::KernelSlot *>(base + kernels_);
    k->entry = 1;  // never called: no cores here
    k->core_type = PTO_CORE_AIV;
    auto *t = reinterpret_cast<pto::TensorView *>(base + tensors_);
    *t = pto::TensorView{};
    t->buffer = reinterpret_cast<uint64_t>(cells_.data());
    t->buffer_bytes = cells_bytes_;
    t->dtype = PTO_DTYPE_U64;
    t->ndim = 1;
    t->shape[0] = static_cast<int64_t>(cells_bytes_ / 8);
    t->strides[0] = 1;
    std::memcpy(base + scalars_, scalars.data(), scalars.size() * sizeof(int64_t));
    for (int q = 0; q < PTO_TASK_SHAPE_COUNT; ++q) {
      auto *cells = reinterpret_cast<pto::MpmcCell *>(base + queue_[q]);
      pto::MpmcQueue::format(cells, o_.window, nullptr, 0);
      h->ready.attach(static_cast<uint32_t>(q), cells, o_.window, 0);
    }
    for (uint32_t s = 0; s < kSchedulers; ++s)
      new (base + sched_ + s * sizeof(pto::SchedulerSlot)) pto::SchedulerSlot();
    return h;
  }

 private:
  static constexpr uint32_t kDeps = 16384;
  static constexpr uint32_t kSchedulers = 3;  // a2a3: four AICPU threads, one orchestrates
  static constexpr uint64_t kHeap = 1 << 20;
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  Options o_;
  std::vector<uint64_t> cells_;
  uint64_t cells_bytes_ = 0;
  uint64_t kernels_, tensors_, scalars_, queue_[PTO_TASK_SHAPE_COUNT], slots_, calls_, deps_, sched_;
  uint64_t call_stride_, bytes_;
  std::unique_ptr<char, Free> mem_, heap_;
};

// The schedulers' part, inline and untimed: retire every task older than `lag` submissions.
struct Retirer {
  Header *h;
  void retire_upto(int64_t end) {  // tasks [last_task_alive, end)
    int64_t la = h->last_task_alive.load(std::memory_order_relaxed);
    uint64_t v;
    while (h->ready.try_pop_any(h->ready.attached(), &v)) {
    }
    auto *deps = pto::tmr::deps_of(h);
    for (; la < end; ++la) {
      pto::tmr::TaskSlot &t = pto::tmr::slot_of(h, la);
      uint32_t e = t.fanout_head.exchange(pto::tmr::kListClosed, std::memory_order_acq_rel);
      for (; e != pto::tmr::kListEmpty; e = deps[e].next) {
        pto::tmr::TaskSlot &c = pto::tmr::slot_of(h, deps[e].consumer);
        c.fanin_remaining.fetch_sub(1, std::memory_order_acq_rel);
      }
      t.retired_id.store(la, std::memory_order_relaxed);
      h->finished.fetch_add(1, std::memory_order_relaxed);
      h->last_task_alive.store(la + 1, std::memory_order_release);
    }
  }
};

struct Run {
  const Options *o;
  Retirer retirer;
  std::vector<uint64_t> *samples;  // ticks per submit
  uint64_t overhead;
};
Run g_run;

template <typename Submit>
void timed(pto::Orchestrator &orch, Submit submit) {
  const uint64_t t0 = ticks();
  const pto::TaskHandle t = submit();
  const uint64_t t1 = ticks();
  g_run.samples->push_back(t1 - t0 > g_run.overhead ? t1 - t0 - g_run.overhead : 0);
  if (!t.valid()) {
    std::fprintf(stderr, "submit failed: %s\n", orch.ok() ? "(stopped)" : "orchestration error");
    std::exit(1);
  }
  if (t.id >= g_run.o->lag) g_run.retirer.retire_upto(t.id - g_run.o->lag + 1);
}

pto::TensorView cell(const pto::TensorView &cells, int64_t k) {
  const int64_t one = 1;
  return cells.slice(&k, &one);
}

// bench/independent/pto_tmr.cpp's orchestration: task k writes cell k.
void independent(pto::Orchestrator &orch) {
  const pto::TensorView cells = orch.tensor(0);
  for (int64_t k = 0; k < g_run.o->tasks; ++k) {
    const pto::Arg a[3] = {pto::Arg::out_existing(cell(cells, k)), pto::Arg::i64(k), pto::Arg::i64(0)};
    timed(orch, [&] { return orch.submit_task(0, PTO_CORE_AIV, a, 3); });
  }
}

// bench/stencil_1d/pto_tmr.cpp's orchestration at width 4: two rows of cells, ping-pong.
void stencil(pto::Orchestrator &orch) {
  const pto::TensorView cells = orch.tensor(0);
  const int64_t width = 4, steps = g_run.o->tasks / width;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t in = (s % 2) * width, out = ((s + 1) % 2) * width;
    for (int64_t i = 0; i < width; ++i) {
      pto::Arg a[6];
      uint32_t n = 0;
      a[n++] = pto::Arg::out_existing(cell(cells, out + i));
      a[n++] = pto::Arg::i64(s);
      a[n++] = pto::Arg::i64(0);
      if (i > 0) a[n++] = pto::Arg::in(cell(cells, in + i - 1));
      a[n++] = pto::Arg::in(cell(cells, in + i));
      if (i + 1 < width) a[n++] = pto::Arg::in(cell(cells, in + i + 1));
      timed(orch, [&] { return orch.submit_task(0, PTO_CORE_AIV, a, n); });
    }
  }
}

// Strided tiles of one matrix: a 2048 x 2048 float32 matrix (viewed as u64 cells, 1024 wide)
// in 32 x 32 tiles; task k reads tile k - 1 and writes tile k, row-major over the tile grid,
// so every view is strided and all of them live in one buffer.
void tiles(pto::Orchestrator &orch) {
  pto::TensorView m = orch.tensor(0);
  const int64_t side = 1024, tile = 32, per_row = side / tile;
  m.ndim = 2;
  m.shape[0] = m.shape[1] = side;
  m.strides[0] = side;
  m.strides[1] = 1;
  for (int64_t k = 0; k < g_run.o->tasks; ++k) {
    const int64_t t = k % (per_row * per_row), p = (k + per_row * per_row - 1) % (per_row * per_row);
    const pto::Arg a[3] = {pto::Arg::inout(m.tile((t / per_row) * tile, (t % per_row) * tile, tile, tile)),
                           pto::Arg::in(m.tile((p / per_row) * tile, (p % per_row) * tile, tile, tile)),
                           pto::Arg::i64(0)};
    timed(orch, [&] { return orch.submit_task(0, PTO_CORE_AIV, a, 3); });
  }
}

// Heap buffers: 1024 alloc_tensor buffers of 64 bytes live at once (one scope), task k writes
// buffer k % 1024. What validation costs when many heap buffers are live.
void temps(pto::Orchestrator &orch) {
  constexpr int kTemps = 1024;
  std::vector<pto::TensorView> t(kTemps);
  const int64_t shape[1] = {8};
  pto::Scope scope(orch);
  for (auto &v : t) v = orch.alloc_tensor(PTO_DTYPE_U64, 1, shape);
  for (int64_t k = 0; k < g_run.o->tasks; ++k) {
    const pto::Arg a[2] = {pto::Arg::out_existing(t[static_cast<size_t>(k % kTemps)]), pto::Arg::i64(0)};
    timed(orch, [&] { return orch.submit_task(0, PTO_CORE_AIV, a, 2); });
  }
}

// An accumulation (a matmul's k loop): runs of 32 tasks INOUT on one 8-cell tile of C, each
// also reading its own A and B cells (never written: the look-ups find nothing).
void accumulate(pto::Orchestrator &orch) {
  pto::TensorView cells = orch.tensor(0);
  const int64_t eight = 8, one = 1;
  for (int64_t k = 0; k < g_run.o->tasks; ++k) {
    const int64_t c = 8 * ((k / 32) % 64), a_at = 512 + 2 * (k % 4096), b_at = a_at + 1;
    const pto::Arg a[4] = {pto::Arg::inout(cells.slice(&c, &eight)), pto::Arg::in(cells.slice(&a_at, &one)),
                           pto::Arg::in(cells.slice(&b_at, &one)), pto::Arg::i64(0)};
    timed(orch, [&] { return orch.submit_task(0, PTO_CORE_AIV, a, 4); });
  }
}

// Repeated reads of one tile: every 64th task writes an 8-cell tile, the 63 after it read it and
// each writes its own cell (a broadcast).
void reads(pto::Orchestrator &orch) {
  pto::TensorView cells = orch.tensor(0);
  const int64_t eight = 8, zero = 0;
  const pto::TensorView tile = cells.slice(&zero, &eight);
  for (int64_t k = 0; k < g_run.o->tasks; ++k) {
    if (k % 64 == 0) {
      const pto::Arg a[2] = {pto::Arg::out_existing(tile), pto::Arg::i64(0)};
      timed(orch, [&] { return orch.submit_task(0, PTO_CORE_AIV, a, 2); });
      continue;
    }
    const pto::Arg a[3] = {pto::Arg::in(tile), pto::Arg::out_existing(cell(cells, 8 + k % 4096)),
                           pto::Arg::i64(0)};
    timed(orch, [&] { return orch.submit_task(0, PTO_CORE_AIV, a, 3); });
  }
}

uint64_t timer_overhead() {
  std::vector<uint64_t> v;
  for (int i = 0; i < 10001; ++i) {
    const uint64_t t0 = ticks();
    v.push_back(ticks() - t0);
  }
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

double ns_per_tick() {
  const auto c0 = std::chrono::steady_clock::now();
  const uint64_t t0 = ticks();
  while (std::chrono::steady_clock::now() - c0 < std::chrono::milliseconds(50)) {
  }
  const auto c1 = std::chrono::steady_clock::now();
  const uint64_t t1 = ticks();
  return std::chrono::duration<double, std::nano>(c1 - c0).count() / static_cast<double>(t1 - t0);
}

}  // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--workload")
      o.workload = v;
    else if (k == "--tasks")
      o.tasks = std::atoll(v.c_str());
    else if (k == "--lag")
      o.lag = std::atoll(v.c_str());
    else if (k == "--reps")
      o.reps = std::atoi(v.c_str());
    else if (k == "--batch")
      o.batch = static_cast<uint32_t>(std::atoi(v.c_str()));
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  void (*entry)(pto::Orchestrator &) = o.workload == "independent"  ? independent
                                       : o.workload == "stencil"    ? stencil
                                       : o.workload == "tiles"      ? tiles
                                       : o.workload == "temps"      ? temps
                                       : o.workload == "accumulate" ? accumulate
                                       : o.workload == "reads"      ? reads
                                                                    : nullptr;
  if (!entry || o.lag < 1 || o.lag >= o.window || o.tasks < 1 || o.batch > pto::kMaxBatchDeps) {
    std::fprintf(
        stderr,
        "usage: %s --workload independent|stencil|tiles|temps|accumulate|reads [--tasks N] [--lag 1..%u] "
        "[--reps R] [--batch 0..%u]\n",
        argv[0], o.window - 1, pto::kMaxBatchDeps);
    return 2;
  }
  const uint64_t cells_bytes = o.workload == "independent" ? 8 * static_cast<uint64_t>(o.tasks)
                               : o.workload == "stencil"   ? 8 * 8
                               : o.workload == "accumulate" || o.workload == "reads" ? 8 * 9000
                                                                                     : 8ull * 1024 * 1024;
  Image image(o, cells_bytes);
  const double tick_ns = ns_per_tick();
  std::vector<uint64_t> samples, run_ns;
  uint64_t batch_stats[3] = {};
  samples.reserve(static_cast<size_t>(o.tasks) * static_cast<size_t>(o.reps + 1));
  g_run.o = &o;
  g_run.overhead = timer_overhead();
  for (int rep = 0; rep <= o.reps; ++rep) {  // rep 0 warms caches up and is not counted
    std::vector<uint64_t> scratch;
    g_run.samples = rep == 0 ? &scratch : &samples;
    Header *h = image.build(reinterpret_cast<uint64_t>(entry), {});
    g_run.retirer = Retirer{h};
    {
      pto::tmr::DeviceOrchestrator orch(h, nullptr);
      orch.run();
    }
    if (rep > 0) run_ns.push_back(h->orch_ns.load());
    for (int i = 0; i < 3; ++i) batch_stats[i] = h->batch_stats[i].load();
    if (h->orch_status.load() != PTO_OK || h->next_task.load() != o.tasks) {
      std::fprintf(stderr, "run failed: status %d, %lld tasks: %s\n", h->orch_status.load(),
                   static_cast<long long>(h->next_task.load()), h->orch_message);
      return 1;
    }
  }
  std::sort(samples.begin(), samples.end());
  std::sort(run_ns.begin(), run_ns.end());
  // The whole orchestration function per task: the submits plus the timing and the inline
  // retirement around them (an upper bound; the samples are the submits alone).
  const double run_per_task = static_cast<double>(run_ns[run_ns.size() / 2]) / static_cast<double>(o.tasks);
  auto pct = [&](double p) {
    return static_cast<double>(samples[static_cast<size_t>(p * (samples.size() - 1))]) * tick_ns;
  };
  double mean = 0;
  for (const uint64_t t : samples) mean += static_cast<double>(t);
  mean = mean * tick_ns / static_cast<double>(samples.size());
  std::printf(
      "{\"workload\": \"%s\", \"tasks\": %lld, \"lag\": %lld, \"reps\": %d, \"submit_ns_p50\": %.1f, "
      "\"submit_ns_p90\": %.1f, \"submit_ns_p99\": %.1f, \"submit_ns_mean\": %.1f, \"run_ns_per_task\": "
      "%.1f, \"timer_overhead_ns\": %.1f, \"batch_deps\": %u, \"batch_flushes\": %llu, \"batch_local_hits\": "
      "%llu, "
      "\"batch_unfiled\": %llu}\n",
      o.workload.c_str(), static_cast<long long>(o.tasks), static_cast<long long>(o.lag), o.reps, pct(0.5),
      pct(0.9), pct(0.99), mean, run_per_task, static_cast<double>(g_run.overhead) * tick_ns, o.batch,
      static_cast<unsigned long long>(batch_stats[0]), static_cast<unsigned long long>(batch_stats[1]),
      static_cast<unsigned long long>(batch_stats[2]));
  return 0;
}
