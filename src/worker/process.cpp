// src/worker/process.cpp — runs a tool without a shell and captures what it prints (process.h).
#include "worker/process.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

extern char **environ;

namespace pto {
namespace worker {
namespace {

// Output read from a child beyond this is drained and dropped so a runaway compiler cannot
// exhaust memory.
constexpr size_t kMaxOutputCaptured = 1024 * 1024;

}  // namespace

bool ProcessResult::ok() const {
  return spawn_errno == 0 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

std::string ProcessResult::describe() const {
  if (spawn_errno != 0) return std::string("could not be started: ") + strerror(spawn_errno);
  if (WIFEXITED(wait_status)) return "exit status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
  return "wait status " + std::to_string(wait_status);
}

// No shell, so no argument is ever re-split or expanded. The pipe is close-on-exec so that a
// child spawned by another thread at the same moment does not inherit its write end and hold
// our read open past this child's exit.
ProcessResult run_process(const std::vector<std::string> &argv) {
  ProcessResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.spawn_errno = errno;
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);

  std::vector<char *> cargv;
  for (const std::string &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.spawn_errno = rc;
    return result;
  }

  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < kMaxOutputCaptured) result.output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, &result.wait_status, 0) < 0) {
    if (errno != EINTR) {
      result.spawn_errno = errno;
      break;
    }
  }
  return result;
}

std::string shell_quoted(const std::vector<std::string> &argv) {
  std::string out;
  for (const std::string &arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::vector<std::string> split_words(const std::string &text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string trimmed_output(const std::string &output, size_t limit) {
  if (output.size() <= limit) return output;
  return output.substr(0, limit) + "\n... [" + std::to_string(output.size() - limit) +
         " more bytes of compiler output omitted]\n";
}

}  // namespace worker
}  // namespace pto
