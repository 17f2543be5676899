// src/platform/sim/crash_report_sim.h — a kernel that crashes a simulated core says which it was.
//
// On the sim a kernel runs on a host thread of this process, so a null dereference in it kills
// the process (Python included). Before it dies, a SIGSEGV/SIGBUS/SIGFPE/SIGILL handler (on an
// alternate stack of each core thread) writes to stderr which kernel (by name, else its entry
// address), which task (CoreProgram::activity: the host's layer reads it from the block the
// cores serve) and which core (index and kind) was running, then chains to the handler installed before it
// (Python's faulthandler, say) or re-raises with the default action. Only async-signal-safe calls (write(2))
// and plain reads run in the handler.
#ifndef PTO_PLATFORM_SIM_CRASH_REPORT_SIM_H
#define PTO_PLATFORM_SIM_CRASH_REPORT_SIM_H

#include <cstdint>
#include <string>

#include "pto_platform/device.h"

namespace pto {

// Installs the handlers once per process (later calls do nothing).
void crash_report_install();

// Remembers the name of the kernel whose entry point is `entry` (from its binary's path);
// forget with `entry` = the same and `path` empty.
void crash_report_name_kernel(uint64_t entry, const std::string &path);

// What the handler reads about one core: kept by the device for as long as the core runs.
struct CrashReportCore {
  CoreActivity (*activity)(const void *block, uint32_t core) = nullptr;  // CoreProgram's; may be null
  const void *block = nullptr;                                           // CoreProgram::block
  uint32_t core = 0;
  const char *kind = "";  // CoreDesc::kind
};

// The core whose code runs on this OS thread from now on (null: none): the fiber pool calls it
// each time it resumes a fiber, whose alternate signal stack is its worker's.
void crash_report_set_current(const CrashReportCore *core);

// For the life of a core thread: its alternate signal stack and what the handler reads.
class CrashReportThread {
 public:
  explicit CrashReportThread(const CrashReportCore *core);
  ~CrashReportThread();
  CrashReportThread(const CrashReportThread &) = delete;
  CrashReportThread &operator=(const CrashReportThread &) = delete;

 private:
  void *stack_ = nullptr;
};

}  // namespace pto
#endif  // PTO_PLATFORM_SIM_CRASH_REPORT_SIM_H
