// src/hierarchical/comm_domain.cpp — HostOrchestrator::allocate_domain and the domain handles
// (include/pto/comm_domain.h; design: docs/design/comm_domains.md).
//
// A domain is one host-heap block: the ranks' CommContexts, then the ranks' windows, each
// 64-byte aligned. The host heap is one shared mapping at the same address in the worker and in
// every chip process (host_heap.h), so a window's address is the same for every chip, in thread
// and in process mode, and a chip task reaches a peer's window by plain loads and stores. The
// block belongs to the run: it is freed once the run has finished, never earlier, since a task
// may reach any window through its CommContext without naming it among its tensors.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "hierarchical/run_state.h"
#include "hierarchical/worker_core.h"
#include "pto/comm_domain.h"
#include "pto/error.h"
#include "pto_abi/platform_comm/comm_context.h"

namespace pto {
namespace l3 {

struct DomainState {
  std::string name;
  std::vector<int> workers;
  std::vector<ChipDomainContext> contexts;  // by rank
  bool released = false;
};

namespace {

std::string buffer_names(const std::vector<CommBuffer> &buffers) {
  std::string s;
  for (const CommBuffer &b : buffers) s += (s.empty() ? "'" : ", '") + b.name + "'";
  return s.empty() ? std::string("none") : s;
}

}  // namespace

std::string name_addresses(const std::string &message, const std::vector<NamedRange> &ranges) {
  if (ranges.empty()) return message;
  std::string notes;
  std::vector<uint64_t> seen;
  for (size_t i = message.find("0x"); i != std::string::npos; i = message.find("0x", i + 2)) {
    if (i + 2 >= message.size() || !std::isxdigit(static_cast<unsigned char>(message[i + 2]))) continue;
    char *end = nullptr;
    const uint64_t addr = std::strtoull(message.c_str() + i, &end, 16);  // reads the "0x" too
    const size_t j = static_cast<size_t>(end - message.c_str());
    if (std::find(seen.begin(), seen.end(), addr) != seen.end()) continue;
    seen.push_back(addr);
    for (const NamedRange &r : ranges) {
      if (addr >= r.begin && addr < r.end) {
        notes += "\n" + message.substr(i, j - i) + " is " + r.label + " + " + std::to_string(addr - r.begin);
        break;
      }
    }
  }
  if (notes.empty()) return message;
  size_t end = message.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(message[end - 1]))) --end;
  return message.substr(0, end) + notes;
}

}  // namespace l3

void domain_layout::check(const std::string &who, uint64_t window_size, uint64_t max_window,
                          const std::vector<CommBufferSpec> &buffers) {
  if (window_size == 0 || window_size > max_window) {
    throw Error(PTO_INVALID_ARGUMENT, who + ": window_size = " + std::to_string(window_size) +
                                          "; allowed 1.." + std::to_string(max_window) +
                                          " bytes (the worker's heap_bytes)");
  }
  uint64_t used = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const CommBufferSpec &b = buffers[i];
    const std::string what = who + ": buffers[" + std::to_string(i) + "] ('" + b.name + "')";
    if (b.name.empty()) throw Error(PTO_INVALID_ARGUMENT, what + " has no name");
    for (size_t j = 0; j < i; ++j) {
      if (buffers[j].name == b.name) throw Error(PTO_INVALID_ARGUMENT, what + ": the name is used twice");
    }
    const uint32_t esize = static_cast<uint32_t>(b.dtype) < PTO_DTYPE_COUNT ? pto_dtype_size(b.dtype) : 0;
    if (esize == 0) throw Error(PTO_INVALID_ARGUMENT, what + " has an unsupported dtype");
    if (b.count > b.nbytes / esize) {
      throw Error(PTO_INVALID_ARGUMENT, what + ": count " + std::to_string(b.count) + " x " +
                                            std::to_string(esize) +
                                            " bytes does not fit in nbytes = " + std::to_string(b.nbytes));
    }
    used += b.nbytes;
  }
  if (used > window_size) {
    throw Error(PTO_INVALID_ARGUMENT, who + ": the buffers need " + std::to_string(used) +
                                          " bytes; window_size = " + std::to_string(window_size) +
                                          " is too small");
  }
}

ChipDomainContext domain_layout::context(const std::string &name, int chip, int rank,
                                         const std::vector<uint64_t> &windows, uint64_t win, void *ctx_at,
                                         const std::vector<CommBufferSpec> &buffers) {
  const auto n = static_cast<uint32_t>(windows.size());
  if (ctx_at != nullptr) {
    auto *ctx = static_cast<CommContext *>(ctx_at);
    ctx->rankId = static_cast<uint32_t>(rank);
    ctx->rankNum = n;
    ctx->winSize = win;
    for (uint32_t p = 0; p < n; ++p) {
      ctx->windowsIn[p] = windows[p];
      ctx->windowsOut[p] = windows[p];
    }
  }
  ChipDomainContext c;
  c.name = name;
  c.chip = chip;
  c.domain_rank = rank;
  c.domain_size = static_cast<int>(n);
  c.device_ctx = reinterpret_cast<uint64_t>(ctx_at);
  c.local_window_base = windows[static_cast<size_t>(rank)];
  c.actual_window_size = win;
  uint64_t offset = 0;
  for (const CommBufferSpec &b : buffers) {
    c.buffers.push_back(CommBuffer{b.name, b.dtype, b.count, b.nbytes, offset,
                                   reinterpret_cast<void *>(c.local_window_base + offset)});
    offset += b.nbytes;
  }
  return c;
}

void CommBuffer::add_to(ChipStorageTaskArgs &args, pto_direction direction,
                        const std::vector<int64_t> &shape) const {
  const std::vector<int64_t> dims = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(count)} : shape;
  uint64_t elems = 1, bytes = 0;
  bool wraps = false, empty = false;  // wraps: shape x dtype size is 2^64 bytes or more
  for (int64_t d : dims) {
    if (d < 0) throw Error(PTO_BAD_TENSOR, "CommBuffer '" + name + "'.add_to: shape has a negative extent");
    empty |= d == 0;
    wraps |= __builtin_mul_overflow(elems, static_cast<uint64_t>(d), &elems);
  }
  wraps = !empty && (wraps || __builtin_mul_overflow(elems, uint64_t{pto_dtype_size(dtype)}, &bytes));
  if (empty) bytes = 0;
  if (wraps)
    throw Error(PTO_BAD_TENSOR, "CommBuffer '" + name + "'.add_to: the shape needs 2^64 bytes or more");
  if (bytes > nbytes) {
    throw Error(PTO_BAD_TENSOR, "CommBuffer '" + name + "'.add_to: the shape needs " + std::to_string(bytes) +
                                    " bytes; the buffer has " + std::to_string(nbytes));
  }
  args.add_device_tensor(addr, bytes, dtype, dims, direction);
}

const CommBuffer &ChipDomainContext::buffer(const std::string &wanted) const {
  for (const CommBuffer &b : buffers) {
    if (b.name == wanted) return b;
  }
  throw Error(PTO_INVALID_ARGUMENT,
              "domain '" + name + "' has no buffer '" + wanted + "'; it has: " + l3::buffer_names(buffers));
}

const std::string &CommDomain::name() const {
  static const std::string none;
  return s_ ? s_->name : none;
}

const std::vector<int> &CommDomain::workers() const {
  static const std::vector<int> none;
  return s_ ? s_->workers : none;
}

const ChipDomainContext &CommDomain::operator[](int chip) const {
  if (!s_) throw Error(PTO_INVALID_ARGUMENT, "CommDomain: an empty handle (not from allocate_domain)");
  if (s_->released) {
    throw Error(
        PTO_INVALID_ARGUMENT,
        "domain '" + s_->name + "' was released: no new task may use it (chip " + std::to_string(chip) + ")");
  }
  for (size_t r = 0; r < s_->workers.size(); ++r) {
    if (s_->workers[r] == chip) return s_->contexts[r];
  }
  std::string have;
  for (int w : s_->workers) have += (have.empty() ? "" : ", ") + std::to_string(w);
  throw Error(PTO_INVALID_ARGUMENT, "domain '" + s_->name + "': chip " + std::to_string(chip) +
                                        " is not one of its workers [" + have + "]");
}

void CommDomain::release() {
  if (s_) s_->released = true;
}

bool CommDomain::released() const {
  return s_ && s_->released;
}

CommDomain HostOrchestrator::allocate_domain(const std::string &name, const std::vector<int> &workers,
                                             uint64_t window_size,
                                             const std::vector<CommBufferSpec> &buffers) {
  check_active();
  const std::string who = "allocate_domain('" + name + "')";
  // Everything is checked before anything is allocated.
  const int nchips = num_chips();
  if (workers.empty() || workers.size() > PTO_COMM_MAX_RANKS) {
    throw Error(PTO_INVALID_ARGUMENT, who + ": workers has " + std::to_string(workers.size()) +
                                          " chips; allowed 1.." + std::to_string(PTO_COMM_MAX_RANKS));
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    if (workers[i] < 0 || workers[i] >= nchips) {
      throw Error(PTO_INVALID_ARGUMENT,
                  who + ": workers[" + std::to_string(i) + "] = " + std::to_string(workers[i]) +
                      " is not a chip index of this worker (0.." + std::to_string(nchips - 1) + ")");
    }
    for (size_t j = 0; j < i; ++j) {
      if (workers[j] == workers[i])
        throw Error(PTO_INVALID_ARGUMENT,
                    who + ": chip " + std::to_string(workers[i]) + " is in workers twice");
    }
  }
  domain_layout::check(who, window_size, core_->opt.heap_bytes, buffers);
  const uint64_t n = workers.size();
  const uint64_t ctx_bytes = domain_layout::round_up(sizeof(CommContext));
  const uint64_t win = domain_layout::round_up(window_size);
  const uint64_t total = n * ctx_bytes + n * win;
  l3::HostHeap::Block *block = core_->alloc_block(total, "Orchestrator.allocate_domain");
  run_->domains.push_back(block);  // freed once the run has finished (RunState::domains)
  char *base = static_cast<char *>(core_->heap->address(block));
  std::memset(base, 0, total);  // signals start at 0, before any task can see the windows

  auto state = std::make_shared<l3::DomainState>();
  std::vector<l3::NamedRange> named;  // buffers first: the first range holding an address names it
  state->name = name;
  state->workers = workers;
  std::vector<uint64_t> windows(n);
  for (uint64_t p = 0; p < n; ++p) windows[p] = reinterpret_cast<uint64_t>(base + n * ctx_bytes + p * win);
  for (uint64_t r = 0; r < n; ++r) {
    ChipDomainContext c = domain_layout::context(name, workers[r], static_cast<int>(r), windows, win,
                                                 base + r * ctx_bytes, buffers);
    const std::string rank =
        "domain '" + name + "', rank " + std::to_string(r) + " (chip " + std::to_string(workers[r]) + ")";
    for (const CommBuffer &b : c.buffers) {
      const auto lo = reinterpret_cast<uint64_t>(b.addr);
      if (b.nbytes > 0) named.push_back({lo, lo + b.nbytes, rank + ", buffer '" + b.name + "'"});
    }
    named.push_back({c.local_window_base, c.local_window_base + win, rank + "'s window"});
    named.push_back({c.device_ctx, c.device_ctx + sizeof(CommContext), rank + ", its CommContext"});
    state->contexts.push_back(std::move(c));
  }
  {
    std::lock_guard<std::mutex> lock(core_->mu);  // the scheduler reads them for failure messages
    auto &all = run_->named_ranges;
    all.insert(all.end(), std::make_move_iterator(named.begin()), std::make_move_iterator(named.end()));
  }
  CommDomain d;
  d.s_ = std::move(state);
  return d;
}

}  // namespace pto
