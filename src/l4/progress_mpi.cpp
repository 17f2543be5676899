// src/l4/progress_mpi.cpp — the L4 progress thread on the MPI C API: non-blocking transfers, heartbeats,
// goodbyes.
//
// Messages on the runtime's own communicator (MPI_Comm_dup of the job's, MPI_COMM_WORLD by
// default): per transfer k a 1 KiB header (transfer_header.h) with tag 16 + 2(k mod span) and
// the payload with the next tag; heartbeats (tag 1) and goodbyes (tag 2) of 1 byte.
// docs/guide/l4.md, "Messages".
//
// The node doorbells the thread parks on are node_bells.cpp; PTO_L4_EDGE_TRACE's rows,
// edge_trace.cpp.
//
// Over 600 lines since the one-sided windows of domains across hosts (create_window,
// free_window, rma, poll, at the end) joined the transfers: they use the same communicator,
// doorbells and parking state, all inside Impl. Moving them to a file of their own needs Impl in
// a header (or a Windows object holding its own copy of that state); not done yet.
#include <mpi.h>
#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "l4/edge_trace.h"
#include "l4/node_bells.h"
#include "l4/progress.h"
#include "l4/transfer_header.h"
#include "pto/error.h"
#include "pto/kernel_stop.h"
#include "pto/sim_tile_pipes.h"

namespace pto {
namespace l4 {
namespace {

constexpr int kHeartbeatTag = 1;
constexpr int kGoodbyeTag = 2;
constexpr int kDataTag0 = 16;
constexpr double kPollMinS = 50e-6;
// Open MPI's shared-memory eager limit (btl_vader_eager_limit): a larger payload goes by
// rendezvous, which may need the sender's progress after the receiver was rung.
constexpr uint64_t kEagerBytes = 4096;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string mpi_error_string(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(buf, static_cast<size_t>(len));
}

// MPI_Finalize at exit when the runtime initialized MPI, unless a worker is still open (its
// progress thread may be inside MPI). Written by worker threads (constructors, close), read at exit.
std::atomic<int> g_open{0};
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && g_open.load(std::memory_order_acquire) == 0) MPI_Finalize();
}

// One posted transfer half. Owned by the progress thread once dequeued; the header buffer and
// the requests must not move while MPI uses them, hence held by unique_ptr.
struct Op {
  TransferPost p;
  int tag = 0;
  std::array<char, kHeaderBytes> header{};
  std::array<MPI_Request, 2> reqs{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  double posted = 0;                   // when MPI_Isend/MPI_Irecv was issued
  double post_called = 0, completed = 0;  // PTO_L4_EDGE_TRACE only: post() entered, Testsome done
  bool issued = false;
  bool settled = false;
  std::string mpi_error;  // set by test_ops when a request completed with an error
};

}  // namespace

struct Progress::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1, provided = 0;
  double peer_timeout = 30, heartbeat = 5, poll_max = 1e-3;
  double spin = 0;  // seconds of testing (yielding the CPU in between) after the last event
  bool direct_issue = false;
  int tag_half_span = 1;

  std::mutex mu;
  std::deque<std::unique_ptr<Op>> posts;  // guarded by mu
  bool stop = false;                      // guarded by mu
  // Set (under mu) with every post and by close(): lets a spinning thread skip taking mu.
  std::atomic<bool> poked{false};

  // The thread parks on bells.mine(); post() and close() ring it, and so do the ranks of this
  // node that send to this one or complete a receive from it (node_bells.h).
  NodeBells bells;
  bool closed = false;  // close()'s caller only

  // The progress thread's own state (nobody else touches it while the thread runs).
  std::vector<std::unique_ptr<Op>> ops;
  std::vector<double> last_heard;
  std::map<int, std::string> dead;  // peer -> why it is considered gone
  std::map<int, double> goodbye;    // peer -> when it said goodbye
  std::map<int, MPI_Request> hb_send;
  char hb_in = 0, bye_in = 0, hb_out = 0, bye_out = 0;
  MPI_Request hb_req = MPI_REQUEST_NULL, bye_req = MPI_REQUEST_NULL;

  EdgeTrace trace;  // rows added by the thread, saved by close() after the join

  // One-sided windows (create_window): written by the orchestration's thread, read by kernels'
  // threads while a run that uses them is live (never while one is created or freed there).
  std::array<MPI_Win, Progress::kMaxWindows> wins;
  std::atomic<int> windows_open{0};  // the thread polls every kPollMinS while > 0
  // Why this rank gave up freeing a window (create_window refuses from then on); "" if it did not.
  std::string windows_broken;
  // free_window's allreduce buffers: an abandoned request may still write them later.
  int agree_in = 1, agree_out = 0;

  // Waits up to peer_timeout for a non-blocking collective; false if it did not complete (the
  // request is then left: a late rank still completes its side of it).
  bool timed_wait(MPI_Request *req) const {
    int done = 0;
    const double deadline = now_s() + peer_timeout;
    while (MPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && now_s() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    return done != 0;
  }

  // Counters: written by the thread, read by transfers() on any thread (relaxed: statistics).
  std::atomic<uint64_t> sent_done{0}, received_done{0};
  std::thread thread;

  int tag_of(uint64_t seq) const {
    return kDataTag0 + 2 * static_cast<int>(seq % static_cast<uint64_t>(tag_half_span));
  }

  void issue(Op &op) {
    op.posted = now_s();
    const TransferPost &p = op.p;
    const int n = static_cast<int>(p.nbytes);
    int rc;
    if (p.send) {
      rc = MPI_Isend(op.header.data(), kHeaderBytes, MPI_BYTE, p.peer, op.tag, comm, &op.reqs[0]);
      if (rc == MPI_SUCCESS && n > 0)
        rc = MPI_Isend(p.payload, n, MPI_BYTE, p.peer, op.tag + 1, comm, &op.reqs[1]);
    } else {
      rc = MPI_Irecv(op.header.data(), kHeaderBytes, MPI_BYTE, p.peer, op.tag, comm, &op.reqs[0]);
      if (rc == MPI_SUCCESS && n > 0)
        rc = MPI_Irecv(p.payload, n, MPI_BYTE, p.peer, op.tag + 1, comm, &op.reqs[1]);
    }
    op.issued = true;
    if (rc != MPI_SUCCESS) op.mpi_error = "MPI reported an error: " + mpi_error_string(rc);
    if (p.send) bells.ring(p.peer);  // the receiver, if it parks on this node, tests now
  }

  static void settle(Op &op, const std::string *failure) {
    if (op.settled) return;
    op.settled = true;
    try {
      if (failure == nullptr)
        op.p.event.fulfill();
      else
        op.p.event.fail(*failure);
    } catch (...) {  // the worker was closed under us: nothing left to tell
    }
  }
  static void settle_failed(Op &op, const std::string &why) {
    const std::string msg = op.p.what + ": " + why;
    settle(op, &msg);
  }

  void cancel(Op &op) {
    // Receives: cancelled, so a late message cannot land in a buffer that is reused. A send to a
    // dead rank cannot be cancelled in Open MPI; it is left behind (the job is broken anyway).
    if (op.p.send) return;
    for (MPI_Request &r : op.reqs) {
      if (r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&r);
      for (int i = 0; i < 100 && r != MPI_REQUEST_NULL; ++i) {
        int flag = 0;
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      }
    }
  }

  void start(std::unique_ptr<Op> op) {
    auto d = dead.find(op->p.peer);
    if (d != dead.end()) {
      cancel(*op);  // a receive the body issued itself
      settle_failed(*op, "rank " + std::to_string(op->p.peer) + " is gone (" + d->second + ")");
      return;
    }
    if (!op->issued) issue(*op);
    if (!op->mpi_error.empty()) {
      cancel(*op);
      settle_failed(*op, op->mpi_error);
      return;
    }
    ops.push_back(std::move(op));
  }

  void finish(Op &op) {
    if (trace.on()) {
      op.completed = now_s();
      finish_untraced(op);
      trace.row(op.p.send, op.p.seq, op.p.peer, op.post_called, op.posted, op.completed, now_s(), op.p.what);
      return;
    }
    finish_untraced(op);
  }

  void finish_untraced(Op &op) {
    if (op.p.send) {
      sent_done.fetch_add(1, std::memory_order_relaxed);
      settle(op, nullptr);
      return;
    }
    received_done.fetch_add(1, std::memory_order_relaxed);
    bells.ring(op.p.peer);  // the sender, if it parks on this node, sees its send complete now
    last_heard[static_cast<size_t>(op.p.peer)] = now_s();
    const std::string failure = header_failure(op.header.data(), op.p);
    if (!failure.empty()) {
      settle_failed(op, failure);
    } else if (!op.p.error.empty()) {
      settle(op, &op.p.error);
    } else {
      settle(op, nullptr);
    }
  }

  // test_ops' buffers, kept across passes: a spinning thread calls it back to back.
  std::vector<MPI_Request> test_reqs;
  std::vector<std::pair<Op *, int>> test_where;
  std::vector<int> test_idx;
  std::vector<MPI_Status> test_st;

  // One MPI_Testsome over every outstanding request of every transfer.
  bool test_ops() {
    if (ops.empty()) return false;
    test_reqs.clear();
    test_where.clear();
    for (auto &op : ops)
      for (int i = 0; i < 2; ++i)
        if (op->reqs[static_cast<size_t>(i)] != MPI_REQUEST_NULL) {
          test_reqs.push_back(op->reqs[static_cast<size_t>(i)]);
          test_where.emplace_back(op.get(), i);
        }
    bool progress = false;
    if (!test_reqs.empty()) {
      const int n = static_cast<int>(test_reqs.size());
      test_idx.resize(test_reqs.size());
      test_st.resize(test_reqs.size());
      int outcount = 0;
      const int rc = MPI_Testsome(n, test_reqs.data(), &outcount, test_idx.data(), test_st.data());
      if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        for (auto &op : ops) {
          cancel(*op);
          settle_failed(*op, "MPI_Testsome reported " + mpi_error_string(rc));
        }
        ops.clear();
        return true;
      }
      if (outcount == MPI_UNDEFINED) outcount = 0;
      for (int k = 0; k < outcount; ++k) {
        auto [op, i] = test_where[static_cast<size_t>(test_idx[static_cast<size_t>(k)])];
        op->reqs[static_cast<size_t>(i)] = MPI_REQUEST_NULL;
        const int err = test_st[static_cast<size_t>(k)].MPI_ERROR;
        if (rc == MPI_ERR_IN_STATUS && err != MPI_SUCCESS && op->mpi_error.empty()) {
          op->mpi_error = "MPI reported " + mpi_error_string(err);
          // Truncation: the sender's array is larger than this rank's copy.
          if (!op->p.send) op->mpi_error += " (the ranks' orchestration functions diverged)";
        }
      }
      progress = outcount > 0;
    }
    size_t kept = 0;  // compacted in place: no allocation on a pass that completes nothing
    for (size_t j = 0; j < ops.size(); ++j) {
      Op &op = *ops[j];
      if (op.settled) continue;
      if (!op.mpi_error.empty()) {
        cancel(op);
        settle_failed(op, op.mpi_error);
      } else if (op.reqs[0] == MPI_REQUEST_NULL && op.reqs[1] == MPI_REQUEST_NULL) {
        finish(op);
      } else {
        if (kept != j) ops[kept] = std::move(ops[j]);
        ++kept;
      }
    }
    ops.resize(kept);
    return progress;
  }

  bool test_control() {
    if (size == 1) return false;
    bool progress = false;
    int flag = 0;
    MPI_Status st;
    while (MPI_Test(&hb_req, &flag, &st) == MPI_SUCCESS && flag) {
      last_heard[static_cast<size_t>(st.MPI_SOURCE)] = now_s();
      MPI_Irecv(&hb_in, 1, MPI_BYTE, MPI_ANY_SOURCE, kHeartbeatTag, comm, &hb_req);
      progress = true;
    }
    while (MPI_Test(&bye_req, &flag, &st) == MPI_SUCCESS && flag) {
      goodbye[st.MPI_SOURCE] = now_s();
      MPI_Irecv(&bye_in, 1, MPI_BYTE, MPI_ANY_SOURCE, kGoodbyeTag, comm, &bye_req);
      progress = true;
    }
    for (auto it = hb_send.begin(); it != hb_send.end();) {
      if (MPI_Test(&it->second, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag)
        it = hb_send.erase(it);
      else
        ++it;
    }
    return progress;
  }

  void beat() {
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank || dead.count(peer) || hb_send.count(peer)) continue;  // one in flight per peer
      MPI_Request r;
      if (MPI_Isend(&hb_out, 1, MPI_BYTE, peer, kHeartbeatTag, comm, &r) == MPI_SUCCESS) hb_send[peer] = r;
    }
  }

  void give_up(Op &op, const std::string &why, bool mark_dead) {
    const int peer = op.p.peer;
    if (mark_dead) dead[peer] = why;
    for (auto &other : ops) {
      if (other->p.peer == peer && !other->settled && (mark_dead || other.get() == &op)) {
        cancel(*other);
        settle_failed(*other, why);
      }
    }
  }

  void check_peers(double now) {
    for (auto &op : ops) {
      if (op->p.send || op->settled) continue;
      const int peer = op->p.peer;
      auto bye = goodbye.find(peer);
      if (bye != goodbye.end() && now - std::max(bye->second, op->posted) > std::min(1.0, peer_timeout)) {
        give_up(*op,
                "rank " + std::to_string(peer) +
                    " closed its Worker while this rank still waits for it: the ranks' orchestration "
                    "functions diverged (every rank must submit the same tasks in the same order)",
                false);
      } else if (now - std::max(last_heard[static_cast<size_t>(peer)], op->posted) > peer_timeout) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", peer_timeout);
        give_up(*op,
                "no message from rank " + std::to_string(peer) + " for " + secs +
                    " s (peer_timeout): rank " + std::to_string(peer) + " died or hangs",
                true);
      }
    }
    ops.erase(std::remove_if(ops.begin(), ops.end(), [](const std::unique_ptr<Op> &o) { return o->settled; }),
              ops.end());
  }

  void fail_all(const std::string &why) {
    for (auto &op : ops) {
      cancel(*op);
      settle_failed(*op, why);
    }
    ops.clear();
    std::deque<std::unique_ptr<Op>> left;
    {
      std::lock_guard<std::mutex> lk(mu);
      left.swap(posts);
    }
    for (auto &op : left) settle_failed(*op, why);
  }

  void loop() {
    if (size > 1 && hb_req == MPI_REQUEST_NULL) {
      MPI_Irecv(&hb_in, 1, MPI_BYTE, MPI_ANY_SOURCE, kHeartbeatTag, comm, &hb_req);
      MPI_Irecv(&bye_in, 1, MPI_BYTE, MPI_ANY_SOURCE, kGoodbyeTag, comm, &bye_req);
    }
    double next_beat = now_s();
    // The first pause of the timed polls. When every peer shares this node, every message rings
    // this thread, so the polls only back up the rare message that could not be completed when
    // the ring came and the spin after it ended: they start at poll_max, unless a payload larger
    // than the eager limit is in flight. Otherwise (peers on other nodes ring nothing) at 50 us.
    const bool every_peer_rings = bells.rings_every_peer();
    auto first_pause = [&] {
      if (!every_peer_rings) return kPollMinS;
      for (const auto &op : ops)
        if (op->p.nbytes > kEagerBytes) return kPollMinS;
      return poll_max;
    };
    double pause = 0;  // the next timed poll's; 0: the first since the last event (first_pause)
    double last_event = next_beat;  // a post, or a transfer or control message completed
    for (;;) {
      // Read before testing: a ring after this point makes the park below return at once.
      const uint32_t seen = bells.mine().prepare();
      std::deque<std::unique_ptr<Op>> taken;
      bool stopping = false;
      if (poked.exchange(false, std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lk(mu);
        taken.swap(posts);
        stopping = stop;
      }
      if (stopping) {
        for (auto &op : taken) ops.push_back(std::move(op));
        fail_all("the worker was closed before the transfer finished");
        return;
      }
      bool progress = !taken.empty();
      for (auto &op : taken) start(std::move(op));
      progress |= test_control();
      progress |= test_ops();
      const double now = now_s();
      if (size > 1 && now >= next_beat) {
        beat();
        next_beat = now + heartbeat;
      }
      check_peers(now);
      if (progress) {
        pause = 0;
        last_event = now;
        continue;
      }
      if (!ops.empty() && now - last_event < spin) {
        // Spin phase: a message that lands is noticed within one test, not one pause. Yield
        // between tests, so on a CPU shared with ready work the work runs first.
        std::this_thread::yield();
        continue;
      }
      // Park until rung (a post, close, or a rank of this node sending here), or until the
      // next poll for messages from other nodes, or the next heartbeat.
      if (!ops.empty()) {
        if (pause == 0) pause = first_pause();  // worked out when parking, not at every event
        // Rung: a message is on its way (a sender rings once its Isend returned, which need not
        // mean the message can be matched yet), so spin again rather than park for a pause.
        if (bells.mine().wait(seen, static_cast<uint64_t>(pause * 1e9), 0, 0))
          last_event = now_s();
        else
          pause = std::min(pause * 2, poll_max);
      } else if (size > 1) {
        // With a window open, a peer's atomic on it needs this rank's MPI progress: a peer on
        // this node rings, one elsewhere is served by this poll.
        double wait = std::max(1e-6, next_beat - now);
        if (windows_open.load(std::memory_order_relaxed) > 0) wait = std::min(wait, kPollMinS);
        bells.mine().wait(seen, static_cast<uint64_t>(wait * 1e9), 0, 0);
      } else {
        bells.mine().wait(seen, 0, 0, 0);
      }
    }
  }

  void run() {
    for (;;) {
      try {
        loop();
        return;
      } catch (const std::exception &e) {  // never die silently: every waiter would hang
        fail_all(std::string("the L4 progress thread hit an error: ") + e.what());
      }
    }
  }

  void say_goodbye(double timeout) {
    if (size == 1) return;
    std::vector<MPI_Request> reqs;
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank || dead.count(peer)) continue;
      MPI_Request r;
      if (MPI_Isend(&bye_out, 1, MPI_BYTE, peer, kGoodbyeTag, comm, &r) == MPI_SUCCESS) reqs.push_back(r);
    }
    const double deadline = now_s() + timeout;
    int done = 0;
    while (!reqs.empty() && now_s() < deadline) {
      MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
      if (done) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (MPI_Request *r : {&hb_req, &bye_req}) {  // no receive left pending at MPI_Finalize
      if (*r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(r);
      MPI_Wait(r, MPI_STATUS_IGNORE);
    }
  }
};

Progress::Progress(uint32_t peer_timeout_ms, uint32_t poll_max_us, uint32_t spin_us, const void *comm)
    : impl_(new Impl) {
  Impl &m = *impl_;
  m.wins.fill(MPI_WIN_NULL);
  int initialized = 0, finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) throw Error(PTO_NOT_SUPPORTED, "pto::l4::Worker: MPI was already finalized in this process");
  MPI_Initialized(&initialized);
  if (!initialized) {
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &m.provided) != MPI_SUCCESS)
      throw Error(PTO_NOT_SUPPORTED, "pto::l4::Worker: MPI_Init_thread failed");
    std::atexit(finalize_at_exit);
  }
  MPI_Query_thread(&m.provided);
  if (m.provided < MPI_THREAD_SERIALIZED)
    throw Error(PTO_NOT_SUPPORTED,
                "pto::l4::Worker: MPI was initialized with thread level " + std::to_string(m.provided) +
                    "; the L4 progress thread needs MPI_THREAD_SERIALIZED or more (call "
                    "MPI_Init_thread asking for MPI_THREAD_MULTIPLE, or let the Worker initialize MPI)");
  const MPI_Comm base = comm ? *static_cast<const MPI_Comm *>(comm) : MPI_COMM_WORLD;
  if (base == MPI_COMM_NULL)
    throw Error(PTO_INVALID_ARGUMENT, "l4::WorkerOptions.mpi_comm: the communicator is MPI_COMM_NULL");
  int inter = 0;
  if (MPI_Comm_test_inter(base, &inter) != MPI_SUCCESS || inter)
    throw Error(PTO_INVALID_ARGUMENT, "l4::WorkerOptions.mpi_comm: give an intra-communicator (the ranks of one job)");
  if (MPI_Comm_dup(base, &m.comm) != MPI_SUCCESS)  // collective
    throw Error(PTO_NOT_SUPPORTED, "pto::l4::Worker: MPI_Comm_dup of the job's communicator failed");
  MPI_Comm_set_errhandler(m.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m.comm, &m.rank);
  MPI_Comm_size(m.comm, &m.size);
  int *tag_ub = nullptr, flag = 0;
  MPI_Comm_get_attr(m.comm, MPI_TAG_UB, &tag_ub, &flag);
  const int ub = flag && tag_ub ? *tag_ub : 32767;
  m.tag_half_span = std::max(1, (ub - kDataTag0) / 2);
  m.peer_timeout = peer_timeout_ms / 1000.0;
  m.heartbeat = std::min(5.0, std::max(0.05, m.peer_timeout / 4));
  m.poll_max = std::max(poll_max_us * 1e-6, kPollMinS);
  m.direct_issue = m.provided >= MPI_THREAD_MULTIPLE;
  m.spin = spin_us * 1e-6;
  m.last_heard.assign(static_cast<size_t>(m.size), now_s());
  m.bells.make(m.comm, m.rank, m.size);  // collective over the node
  g_open.fetch_add(1, std::memory_order_acq_rel);
  m.thread = std::thread([&m] {
    pthread_setname_np(pthread_self(), "pto-l4-progress");  // named for top -H, perf and gdb
    m.run();
  });
}

Progress::~Progress() {
  try {
    close();
  } catch (...) {
  }
}

int Progress::rank() const { return impl_->rank; }
int Progress::size() const { return impl_->size; }
int Progress::thread_level() const { return impl_->provided; }
int Progress::ranks_on_node() const { return impl_->bells.node_size(); }
uint64_t Progress::sent_done() const { return impl_->sent_done.load(std::memory_order_relaxed); }
uint64_t Progress::received_done() const { return impl_->received_done.load(std::memory_order_relaxed); }
bool Progress::available() { return true; }

void Progress::post(TransferPost p) {
  Impl &m = *impl_;
  auto op = std::make_unique<Op>();
  if (m.trace.on()) op->post_called = now_s();
  op->tag = m.tag_of(p.seq);
  op->p = std::move(p);
  if (op->p.send) write_header(op->p, op->header.data());
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (m.stop)
      throw Error(PTO_NOT_INITIALIZED, op->p.what + ": the L4 progress thread is stopped (the worker is closed)");
  }
  // MPI_THREAD_MULTIPLE: the body issues its own Isend/Irecv, so a cross-rank edge does not
  // wait for the thread to wake, and a receive is posted before its message lands. The thread
  // reads op->reqs only after taking it from `posts` under mu.
  if (m.direct_issue) m.issue(*op);
  std::lock_guard<std::mutex> lk(m.mu);
  if (m.stop) {  // closed in between: the thread will not see it
    const std::string why = op->p.what + ": the worker was closed before the transfer finished";
    throw Error(PTO_NOT_INITIALIZED, why);
  }
  m.posts.push_back(std::move(op));
  m.poked.store(true, std::memory_order_release);
  m.bells.mine().ring();
}

int Progress::create_window(void *base, uint64_t bytes, const std::string &what) {
  Impl &m = *impl_;
  if (m.provided < MPI_THREAD_MULTIPLE)
    throw Error(PTO_NOT_SUPPORTED,
                what +
                    ": a communication domain across hosts needs MPI_THREAD_MULTIPLE "
                    "(kernels reach peers' windows from their own threads); MPI gave level " +
                    std::to_string(m.provided));
  if (!m.windows_broken.empty())
    throw Error(PTO_NOT_SUPPORTED,
                what + ": communication domains across hosts are off for this worker: " + m.windows_broken);
  int id = 0;
  while (id < Progress::kMaxWindows && m.wins[static_cast<size_t>(id)] != MPI_WIN_NULL) ++id;
  // The same on every rank: windows are created and freed in the same order everywhere.
  if (id == Progress::kMaxWindows)
    throw Error(PTO_CAPACITY_EXCEEDED, what + ": " + std::to_string(Progress::kMaxWindows) +
                                           " communication domains across hosts are open; free some first");
  MPI_Info info = MPI_INFO_NULL;
  MPI_Win win = MPI_WIN_NULL;
  const int rc = MPI_Win_create(bytes ? base : nullptr, static_cast<MPI_Aint>(bytes), 1, info, m.comm, &win);
  if (rc != MPI_SUCCESS) {
    throw Error(
        PTO_NOT_SUPPORTED,
        what + ": MPI_Win_create failed (" + mpi_error_string(rc) +
            "): this MPI has no one-sided component for these ranks under MPI_THREAD_MULTIPLE. With "
            "Open MPI, osc/rdma needs its shared-memory transport (btl vader) or an RDMA network, "
            "osc/pt2pt refuses MPI_THREAD_MULTIPLE, and osc/ucx works where UCX does (OMPI_MCA_osc=ucx)");
  }
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  m.wins[static_cast<size_t>(id)] = win;
  m.windows_open.fetch_add(1, std::memory_order_relaxed);
  m.bells.mine().ring();  // park for at most kPollMinS from now on
  return id;
}

void Progress::free_window(int id, const std::string &what) {
  Impl &m = *impl_;
  if (id < 0 || id >= Progress::kMaxWindows || m.wins[static_cast<size_t>(id)] == MPI_WIN_NULL) return;
  MPI_Win &win = m.wins[static_cast<size_t>(id)];
  // MPI_Win_free would wait for a dead or stuck rank for good. So first every rank shows it is
  // here (a barrier), then that it saw every rank here in time (an allreduce): a rank that gave
  // up at either step never joins the next, so the others give up too instead of waiting in
  // MPI_Win_free. A rank that gave up turns domains across hosts off (create_window refuses):
  // its abandoned requests would mismatch later collectives.
  MPI_Request req = MPI_REQUEST_NULL;
  bool ok = MPI_Ibarrier(m.comm, &req) == MPI_SUCCESS && m.timed_wait(&req);
  ok = ok && MPI_Iallreduce(&m.agree_in, &m.agree_out, 1, MPI_INT, MPI_MIN, m.comm, &req) == MPI_SUCCESS &&
       m.timed_wait(&req);
  if (!ok) {
    m.windows_broken = what + ": not every rank came to free its MPI window within peer_timeout (" +
                       std::to_string(m.peer_timeout) + " s): a rank died or its run hangs";
    throw Error(PTO_RUN_TIMEOUT, m.windows_broken + "; the window stays open on this rank");
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);  // collective; sets win to MPI_WIN_NULL
  win = MPI_WIN_NULL;
  m.windows_open.fetch_sub(1, std::memory_order_relaxed);
}

int32_t Progress::rma(int id, int op, int dtype, int target, uint64_t disp, void *local, uint64_t nbytes,
                      int32_t value) {
  Impl &m = *impl_;
  const MPI_Win win = m.wins[static_cast<size_t>(id)];
  if (win == MPI_WIN_NULL) return pto_comm_remote_status(PTO_COMM_REMOTE_NO_DOMAIN);
  const auto d = static_cast<MPI_Aint>(disp);
  int rc = MPI_SUCCESS;
  bool atomic = true;  // needs the target's progress: ring it before the flush
  switch (op) {
    case PTO_SIM_REMOTE_PUT:
      rc = MPI_Put(local, static_cast<int>(nbytes), MPI_BYTE, target, d, static_cast<int>(nbytes), MPI_BYTE,
                   win);
      atomic = false;
      break;
    case PTO_SIM_REMOTE_GET:
      rc = MPI_Get(local, static_cast<int>(nbytes), MPI_BYTE, target, d, static_cast<int>(nbytes), MPI_BYTE,
                   win);
      atomic = false;
      break;
    case PTO_SIM_REMOTE_ADD: {
      static const std::pair<int, MPI_Datatype> kTypes[] = {
          {PTO_SIM_REMOTE_F32, MPI_FLOAT},    {PTO_SIM_REMOTE_F64, MPI_DOUBLE},
          {PTO_SIM_REMOTE_I8, MPI_INT8_T},    {PTO_SIM_REMOTE_I16, MPI_INT16_T},
          {PTO_SIM_REMOTE_I32, MPI_INT32_T},  {PTO_SIM_REMOTE_I64, MPI_INT64_T},
          {PTO_SIM_REMOTE_U8, MPI_UINT8_T},   {PTO_SIM_REMOTE_U16, MPI_UINT16_T},
          {PTO_SIM_REMOTE_U32, MPI_UINT32_T}, {PTO_SIM_REMOTE_U64, MPI_UINT64_T}};
      MPI_Datatype type = MPI_DATATYPE_NULL;
      int size = 0;
      for (const auto &t : kTypes)
        if (t.first == dtype) type = t.second;
      if (type == MPI_DATATYPE_NULL) return pto_comm_remote_status(PTO_COMM_REMOTE_BAD_TYPE);
      MPI_Type_size(type, &size);
      const int count = static_cast<int>(nbytes / static_cast<uint64_t>(size));
      rc = MPI_Accumulate(local, count, type, target, d, count, type, MPI_SUM, win);
      break;
    }
    case PTO_SIM_REMOTE_NOTIFY_ADD:
    case PTO_SIM_REMOTE_NOTIFY_SET: {
      int32_t old = 0;
      rc = MPI_Fetch_and_op(&value, &old, MPI_INT32_T, target, d,
                            op == PTO_SIM_REMOTE_NOTIFY_ADD ? MPI_SUM : MPI_REPLACE, win);
      break;
    }
    case PTO_SIM_REMOTE_LOAD32:
      rc = MPI_Fetch_and_op(nullptr, local, MPI_INT32_T, target, d, MPI_NO_OP, win);
      break;
    case PTO_SIM_REMOTE_FLUSH:
      rc = MPI_Win_flush(target, win);
      atomic = false;
      break;
    default:
      return pto_comm_remote_status(PTO_COMM_REMOTE_NO_DOMAIN);
  }
  if (rc == MPI_SUCCESS && atomic) {
    m.bells.ring(target);  // its progress thread applies the operation
    rc = MPI_Win_flush(target, win);
  }
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "[pto l4 rank %d] window %d, rank %d, byte %llu: %s\n", m.rank, id, target,
                 static_cast<unsigned long long>(disp), mpi_error_string(rc).c_str());
    return pto_comm_remote_status(PTO_COMM_REMOTE_MPI_ERROR);
  }
  return 0;
}

int32_t Progress::poll() {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, impl_->comm, &flag, MPI_STATUS_IGNORE);
  return 0;
}

void Progress::close() {
  Impl &m = *impl_;
  if (m.closed) return;
  m.closed = true;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    m.stop = true;
    m.poked.store(true, std::memory_order_release);
    m.bells.mine().ring();
  }
  if (m.thread.joinable()) m.thread.join();
  m.trace.save(m.rank);
  m.say_goodbye(1.0);
  g_open.fetch_sub(1, std::memory_order_acq_rel);
  // The duplicated and node communicators are not freed: MPI_Comm_free may wait for a dead
  // peer. The doorbell segment stays mapped: a peer may still ring this rank's bell.
}

}  // namespace l4
}  // namespace pto
