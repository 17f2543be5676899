// tests/fuzz/fuzz_parsers.cpp — the two text formats the host reads: the sim timing profile (its
// JSON reader and checks, src/timing_model/sim_timing_profile.cpp) and PTO_SIM_KERNEL_COSTS
// (src/timing_model/kernel_pricing.cpp).
//
// The first byte picks a mode:
//   0  raw bytes as a profile: any answer but a crash; accepted means the profile's rules hold
//   1  a valid profile written from the bytes (values, whitespace, key order, escapes, an
//      "about" of nested JSON): it must be accepted, with exactly the values written
//   2  raw bytes as PTO_SIM_KERNEL_COSTS for kernels 0..2 (0 and 1 one binary)
//   3  a valid table written from the bytes: accepted, with exactly the costs written
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "timing_model/kernel_pricing.h"
#include "timing_model/sim_timing_profile.h"

namespace {

std::string space(FuzzedDataProvider &in) {
  static const char *const kSpace[] = {"", " ", "\n", "\t ", "\r\n  "};
  return kSpace[in.ConsumeIntegralInRange<size_t>(0, 4)];
}

// A JSON string literal holding `text`, escaped in the ways the bytes pick.
std::string quoted(FuzzedDataProvider &in, const std::string &text) {
  std::string q = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const int how = in.ConsumeIntegralInRange<int>(0, 3);
    // \u00XX of a byte >= 0x80 is another character (two bytes of UTF-8): those stay as they are.
    if (c == '"' || c == '\\' || u < 0x20 || (how == 3 && u < 0x80)) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", u);
      q += buf;
    } else if (c == '/' && how == 2) {
      q += "\\/";
    } else {
      q += c;
    }
  }
  return q + "\"";
}

// Any JSON value, for "about" (which the checks ignore): nested at most `depth` more levels.
std::string any_value(FuzzedDataProvider &in, int depth) {
  switch (in.ConsumeIntegralInRange<int>(0, depth > 0 ? 6 : 4)) {
    case 0:
      return "null";
    case 1:
      return in.ConsumeBool() ? "true" : "false";
    case 2:
      return std::to_string(in.ConsumeIntegral<int32_t>());
    case 3:
      return std::to_string(in.ConsumeIntegralInRange<int>(0, 9)) + "." +
             std::to_string(in.ConsumeIntegralInRange<int>(0, 999)) + "e-" +
             std::to_string(in.ConsumeIntegralInRange<int>(0, 30));
    case 4:
      return quoted(in, in.ConsumeRandomLengthString(12));
    case 5: {
      std::string a = "[" + space(in);
      const int n = in.ConsumeIntegralInRange<int>(0, 3);
      for (int i = 0; i < n; ++i) a += (i ? "," : "") + space(in) + any_value(in, depth - 1) + space(in);
      return a + "]";
    }
    default: {
      std::string o = "{" + space(in);
      const int n = in.ConsumeIntegralInRange<int>(0, 3);
      for (int i = 0; i < n; ++i)
        o += (i ? "," : "") + space(in) + quoted(in, "k" + std::to_string(i)) + space(in) + ":" + space(in) +
             any_value(in, depth - 1);
      return o + space(in) + "}";
    }
  }
}

void raw_profile(const std::string &text) {
  pto::SimTimingProfile p;
  std::string error;
  if (!pto::parse_sim_timing_profile(text, &p, &error)) {
    FUZZ_CHECK(!error.empty(), "a refused profile has no message");
    return;
  }
  FUZZ_CHECK(!p.family.empty(), "an accepted profile has no family");
  FUZZ_CHECK(p.cycles_per_us > 0 && std::isfinite(p.cycles_per_us), "accepted clock %g", p.cycles_per_us);
}

void valid_profile(FuzzedDataProvider &in) {
  const std::string family = in.ConsumeBool() ? "a2a3" : in.ConsumeRandomLengthString(8) + "x";
  uint64_t ns[3];
  for (uint64_t &v : ns)
    v = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 3) : in.ConsumeIntegral<uint64_t>();
  const uint32_t mhz_int = in.ConsumeIntegralInRange<uint32_t>(1, 100000);
  const uint32_t mhz_frac = in.ConsumeIntegralInRange<uint32_t>(0, 999);
  const std::string mhz_text = std::to_string(mhz_int) + (mhz_frac ? "." + std::to_string(mhz_frac) : "");
  const char *const names[4] = {"dispatch_ns", "completion_ns", "submit_ns", "cycles_per_us"};
  std::vector<std::string> constants;
  for (int i = 0; i < 4; ++i) {
    const std::string value = i < 3 ? std::to_string(ns[i]) : mhz_text;
    const std::string source = quoted(in, in.ConsumeRandomLengthString(16) + "s");
    std::string c = quoted(in, names[i]) + space(in) + ":" + space(in) + "{" + space(in);
    if (in.ConsumeBool()) {
      c += "\"value\"" + space(in) + ":" + space(in) + value + space(in) + "," + space(in) +
           "\"source\":" + source;
    } else {
      c += "\"source\":" + space(in) + source + space(in) + "," + "\"value\"" + ":" + space(in) + value;
    }
    constants.push_back(c + space(in) + "}");
  }
  for (size_t i = constants.size(); i > 1; --i)
    std::swap(constants[i - 1], constants[in.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  std::string text = space(in) + "{" + space(in);
  std::vector<std::string> members = {quoted(in, "family") + ":" + space(in) + quoted(in, family)};
  std::string cs = "{" + space(in);
  for (size_t i = 0; i < constants.size(); ++i) cs += (i ? "," + space(in) : "") + constants[i];
  members.push_back("\"constants\"" + space(in) + ":" + space(in) + cs + space(in) + "}");
  if (in.ConsumeBool()) members.push_back("\"about\":" + space(in) + any_value(in, 3));
  for (size_t i = members.size(); i > 1; --i)
    std::swap(members[i - 1], members[in.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  for (size_t i = 0; i < members.size(); ++i) text += (i ? "," + space(in) : "") + members[i] + space(in);
  text += "}" + space(in);

  pto::SimTimingProfile p;
  std::string error;
  FUZZ_CHECK(pto::parse_sim_timing_profile(text, &p, &error), "a valid profile is refused: %s\n%s",
             error.c_str(), text.c_str());
  FUZZ_CHECK(p.family == family, "family read as '%s'", p.family.c_str());
  FUZZ_CHECK(p.dispatch_ns == ns[0] && p.completion_ns == ns[1] && p.submit_ns == ns[2],
             "latencies read as %llu %llu %llu\n%s", static_cast<unsigned long long>(p.dispatch_ns),
             static_cast<unsigned long long>(p.completion_ns), static_cast<unsigned long long>(p.submit_ns),
             text.c_str());
  FUZZ_CHECK(std::fabs(p.cycles_per_us - std::stod(mhz_text)) <= 1e-9 * p.cycles_per_us, "clock read as %g",
             p.cycles_per_us);
}

// Kernels 0..2: 0 and 1 are one binary (the same entry), 2 another.
const std::map<uint32_t, pto::KernelEntry> &kernels() {
  static const std::map<uint32_t, pto::KernelEntry> k = [] {
    std::map<uint32_t, pto::KernelEntry> m;
    for (uint32_t id = 0; id < 3; ++id) {
      m[id].func_id = id;
      m[id].loaded.entry_addr = id < 2 ? 0x1000 : 0x2000;
    }
    return m;
  }();
  return k;
}

void raw_costs(const std::string &text) {
  std::vector<pto::SimKernelCost> costs;
  std::string error;
  if (!pto::parse_kernel_costs(text, kernels(), &costs, &error)) {
    FUZZ_CHECK(error.find("PTO_SIM_KERNEL_COSTS=") == 0, "a refused table's message: %s", error.c_str());
    return;
  }
  FUZZ_CHECK(costs.size() <= 2, "%zu costs for two kernel binaries", costs.size());
  for (const pto::SimKernelCost &c : costs) {
    FUZZ_CHECK(c.entry == 0x1000 || c.entry == 0x2000, "a cost for entry %llx",
               static_cast<unsigned long long>(c.entry));
    FUZZ_CHECK(c.arg >= -1 && c.arg <= 99999, "argument index %d", c.arg);
    FUZZ_CHECK(std::isfinite(c.ns_per_unit) && c.ns_per_unit >= 0, "ns per unit %g", c.ns_per_unit);
  }
}

void valid_costs(FuzzedDataProvider &in) {
  struct Want {
    uint64_t base = 0;
    int32_t arg = -1;
    uint32_t k_int = 0, k_frac = 0;
    bool set = false;
  } want[2];  // by binary: 0 (func_ids 0 and 1), 1 (func_id 2)
  std::string text;
  const int items = in.ConsumeIntegralInRange<int>(1, 4);
  for (int i = 0; i < items; ++i) {
    const uint32_t id = in.ConsumeIntegralInRange<uint32_t>(0, 2);
    Want &w = want[id < 2 ? 0 : 1];
    if (!w.set) {
      w.set = true;
      const int form = in.ConsumeIntegralInRange<int>(0, 2);  // ns, ns+k*aI, k*aI
      if (form != 2) w.base = in.ConsumeIntegral<uint64_t>();
      if (form != 0) {
        w.arg = in.ConsumeIntegralInRange<int32_t>(0, 99999);
        w.k_int = in.ConsumeIntegralInRange<uint32_t>(0, 100000);
        w.k_frac = in.ConsumeIntegralInRange<uint32_t>(0, 99);
      }
    }
    std::string cost;
    if (w.arg < 0) {
      cost = std::to_string(w.base);
    } else {
      cost = std::to_string(w.k_int) + "." + std::to_string(w.k_frac) + "*a" + std::to_string(w.arg);
      if (w.base != 0 || in.ConsumeBool()) cost = std::to_string(w.base) + "+" + cost;
    }
    text += (i ? "," : "") + std::to_string(id) + "=" + cost;
  }
  std::vector<pto::SimKernelCost> costs;
  std::string error;
  FUZZ_CHECK(pto::parse_kernel_costs(text, kernels(), &costs, &error), "a valid table is refused: %s",
             error.c_str());
  for (const pto::SimKernelCost &c : costs) {
    const Want &w = want[c.entry == 0x1000 ? 0 : 1];
    FUZZ_CHECK(w.set, "%s: a cost for a kernel the table does not name", text.c_str());
    const double k = std::stod(std::to_string(w.k_int) + "." + std::to_string(w.k_frac));
    FUZZ_CHECK(c.base_ns == w.base && c.arg == w.arg && (w.arg < 0 || c.ns_per_unit == k),
               "%s: read as base %llu arg %d k %g", text.c_str(), static_cast<unsigned long long>(c.base_ns),
               c.arg, c.ns_per_unit);
  }
  FUZZ_CHECK(costs.size() == static_cast<size_t>(want[0].set + want[1].set), "%s: %zu costs", text.c_str(),
             costs.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 4;
  FuzzedDataProvider in(data + 1, size - 1);
  switch (mode) {
    case 0:
      raw_profile(in.ConsumeRemainingBytesAsString());
      break;
    case 1:
      valid_profile(in);
      break;
    case 2:
      raw_costs(in.ConsumeRemainingBytesAsString());
      break;
    default:
      valid_costs(in);
      break;
  }
  return 0;
}
