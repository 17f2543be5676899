// tests/common/trace_json.h — reading fields of the trace JSON a worker writes (last_trace_json),
// for tests that check a run from its trace without a JSON library.
#ifndef PTO_TESTS_TRACE_JSON_H
#define PTO_TESTS_TRACE_JSON_H

#include <cstdint>
#include <map>
#include <string>

namespace pto_test {

// The raw value after `"key": ` in the flat JSON object that starts at `at`: a number, a
// quoted string (quotes kept) or an array; "" when the object has no such key.
inline std::string json_field(const std::string &json, size_t at, const std::string &key) {
  const size_t end = json.find('}', at);
  const size_t k = json.find("\"" + key + "\": ", at);
  if (k == std::string::npos || k > end) return "";
  const size_t v = k + key.size() + 4;
  const size_t stop = json[v] == '[' ? json.find(']', v) + 1 : json.find_first_of(",}", v);
  return json.substr(v, stop - v);
}

// json_field without the quotes of a string value.
inline std::string json_string_field(const std::string &json, size_t at, const std::string &key) {
  const std::string v = json_field(json, at, key);
  return v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
}

// One task of a trace: its kernel, times (ns from the launch) and, in timing mode, its "cost".
struct TracedTask {
  int64_t id = -1;
  uint32_t func = 0;
  uint64_t start = 0, end = 0;
  std::string cost_source;  // "" without a cost
  uint64_t cycles = 0;      // isa_model only
};

// The trace's tasks that ran, by id (one task object per line, docs/guide/profiling.md).
inline std::map<int64_t, TracedTask> traced_tasks(const std::string &json) {
  std::map<int64_t, TracedTask> out;
  const size_t to = json.find("\"edges\": [");
  for (size_t at = json.find("\"tasks\": ["); (at = json.find("\n{\"id\": ", at)) < to; ++at) {
    TracedTask t;
    t.id = std::stoll(json_field(json, at, "id"));
    t.func = static_cast<uint32_t>(std::stoul(json_field(json, at, "func")));
    if (json_field(json, at, "start") == "null") continue;  // skipped
    t.start = std::stoull(json_field(json, at, "start"));
    t.end = std::stoull(json_field(json, at, "end"));
    const size_t cost = json.find("\"cost\": {", at);
    if (cost < json.find('\n', at + 1)) {
      t.cost_source = json_string_field(json, cost + 8, "source");
      const std::string cycles = json_field(json, cost + 8, "cycles");
      if (!cycles.empty()) t.cycles = std::stoull(cycles);
    }
    out[t.id] = t;
  }
  return out;
}

}  // namespace pto_test
#endif  // PTO_TESTS_TRACE_JSON_H
