// src/hierarchical/chip_mailbox.h — PROCESS mode: the shared-memory mailbox of each chip process.
//
// One control block, mapped MAP_SHARED | MAP_ANONYMOUS before the zygote is forked, holds the
// scheduler's bell and one mailbox per chip. Protocol (docs/guide/l3.md, "Mailbox"):
//   parent: write payload + op, then cmd.ring()             (cmd.seq is the command number)
//   child:  wait cmd.seq != seen; run; write result; done_seq = seq (release); parent_bell.ring()
//   zygote: after reaping a chip process: wait_status, then dead_gen = its generation (release);
//           parent_bell.ring()
// A chip process serves one generation; the parent bumps `generation` before asking the zygote
// for a replacement, so a late word from a dead process is never mistaken for the new one.
#ifndef PTO_HIERARCHICAL_CHIP_MAILBOX_H
#define PTO_HIERARCHICAL_CHIP_MAILBOX_H

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "hierarchical/shm_bell.h"
#include "pto/chip_worker.h"

namespace pto {
namespace l3 {

constexpr uint32_t kMailboxPayloadBytes = 64 * 1024;
constexpr uint32_t kMailboxMessageBytes = 4096;

enum MailboxOp : uint32_t { kOpRun = 1, kOpExit = 2 };

// RunStats as plain data (its per-core list has a fixed capacity here).
struct MailboxStats {
  static constexpr uint32_t kMaxCores = PTO_STATS_MAX_CORES;  // RunStats comes from pto_run_stats
  uint64_t tasks_run, aic_tasks, aiv_tasks, mix_tasks;
  double orchestration_us, device_us, total_us, effective_us, scheduling_us;
  uint32_t cores_used, aicpu_threads_used;
  RunStats::Ring window, heap, dep_pool, tensormap;
  uint32_t num_cores;
  RunStats::Core cores[kMaxCores];
  void store(const RunStats &s);
  RunStats load() const;
};
static_assert(std::is_trivially_copyable<RunStats::Core>::value,
              "RunStats::Core travels through shared memory");
static_assert(std::is_trivially_copyable<ChipCallConfig>::value,
              "ChipCallConfig travels through shared memory");

struct alignas(64) ChipMailbox {
  // --- parent (scheduler) writes ---
  ShmBell cmd;      // seq = number of commands posted; the child parks on it
  uint32_t op = 0;  // MailboxOp of the latest command (written before cmd.ring)
  uint32_t payload_bytes = 0;
  std::atomic<uint32_t> generation{0};  // generation the parent expects to serve it
  // cmd.seq of a run command the parent wants stopped (its L3 run was cancelled); the child
  // checks it between wait slices and aborts that run (result PTO_ABORTED).
  std::atomic<uint32_t> abort_seq{0};
  // --- child writes ---
  alignas(64) std::atomic<uint32_t> done_seq{0};  // cmd.seq of the last finished command (release)
  std::atomic<uint32_t> ready_gen{0};             // generation that finished init (release)
  std::atomic<uint32_t> failed_gen{0};            // generation whose init failed; message holds why
  int32_t result_code = 0;                        // pto_status of the last command
  MailboxStats stats;
  char message[kMailboxMessageBytes] = {};
  // --- zygote writes ---
  alignas(64) std::atomic<int32_t> pid{0};  // current chip process
  std::atomic<uint32_t> dead_gen{0};        // generation whose process was reaped (release)
  int32_t wait_status = 0;                  // its waitpid status (written before dead_gen)
  // --- parent writes (command body) ---
  alignas(64) unsigned char payload[kMailboxPayloadBytes];
};

struct ControlBlock {
  alignas(64) ShmBell parent_bell;  // rung by chip processes and the zygote; the scheduler parks on it
  uint32_t num_chips = 0;
  ChipMailbox chips[1];  // really num_chips
  static size_t bytes_for(uint32_t n) {
    return sizeof(ControlBlock) + (n > 0 ? n - 1 : 0) * sizeof(ChipMailbox);
  }
};

// Writes a run command's body into mb.payload; throws INVALID_ARGUMENT if it does not fit.
void encode_run(ChipMailbox &mb, const ChipCallable &callable, const ChipStorageTaskArgs &args,
                const ChipCallConfig &config);
// Reads it back (in the chip process).
void decode_run(const ChipMailbox &mb, ChipCallable *callable, ChipStorageTaskArgs *args,
                ChipCallConfig *config);

}  // namespace l3
}  // namespace pto
#endif  // PTO_HIERARCHICAL_CHIP_MAILBOX_H
