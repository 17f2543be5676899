// include/pto/comm_domain.h — communication domains of an L3 worker: a window per chip that every
// chip of the domain can read and write (docs/design/comm_domains.md, docs/guide/comm_domains.md).
//
//   pto::CommDomain d = orch.allocate_domain("tp", {0, 1, 2, 3}, 64 << 10,
//                                            {{"scratch", PTO_DTYPE_F32, 4096, 16384}});
//   for (int chip : d.workers()) {
//     const pto::ChipDomainContext &c = d[chip];
//     pto::ChipStorageTaskArgs args;
//     c.buffer("scratch").add_to(args, PTO_DIR_INOUT);   // the window itself, used in place
//     args.add_scalar(c.domain_size);
//     args.add_scalar(static_cast<int64_t>(c.device_ctx)); // the kernel's CommContext
//     orch.submit_chip(callable, args, {}, chip);
//   }
//
// Each chip's kernels reach every rank's window through its CommContext
// (pto_abi/platform_comm/comm_context.h) and PTO-ISA's comm instructions (TPUT, TGET, TNOTIFY,
// TWAIT, ...). The windows are zeroed before any task can see them and live until the run that
// allocated them has finished, whatever release() says: a task already submitted may still use
// them. Names follow the reference implementation's Python API.
#ifndef PTO_COMM_DOMAIN_H
#define PTO_COMM_DOMAIN_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pto/chip_worker.h"
#include "pto/types.h"

namespace pto {

// A named buffer carved from every rank's window, in declaration order, `nbytes` each
// (`count` elements of `dtype`; nbytes >= count x dtype size).
struct CommBufferSpec {
  std::string name;
  pto_dtype dtype = PTO_DTYPE_F32;
  uint64_t count = 0;
  uint64_t nbytes = 0;
};

// One chip's copy of a CommBufferSpec: at the same offset in each rank's window.
struct CommBuffer {
  std::string name;
  pto_dtype dtype = PTO_DTYPE_F32;
  uint64_t count = 0;
  uint64_t nbytes = 0;
  uint64_t offset = 0;   // from the start of the window
  void *addr = nullptr;  // in this chip's window (device memory on a device; the host heap on the sim)
  // Adds the buffer to `args` as a device tensor (nothing copied) of `shape`, by default
  // {count}; shape x dtype size must fit in nbytes.
  void add_to(ChipStorageTaskArgs &args, pto_direction direction,
              const std::vector<int64_t> &shape = {}) const;
};

// What one chip of a domain gets (the reference's ChipDomainContext).
struct ChipDomainContext {
  std::string name;
  int chip = 0;         // the worker's chip index
  int domain_rank = 0;  // its rank: its position in the domain's workers
  int domain_size = 0;
  uint64_t device_ctx = 0;          // its CommContext, for a kernel scalar
  uint64_t local_window_base = 0;   // its window
  uint64_t actual_window_size = 0;  // bytes of each window (window_size rounded up to 64)
  std::vector<CommBuffer> buffers;
  // The buffer named `name`; INVALID_ARGUMENT naming the ones there are if none is.
  const CommBuffer &buffer(const std::string &name) const;
};

// What the L3 and the L4 allocate_domain share: the checks and the layout of a context.
namespace domain_layout {
constexpr uint64_t kAlign = 64;  // contexts and windows start at multiples of it
inline uint64_t round_up(uint64_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}
// window_size in 1..max_window, each buffer (a name used once, a supported dtype, count
// elements within nbytes) and that they fit in the window; INVALID_ARGUMENT naming `who`, the
// argument, its value and what is allowed.
void check(const std::string &who, uint64_t window_size, uint64_t max_window,
           const std::vector<CommBufferSpec> &buffers);
// Writes the CommContext of rank `rank` at `ctx` (null: writes none, device_ctx 0) and returns
// its ChipDomainContext. windows[p]: rank p's window as this rank's kernels address it; `win`:
// each window's size (rounded up to kAlign).
ChipDomainContext context(const std::string &name, int chip, int rank, const std::vector<uint64_t> &windows,
                          uint64_t win, void *ctx, const std::vector<CommBufferSpec> &buffers);
}  // namespace domain_layout

namespace l3 {
struct DomainState;
}

// A domain allocated by HostOrchestrator::allocate_domain. Copies share the domain.
class CommDomain {
 public:
  CommDomain() = default;
  const std::string &name() const;
  const std::vector<int> &workers() const;  // chip indices; a chip's rank is its position here
  // Chip `chip`'s context; INVALID_ARGUMENT if the chip is not in the domain or the domain was
  // released.
  const ChipDomainContext &operator[](int chip) const;
  // No new task may name the domain from now on (operator[] throws). The windows stay until the
  // run has finished. Idempotent.
  void release();
  bool released() const;

 private:
  friend class HostOrchestrator;
  std::shared_ptr<l3::DomainState> s_;
};

}  // namespace pto
#endif  // PTO_COMM_DOMAIN_H
