// src/hierarchical/thread_chip.cpp — THREAD mode chip over ChipWorker::start/poll.
#include "hierarchical/thread_chip.h"

#include "hierarchical/shm_bell.h"

namespace pto {
namespace l3 {

ThreadChip::ThreadChip(int index, int device_id, const std::string &platform, const std::string &runtime)
    : index_(index), device_id_(device_id) {
  worker_.init(platform, runtime);
  worker_.set_device(device_id);
}

std::string ThreadChip::describe() const {
  return "chip " + std::to_string(index_) + " (device " + std::to_string(device_id_) + ")";
}

void ThreadChip::start(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                       const ChipCallConfig &config) {
  worker_.start(callable, args, config);
}

void ThreadChip::abort() {
  if (!worker_.busy()) return;
  abort_result_ = ChipResult{};
  abort_result_.where = describe();
  abort_result_.code = PTO_ABORTED;
  abort_result_.message = "the run was aborted (its L3 run was cancelled)";
  try {
    worker_.abort();
  } catch (const Error &e) {
    abort_result_.code = e.code();
    abort_result_.message = e.what();
    if (e.code() == PTO_DEVICE_BROKEN) broken_why_ = e.what();
  }
  aborted_ = true;
}

bool ThreadChip::poll(ChipResult *out) {
  if (aborted_) {
    aborted_ = false;
    *out = abort_result_;
    return true;
  }
  out->where = describe();
  try {
    if (!worker_.poll(&out->stats)) return false;
    out->code = PTO_OK;
  } catch (const Error &e) {
    out->code = e.code();
    out->message = e.what();
    // A kernel that never returned leaves the context unusable: no further run goes here.
    if (e.code() == PTO_DEVICE_BROKEN) broken_why_ = e.what();
  }
  return true;
}

bool ThreadChip::broken(std::string *why) const {
  if (broken_why_.empty()) return false;
  if (why) *why = broken_why_;
  return true;
}

void ThreadChip::shutdown() {
  // Drain a run in flight (poll blocks only for a run that timed out), then stop the device.
  aborted_ = false;
  while (worker_.busy()) {
    ChipResult r;
    if (!poll(&r)) {
      ShmBell idle;
      idle.wait(idle.prepare(), 1000000, 0, 0);  // 1 ms nap, no spinning
    }
  }
  worker_.finalize();
}

}  // namespace l3
}  // namespace pto
