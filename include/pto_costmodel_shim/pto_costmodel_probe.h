// include/pto_costmodel_shim/pto_costmodel_probe.h — prices one kernel call with PTO-ISA's cost model.
//
// A cost-model build (-D__COSTMODEL) of a tile kernel computes nothing: every CCE intrinsic is a
// stub that records its predicted cycles (pto/costmodel/a2a3/cce_costmodel/*.hpp), and tiles
// hold bare buffer offsets, no memory. What it records lives in thread_local state inside the
// kernel's own binary (PTO-ISA's headers define it inline), so the binary itself must export
// the calls that reset and read that state. This header defines them; include it once in the
// kernel's translation unit (e.g. `-include pto_costmodel_probe.h`), beside kernel_entry.
//
// Per invocation, on one thread and with no other kernel run on that thread in between:
//   pto_costmodel_begin();  kernel_entry(args);  pto_costmodel_end(&cycles, sizeof cycles);
// begin clears what PTO-ISA keeps per thread and never clears between kernels itself (its
// LAUNCH_KERNEL, pto/costmodel/perf_sim/launch.hpp:21-24, clears the recorders once per
// launch and the instruction trace never); end runs PTO-ISA's pipeline simulation
// (perf_sim::PerfSimReporter::Run, one core) over what the kernel recorded. The result is a
// pure function of the kernel and its arguments: two calls with the same arguments agree.
#ifndef PTO_COSTMODEL_PROBE_H
#define PTO_COSTMODEL_PROBE_H

#include <stddef.h>
#include <stdint.h>

// The pipes of one core, as the pipeline simulation names them (MTE2 is GM -> UB on an AIV
// core and GM -> L1 on an AIC core; an invocation runs on one of them).
enum PtoCostmodelPipe {
  PTO_COSTMODEL_PIPE_SCALAR = 0,
  PTO_COSTMODEL_PIPE_MTE2 = 1,
  PTO_COSTMODEL_PIPE_MTE1 = 2,
  PTO_COSTMODEL_PIPE_CUBE = 3,
  PTO_COSTMODEL_PIPE_FIXP = 4,
  PTO_COSTMODEL_PIPE_VEC = 5,
  PTO_COSTMODEL_PIPE_MTE3 = 6,
  PTO_COSTMODEL_PIPE_COUNT = 7,
};

// What the pipeline simulation predicts for one invocation.
struct PtoCostmodelCycles {
  uint64_t total_cycles;                                // first instruction to last, pipes overlapping
  uint64_t pipe_busy_cycles[PTO_COSTMODEL_PIPE_COUNT];  // sum of each pipe's busy intervals
  uint64_t instructions;                                // PTO instructions recorded
  uint64_t sync_events;                                 // set_flag / wait_flag / pipe_barrier recorded
  uint64_t stuck_events;  // entries the simulation could not finish (a wait nobody signals): > 0
                          // means total_cycles is a lower bound
  double cycles_per_us;   // the model's clock (MHz): total_cycles / cycles_per_us = microseconds
};

#ifdef __cplusplus
extern "C" {
#endif
void pto_costmodel_begin(void);
// 0 on success; -1 if `out_size` is not sizeof(PtoCostmodelCycles) (caller and kernel disagree).
int pto_costmodel_end(struct PtoCostmodelCycles *out, size_t out_size);
#ifdef __cplusplus
}
#endif

#if defined(__COSTMODEL) && defined(__cplusplus)

// perf_sim sorts with std::stable_sort, whose libstdc++ 12 helper uses get_temporary_buffer,
// deprecated in C++20; clang reports it inside stl_tempbuf.h, which these includes read first
// when this header is the first the kernel's translation unit includes (-include).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <pto/pto-inst.hpp>

#include <pto/costmodel/perf_sim/reporter.hpp>  // after pto-inst.hpp, which it assumes
#pragma GCC diagnostic pop

extern "C" void pto_costmodel_begin(void) {
  namespace ps = ::pto::perf_sim;
  ps::PtoRecorder::Clear();
  ps::SyncRecorder::Clear();
  ps::CvSyncRecorder::Clear();
  ps::TileDepTracker::Clear();
  ps::SetLaunchConfig(1, nullptr, nullptr);  // one core, no L2 model
  ps::current_subblock_id = 0;               // record every stage the kernel issues
  ps::PtoRecorder::SetActiveCore(0);
  ps::SyncRecorder::SetActiveCore(0);
  // The CCE-level trace prices each PTO instruction; it only grows unless reset.
  ::pto::mocker::ResetTrace();
}

extern "C" int pto_costmodel_end(struct PtoCostmodelCycles *out, size_t out_size) {
  namespace ps = ::pto::perf_sim;
  if (out == nullptr || out_size != sizeof(PtoCostmodelCycles)) return -1;
  ps::TileDepTracker::FinishCore();
  const ps::SimReport report = ps::PerfSimReporter().Run("kernel");
  *out = PtoCostmodelCycles{};
  out->total_cycles = report.timeline.total_cycles;
  for (const ps::PipeEvent &ev : report.timeline.events) {
    const uint64_t busy = ps::PerfSimReporter::EventBusyCycles(ev);
    const std::string &p = ev.pipe_label;  // queue names: perf_sim/pipe_model_queue_impl.inl:108-119
    int pipe = -1;
    if (p == "Scalar") pipe = PTO_COSTMODEL_PIPE_SCALAR;
    if (p == "MTE2_AIC" || p == "MTE2_AIV" || p == "MTE2_AIV_1") pipe = PTO_COSTMODEL_PIPE_MTE2;
    if (p == "MTE1") pipe = PTO_COSTMODEL_PIPE_MTE1;
    if (p == "CUBE") pipe = PTO_COSTMODEL_PIPE_CUBE;
    if (p == "FIXP") pipe = PTO_COSTMODEL_PIPE_FIXP;
    if (p == "VEC" || p == "VEC_1") pipe = PTO_COSTMODEL_PIPE_VEC;
    if (p == "MTE3" || p == "MTE3_1") pipe = PTO_COSTMODEL_PIPE_MTE3;
    if (pipe >= 0) out->pipe_busy_cycles[pipe] += busy;
    if (ev.stuck) ++out->stuck_events;
  }
  out->instructions = report.instr_count;
  out->sync_events = report.sync_count;
  out->cycles_per_us = static_cast<double>(::pto::mocker::evaluator::GetPredictFrequencyMHz());
  return 0;
}

#endif  // __COSTMODEL && __cplusplus
#endif  // PTO_COSTMODEL_PROBE_H
