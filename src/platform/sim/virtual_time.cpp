// src/platform/sim/virtual_time.cpp — the timing model of a seeded run (virtual_time.h).
#include "virtual_time.h"

#include <algorithm>

#include "pto_platform/clock.h"

namespace pto {
namespace fibers {

void VirtualTime::begin(const SimTiming *timing) {
  on_ = timing != nullptr;
  ++epoch_;
  makespan_.store(0, std::memory_order_relaxed);
  for (uint64_t &c : priced_) c = 0;
  kernel_costs_.clear();
  if (timing == nullptr) return;
  factor_ = timing->kernel_factor;
  cycles_per_us_ = timing->cycles_per_us;
  for (const SimKernelCost &c : timing->kernel_costs) kernel_costs_[c.entry] = c;
  constexpr int A = static_cast<int>(FiberRole::kAicpu), C = static_cast<int>(FiberRole::kCore);
  for (auto &row : latency_)
    for (uint64_t &l : row) l = 0;
  latency_[A][C] = timing->dispatch_ns;
  latency_[C][A] = timing->completion_ns;
  latency_[A][A] = timing->submit_ns;
  for (uint32_t k = 0; k < kDeviceWorkKinds; ++k) {
    work_ns_[k] = timing->work_ns[k];
    work_unit_ns_[k] = timing->work_unit_ns[k];
  }
  gm_bytes_per_ns_ = timing->gm_bytes_per_ns;
  mte2_cube_ = timing->mte2_cube_bytes_per_ns;
  mte2_vector_ = timing->mte2_vector_bytes_per_ns;
  mte3_ = timing->mte3_bytes_per_ns;
  fixp_ = timing->fixp_bytes_per_ns;
  gm_free_ = 0;
}

bool VirtualTime::device_work(Fiber *f, uint32_t what, uint32_t units) {
  if (what >= kDeviceWorkKinds) return false;
  const uint64_t ns = work_ns_[what] + work_unit_ns_[what] * units;
  if (ns == 0) return false;
  uint64_t &vt = clock(f);
  vt += ns;
  reached(vt);
  return true;
}

void VirtualTime::rung(Fiber *f, Fiber *ringer) {
  uint64_t &vt = clock(f);
  const uint64_t at = clock(ringer) + latency_[static_cast<int>(ringer->role)][static_cast<int>(f->role)];
  if (at > vt) {
    vt = at;
    reached(vt);
  }
}

void VirtualTime::yielded(Fiber *f, const std::vector<Fiber *> &runnable) {
  if (runnable.empty()) return;
  uint64_t earliest = UINT64_MAX;
  for (Fiber *o : runnable) earliest = std::min(earliest, clock(o));
  uint64_t &vt = clock(f);
  if (earliest > vt) vt = earliest;
}

// A kernel was suspended or returned: its compute since it last went on counts, scaled, unless
// the cost table fixes its time.
void VirtualTime::account_segment(Fiber *f) {
  if (f->kernel_fixed) return;
  const uint64_t now = platform_now_ns();
  const uint64_t host = now > f->segment_start ? now - f->segment_start : 0;
  f->vt += static_cast<uint64_t>(static_cast<double>(host) * factor_ + 0.5);
  reached(f->vt);
}

void VirtualTime::kernel_begin(Fiber *f, uint64_t entry, int64_t *args, uint32_t num_args,
                               KernelPrice *price) {
  f->in_kernel = true;
  const auto it = kernel_costs_.find(entry);
  f->kernel_fixed = it != kernel_costs_.end();
  f->kernel_ns = 0;
  *price = KernelPrice{};
  if (f->kernel_fixed && it->second.model_price != nullptr) {
    const SimKernelCost &c = it->second;
    f->kernel_ns = c.model_price(c.model, args, cycles_per_us_, price);  // sets source, cycles, pipes
    if (gm_bytes_per_ns_ > 0) {
      // The bytes its transfers move, at the rates the model priced them; they take their turn
      // on the shared global memory: the kernel ends no earlier than its last byte.
      const double bytes = price->pipe_ns[1] * (c.cube ? mte2_cube_ : mte2_vector_) +
                           price->pipe_ns[6] * mte3_ + price->pipe_ns[4] * fixp_;
      const uint64_t start = clock(f);
      gm_free_ = std::max(gm_free_, start) + static_cast<uint64_t>(bytes / gm_bytes_per_ns_ + 0.5);
      f->kernel_ns = std::max(f->kernel_ns, gm_free_ - start);
    }
  } else if (f->kernel_fixed) {
    const SimKernelCost &c = it->second;
    f->kernel_ns = c.base_ns;
    if (c.arg >= 0 && static_cast<uint32_t>(c.arg) < num_args && args[c.arg] > 0)
      f->kernel_ns += static_cast<uint64_t>(c.ns_per_unit * static_cast<double>(args[c.arg]) + 0.5);
    price->source = PTO_PRICE_TABLE;
  } else {
    price->source = PTO_PRICE_HOST_TIME;
  }
  ++priced_[price->source];
  f->kernel_vt0 = clock(f);
  f->segment_start = platform_now_ns();  // after the model: its time is not the kernel's
}

void VirtualTime::kernel_end(Fiber *f) {
  if (!f->in_kernel) return;
  f->in_kernel = false;
  if (f->kernel_fixed) {
    f->vt = std::max(f->vt, f->kernel_vt0 + f->kernel_ns);
    reached(f->vt);
  } else {
    account_segment(f);
  }
}

void VirtualTime::priced(uint64_t (&counts)[PTO_PRICE_SOURCE_COUNT]) const {
  for (int i = 0; i < PTO_PRICE_SOURCE_COUNT; ++i) counts[i] = priced_[i];
}

}  // namespace fibers
}  // namespace pto
