// src/l4/comm_domain_l4.cpp — communication domains across hosts: Orchestrator::allocate_domain at L4,
// the addresses of other ranks' windows, and the kernels' accesses to them.
//
// Every rank makes the same allocate_domain call (the orchestration is replicated). Each lays out
// its own members as L3 does, in one block of its L3 host heap:
//   [ CommContext of each local member | window of each local member ]
// and exposes the windows part in one MPI window (Progress::create_window, passive target). A
// local member's CommContext names its peers on the same rank by their real addresses, and a peer
// on another rank by a tagged address: PTO_SIM_REMOTE_TAG | slot << 48 | (domain rank x window
// size + offset), which no load reaches (include/pto/sim_tile_pipes.h). The sim's comm
// instructions hand such an address to serve() below, which finds the domain by its slot and
// the member by the offset, and makes the MPI call. docs/design/comm_domains.md, "Across hosts".
#include <atomic>
#include <cstring>

#include "l4/worker_state.h"
#include "pto/error.h"
#include "pto/kernel_stop.h"
#include "pto/sim_tile_pipes.h"
#include "pto_abi/platform_comm/comm_context.h"
#include "worker/remote_windows.h"

namespace pto {
namespace l4 {
namespace {

constexpr uint64_t kOffsetBits = 48;
constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
constexpr int kSlots = Progress::kMaxWindows;

// The domains of this process whose windows are open, by slot: read by kernels' threads (serve),
// written by the orchestration's thread (a domain is published before any task can use it and
// removed only after its run finished).
std::atomic<GlobalDomainState *> g_slots[kSlots];

// Domains of this process with an MPI window: whether a waiter's progress call has any use.
std::atomic<int> g_windows{0};

int32_t serve(const pto_sim_remote_access *a) {
  if (a->op == PTO_SIM_REMOTE_PROGRESS) {
    // Any open window's progress: they share the process's MPI progress engine. 1: a window is
    // open (the sim's TWAIT then polls rather than sleeps), 0: none is.
    if (g_windows.load(std::memory_order_relaxed) == 0) return 0;
    for (const auto &slot : g_slots) {
      const GlobalDomainState *d = slot.load(std::memory_order_acquire);
      if (d != nullptr && d->window_id >= 0) return d->progress->poll() + 1;
    }
    return 0;
  }
  const uint64_t addr = a->remote;
  const uint64_t slot = (addr >> kOffsetBits) & 0x3FFFu;
  GlobalDomainState *d = slot < kSlots ? g_slots[slot].load(std::memory_order_acquire) : nullptr;
  if (d == nullptr || d->window_id < 0 || !PTO_SIM_IS_REMOTE(addr))
    return pto_comm_remote_status(PTO_COMM_REMOTE_NO_DOMAIN);
  const uint64_t offset = addr & kOffsetMask;
  const uint64_t m = offset / d->win, within = offset % d->win;
  if (m >= d->members.size()) return pto_comm_remote_status(PTO_COMM_REMOTE_NO_DOMAIN);
  if (a->nbytes > d->win - within) return pto_comm_remote_status(PTO_COMM_REMOTE_OUT_OF_WINDOW);
  return d->progress->rma(d->window_id, a->op, a->dtype, d->owner[m], d->index[m] * d->win + within, a->local,
                          a->nbytes, a->value);
}

Error invalid(const std::string &msg) {
  return Error(PTO_INVALID_ARGUMENT, msg);
}

}  // namespace

const std::string &GlobalCommDomain::name() const {
  static const std::string none;
  return s_ ? s_->name : none;
}

const std::vector<DomainMember> &GlobalCommDomain::members() const {
  static const std::vector<DomainMember> none;
  return s_ ? s_->members : none;
}

const ChipDomainContext &GlobalCommDomain::operator()(int rank, int chip) const {
  if (!s_) throw invalid("GlobalCommDomain: an empty handle (not from allocate_domain)");
  const std::string who = "(rank " + std::to_string(rank) + ", chip " + std::to_string(chip) + ")";
  if (s_->released) throw invalid("domain '" + s_->name + "' was released: no new task may use it " + who);
  for (size_t m = 0; m < s_->members.size(); ++m) {
    if (s_->members[m].rank == rank && s_->members[m].chip == chip) return s_->contexts[m];
  }
  std::string have;
  for (const DomainMember &x : s_->members)
    have += (have.empty() ? "(" : ", (") + std::to_string(x.rank) + ", " + std::to_string(x.chip) + ")";
  throw invalid("domain '" + s_->name + "': " + who + " is not one of its members [" + have + "]");
}

bool GlobalCommDomain::is_local(int rank, int chip) const {
  return s_ && (*this)(rank, chip).device_ctx != 0;
}

void GlobalCommDomain::release() {
  if (s_) s_->released = true;
}

bool GlobalCommDomain::released() const {
  return s_ && s_->released;
}

GlobalCommDomain Orchestrator::allocate_domain(const std::string &name,
                                               const std::vector<DomainMember> &members, uint64_t window_size,
                                               const std::vector<CommBufferSpec> &buffers) {
  WorkerState &w = *w_;
  const std::string who = "allocate_domain('" + name + "')";
  // Everything is checked before anything is allocated; every rank checks alike.
  if (members.empty() || members.size() > PTO_COMM_MAX_RANKS) {
    throw invalid(who + ": members has " + std::to_string(members.size()) + " chips; allowed 1.." +
                  std::to_string(PTO_COMM_MAX_RANKS));
  }
  const int nchips = o3_->num_chips();
  for (size_t i = 0; i < members.size(); ++i) {
    const DomainMember &x = members[i];
    const std::string at = who + ": members[" + std::to_string(i) + "] = (" + std::to_string(x.rank) + ", " +
                           std::to_string(x.chip) + ")";
    if (x.rank < 0 || x.rank >= w.size)
      throw invalid(at + ": rank is not one of the job's (0.." + std::to_string(w.size - 1) + ")");
    // Every rank has the same options (a replicated program): this rank's chip count is theirs.
    if (x.chip < 0 || x.chip >= nchips)
      throw invalid(at + ": chip is not a chip index of a rank (0.." + std::to_string(nchips - 1) + ")");
    for (size_t j = 0; j < i; ++j) {
      if (members[j].rank == x.rank && members[j].chip == x.chip) throw invalid(at + ": a member twice");
    }
  }
  domain_layout::check(who, window_size, w.options.heap_bytes, buffers);
  const uint64_t n = members.size();
  const uint64_t win = domain_layout::round_up(window_size);
  if (win > (kOffsetMask + 1) / n)
    throw invalid(who + ": " + std::to_string(n) + " windows of " + std::to_string(win) +
                  " bytes exceed the 2^48 bytes a domain's addresses span");
  if (o3_->mode() != ChipMode::kThread)
    throw Error(
        PTO_NOT_SUPPORTED,
        who +
            ": communication domains across hosts need chips in thread mode (mode=\"thread\"): a chip "
            "process has no MPI to reach other hosts' windows");
  int slot = 0;
  while (slot < kSlots && g_slots[slot].load(std::memory_order_relaxed) != nullptr) ++slot;
  if (slot == kSlots)
    throw Error(PTO_CAPACITY_EXCEEDED, who + ": " + std::to_string(kSlots) +
                                           " communication domains across hosts are open in this process");

  auto d = std::make_shared<GlobalDomainState>();
  d->name = name;
  d->members = members;
  d->win = win;
  d->progress = w.progress.get();
  d->slot = slot;
  std::vector<uint64_t> per_rank(static_cast<size_t>(w.size), 0);
  for (const DomainMember &x : members) {
    d->owner.push_back(x.rank);
    d->index.push_back(per_rank[static_cast<size_t>(x.rank)]++);
  }
  const uint64_t here = per_rank[static_cast<size_t>(w.rank)];
  const uint64_t ctx_bytes = domain_layout::round_up(sizeof(CommContext));
  char *ctxs = nullptr, *wins = nullptr;
  if (here > 0) {
    const uint64_t total = here * ctx_bytes + here * win;
    d->block = w.l3->alloc(total);
    ctxs = static_cast<char *>(d->block);
    wins = ctxs + here * ctx_bytes;
    std::memset(ctxs, 0, total);  // signals start at 0, before any task can see the windows
  }
  // Members all on one rank reach each other through memory: no window, no MPI (every rank
  // sees the same members, so all skip the collective call alike).
  bool one_rank = true;
  for (int r : d->owner) one_rank &= r == d->owner.front();
  if (!one_rank) {
    try {
      d->window_id = w.progress->create_window(wins, here * win, who);  // collective
      g_windows.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      if (d->block != nullptr) w.l3->free(d->block);
      throw;
    }
  }
  // Every member's window as this rank's kernels address it.
  std::vector<uint64_t> windows(n);
  for (uint64_t m = 0; m < n; ++m) {
    windows[m] = d->owner[m] == w.rank
                     ? reinterpret_cast<uint64_t>(wins + d->index[m] * win)
                     : PTO_SIM_REMOTE_TAG | (static_cast<uint64_t>(slot) << kOffsetBits) | (m * win);
  }
  for (uint64_t m = 0; m < n; ++m) {
    void *ctx = d->owner[m] == w.rank ? ctxs + d->index[m] * ctx_bytes : nullptr;
    d->contexts.push_back(
        domain_layout::context(name, members[m].chip, static_cast<int>(m), windows, win, ctx, buffers));
  }
  set_remote_window_server(&serve);
  g_slots[slot].store(d.get(), std::memory_order_release);
  w.domains.push_back(d);
  GlobalCommDomain h;
  h.s_ = d;
  return h;
}

void WorkerState::free_domains() {
  // Oldest first, as every rank allocated them: free_window is collective.
  std::string failed;
  for (const std::shared_ptr<GlobalDomainState> &d : domains) {
    if (d->submitted) {
      try {
        d->run.wait_done(-1);  // its kernels may still reach any window
      } catch (...) {
      }
    }
    g_slots[d->slot].store(nullptr, std::memory_order_release);
    d->released = true;
    if (d->window_id >= 0) {
      g_windows.fetch_sub(1, std::memory_order_relaxed);
      try {
        progress->free_window(d->window_id, "domain '" + d->name + "'");
      } catch (const Error &e) {
        failed += (failed.empty() ? "" : "; ") + std::string(e.what());
        continue;  // its memory stays: a peer may still write it through MPI
      }
    }
    if (d->block != nullptr) l3->free(d->block);
    d->block = nullptr;
  }
  domains.clear();
  if (!failed.empty()) throw Error(PTO_RUN_TIMEOUT, failed);
}

}  // namespace l4
}  // namespace pto
