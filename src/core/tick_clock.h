// src/core/tick_clock.h — device timestamps (platform ticks) to platform nanoseconds, on the host.
//
// Device code stamps per-task events with platform_ticks() (pto_platform/clock.h): one register
// read, where the monotonic clock costs a few times that on every kernel, dispatch and
// completion. Each scheduler thread takes a (ns, ticks) pair when its run starts and another when
// it ends (core/run_counters.h); the host maps ticks through scheduler 0's pairs: the start pair
// fixes the offset, and the slope between the two pairs the rate when the run lasted long enough
// to measure it (so a drifting monotonic clock stays matched), else the device's calibrated
// Device::ns_per_tick(). The map is monotonic, so the order of events survives it.
#ifndef PTO_CORE_TICK_CLOCK_H
#define PTO_CORE_TICK_CLOCK_H

#include <cmath>
#include <cstdint>

namespace pto {

class TickClock {
 public:
  static constexpr uint64_t kMinSpanNs = 2000000;  // shorter runs use the device's rate

  TickClock() = default;
  TickClock(uint64_t start_ns, uint64_t start_ticks, uint64_t end_ns, uint64_t end_ticks, double device_rate)
      : ns0_(start_ns), ticks0_(start_ticks), rate_(device_rate > 0 ? device_rate : 1.0) {
    if (end_ns >= start_ns + kMinSpanNs && end_ticks > start_ticks)
      rate_ = static_cast<double>(end_ns - start_ns) / static_cast<double>(end_ticks - start_ticks);
  }

  // Platform nanoseconds at device tick `t` (0 stays 0: "never stamped").
  uint64_t ns(uint64_t t) const {
    if (t == 0) return 0;
    const int64_t d = std::llround(static_cast<double>(static_cast<int64_t>(t - ticks0_)) * rate_);
    return d < 0 && static_cast<uint64_t>(-d) > ns0_ ? 0 : ns0_ + static_cast<uint64_t>(d);
  }
  // A duration of `ticks` in nanoseconds.
  uint64_t span_ns(uint64_t ticks) const {
    return static_cast<uint64_t>(std::llround(static_cast<double>(ticks) * rate_));
  }
  double ns_per_tick() const { return rate_; }

 private:
  uint64_t ns0_ = 0, ticks0_ = 0;
  double rate_ = 1.0;
};

}  // namespace pto
#endif  // PTO_CORE_TICK_CLOCK_H
