// tests/common/tmr_program.h — random programs for the tensormap runtime and their sequential meaning.
//
// A program is an int64 array the device orchestration (kTmrProgramOrch) interprets:
//   [num_ops, op...] where an op is
//     kOpTask:  kind, core(0 AIC / 1 AIV / 2 MIX), n_tensors, then per tensor:
//               buffer, r0, c0, rows, cols, rstep, cstep, access
//     kOpScope: kind            — scope_begin + alloc a 32x32 temp (buffer index 3)
//     kOpEnd:   kind            — scope_end
//     kOpStream: kind, stream   — set_stream(stream)
// Buffers 0..2 are run tensors (32x32 int32), 3 is the current scope's temp, 4 is a
// constant run tensor read with NO_DEP. The kernel (kTmrMixKernel) folds every view it reads
// into an accumulator and then writes every view it writes; run_sequential does the same in
// submission order, so the final buffers must match exactly.
#ifndef PTO_TESTS_TMR_PROGRAM_H
#define PTO_TESTS_TMR_PROGRAM_H

#include <cstdint>
#include <vector>

#include "pto/chip_worker.h"

namespace pto_test {

constexpr int64_t kDim = 32;  // every buffer is kDim x kDim int32
enum : int64_t { kOpTask = 0, kOpScope = 1, kOpEnd = 2, kOpStream = 3 };
enum : int64_t { kAccIn = 0, kAccOut = 1, kAccInout = 2, kAccOutExisting = 3, kAccNoDep = 4 };

extern const char *const kTmrMixKernel;
extern const char *const kTmrProgramOrch;

struct TmrProgram {
  std::vector<int64_t> words;
  int64_t tasks = 0;
};

// `tasks` tasks; views are random windows with steps 1..2 in each dimension. `batchy`: what
// batch_deps batches and skips look-ups on — runs of one kernel, half the views taken from a
// few fixed ones (the same tile again, and tiles inside it), stream changes. `mix` false: no
// MIX tasks (host_build_graph runs none).
TmrProgram make_tmr_program(int64_t tasks, uint64_t seed, bool batchy = false, bool mix = true);
// The three 32x32 buffers after running the program one task at a time; `consts` is buffer 4.
std::vector<std::vector<int32_t>> run_sequential(const TmrProgram &p,
                                                 const std::vector<std::vector<int32_t>> &init,
                                                 const std::vector<int32_t> &consts);

// What one run of a program reads and writes: buffers 0..2 and the constants (buffer 4), filled
// from `seed`; args() views them and the program's words (so they must outlive the run).
struct TmrData {
  std::vector<std::vector<int32_t>> bufs;
  std::vector<int32_t> consts;
  std::vector<int64_t> words;

  TmrData(const TmrProgram &p, uint64_t seed);
  pto::ChipStorageTaskArgs args();
};

// The orchestration and kTmrMixKernel on AIC, AIV and MIX, compiled for `platform` and
// `runtime` (host_build_graph runs the device orchestration on the host; it has no MIX kernel).
pto::ChipCallable make_tmr_program_callable(const char *platform,
                                            const char *runtime = "tensormap_and_ringbuffer");

// Asserts (gtest) that `got` equals `expected` element by element, naming the first difference
// and `what` (the seed, the configuration).
void expect_same_buffers(const std::vector<std::vector<int32_t>> &got,
                         const std::vector<std::vector<int32_t>> &expected, const std::string &what);

}  // namespace pto_test
#endif  // PTO_TESTS_TMR_PROGRAM_H
