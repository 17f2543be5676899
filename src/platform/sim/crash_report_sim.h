// src/platform/sim/crash_report_sim.h — a kernel that crashes a simulated core says which it was.
//
// On the sim a kernel runs on a host thread of this process, so a null dereference in it kills
// the process (Python included). Before it dies, a SIGSEGV/SIGBUS/SIGFPE/SIGILL handler (on an
// alternate stack of each core thread) writes to stderr which kernel (by name, else its entry
// address), which task (the id the scheduler dispatched, Handshake::task_id) and which core
// (index and type) was running, then chains to the handler installed before it (Python's
// faulthandler, say) or re-raises with the default action. Only async-signal-safe calls
// (write(2)) and plain reads run in the handler.
#ifndef PTO_PLATFORM_SIM_CRASH_REPORT_SIM_H
#define PTO_PLATFORM_SIM_CRASH_REPORT_SIM_H

#include <cstdint>
#include <string>

#include "core/handshake.h"

namespace pto {

// Installs the handlers once per process (later calls do nothing).
void crash_report_install();

// Remembers the name of the kernel whose entry point is `entry` (from its binary's path);
// forget with `entry` = the same and `path` empty.
void crash_report_name_kernel(uint64_t entry, const std::string &path);

// The core whose code runs on this OS thread from now on (null: none): the fiber pool calls it
// each time it resumes a fiber, whose alternate signal stack is its worker's.
void crash_report_set_current(const Handshake *hs, uint32_t core);

// For the life of a core thread: its alternate signal stack and what the handler reads.
class CrashReportCore {
 public:
  CrashReportCore(const Handshake *hs, uint32_t core);
  ~CrashReportCore();
  CrashReportCore(const CrashReportCore &) = delete;
  CrashReportCore &operator=(const CrashReportCore &) = delete;

 private:
  void *stack_ = nullptr;
};

}  // namespace pto
#endif  // PTO_PLATFORM_SIM_CRASH_REPORT_SIM_H
