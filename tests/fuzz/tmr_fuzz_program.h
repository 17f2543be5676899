// tests/fuzz/tmr_fuzz_program.h — fuzz_tmr's programs: made from fuzz bytes, replayed by a device
// orchestration, and their meaning worked out on the host.
//
// A program is an int64 array (run tensor 0) the orchestration kTmrFuzzOrch replays:
//   [num_ops, op...], op one of
//     kTask:   0, func_id, core_type, n_tensors, n_after, after[2], then per tensor kViewWords:
//              buffer, bytes_delta, offset, dtype, ndim, access, shape[8], strides[8]
//     kScope:  1                  scope_begin, then alloc_tensor(I32, 32, 32), zeroed
//     kEnd:    2                  scope_end
//     kStream: 3, stream, target  set_stream
// Buffers: 0..2 the run tensors (4096 bytes each, INOUT), 3 the constants (4096 bytes, read
// only), 4 + k the k-th open scope's temp; anything else a buffer the runtime never handed
// out. bytes_delta is added to the buffer's size (non-zero: a made-up buffer, or for a temp a
// smaller one). The values are the fuzzer's, unchecked: the orchestration passes them on as
// they are, so the runtime's validation meets them whole. Only representable enum values are
// made (dtype 0..15, core type 0..3: an out-of-range enum is already undefined behaviour in the
// caller); Access, which has a fixed underlying type, takes any value.
//
// Task arguments: task id, n, then per tensor the view and five scalars of its geometry
// (ndim | esize << 8 | access << 16; shape, then strides, 16 bits per dimension in two words
// each), which the
// kernel kTmrFuzzKernel walks: it folds the bytes of every view it reads (INPUT, INOUT, NO_DEP)
// into an accumulator in index order, then writes every byte of every view it writes
// (OUTPUT, INOUT, OUTPUT_EXISTING) from it. tmr_fuzz_meaning does the same in submission order.
#ifndef PTO_TESTS_FUZZ_TMR_FUZZ_PROGRAM_H
#define PTO_TESTS_FUZZ_TMR_FUZZ_PROGRAM_H

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pto/chip_worker.h"
#include "pto/error.h"
#include "pto/schedule_config.h"

namespace pto_fuzz {

extern const char *const kTmrFuzzOrch;
extern const char *const kTmrFuzzKernel;

constexpr int64_t kBufBytes = 4096;  // every run tensor, the constants and each temp
constexpr int kViewWords = 22;
enum : int64_t { kTask = 0, kScope = 1, kEnd = 2, kStream = 3 };

struct TmrFuzzProgram {
  std::vector<int64_t> words;
  std::vector<std::vector<uint8_t>> buffers;  // run tensors 0..2: the run's, then its results
  std::vector<uint8_t> constants;
  pto::ChipCallConfig config;

  pto::ChipStorageTaskArgs args();  // views words, buffers and constants: keep them alive
  std::string describe() const;     // the configuration and the program, one op a line
};

struct TmrFuzzOutcome {
  pto_status code = PTO_OK;                   // what the run must end with
  std::string why;                            // for a failure: which call earns it
  uint64_t tasks = 0;                         // tasks submitted (run, when the code is OK)
  std::vector<std::vector<uint8_t>> buffers;  // run tensors 0..2 after the run, when OK
};

TmrFuzzProgram make_tmr_fuzz_program(FuzzedDataProvider &in);
// The outcome the program's config and calls give. A RING_CAPACITY of the dependency pool
// (fewer entries than a task's live producers) depends on timing: the programs' own configs
// make it impossible (pool >= window); fuzz_config, which sets any pool, allows it.
TmrFuzzOutcome tmr_fuzz_meaning(const TmrFuzzProgram &p);

// Runs `p` on tmr_fuzz_worker() and checks the outcome against tmr_fuzz_meaning (aborting with
// the program written out if they differ). `pool_may_run_out`: a RING_CAPACITY of the
// dependency pool is an allowed outcome too, at any task before the first invalid call.
void check_tmr_fuzz_run(TmrFuzzProgram &p, bool pool_may_run_out);

// The orchestration and kernel compiled for a2a3sim (once per process), and a worker running
// the tensormap runtime there (device 0). tmr_fuzz_program.cpp's LLVMFuzzerInitialize makes
// both before the first input, so a target linking this file must not define its own.
pto::ChipCallable &tmr_fuzz_callable();
pto::ChipWorker &tmr_fuzz_worker();

}  // namespace pto_fuzz
#endif  // PTO_TESTS_FUZZ_TMR_FUZZ_PROGRAM_H
