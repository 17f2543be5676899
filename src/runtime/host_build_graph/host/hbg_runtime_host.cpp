// src/runtime/host_build_graph/host/hbg_runtime_host.cpp — host part of host_build_graph: build, lay out,
// launch, report.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "core/align.h"
#include "core/check.h"
#include "core/descriptor_call.h"
#include "core/mix_parts.h"
#include "core/mix_sync.h"
#include "core/warm_up_program.h"
#include "hbg_layout.h"
#include "host/device_runner.h"
#include "host/graph_builder.h"
#include "host/host_orchestrator.h"
#include "host/run_wait.h"
#include "host/schedule_host.h"
#include "host/tensor_dump_files.h"
#include "host/trace_json.h"
#include "pto_platform/doorbell.h"

namespace pto {
namespace {

using hbg::HostTask;
using hbg::RuntimeHeader;

// Offsets of every region inside the runtime's one device allocation.
struct Layout {
  // queue: the cube, vector and MIX pools' cells, then the inline pool's (tasks that may finish
  // without a core: dependency-only tasks and tasks with a dispatch predicate), then the
  // sync-start tasks' (kPoolGang).
  static constexpr int kQueues = PTO_TASK_SHAPE_COUNT + 2;
  static constexpr uint32_t kPools[kQueues] = {graph::kPoolCube, graph::kPoolVector, graph::kPoolMix,
                                               graph::kPoolInline, graph::kPoolGang};
  static uint32_t queue_of(uint32_t pool) {
    return pool == graph::kPoolInline ? 3u : pool == graph::kPoolGang ? 4u : pool;
  }
  uint64_t header = 0, tasks, successors, calls, queue[kQueues], counters, dump = 0, gates = 0, preds = 0,
           mix = 0,
           image,  // bytes the host builds and copies in; the trace regions and MixSync blocks follow
      trace = 0, pmu = 0, price = 0, mix_sync = 0, total;
  uint64_t queue_cap[kQueues];
  // Per task, the relative offset of its pto_kernel_call; a MIX task's is part 0's, and its
  // parts 1 and 2 are at mix_call_off[2 * HostTask::mix + part - 1].
  std::vector<uint64_t> call_off, mix_call_off;

  Layout(const hbg::HostGraphBuilder &b, const pto_call_config &cfg, bool timed, uint32_t threads,
         uint32_t cores) {
    const std::vector<HostTask> &graph = b.tasks();
    const uint64_t num_edges = b.num_edges();
    const uint32_t inline_candidates = b.num_inline_candidates();
    const bool profiling = cfg.enable_profiling || cfg.enable_pmu, with_pmu = cfg.enable_pmu;
    uint64_t off = align_up(sizeof(RuntimeHeader), kCacheLine);
    this->tasks = off;
    off = align_up(off + graph.size() * sizeof(hbg::Task), kCacheLine);
    successors = off;
    off = align_up(off + num_edges * sizeof(uint32_t), kCacheLine);
    calls = off;
    call_off.resize(graph.size());
    mix_call_off.resize(2 * size_t{b.num_mix_tasks()});
    // A call block at `off`: a descriptor block (core/descriptor_call.h) starts on a cache line
    // and has room for `tensors` descriptors; an argument-array block for its arguments.
    auto call_block = [&off](bool descriptor, uint32_t tensors, uint32_t num_args) {
      if (descriptor) off = align_up(off, kCacheLine);
      const uint64_t at = off;
      off += descriptor ? descriptor_call_bytes(tensors)
                        : align_up(offsetof(pto_kernel_call, args) + 8 * std::max<uint64_t>(num_args, 1), 8);
      return at;
    };
    uint64_t count[kQueues] = {0, 0, 0, inline_candidates, 0};
    for (size_t i = 0; i < graph.size(); ++i) {
      const HostTask &t = graph[i];
      if (t.mix < 0) {
        call_off[i] = call_block(t.descriptors, t.num_abi_tensors, t.num_args);
      } else {
        // The descriptors live in the first descriptor part's block; the others point there.
        const uint32_t desc = b.mix_parts(t).descriptors;
        const uint32_t first = desc ? static_cast<uint32_t>(__builtin_ctz(desc)) : kMixParts;
        for (uint32_t p = 0; p < kMixParts; ++p) {
          const uint64_t at = call_block((desc >> p) & 1, p == first ? t.num_abi_tensors : 0, t.num_args);
          (p == 0 ? call_off[i] : mix_call_off[2 * static_cast<size_t>(t.mix) + p - 1]) = at;
        }
      }
      if (!t.dummy) ++count[t.sync_start ? queue_of(graph::kPoolGang) : static_cast<uint32_t>(t.core_type)];
    }
    off = align_up(off, kCacheLine);
    for (int q = 0; q < kQueues; ++q) {
      queue_cap[q] = pow2_at_least(std::max<uint64_t>(count[q], 1));
      queue[q] = off;
      off = align_up(off + queue_cap[q] * sizeof(MpmcCell), kCacheLine);
    }
    counters = off = align_up(off, kCacheLine);
    off += run_counters_bytes(threads, cores);
    if (const uint64_t bytes = dump_region_bytes(cfg)) {
      dump = off = align_up(off, kCacheLine);
      off += bytes;
    }
    if (const uint64_t bytes = pipeline_gates_bytes(cfg)) {
      gates = off = align_up(off, kCacheLine);
      off += bytes;
    }
    if (inline_candidates != 0) {
      preds = off = align_up(off, kCacheLine);
      off += graph.size() * sizeof(DispatchPredicate);
    }
    if (b.num_mix_tasks() != 0) {
      mix = off = align_up(off, kCacheLine);
      off += 2 * graph.size() * sizeof(DispatchPayload);
    }
    image = off;
    // The trace records last, outside the image: the scheduler writes every task's record
    // (done, failed or skipped) before the run can finish, so they need no zeroing or copying
    // in — 128 bytes of memory traffic per task that profiling would otherwise pay.
    if (profiling) {
      trace = off = align_up(off, kCacheLine);
      off += graph.size() * sizeof(TaskTrace);
    }
    if (with_pmu) {
      pmu = off = align_up(off, kCacheLine);
      off += graph.size() * sizeof(PmuTrace);
    }
    if (profiling && timed) {
      price = off = align_up(off, kCacheLine);
      off += graph.size() * sizeof(KernelPrice);
    }
    // Reset by the scheduler at each MIX task's dispatch (~128 KB each, mostly tile buffers):
    // neither zeroed nor copied, and untouched pages cost no memory.
    if (b.num_mix_tasks() != 0) {
      mix_sync = off = align_up(off, kCacheLine);
      off += uint64_t(cfg.block_dim) * sizeof(MixSync);
    }
    total = off;
  }
};

// Writes the call block at image offset `off` of task `ht` (its part `part` when `is_mix`). A
// descriptor block gets the task's descriptors unless `desc_dev` already names them (a MIX task's
// later descriptor parts point at its first's); returns where they are (device address, 0: none).
uint64_t write_call(char *base, uint64_t dev, uint64_t off, const hbg::HostGraphBuilder &b,
                    const HostTask &ht, bool descriptor, uint64_t desc_dev, bool is_mix, uint32_t part,
                    const RunInputs &in) {
  auto *call = reinterpret_cast<pto_kernel_call *>(base + off);
  call->num_args = static_cast<uint16_t>(ht.num_args);
  call->mix_part = static_cast<uint8_t>(part);
  call->is_mix = is_mix ? 1 : 0;
  call->log = in.device_log;
  if (!descriptor) {
    if (ht.num_args) memcpy(call->args, b.args(ht), 8 * ht.num_args);
    return desc_dev;
  }
  // Descriptors at their device addresses: the image is copied to dev as a whole.
  const uint64_t call_dev = dev + off;
  if (desc_dev == 0) {
    ChipTensor *desc = descriptors_of(call);
    // As the tensormap runtime writes them for the same views (write_descriptor_calls).
    const TensorView *views = b.abi_tensors(ht);
    for (uint32_t k = 0; k < ht.num_abi_tensors; ++k) {
      const TensorView &v = views[k];
      fill_descriptor(&desc[k], v.buffer, v.buffer_bytes, v.offset, v.dtype, v.ndim, v.shape, v.strides);
    }
    desc_dev = call_dev + kDescTensorsOffset;
  }
  // Scalars follow the tensors (add_task checked the order).
  finish_descriptor_call(call, call_dev, desc_dev, ht.num_abi_tensors, b.args(ht) + ht.num_abi_tensors,
                         ht.num_args - ht.num_abi_tensors, is_mix ? mix_part_lane(part) : 0);
  return desc_dev;
}

void build_image(char *base, const hbg::HostGraphBuilder &b, const Layout &L, uint64_t dev,
                 const RunInputs &in) {
  const std::vector<HostTask> &graph = b.tasks();
  const auto block_dim = static_cast<uint32_t>(in.cfg.block_dim);
  auto *h = new (base) RuntimeHeader();
  h->num_tasks = static_cast<uint32_t>(graph.size());
  h->block_dim = block_dim;
  h->num_clusters = in.layout.clusters;
  h->aic_per_cluster = in.layout.aic_per_cluster;
  h->aiv_per_cluster = in.layout.aiv_per_cluster;
  h->short_task_ticks = in.short_task_ticks;
  h->pipeline_ticks = in.pipeline_ticks;
  h->aicpu_threads = static_cast<uint32_t>(in.cfg.aicpu_thread_num);
  h->tasks_addr = dev + L.tasks;
  h->successors_addr = dev + L.successors;
  h->handshakes_addr = in.handshakes;
  h->sched_addr = in.scheduler_bells;  // the device's: cores ring them after the run may be gone
  h->trace_addr = L.trace ? dev + L.trace : 0;
  h->pmu_addr = L.pmu ? dev + L.pmu : 0;
  h->price_addr = L.price ? dev + L.price : 0;
  h->counters_addr = dev + L.counters;
  h->log_addr = in.device_log;
  h->dump_addr = L.dump ? dev + L.dump : 0;
  h->gates_addr = L.gates ? dev + L.gates : 0;
  h->preds_addr = L.preds ? dev + L.preds : 0;
  auto *preds = L.preds ? reinterpret_cast<DispatchPredicate *>(base + L.preds) : nullptr;
  h->mix_addr = L.mix ? dev + L.mix : 0;
  h->mix_sync_addr = L.mix_sync ? dev + L.mix_sync : 0;
  auto *mix = L.mix ? reinterpret_cast<DispatchPayload *>(base + L.mix) : nullptr;
  h->sched = schedule_config_of(in.cfg);
  if (L.gates)
    graph::pipeline_gates_init(reinterpret_cast<graph::PipelineGate *>(base + L.gates),
                               graph::kPipelineGates);
  DumpRegion *dump = nullptr;
  DumpTask *dump_tasks_image = nullptr;  // the region's DumpTask array, in the image
  if (L.dump) {
    init_dump_region(base, L.dump, dev, in.cfg);
    dump = reinterpret_cast<DumpRegion *>(base + L.dump);
    dump_tasks_image = reinterpret_cast<DumpTask *>(base + (dump->tasks_addr - dev));
  }
  h->failed_task.store(-1, std::memory_order_relaxed);

  graph::FlatFanoutWriter fanout(reinterpret_cast<uint32_t *>(base + L.successors),
                                 static_cast<uint32_t>((L.calls - L.successors) / sizeof(uint32_t)));
  std::vector<uint64_t> ready[Layout::kQueues];
  for (size_t i = 0; i < graph.size(); ++i) {
    const HostTask &ht = graph[i];
    auto *t = new (base + L.tasks + i * sizeof(hbg::Task)) hbg::Task();
    t->payload.kernel_addr = ht.kernel_addr;
    t->payload.call_addr = dev + L.call_off[i];
    t->func_id = ht.func_id;
    t->core_type = static_cast<uint8_t>(ht.dummy ? static_cast<uint32_t>(graph::kPoolInline)
                                                 : static_cast<uint32_t>(ht.core_type));
    t->block_num = ht.block_num;
    t->flags = ht.sync_start ? graph::kTaskSyncStart : 0;
    t->timing_tag = graph::timing_tag_of(ht.timing_slot);
    t->pred_op = static_cast<uint8_t>(ht.predicate.op);
    t->pred_size = ht.predicate.elem_size;
    if (preds) preds[i] = ht.predicate;
    t->stream = ht.stream;
    t->target = ht.target;
    t->next_deferred = -1;
    const bool fits = fanout.append(b.successors(ht), ht.num_succs, &t->succ);
    PTO_CHECK(fits, "the successor array is sized by the graph's edge count");
    t->fanin_remaining.store(static_cast<int32_t>(ht.num_preds), std::memory_order_relaxed);
    t->core.store(-1, std::memory_order_relaxed);
    t->dump = dump ? dump_select(dump, dump_tasks_image, static_cast<int64_t>(i), ht.func_id) : -1;
    if (t->dump >= 0) {
      const hbg::DumpTensor *dt = b.dump_tensors(ht);
      for (uint32_t k = 0; k < ht.num_dump; ++k) {
        const TensorView &v = dt[k].view;
        dump_add_view(&dump_tasks_image[t->dump], dt[k].arg, v.addr(), v.dtype, v.ndim, v.shape, v.strides,
                      dt[k].when);
      }
    }
    if (ht.mix < 0) {
      write_call(base, dev, L.call_off[i], b, ht, ht.descriptors, 0, false, 0, in);
    } else {
      const hbg::HostMixParts &parts = b.mix_parts(ht);
      uint64_t desc_dev = 0;  // the descriptors, in the first descriptor part's block
      for (uint32_t p = 0; p < kMixParts; ++p) {
        const uint64_t off = p == 0 ? L.call_off[i] : L.mix_call_off[2 * static_cast<size_t>(ht.mix) + p - 1];
        const bool descriptor = (parts.descriptors >> p) & 1;
        desc_dev = write_call(base, dev, off, b, ht, descriptor, desc_dev, true, p, in);
        if (p == 0) continue;  // part 0 is the task's payload, set above
        mix[2 * i + p - 1] = DispatchPayload{parts.kernel_addr[p], dev + off};
      }
    }
    if (ht.num_preds == 0) {
      // A root's predicate reads the run's staged inputs: nothing can change them before launch.
      t->state.store(hbg::kReady, std::memory_order_relaxed);
      const uint32_t pool = graph::ready_pool(*t, [&ht] { return ht.predicate; });
      ready[Layout::queue_of(pool)].push_back(i);
    }
  }
  // No sync-start task: no gang pool, and the schedulers skip the gang pass at once; no MIX
  // task: no MIX pool, so feeding cores never looks for one.
  const bool gangs = std::any_of(graph.begin(), graph.end(), [](const HostTask &t) { return t.sync_start; });
  for (int q = 0; q < Layout::kQueues; ++q) {
    if (Layout::kPools[q] == graph::kPoolGang && !gangs) continue;
    if (Layout::kPools[q] == graph::kPoolMix && b.num_mix_tasks() == 0) continue;
    MpmcQueue::format(reinterpret_cast<MpmcCell *>(base + L.queue[q]), L.queue_cap[q], ready[q].data(),
                      ready[q].size());
    h->ready.attach(Layout::kPools[q], reinterpret_cast<MpmcCell *>(dev + L.queue[q]), L.queue_cap[q],
                    ready[q].size());
  }
}

const char *state_name(uint32_t s) {
  static const char *const kNames[] = {"pending", "ready", "running", "done", "failed", "skipped"};
  return s < 6 ? kNames[s] : "?";
}

// What each unfinished task waits for, from the task records read back after the drain.
std::string pending_report(const hbg::HostGraphBuilder &b, const hbg::Task *tasks, size_t limit) {
  const std::vector<HostTask> &graph = b.tasks();
  std::vector<uint32_t> pred_begin, preds;
  b.predecessors(&pred_begin, &preds);
  std::string out;
  size_t listed = 0, unfinished = 0;
  for (size_t i = 0; i < graph.size(); ++i) {
    const uint32_t st = tasks[i].state.load(std::memory_order_relaxed);
    if (st == hbg::kDone || st == hbg::kFailed || st == hbg::kSkipped) continue;
    ++unfinished;
    if (listed == limit) continue;
    ++listed;
    out += "\n  task " + std::to_string(i) + " (kernel " + std::to_string(graph[i].func_id) + ", " +
           pto_core_type_name(graph[i].core_type) + "): ";
    if (st == hbg::kRunning) {
      out += "dispatched to core " + std::to_string(tasks[i].core.load(std::memory_order_relaxed)) +
             " (running, or queued behind the kernel it runs) when the time ran out";
      continue;
    }
    std::string waits;
    for (uint32_t k = pred_begin[i]; k < pred_begin[i + 1]; ++k) {
      const uint32_t p = preds[k];
      const uint32_t ps = tasks[p].state.load(std::memory_order_relaxed);
      if (ps == hbg::kDone) continue;
      waits += (waits.empty() ? "" : ", ") + std::to_string(p) + " (" + state_name(ps) + ")";
    }
    out += waits.empty()
               ? std::string("ready, waiting for a free ") + pto_core_type_name(graph[i].core_type) + " core"
               : "waiting for task(s) " + waits;
  }
  if (unfinished > listed) out += "\n  ... and " + std::to_string(unfinished - listed) + " more";
  return std::to_string(unfinished) + " of " + std::to_string(graph.size()) + " tasks unfinished:" + out;
}

// The trace records plus the graph's edges (explicit, or RAW/WAW/WAR as the host orchestrator
// inferred them) as JSON for ChipWorker.last_trace.
// `all_finished`: every task reached a final state, so every record was written; otherwise
// the records of the others hold whatever the memory held before and are dropped.
void export_trace(DeviceRunner &runner, const RunInputs &in, const hbg::HostGraphBuilder &b, const char *dev,
                  const Layout &L, bool all_finished, uint64_t launch_ns, uint32_t threads,
                  pto_run_stats *stats) {
  const std::vector<HostTask> &graph = b.tasks();
  Device &d = runner.device();
  TraceRecords records(graph.size());
  if (!graph.empty()) d.copy_from_device(records.data(), dev + L.trace, graph.size() * sizeof(TaskTrace));
  PmuRecords pmu(L.pmu ? graph.size() : 0);
  if (!pmu.empty()) d.copy_from_device(pmu.data(), dev + L.pmu, pmu.size() * sizeof(PmuTrace));
  PriceRecords price(L.price ? graph.size() : 0);
  if (!price.empty()) d.copy_from_device(price.data(), dev + L.price, price.size() * sizeof(KernelPrice));
  if (!all_finished) {
    HostImage task_back(L.successors - L.tasks);
    d.copy_from_device(task_back.data(), dev + L.tasks, L.successors - L.tasks);
    const auto *tasks = reinterpret_cast<const hbg::Task *>(task_back.data());
    for (size_t i = 0; i < graph.size(); ++i) {
      const uint32_t state = tasks[i].state.load(std::memory_order_relaxed);
      if (state != hbg::kDone && state != hbg::kFailed && state != hbg::kSkipped) {
        records[i] = TaskTrace{};
        if (!pmu.empty()) pmu[i] = PmuTrace{};
        if (!price.empty()) price[i] = KernelPrice{};
      }
    }
  }
  std::vector<EdgeTrace> edges;
  edges.reserve(b.edges().size());
  for (size_t e = 0; e < b.edges().size(); ++e)
    edges.push_back(EdgeTrace{b.edges()[e].first, b.edges()[e].second, b.edge_kind(e), 0});
  TraceMeta meta;
  meta.runtime = "host_build_graph";
  meta.launch_ns = launch_ns;
  meta.clock = read_tick_clock(d, dev + L.counters, in.ns_per_tick);
  meta.aicpu_threads = threads;
  keep_trace(runner, meta, in, std::move(records), std::move(edges), std::move(pmu), std::move(price), stats);
}

}  // namespace

pto_status runtime_prepare(DeviceRunner &runner, RunInputs &in, pto_run_stats *stats, std::string *error,
                           LaunchedRun *run) {
  using OrchFn = void (*)(GraphBuilder &, const OrchArgs &);
  if (in.cfg.task_window_overflow == static_cast<uint32_t>(WindowOverflow::kEvictCompleted)) {
    *error =
        "task_window_overflow=evict_completed (1) is not supported by host_build_graph: it builds the whole "
        "graph before launch and keeps every task's record for the whole run, so nothing is ever evicted; "
        "allowed: stall (0, the default: the window does not bound the graph, max_tasks does) or error (2: "
        "a graph of more than task_window tasks fails)";
    return PTO_NOT_SUPPORTED;
  }
  // The entry: PTO_ORCHESTRATION's, else a device orchestration's (PTO_DEVICE_ORCHESTRATION, or
  // the reference API's), run through the host orchestrator (host/host_orchestrator.h).
  // set_device's warm-up run: core/warm_up_program.h, as a device orchestration.
  void *sym = nullptr, *device_sym = nullptr;
  pto_status rc = PTO_OK;
  if (in.warm_up) {
    device_sym = reinterpret_cast<void *>(&warm_up_program);
  } else {
    rc = runner.load_host_symbol(in.orchestration_path, PTO_ORCHESTRATION_ENTRY_SYMBOL, &sym, error);
  }
  if (rc != PTO_OK) {
    std::string device_error;
    if (runner.load_host_symbol(in.orchestration_path, PTO_DEVICE_ORCHESTRATION_ENTRY_SYMBOL, &device_sym,
                                &device_error) != PTO_OK) {
      *error += orchestration_entry_hint(in.orchestration_path, "host_build_graph");
      return rc;
    }
    error->clear();
  }

  struct Args final : OrchArgs {
    explicit Args(const RunInputs &r) : in(r) {}
    uint32_t num_tensors() const override { return static_cast<uint32_t>(in.tensors.size()); }
    uint32_t num_scalars() const override { return static_cast<uint32_t>(in.scalars.size()); }
    const Tensor &tensor(uint32_t i) const override { return i < in.tensors.size() ? in.tensors[i] : empty; }
    int64_t scalar(uint32_t i) const override { return i < in.scalars.size() ? in.scalars[i] : 0; }
    const void *host_data(uint32_t i) const override {
      return i < in.host_data.size() ? in.host_data[i] : nullptr;
    }
    const RunInputs &in;
    Tensor empty;
  } orch_args(in);

  // Shared with the callbacks below, which run when the device has finished.
  auto builder = std::make_shared<hbg::HostGraphBuilder>(runner, in);
  const uint64_t t_orch = platform_now_ns();
  if (device_sym) {
    hbg::HostOrchestrator(*builder, in).run(device_sym);
  } else {
    reinterpret_cast<OrchFn>(sym)(*builder, orch_args);
  }
  rc = builder->finish();
  stats->orchestration_ns = platform_now_ns() - t_orch;
  if (rc != PTO_OK) {
    *error = builder->message();
    return rc;
  }
  const auto block_dim = static_cast<uint32_t>(in.cfg.block_dim);
  const auto threads = static_cast<uint32_t>(in.cfg.aicpu_thread_num);
  auto L = std::make_shared<const Layout>(*builder, in.cfg, in.timed, threads, in.layout.cores());
  void *dev_ptr = in.allocations->allocate(L->total);
  if (!dev_ptr) {
    *error = "cannot allocate " + std::to_string(L->total) + " device bytes for the runtime";
    return PTO_OUT_OF_MEMORY;
  }
  const auto dev = reinterpret_cast<uint64_t>(dev_ptr);
  Device &device = runner.device();
  {
    HostImage img(L->image);
    build_image(img.data(), *builder, *L, dev, in);
    device.copy_to_device(dev_ptr, img.data(), L->image);
  }
  auto *h = static_cast<RuntimeHeader *>(dev_ptr);
  run->spec.runtime = dev_ptr;
  run->spec.aicpu_threads = threads;
  run->spec.scheduler_threads = threads;
  // The sim maps device memory into the host, so the report reads the task records in place;
  // a hardware backend would copy them back first.
  run->hooks.report = [builder, h] { return pending_report(*builder, hbg::tasks_of(h), 16); };
  run->hooks.abort = [h, threads] {
    h->abort.store(1, std::memory_order_release);
    for (uint32_t k = 0; k < threads; ++k) doorbell_ring(hbg::sched_of(h)[k].bell);
  };
  run->finish = [&runner, &in, builder, L, dev_ptr, threads, block_dim](uint64_t launch_ns, pto_run_stats *st,
                                                                        std::string *err) -> pto_status {
    const std::vector<HostTask> &g = builder->tasks();
    Device &d = runner.device();
    HostImage back(L->tasks);
    d.copy_from_device(back.data(), dev_ptr, L->tasks);
    const auto *hdr = reinterpret_cast<const RuntimeHeader *>(back.data());
    if (L->trace) {
      const bool all_finished = hdr->finished.load(std::memory_order_relaxed) == g.size();
      export_trace(runner, in, *builder, static_cast<const char *>(dev_ptr), *L, all_finished, launch_ns,
                   threads, st);
    }
    if (L->dump) {  // before the failure check: a failed run's dumps are the interesting ones
      const pto_status dumped = write_dump_files(runner, in, static_cast<const char *>(dev_ptr) + L->dump,
                                                 "host_build_graph", st, err);
      if (dumped != PTO_OK) return dumped;
    }
    const int32_t failed = hdr->failed_task.load(std::memory_order_relaxed);
    if (failed >= 0) {
      const HostTask &ft = g[static_cast<size_t>(failed)];
      uint64_t skipped = 0;
      HostImage task_back(L->successors - L->tasks);
      d.copy_from_device(task_back.data(), static_cast<char *>(dev_ptr) + L->tasks, L->successors - L->tasks);
      const auto *tasks = reinterpret_cast<const hbg::Task *>(task_back.data());
      for (size_t i = 0; i < g.size(); ++i)
        skipped += tasks[i].state.load(std::memory_order_relaxed) == hbg::kSkipped;
      const int32_t status = hdr->failed_status.load(std::memory_order_relaxed);
      *err = "task " + std::to_string(failed) + " (kernel " + std::to_string(ft.func_id) + ", " +
             pto_core_type_name(ft.core_type) + ")" + failed_task_text(status) + "; " +
             std::to_string(skipped) + " dependent task(s) were not run";
      return failed_task_code(status);
    }
    st->cores_used = in.layout.cores_per_cluster() * block_dim;
    st->aicpu_threads_used = threads;
    read_run_counters(d, static_cast<const char *>(dev_ptr) + L->counters, threads, in.layout, block_dim,
                      in.ns_per_tick, st);
    // Kernels run: the tasks less those finished without a core (counted by the schedulers).
    st->tasks_run = g.size() - st->tasks_retired_inline;
    // By type: the tasks with a kernel of that type (one a false predicate retired included).
    for (const HostTask &t : g) st->tasks_per_core_type[t.core_type] += !t.dummy;
    read_pipeline_stats(d, L->gates ? static_cast<const char *>(dev_ptr) + L->gates : nullptr, in.cfg, st);
    return PTO_OK;
  };
  return PTO_OK;
}

}  // namespace pto
