// tests/common/trace_json.h — reading fields of the trace JSON a worker writes (last_trace_json),
// for tests that check a run from its trace without a JSON library.
#ifndef PTO_TESTS_TRACE_JSON_H
#define PTO_TESTS_TRACE_JSON_H

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

}  // namespace pto_test
#endif  // PTO_TESTS_TRACE_JSON_H
