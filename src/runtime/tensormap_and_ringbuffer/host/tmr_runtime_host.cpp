// src/runtime/tensormap_and_ringbuffer/host/tmr_runtime_host.cpp — host part: lay out the rings, launch,
// report.
//
// Unlike host_build_graph, the host builds no graph: it loads the device orchestration, lays
// out the shared memory of tmr_layout.h (plus the heap ring), launches the AICPU program
// (T-1 schedulers + 1 orchestrator, or one thread doing both) and the cores, and waits.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "core/align.h"
#include "core/descriptor_call.h"
#include "core/mix_sync.h"
#include "host/device_runner.h"
#include "host/run_wait.h"
#include "host/schedule_host.h"
#include "host/tensor_dump_files.h"
#include "host/trace_json.h"
#include "pto_platform/doorbell.h"
#include "tmr_layout.h"

namespace pto {
namespace {

using tmr::Header;

struct Layout {
  uint64_t window, call_stride, slots, calls, deps, mix, kernels, tensors, scalars, counters,
      dump = 0, gates = 0,
      image,  // bytes the host builds and copies in; the kernel-call blocks and the dependency pool follow
      total;
  // Profiling records live in a block of their own, allocated but not copied from the host
  // image: their size follows trace_tasks (65536 by default), not the run, and zeroing and
  // copying ~10 MB per run made profiling cost more than recording. The orchestrator writes
  // each task's record whole at submit. Offsets are relative to that block.
  uint64_t trace = 0, edges = 0, pmu = 0, price = 0, prof_total = 0;
  uint32_t num_kernels, sched_threads, trace_capacity = 0, edge_capacity = 0;

  Layout(const RunInputs &in, uint32_t nkernels) {
    const pto_call_config &c = in.cfg;
    window = pow2_at_least(c.task_window);
    num_kernels = nkernels;
    sched_threads = c.aicpu_thread_num > 1 ? static_cast<uint32_t>(c.aicpu_thread_num) - 1 : 1;
    call_stride =
        align_up(offsetof(pto_kernel_call, args) + 8ull * std::max<uint32_t>(c.max_args_per_task, 1), 8);
    // A descriptor-ABI kernel's block: its 50 argument slots, contexts and a descriptor per
    // tensor (at most 32 by that ABI). Untouched pages of the call region cost no memory.
    const bool descriptors = std::any_of(in.kernels.begin(), in.kernels.end(), [](const auto &kv) {
      return kv.second.loaded.abi == static_cast<uint32_t>(KernelAbi::kDescriptor);
    });
    if (descriptors) {
      const uint32_t most = std::min<uint32_t>(c.max_args_per_task, PTO_ABI_MAX_TENSOR_ARGS);
      call_stride = align_up(std::max<uint64_t>(call_stride, descriptor_call_bytes(most)), kCacheLine);
    }
    uint64_t off = align_up(sizeof(Header), kCacheLine);
    auto take = [&off](uint64_t bytes) {
      const uint64_t at = off;
      off = align_up(off + bytes, kCacheLine);
      return at;
    };
    kernels = take(uint64_t{num_kernels} * sizeof(tmr::KernelSlot));
    tensors = take(in.tensors.size() * sizeof(TensorView));
    scalars = take(in.scalars.size() * sizeof(int64_t));
    counters = take(run_counters_bytes(sched_threads, in.layout.cores()));
    if (const uint64_t bytes = dump_region_bytes(c)) dump = take(bytes);
    if (const uint64_t bytes = pipeline_gates_bytes(c)) gates = take(bytes);
    image = off;
    // Written by the orchestrator before anything reads them (a task's slot and call block at
    // submit, a dependency entry before the CAS that links it): neither zeroed nor copied in,
    // which would cost ~1 MB of memory traffic per run at the default sizes.
    slots = take(window * sizeof(tmr::TaskSlot));
    calls = take(window * 3 * call_stride);  // three blocks per slot (MIX parts)
    deps = take(uint64_t{c.dep_pool_entries} * sizeof(tmr::DepEntry));
    // Reset by the scheduler at each MIX task's dispatch; untouched pages cost no memory.
    mix = take(uint64_t(c.block_dim) * sizeof(MixSync));
    total = off;
    if (c.enable_profiling || c.enable_pmu) {
      trace_capacity = c.trace_tasks;
      edge_capacity = 4 * c.trace_tasks;  // a task has four producers on average, at most
      off = 0;
      trace = take(uint64_t{trace_capacity} * sizeof(TaskTrace));
      edges = take(uint64_t{edge_capacity} * sizeof(EdgeTrace));
      if (c.enable_pmu) pmu = take(uint64_t{trace_capacity} * sizeof(PmuTrace));
      if (in.timed) price = take(uint64_t{trace_capacity} * sizeof(KernelPrice));
      prof_total = off;
    }
  }
};

// The ready queues' cells are kept from run to run (DeviceRunner::kept_block): 5 x window
// cells (kReadyPools), 80 KB at the default window, that the host would otherwise zero, lay out and copy in
// at every run. A run that ends normally leaves every queue empty (head == tail), and the next
// one attaches them where they stopped; after any other end they are laid out again.
constexpr const char *kReadyCellsKey = "tensormap_and_ringbuffer/ready queues";

DeviceRunner::KeptBlock *ready_cells(DeviceRunner &runner, uint64_t window) {
  DeviceRunner::KeptBlock *k =
      runner.kept_block(kReadyCellsKey, tmr::kNumReadyPools * window * sizeof(MpmcCell));
  if (k == nullptr || k->valid) return k;
  HostImage cells(k->bytes);
  for (int q = 0; q < tmr::kNumReadyPools; ++q) {
    MpmcQueue::format(reinterpret_cast<MpmcCell *>(cells.data()) + q * window, window, nullptr, 0);
    k->state[q] = 0;
  }
  runner.device().copy_to_device(k->ptr, cells.data(), k->bytes);
  k->valid = true;
  return k;
}

void build_image(char *base, const Layout &L, uint64_t dev, uint64_t heap, uint64_t orch_entry, uint64_t prof,
                 const DeviceRunner::KeptBlock &cells, const RunInputs &in) {
  auto *h = new (base) Header();
  h->window = static_cast<uint32_t>(L.window);
  h->block_dim = static_cast<uint32_t>(in.cfg.block_dim);
  h->num_clusters = in.layout.clusters;
  h->aic_per_cluster = in.layout.aic_per_cluster;
  h->aiv_per_cluster = in.layout.aiv_per_cluster;
  h->short_task_ticks = in.short_task_ticks;
  h->pipeline_ticks = in.pipeline_ticks;
  h->ready_hold_ticks = in.ready_hold_ticks;
  h->aicpu_threads = static_cast<uint32_t>(in.cfg.aicpu_thread_num);
  h->sched_threads = L.sched_threads;
  h->max_args = in.cfg.max_args_per_task;
  h->dep_capacity = in.cfg.dep_pool_entries;
  h->tensormap_entries = in.cfg.tensormap_entries;
  h->num_kernels = L.num_kernels;
  h->num_tensors = static_cast<uint32_t>(in.tensors.size());
  h->num_scalars = static_cast<uint32_t>(in.scalars.size());
  h->call_stride = L.call_stride;
  h->slots_addr = dev + L.slots;
  h->calls_addr = dev + L.calls;
  h->deps_addr = dev + L.deps;
  h->mix_addr = dev + L.mix;
  h->kernels_addr = dev + L.kernels;
  h->tensors_addr = dev + L.tensors;
  h->scalars_addr = dev + L.scalars;
  h->handshakes_addr = in.handshakes;
  h->sched_addr = in.scheduler_bells;  // the device's: cores ring them after the run may be gone
  h->heap_addr = heap;
  h->heap_bytes = in.cfg.heap_bytes;
  h->orch_entry = orch_entry;
  h->trace_addr = prof ? prof + L.trace : 0;
  h->edges_addr = prof ? prof + L.edges : 0;
  h->pmu_addr = prof && L.pmu ? prof + L.pmu : 0;
  h->price_addr = prof && L.price ? prof + L.price : 0;
  h->counters_addr = dev + L.counters;
  h->log_addr = in.device_log;
  h->dump_addr = L.dump ? dev + L.dump : 0;
  if (L.dump) init_dump_region(base, L.dump, dev, in.cfg);
  h->gates_addr = L.gates ? dev + L.gates : 0;
  h->sched = schedule_config_of(in.cfg);
  h->task_limit = in.cfg.task_window;
  if (L.gates)
    graph::pipeline_gates_init(reinterpret_cast<graph::PipelineGate *>(base + L.gates),
                               graph::kPipelineGates);
  h->trace_capacity = L.trace_capacity;
  h->edge_capacity = L.edge_capacity;
  h->failed_task.store(-1, std::memory_order_relaxed);
  h->orch_wake_at.store(INT64_MAX, std::memory_order_relaxed);
  auto *ks = reinterpret_cast<tmr::KernelSlot *>(base + L.kernels);
  for (const auto &kv : in.kernels) {
    ks[kv.first].entry = kv.second.loaded.entry_addr;
    ks[kv.first].signature = reinterpret_cast<uint64_t>(kv.second.loaded.signature);
    ks[kv.first].core_type = kv.second.core_type;
    ks[kv.first].abi = kv.second.loaded.abi;
  }
  auto *tv = reinterpret_cast<TensorView *>(base + L.tensors);
  for (size_t i = 0; i < in.tensors.size(); ++i) {
    const Tensor &t = in.tensors[i];
    TensorView &v = tv[i];
    v = TensorView{};
    v.buffer = t.addr;
    v.buffer_bytes = t.nbytes;
    v.dtype = t.dtype;
    v.ndim = t.ndim == 0 ? 1 : t.ndim;  // a 0-d array is a 1-element vector here
    int64_t stride = 1;
    for (uint32_t d = v.ndim; d-- > 0;) {
      v.shape[d] = t.ndim == 0 ? 1 : t.shape[d];
      v.strides[d] = stride;
      stride *= v.shape[d];
    }
  }
  if (!in.scalars.empty()) memcpy(base + L.scalars, in.scalars.data(), in.scalars.size() * sizeof(int64_t));
  for (int q = 0; q < tmr::kNumReadyPools; ++q)
    h->ready.attach_at(tmr::kReadyPools[q], static_cast<MpmcCell *>(cells.ptr) + q * L.window, L.window, cells.state[q]);
}

const char *state_name(uint32_t s) {
  static const char *const kNames[] = {"pending", "ready", "running", "done", "failed", "skipped"};
  return s < 6 ? kNames[s] : "?";
}

// What the run was doing when time ran out (read in place: the sim maps device memory).
std::string pending_report(const Header *h) {
  static const char *const kWaits[] = {"",          "task window",
                                       "heap ring", "dependency pool",
                                       "TensorMap", "tasks using a tensor it reads or writes itself"};
  // Acquire: the slots of the tasks counted in next_task were filled before it was published
  // (the orchestrator's seq_cst store); the report reads them while the run goes on.
  const int64_t next = h->next_task.load(std::memory_order_acquire);
  const int64_t fin = h->finished.load(std::memory_order_relaxed);
  const int64_t la = h->last_task_alive.load(std::memory_order_relaxed);
  std::string out =
      std::to_string(next - fin) + " of " + std::to_string(next) + " submitted tasks unfinished; ";
  if (h->orch_done.load(std::memory_order_relaxed)) {
    out += "the orchestration had finished";
  } else {
    const uint32_t w = h->waiting_for.load(std::memory_order_relaxed);
    out += w ? std::string("the orchestrator was waiting for the ") + kWaits[w < 6 ? w : 0]
             : std::string("the orchestration was still running");
  }
  size_t listed = 0;
  for (int64_t id = la; id < next && listed < 16; ++id) {
    const tmr::TaskSlot &t = slot_of(h, id);
    const uint32_t st = t.state.load(std::memory_order_relaxed);
    if (st == tmr::kDone || st == tmr::kFailed || st == tmr::kSkipped) continue;
    ++listed;
    out += "\n  task " + std::to_string(id) + " (kernel " + std::to_string(t.func_id) + ", " +
           pto_core_type_name(static_cast<pto_core_type>(t.core_type)) + "): ";
    if (st == tmr::kRunning) {
      out += "dispatched to core " + std::to_string(t.core.load(std::memory_order_relaxed)) +
             " (running, or queued behind the kernel it runs)";
    } else if (st == tmr::kReady) {
      out += std::string("ready, waiting for a free ") +
             pto_core_type_name(static_cast<pto_core_type>(t.core_type)) + " core";
    } else {
      out += std::string(state_name(st)) + ", waiting for " +
             std::to_string(t.fanin_remaining.load(std::memory_order_relaxed)) + " producer(s)";
    }
  }
  return out;
}

// The trace records and recorded edges as JSON for ChipWorker.last_trace.
void export_trace(DeviceRunner &runner, const RunInputs &in, const Layout &L, const char *dev,
                  const char *prof, uint64_t launch_ns, pto_run_stats *stats) {
  HostImage hdr_back(sizeof(Header));
  runner.device().copy_from_device(hdr_back.data(), dev, sizeof(Header));
  const auto *hdr = reinterpret_cast<const Header *>(hdr_back.data());
  const uint64_t tasks = static_cast<uint64_t>(hdr->next_task.load(std::memory_order_relaxed));
  const uint64_t kept = std::min<uint64_t>(tasks, L.trace_capacity);
  TraceRecords records(kept);
  if (kept) runner.device().copy_from_device(records.data(), prof + L.trace, kept * sizeof(TaskTrace));
  PmuRecords pmu(L.pmu ? kept : 0);
  if (!pmu.empty()) runner.device().copy_from_device(pmu.data(), prof + L.pmu, kept * sizeof(PmuTrace));
  PriceRecords price(L.price ? kept : 0);
  if (!price.empty())
    runner.device().copy_from_device(price.data(), prof + L.price, kept * sizeof(KernelPrice));
  const uint64_t nedges = hdr->edges_count.load(std::memory_order_relaxed);
  std::vector<EdgeTrace> edges(std::min<uint64_t>(nedges, L.edge_capacity));
  if (!edges.empty())
    runner.device().copy_from_device(edges.data(), prof + L.edges, edges.size() * sizeof(EdgeTrace));
  TraceMeta meta;
  meta.runtime = "tensormap_and_ringbuffer";
  meta.launch_ns = launch_ns;
  meta.clock = read_tick_clock(runner.device(), dev + L.counters, in.ns_per_tick);
  meta.aicpu_threads = static_cast<uint32_t>(in.cfg.aicpu_thread_num);
  meta.orchestrator_thread = static_cast<int32_t>(in.cfg.aicpu_thread_num) - 1;
  meta.dropped_tasks = tasks - kept;
  meta.dropped_edges = nedges - edges.size();
  keep_trace(runner, meta, in, std::move(records), std::move(edges), std::move(pmu), std::move(price), stats);
}

// Once the device programs returned: trace, statistics, and the run's failure if any.
pto_status finish_run(DeviceRunner &runner, const RunInputs &in, const Layout &L, void *dev_ptr,
                      void *prof_ptr, uint64_t launch_ns, pto_run_stats *stats, std::string *error) {
  Device &device = runner.device();
  if (prof_ptr)
    export_trace(runner, in, L, static_cast<const char *>(dev_ptr), static_cast<const char *>(prof_ptr),
                 launch_ns, stats);
  if (L.dump) {  // before the failure checks: a failed run's dumps are the interesting ones
    const pto_status rc = write_dump_files(runner, in, static_cast<const char *>(dev_ptr) + L.dump,
                                           "tensormap_and_ringbuffer", stats, error);
    if (rc != PTO_OK) return rc;
  }

  HostImage back(sizeof(Header));
  device.copy_from_device(back.data(), dev_ptr, sizeof(Header));
  const auto *hdr = reinterpret_cast<const Header *>(back.data());
  if (DeviceRunner::KeptBlock *cells =
          runner.kept_block(kReadyCellsKey, tmr::kNumReadyPools * L.window * sizeof(MpmcCell))) {
    bool empty = true;  // then the next run attaches the queues where they stopped
    for (int q = 0; q < tmr::kNumReadyPools; ++q)
      empty = hdr->ready.empty_at(tmr::kReadyPools[q], &cells->state[q]) && empty;
    cells->valid = empty;
  }
  stats->orchestration_ns = hdr->orch_ns.load(std::memory_order_relaxed);
  const uint64_t capacity[4] = {L.window, in.cfg.heap_bytes, in.cfg.dep_pool_entries,
                                in.cfg.tensormap_entries};
  for (int r = 0; r < 4; ++r) {  // indexed like tmr::Stall
    stats->ring_capacity[r] = capacity[r];
    stats->ring_high_water[r] = hdr->high_water[r].load(std::memory_order_relaxed);
    stats->ring_stalls[r] = hdr->stalls[r].load(std::memory_order_relaxed);
    stats->ring_stall_ns[r] = hdr->stall_ns[r].load(std::memory_order_relaxed);
  }
  read_pipeline_stats(device, L.gates ? static_cast<const char *>(dev_ptr) + L.gates : nullptr, in.cfg,
                      stats);
  stats->batch_flushes = hdr->batch_stats[0].load(std::memory_order_relaxed);
  stats->batch_local_hits = hdr->batch_stats[1].load(std::memory_order_relaxed);
  stats->batch_unfiled = hdr->batch_stats[2].load(std::memory_order_relaxed);
  uint64_t ran = 0;
  for (int t = 0; t < PTO_TASK_SHAPE_COUNT; ++t) ran += hdr->run_by_type[t].load(std::memory_order_relaxed);
  const int64_t failed = hdr->failed_task.load(std::memory_order_relaxed);
  if (failed >= 0) {
    const int64_t fin = hdr->finished.load(std::memory_order_relaxed);
    const int32_t status = hdr->failed_status.load(std::memory_order_relaxed);
    *error = "task " + std::to_string(failed) + " (kernel " +
             std::to_string(hdr->failed_func.load(std::memory_order_relaxed)) + ")" +
             failed_task_text(status) + "; " + std::to_string(fin - static_cast<int64_t>(ran) - 1) +
             " dependent task(s) were not run" +
             (hdr->orch_stopped.load(std::memory_order_relaxed)
                  ? " and the orchestration submitted nothing after it"
                  : "");
    return failed_task_code(status);
  }
  const auto orch_status = static_cast<pto_status>(hdr->orch_status.load(std::memory_order_relaxed));
  if (orch_status != PTO_OK) {
    *error = hdr->orch_message;
    return orch_status;
  }
  stats->tasks_run = ran;
  for (int t = 0; t < PTO_TASK_SHAPE_COUNT; ++t)
    stats->tasks_per_core_type[t] = hdr->run_by_type[t].load(std::memory_order_relaxed);
  stats->cores_used = in.layout.cores_per_cluster() * static_cast<uint32_t>(in.cfg.block_dim);
  stats->aicpu_threads_used = static_cast<uint32_t>(in.cfg.aicpu_thread_num);
  read_run_counters(device, static_cast<const char *>(dev_ptr) + L.counters, L.sched_threads, in.layout,
                    static_cast<uint32_t>(in.cfg.block_dim), in.ns_per_tick, stats);
  if (in.cfg.aicpu_thread_num == 1) {  // the one thread also orchestrated: that is not scheduling
    stats->scheduling_ns -= std::min(stats->scheduling_ns, stats->orchestration_ns);
  }
  return PTO_OK;
}

}  // namespace

pto_status runtime_prepare(DeviceRunner &runner, RunInputs &in, pto_run_stats *stats, std::string *error,
                           LaunchedRun *run) {
  (void)stats;  // everything is known only once the device has finished
  // The rings' sizes are in range: DeviceRunner::check_config checked every field.
  Device &device = runner.device();
  uint64_t orch_entry = 0;  // 0: set_device's warm-up run (the orchestrator runs warm_up_program)
  if (!in.warm_up) {
    const pto_status rc =
        device.load_symbol(in.orchestration_path, PTO_DEVICE_ORCHESTRATION_ENTRY_SYMBOL, &orch_entry, error);
    if (rc != PTO_OK) {
      *error += orchestration_entry_hint(in.orchestration_path, "tensormap_and_ringbuffer");
      return rc;
    }
  }
  const uint32_t max_func = in.kernels.empty() ? 0 : in.kernels.rbegin()->first;
  if (max_func >= 65536) {
    *error = "func_id " + std::to_string(max_func) + " is too large for this runtime (use ids below 65536)";
    return PTO_INVALID_ARGUMENT;
  }
  auto Lp = std::make_shared<const Layout>(in, in.kernels.empty() ? 0 : max_func + 1);
  const Layout &L = *Lp;
  void *dev_ptr = in.allocations->allocate(L.total);
  void *heap_ptr = in.allocations->allocate(in.cfg.heap_bytes);
  void *prof_ptr = L.prof_total ? in.allocations->allocate(L.prof_total) : nullptr;
  if (!dev_ptr || !heap_ptr || (L.prof_total && !prof_ptr)) {
    *error = "cannot allocate " + std::to_string(L.total) + " + " + std::to_string(in.cfg.heap_bytes) +
             " device bytes for the runtime and its heap ring (lower task_window or heap_bytes)";
    return PTO_OUT_OF_MEMORY;
  }
  DeviceRunner::KeptBlock *cells = ready_cells(runner, L.window);
  if (cells == nullptr) {
    *error = "cannot allocate " + std::to_string(tmr::kNumReadyPools * L.window * sizeof(MpmcCell)) +
             " device bytes for the ready queues (lower task_window)";
    return PTO_OUT_OF_MEMORY;
  }
  {
    HostImage img(L.image);
    build_image(img.data(), L, reinterpret_cast<uint64_t>(dev_ptr), reinterpret_cast<uint64_t>(heap_ptr),
                orch_entry, reinterpret_cast<uint64_t>(prof_ptr), *cells, in);
    device.copy_to_device(dev_ptr, img.data(), L.image);
  }
  cells->valid = false;  // in use: only a run that ends normally gives them back as they are
  auto *h = static_cast<Header *>(dev_ptr);
  run->spec.runtime = dev_ptr;
  run->spec.aicpu_threads = static_cast<uint32_t>(in.cfg.aicpu_thread_num);
  run->spec.scheduler_threads = L.sched_threads;
  run->hooks.report = [h] { return pending_report(h); };
  run->hooks.abort = [h, Lp] {
    h->abort.store(1, std::memory_order_release);
    for (uint32_t k = 0; k < Lp->sched_threads; ++k) doorbell_ring(tmr::sched_of(h)[k].bell);
    doorbell_ring(h->orch_bell);
  };
  run->finish = [&runner, &in, Lp, dev_ptr, prof_ptr](uint64_t launch_ns, pto_run_stats *st,
                                                      std::string *err) {
    return finish_run(runner, in, *Lp, dev_ptr, prof_ptr, launch_ns, st, err);
  };
  return PTO_OK;
}

}  // namespace pto
