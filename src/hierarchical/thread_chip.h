// src/hierarchical/thread_chip.h — THREAD mode chip: one ChipWorker in this process.
#ifndef PTO_HIERARCHICAL_THREAD_CHIP_H
#define PTO_HIERARCHICAL_THREAD_CHIP_H

#include <string>

#include "hierarchical/chip_endpoint.h"

namespace pto {
namespace l3 {

class ThreadChip : public ChipEndpoint {
 public:
  // init + set_device now (throws pto::Error); the context persists across runs.
  ThreadChip(int index, int device_id, const std::string &platform, const std::string &runtime);
  std::string describe() const override;
  void start(const ChipCallable &callable, const ChipStorageTaskArgs &args,
             const ChipCallConfig &config) override;
  bool poll(ChipResult *out) override;
  bool available() override { return !worker_.busy() && !aborted_; }
  bool broken(std::string *why) const override;
  bool needs_polling() const override { return true; }
  void abort() override;
  void shutdown() override;

 private:
  int index_, device_id_;
  ChipWorker worker_;
  std::string broken_why_;  // set when a run left the device context unusable (DEVICE_BROKEN)
  bool aborted_ = false;    // abort() stopped the run; the next poll() reports it
  ChipResult abort_result_;
};

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_THREAD_CHIP_H
