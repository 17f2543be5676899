// src/hierarchical/chip_process.h — PROCESS mode: chip processes forked by a zygote, driven by mailbox.
//
// Forking from a multi-threaded parent is unsafe (only the forking thread survives, holding
// whatever locks the others held). So the Worker forks exactly once, in its constructor before
// any of its threads exist: a single-threaded zygote. The zygote forks every chip process (the
// first ones and every replacement), reaps them, and reports each death through the mailbox of
// the chip (dead_gen) and the scheduler's bell. Chip processes die with the zygote
// (PR_SET_PDEATHSIG, the zygote being single-threaded), and the zygote exits when the parent's
// request pipe reaches EOF (the parent died or closed the worker) or its parent pid changes.
#ifndef PTO_HIERARCHICAL_CHIP_PROCESS_H
#define PTO_HIERARCHICAL_CHIP_PROCESS_H

#include <sys/types.h>

#include <mutex>
#include <string>
#include <vector>

#include "hierarchical/chip_endpoint.h"
#include "hierarchical/chip_mailbox.h"

namespace pto {
namespace l3 {

// The shared control block, the zygote and its request pipe.
class ProcessChipSet {
 public:
  // Maps the control block and forks the zygote. Call before this Worker starts any thread.
  ProcessChipSet(const std::vector<int> &device_ids, const std::string &platform, const std::string &runtime);
  ~ProcessChipSet();
  ControlBlock *control() const { return cb_; }
  ShmBell *bell() const { return &cb_->parent_bell; }
  // Asks the zygote for a (new) process for chip `chip` serving generation `gen`.
  void spawn(int chip, uint32_t gen);
  // False once the zygote is gone (then every chip process is gone too).
  bool zygote_alive();
  // Stops every chip process and the zygote; waits for them.
  void shutdown();

 private:
  ControlBlock *cb_ = nullptr;
  size_t cb_bytes_ = 0;
  pid_t zygote_ = -1;
  int req_fd_ = -1;
  bool zygote_gone_ = false;
  uint64_t last_check_ns_ = 0;  // scheduler thread only
  std::mutex req_mu_;           // request writes: constructor, scheduler (respawn), shutdown
};

class ProcessChip : public ChipEndpoint {
 public:
  ProcessChip(ProcessChipSet *set, int index, int device_id, uint32_t spawn_timeout_ms);
  std::string describe() const override;
  void start(const ChipCallable &callable, const ChipStorageTaskArgs &args,
             const ChipCallConfig &config) override;
  bool poll(ChipResult *out) override;
  bool available() override;
  bool broken(std::string *why) const override;
  bool needs_polling() const override { return false; }
  void abort() override;
  void shutdown() override {}  // the set stops every process at once
  int pid() const;             // 0 between a (re)spawn request and the zygote's fork
  // The current process's pid once it exists, waiting at most the spawn time limit for it
  // (RUN_TIMEOUT otherwise): never 0, which kill() would take for the caller's process group.
  int wait_pid() const;

 private:
  enum class State { kStarting, kIdle, kRunning, kBroken };
  void respawn();
  std::string death_text() const;
  ProcessChipSet *set_;
  ChipMailbox &mb_;
  int index_, device_id_;
  uint32_t spawn_timeout_ms_;
  State state_ = State::kStarting;
  uint32_t gen_ = 1;
  uint32_t expected_seq_ = 0;
  uint64_t start_deadline_ns_ = 0;
  uint32_t restarts_in_a_row_ = 0;
  std::string broken_why_;
};

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_CHIP_PROCESS_H
