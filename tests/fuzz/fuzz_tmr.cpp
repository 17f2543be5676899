// tests/fuzz/fuzz_tmr.cpp — the tensormap runtime's submit validation, on the sim: random views
// (shapes, strides, offsets, dtypes, buffers, overlapping or out of bounds), access modes,
// kernels and core types, explicit producers, streams and scope nesting, under small rings.
//
// The bytes become a program (tmr_fuzz_program.h) that a device orchestration replays
// call by call. The oracle is the program's meaning, worked out on the host: if every call is
// valid, the run succeeds, runs every task, and leaves every buffer as running the tasks one by
// one in submission order would; otherwise the run fails with the code the first invalid call
// earns (BAD_TENSOR for a view, INVALID_ARGUMENT for an access mode, ...), and nothing crashes.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz/tmr_fuzz_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  pto_fuzz::TmrFuzzProgram p = pto_fuzz::make_tmr_fuzz_program(in);
  pto_fuzz::check_tmr_fuzz_run(p, false);
  return 0;
}
