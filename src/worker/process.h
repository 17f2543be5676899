// src/worker/process.h — runs a tool (compiler, probe) without a shell and captures what it prints.
#ifndef PTO_WORKER_PROCESS_H
#define PTO_WORKER_PROCESS_H

#include <stddef.h>

#include <string>
#include <vector>

namespace pto {
namespace worker {

struct ProcessResult {
  int spawn_errno = 0;  // non-zero: the program could not be started at all
  int wait_status = 0;  // as from waitpid
  std::string output;   // stdout and stderr interleaved, as a terminal would show them
  bool ok() const;
  std::string describe() const;  // "exit status 1", "could not be started: No such file ..."
};

// Runs argv[0] (looked up in PATH) with stdin from /dev/null. Safe to call from many threads.
ProcessResult run_process(const std::vector<std::string> &argv);

// A command line a user can paste into a shell to reproduce the call.
std::string shell_quoted(const std::vector<std::string> &argv);

// Whitespace-separated words: CXX="ccache g++" and PTO_KERNEL_CFLAGS are split this way.
std::vector<std::string> split_words(const std::string &text);

// `output` cut to `limit` bytes with a note of how much was left out: enough for a compiler's
// first errors, which are the ones that matter, without megabytes of template backtraces.
std::string trimmed_output(const std::string &output, size_t limit = 8 * 1024);

}  // namespace worker
}  // namespace pto
#endif  // PTO_WORKER_PROCESS_H
