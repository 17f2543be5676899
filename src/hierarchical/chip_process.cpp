// src/hierarchical/chip_process.cpp — zygote, chip-process main loop, and the parent's endpoint.
#include "hierarchical/chip_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <new>
#include <thread>

namespace pto {
namespace l3 {
namespace {

struct SpawnRequest {
  int32_t op;  // 1 = spawn, 2 = exit
  int32_t chip;
  uint32_t gen;
};

constexpr int64_t kAbortCheckMs = 20;  // how often a chip process looks at abort_seq

void copy_message(ChipMailbox &mb, const std::string &s) {
  const size_t n = std::min(s.size(), sizeof mb.message - 1);
  std::memcpy(mb.message, s.data(), n);
  mb.message[n] = '\0';
}

// The chip process: one ChipWorker serving run commands until told to exit. Never returns.
[[noreturn]] void chip_main(ControlBlock *cb, int chip, uint32_t gen, int device_id,
                            const std::string &platform, const std::string &runtime, pid_t zygote) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != zygote) _exit(1);  // the zygote died before prctl took effect
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);  // the zygote blocks SIGCHLD; kernels get a clean mask
  // Handlers inherited from the parent (Python's faulthandler, SIGINT) would run the parent's
  // code in this process; a crashing kernel must simply end it with its signal.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM}) signal(sig, SIG_DFL);
  // Ctrl-C in a terminal signals the whole process group: the parent turns it into a cancel
  // (RunHandle::cancel aborts this process's run), so the chip process must not die of it.
  signal(SIGINT, SIG_IGN);
  ChipMailbox &mb = cb->chips[chip];
  uint32_t seen = mb.cmd.prepare();  // commands before this one belonged to a dead process
  ChipWorker worker;
  try {
    worker.init(platform, runtime);
    worker.set_device(device_id);
  } catch (const Error &e) {
    mb.result_code = e.code();
    copy_message(mb, e.what());
    mb.failed_gen.store(gen, std::memory_order_release);
    cb->parent_bell.ring();
    _exit(3);
  }
  mb.ready_gen.store(gen, std::memory_order_release);
  cb->parent_bell.ring();
  for (;;) {
    if (mb.cmd.prepare() == seen) {
      // Timed park: check now and then that the zygote is still our parent.
      mb.cmd.wait(seen, 200000000ull);
      if (getppid() != zygote) _exit(1);
      continue;
    }
    const uint32_t seq = mb.cmd.prepare();
    seen = seq;
    if (mb.op == kOpExit) {
      worker.finalize();
      _exit(0);
    }
    try {
      ChipCallable callable;
      ChipStorageTaskArgs args;
      ChipCallConfig config;
      decode_run(mb, &callable, &args, &config);
      // start + wait in slices instead of run(): the parent may ask to abort (abort_seq).
      worker.start(callable, args, config);
      bool aborted = false;
      while (!worker.wait(kAbortCheckMs)) {
        if (mb.abort_seq.load(std::memory_order_acquire) == seq) {
          worker.abort();  // throws DEVICE_BROKEN if a kernel does not return
          aborted = true;
          break;
        }
      }
      if (aborted) {
        mb.result_code = PTO_ABORTED;
        copy_message(mb, "the run was aborted (its L3 run was cancelled)");
      } else {
        RunStats stats;
        worker.poll(&stats);
        mb.stats.store(stats);
        mb.result_code = PTO_OK;
        mb.message[0] = '\0';
      }
    } catch (const Error &e) {
      mb.result_code = e.code();
      copy_message(mb, e.what());
    } catch (const std::exception &e) {
      mb.result_code = PTO_INTERNAL;
      copy_message(mb, e.what());
    }
    mb.done_seq.store(seq, std::memory_order_release);
    cb->parent_bell.ring();
  }
}

void kill_and_reap(std::map<pid_t, std::pair<int, uint32_t>> &kids) {
  for (const auto &k : kids) kill(k.first, SIGKILL);
  for (const auto &k : kids) waitpid(k.first, nullptr, 0);
  kids.clear();
}

// The zygote: single-threaded; forks chip processes on request, reaps them, reports deaths.
[[noreturn]] void zygote_main(ControlBlock *cb, int req_fd, pid_t parent, const std::vector<int> &device_ids,
                              const std::string &platform, const std::string &runtime) {
  signal(SIGINT, SIG_IGN);  // Ctrl-C is the parent's to handle (see chip_main)
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  const int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  std::map<pid_t, std::pair<int, uint32_t>> kids;  // pid -> (chip, generation)
  const pid_t self = getpid();
  for (;;) {
    pollfd fds[2] = {{req_fd, POLLIN, 0}, {sfd, POLLIN, 0}};
    const int n = poll(fds, sfd >= 0 ? 2 : 1, sfd >= 0 ? 500 : 20);
    if (getppid() != parent) {
      kill_and_reap(kids);
      _exit(0);
    }
    if (n < 0 && errno != EINTR) {
      kill_and_reap(kids);
      _exit(2);
    }
    if (sfd >= 0 && (fds[1].revents & POLLIN)) {
      signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) > 0) {
      }
    }
    // Reap whatever died (also when signalfd is unavailable: the short poll timeout).
    int status = 0;
    pid_t dead;
    while ((dead = waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = kids.find(dead);
      if (it == kids.end()) continue;
      ChipMailbox &mb = cb->chips[it->second.first];
      mb.wait_status = status;
      mb.dead_gen.store(it->second.second, std::memory_order_release);
      kids.erase(it);
      cb->parent_bell.ring();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      SpawnRequest req{};
      const ssize_t got = read(req_fd, &req, sizeof req);
      if (got <= 0 || req.op == 2) {  // EOF: the parent is gone or closed the worker
        kill_and_reap(kids);
        _exit(0);
      }
      if (got != sizeof req || req.chip < 0 || static_cast<uint32_t>(req.chip) >= cb->num_chips) continue;
      const pid_t pid = fork();
      if (pid == 0) {
        close(req_fd);
        if (sfd >= 0) close(sfd);
        chip_main(cb, req.chip, req.gen, device_ids[static_cast<size_t>(req.chip)], platform, runtime, self);
      }
      ChipMailbox &mb = cb->chips[req.chip];
      if (pid < 0) {
        mb.result_code = PTO_INTERNAL;
        copy_message(mb, std::string("fork failed: ") + std::strerror(errno));
        mb.failed_gen.store(req.gen, std::memory_order_release);
        cb->parent_bell.ring();
        continue;
      }
      kids[pid] = {req.chip, req.gen};
      mb.pid.store(pid, std::memory_order_release);
    }
  }
}

std::string describe_status(int st) {
  if (WIFSIGNALED(st)) {
    const int sig = WTERMSIG(st);
    const char *name = strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  if (WIFEXITED(st)) return "exited with status " + std::to_string(WEXITSTATUS(st));
  return "ended (wait status " + std::to_string(st) + ")";
}

}  // namespace

ProcessChipSet::ProcessChipSet(const std::vector<int> &device_ids, const std::string &platform,
                               const std::string &runtime) {
  const auto n = static_cast<uint32_t>(device_ids.size());
  cb_bytes_ = ControlBlock::bytes_for(n);
  void *p = mmap(nullptr, cb_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw Error(PTO_OUT_OF_MEMORY, std::string("cannot map the chip mailboxes: ") + std::strerror(errno));
  }
  cb_ = new (p) ControlBlock();
  cb_->num_chips = n;
  for (uint32_t i = 1; i < n; ++i) new (&cb_->chips[i]) ChipMailbox();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    munmap(cb_, cb_bytes_);
    throw Error(PTO_INTERNAL, std::string("pipe2: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[1]);
    zygote_main(cb_, fds[0], parent, device_ids, platform, runtime);
  }
  close(fds[0]);
  if (pid < 0) {
    close(fds[1]);
    munmap(cb_, cb_bytes_);
    throw Error(PTO_INTERNAL, std::string("cannot fork the chip zygote: ") + std::strerror(errno));
  }
  zygote_ = pid;
  req_fd_ = fds[1];
}

ProcessChipSet::~ProcessChipSet() {
  shutdown();
  if (cb_) munmap(cb_, cb_bytes_);
}

void ProcessChipSet::spawn(int chip, uint32_t gen) {
  std::lock_guard<std::mutex> lock(req_mu_);
  if (req_fd_ < 0) return;
  cb_->chips[chip].generation.store(gen, std::memory_order_release);
  const SpawnRequest req{1, chip, gen};
  ssize_t w;
  do {
    w = write(req_fd_, &req, sizeof req);
  } while (w < 0 && errno == EINTR);
}

bool ProcessChipSet::zygote_alive() {
  if (zygote_gone_) return false;
  // A syscall per poll would add up; a dead zygote is noticed within 50 ms.
  const uint64_t now = platform_now_ns();
  if (now - last_check_ns_ < 50000000ull) return true;
  last_check_ns_ = now;
  int st;
  const pid_t r = waitpid(zygote_, &st, WNOHANG);
  if (r == zygote_ || (r < 0 && errno == ECHILD)) zygote_gone_ = true;
  return !zygote_gone_;
}

void ProcessChipSet::shutdown() {
  std::lock_guard<std::mutex> lock(req_mu_);
  if (req_fd_ >= 0) {
    close(req_fd_);  // EOF: the zygote kills and reaps the chip processes, then exits
    req_fd_ = -1;
  }
  if (zygote_ > 0 && !zygote_gone_) {
    // Give it a few seconds, then make sure.
    for (int i = 0; i < 500; ++i) {
      const pid_t r = waitpid(zygote_, nullptr, WNOHANG);
      if (r == zygote_ || (r < 0 && errno == ECHILD)) {
        zygote_gone_ = true;
        break;
      }
      usleep(10000);
    }
    if (!zygote_gone_) {
      kill(zygote_, SIGKILL);
      waitpid(zygote_, nullptr, 0);
      zygote_gone_ = true;
    }
  }
}

ProcessChip::ProcessChip(ProcessChipSet *set, int index, int device_id, uint32_t spawn_timeout_ms)
    : set_(set),
      mb_(set->control()->chips[index]),
      index_(index),
      device_id_(device_id),
      spawn_timeout_ms_(spawn_timeout_ms) {
  start_deadline_ns_ = platform_now_ns() + uint64_t{spawn_timeout_ms_} * 1000000ull;
  set_->spawn(index_, gen_);
}

int ProcessChip::pid() const {
  return mb_.pid.load(std::memory_order_acquire);
}

int ProcessChip::wait_pid() const {
  const uint64_t deadline = platform_now_ns() + uint64_t{spawn_timeout_ms_} * 1000000ull;
  for (;;) {
    if (const int p = pid(); p > 0) return p;
    if (platform_now_ns() >= deadline) {
      throw Error(PTO_RUN_TIMEOUT, "chip " + std::to_string(index_) +
                                       " has no process: none was forked within the spawn time limit "
                                       "(spawn_timeout, " +
                                       fmt_seconds_ms(spawn_timeout_ms_) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string ProcessChip::describe() const {
  return "chip " + std::to_string(index_) + " (device " + std::to_string(device_id_) + ", process " +
         std::to_string(pid()) + ")";
}

void ProcessChip::respawn() {
  ++gen_;
  ++restarts_in_a_row_;
  if (restarts_in_a_row_ > 3) {
    state_ = State::kBroken;
    broken_why_ =
        "its process died " + std::to_string(restarts_in_a_row_) + " times in a row without serving a run";
    return;
  }
  mb_.pid.store(0, std::memory_order_relaxed);
  state_ = State::kStarting;
  start_deadline_ns_ = platform_now_ns() + uint64_t{spawn_timeout_ms_} * 1000000ull;
  set_->spawn(index_, gen_);
}

std::string ProcessChip::death_text() const {
  return describe_status(mb_.wait_status);
}

void ProcessChip::start(const ChipCallable &callable, const ChipStorageTaskArgs &args,
                        const ChipCallConfig &config) {
  if (state_ != State::kIdle) throw Error(PTO_INTERNAL, describe() + ": start while not idle");
  encode_run(mb_, callable, args, config);
  expected_seq_ = mb_.cmd.prepare() + 1;  // the parent is the only writer of cmd.seq
  state_ = State::kRunning;
  mb_.cmd.ring();
}

void ProcessChip::abort() {
  if (state_ != State::kRunning) return;
  mb_.abort_seq.store(expected_seq_, std::memory_order_release);  // seen within a wait slice
}

bool ProcessChip::poll(ChipResult *out) {
  if (state_ != State::kRunning) return false;
  out->where = describe();
  if (mb_.done_seq.load(std::memory_order_acquire) == expected_seq_) {
    out->code = static_cast<pto_status>(mb_.result_code);
    if (out->code == PTO_OK) {
      out->stats = mb_.stats.load();
    } else {
      out->message = mb_.message;
    }
    restarts_in_a_row_ = 0;
    state_ = State::kIdle;
    if (out->code == PTO_DEVICE_BROKEN || out->code == PTO_RUN_TIMEOUT) {
      // A kernel did not return (in time): this process's device context may be unusable.
      // Replace it (the old process must be gone before a new one reads this mailbox).
      const int old = pid();
      if (old > 0) kill(old, SIGKILL);
      out->message += "; " + describe() + " is being replaced by a new process";
      respawn();
    }
    return true;
  }
  const bool dead = mb_.dead_gen.load(std::memory_order_acquire) == gen_;
  if (dead || !set_->zygote_alive()) {
    out->code = PTO_TASK_FAILED;
    out->message = describe() + (dead ? " " + death_text() : " is gone (its zygote died)") +
                   " while running the task; the chip process is being restarted";
    out->context_lost = true;
    if (dead) {
      respawn();
    } else {
      state_ = State::kBroken;
      broken_why_ = "the zygote process that forks chip processes died";
    }
    return true;
  }
  return false;
}

bool ProcessChip::available() {
  if (state_ == State::kIdle && mb_.dead_gen.load(std::memory_order_acquire) == gen_) respawn();  // died idle
  if (state_ == State::kStarting) {
    if (mb_.ready_gen.load(std::memory_order_acquire) == gen_) {
      state_ = State::kIdle;
    } else if (mb_.failed_gen.load(std::memory_order_acquire) == gen_) {
      state_ = State::kBroken;
      broken_why_ = std::string("its process could not set up the device: ") + mb_.message;
    } else if (mb_.dead_gen.load(std::memory_order_acquire) == gen_) {
      respawn();
    } else if (platform_now_ns() > start_deadline_ns_) {
      state_ = State::kBroken;
      broken_why_ = "its process was not ready within the spawn time limit (spawn_timeout, " +
                    fmt_seconds_ms(spawn_timeout_ms_) + ")";
    } else if (!set_->zygote_alive()) {
      state_ = State::kBroken;
      broken_why_ = "the zygote process that forks chip processes died";
    }
  }
  return state_ == State::kIdle;
}

bool ProcessChip::broken(std::string *why) const {
  if (state_ != State::kBroken) return false;
  if (why) *why = broken_why_;
  return true;
}

}  // namespace l3
}  // namespace pto
