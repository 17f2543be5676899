// src/timing_model/sim_timing_profile.cpp — reads a sim timing profile (sim_timing_profile.h): a small
// JSON reader, the profile's checks, and where the default files are.
#include "timing_model/sim_timing_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "pto_platform/files.h"

namespace pto {
namespace {

// ---- JSON (RFC 8259), as much as a profile needs: values are kept as parsed, numbers as text.

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  std::string text;  // kString: the decoded string; kNumber: the number as written
  bool boolean = false;
  std::vector<Json> items;                            // kArray
  std::vector<std::pair<std::string, Json>> members;  // kObject, in file order

  const Json *member(const std::string &key) const {
    for (const auto &m : members)
      if (m.first == key) return &m.second;
    return nullptr;
  }
};

const char *kind_name(Json::Kind k) {
  switch (k) {
    case Json::kNull:
      return "null";
    case Json::kBool:
      return "a boolean";
    case Json::kNumber:
      return "a number";
    case Json::kString:
      return "a string";
    case Json::kArray:
      return "an array";
    case Json::kObject:
      return "an object";
  }
  return "?";
}

class JsonReader {
 public:
  explicit JsonReader(const std::string &text) : s_(text) {}

  // The document's one value; false with *error = "line L, column C: what" when it is not JSON.
  bool read(Json *out, std::string *error) {
    skip_space();
    if (!value(out, 0)) return failed(error);
    skip_space();
    if (at_ < s_.size()) {
      why_ = "text after the end of the JSON value";
      return failed(error);
    }
    return true;
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool failed(std::string *error) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    *error = "not JSON: line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + why_;
    return false;
  }
  bool fail(const std::string &why) {
    why_ = why;
    return false;
  }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r'))
      ++at_;
  }
  bool literal(const char *word) {
    const size_t n = strlen(word);
    if (s_.compare(at_, n, word) != 0) return fail("not a JSON value");
    at_ += n;
    return true;
  }

  bool value(Json *out, int depth) {
    if (at_ >= s_.size()) return fail("the text ends where a value should be");
    switch (s_[at_]) {
      case '{':
        return object(out, depth);
      case '[':
        return array(out, depth);
      case '"':
        out->kind = Json::kString;
        return string(&out->text);
      case 't':
        out->kind = Json::kBool;
        out->boolean = true;
        return literal("true");
      case 'f':
        out->kind = Json::kBool;
        out->boolean = false;
        return literal("false");
      case 'n':
        out->kind = Json::kNull;
        return literal("null");
      default:
        out->kind = Json::kNumber;
        return number(&out->text);
    }
  }

  bool object(Json *out, int depth) {
    if (depth >= kMaxDepth) return fail("nested too deeply");
    out->kind = Json::kObject;
    ++at_;  // '{'
    skip_space();
    if (at_ < s_.size() && s_[at_] == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_space();
      if (at_ >= s_.size()) return fail("the text ends inside an object");
      if (s_[at_] != '"') return fail("expected a key (a string in double quotes)");
      std::string key;
      const size_t key_at = at_;
      if (!string(&key)) return false;
      if (out->member(key)) {
        at_ = key_at;
        return fail("the key \"" + key + "\" appears twice in one object");
      }
      skip_space();
      if (at_ >= s_.size() || s_[at_] != ':') return fail("expected ':' after the key");
      ++at_;
      skip_space();
      out->members.emplace_back(key, Json());
      if (!value(&out->members.back().second, depth + 1)) return false;
      skip_space();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < s_.size() && s_[at_] == '}') {
        ++at_;
        return true;
      }
      return fail(at_ < s_.size() ? "expected ',' or '}'" : "the text ends inside an object");
    }
  }

  bool array(Json *out, int depth) {
    if (depth >= kMaxDepth) return fail("nested too deeply");
    out->kind = Json::kArray;
    ++at_;  // '['
    skip_space();
    if (at_ < s_.size() && s_[at_] == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_space();
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      skip_space();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < s_.size() && s_[at_] == ']') {
        ++at_;
        return true;
      }
      return fail(at_ < s_.size() ? "expected ',' or ']'" : "the text ends inside an array");
    }
  }

  static void append_utf8(uint32_t cp, std::string *out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool hex4(uint32_t *cp) {
    if (at_ + 4 > s_.size()) return fail("a \\u escape needs four hex digits");
    *cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[at_++];
      *cp <<= 4;
      if (c >= '0' && c <= '9')
        *cp |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        *cp |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        *cp |= static_cast<uint32_t>(c - 'A' + 10);
      else
        return fail("a \\u escape needs four hex digits");
    }
    return true;
  }

  bool string(std::string *out) {
    ++at_;  // '"'
    out->clear();
    while (at_ < s_.size()) {
      const char c = s_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) {
        --at_;
        return fail("a control character inside a string (write it as an escape)");
      }
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (at_ >= s_.size()) break;
      const char e = s_[at_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(at_, 2, "\\u") == 0) {  // a surrogate pair
            at_ += 2;
            uint32_t low = 0;
            if (!hex4(&low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) return fail("a \\u surrogate pair with a bad second half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(cp, out);
          break;
        }
        default:
          --at_;
          return fail(std::string("an unknown escape \\") + e);
      }
    }
    return fail("a string without its closing '\"'");
  }

  bool number(std::string *out) {
    const size_t start = at_;
    const auto digits = [this] {
      const size_t from = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      return at_ > from;
    };
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    if (at_ < s_.size() && s_[at_] == '0') {
      ++at_;
    } else if (!digits()) {
      at_ = start;
      return fail("not a JSON value");
    }
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      if (!digits()) return fail("a number needs digits after its '.'");
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (!digits()) return fail("a number needs digits in its exponent");
    }
    *out = s_.substr(start, at_ - start);
    return true;
  }

  const std::string &s_;
  size_t at_ = 0;
  std::string why_;
};

// ---- The profile.

// A constant is a whole number of ns (0 or more) or a rate (a positive number); each is stored in
// one field of the profile. The first four are required; a profile without one of the others
// leaves that part of the model out (0: free, or for gm_GBps: no bandwidth limit).
struct Constant {
  const char *name;
  uint64_t SimTimingProfile::*ns;  // a whole number of ns, else
  double SimTimingProfile::*rate;  // a positive number
  bool required = false;
};
constexpr Constant kConstants[] = {
    {"dispatch_ns", &SimTimingProfile::dispatch_ns, nullptr, true},
    {"completion_ns", &SimTimingProfile::completion_ns, nullptr, true},
    {"submit_ns", &SimTimingProfile::submit_ns, nullptr, true},
    {"cycles_per_us", nullptr, &SimTimingProfile::cycles_per_us, true},
    {"aicpu_submit_ns", &SimTimingProfile::aicpu_submit_ns, nullptr},
    {"aicpu_submit_tensor_ns", &SimTimingProfile::aicpu_submit_tensor_ns, nullptr},
    {"aicpu_dispatch_ns", &SimTimingProfile::aicpu_dispatch_ns, nullptr},
    {"aicpu_completion_ns", &SimTimingProfile::aicpu_completion_ns, nullptr},
    {"device_preamble_ns", &SimTimingProfile::device_preamble_ns, nullptr},
    {"device_teardown_ns", &SimTimingProfile::device_teardown_ns, nullptr},
    {"device_reset_per_task_ns", &SimTimingProfile::device_reset_per_task_ns, nullptr},
    {"gm_GBps", nullptr, &SimTimingProfile::gm_GBps},
    {"mte2_cube_GiBps", nullptr, &SimTimingProfile::mte2_cube_GiBps},
    {"mte2_vector_GiBps", nullptr, &SimTimingProfile::mte2_vector_GiBps},
    {"mte3_GiBps", nullptr, &SimTimingProfile::mte3_GiBps},
    {"fixp_GiBps", nullptr, &SimTimingProfile::fixp_GiBps},
};

std::string constant_names() {
  std::string all;
  for (const Constant &c : kConstants) all += (all.empty() ? "" : ", ") + std::string(c.name);
  return all;
}

bool read_whole_file(const std::string &path, std::string *text, std::string *error) {
  FILE *f = fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *error = std::string("cannot open the file: ") + strerror(errno);
    return false;
  }
  std::unique_ptr<FILE, int (*)(FILE *)> close(f, fclose);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) text->append(buf, n);
  if (ferror(f)) {
    *error = std::string("cannot read the file: ") + strerror(errno);
    return false;
  }
  return true;
}

// One constant: {"value": <number>, "source": "<where it comes from>"}.
bool read_constant(const Constant &c, const Json &j, SimTimingProfile *out, std::string *error) {
  const std::string name = std::string("constants.") + c.name;
  if (j.kind != Json::kObject) {
    *error = name + " is " + kind_name(j.kind) + ", not an object {\"value\": ..., \"source\": \"...\"}";
    return false;
  }
  for (const auto &m : j.members) {
    if (m.first != "value" && m.first != "source") {
      *error = name + " has an unknown key \"" + m.first + "\" (a constant has \"value\" and \"source\")";
      return false;
    }
  }
  const Json *value = j.member("value");
  const Json *source = j.member("source");
  if (value == nullptr) {
    *error = name + ".value is missing";
    return false;
  }
  if (value->kind != Json::kNumber) {
    *error = name + ".value is " + kind_name(value->kind) + ", not a number";
    return false;
  }
  if (source == nullptr || source->kind != Json::kString || source->text.empty()) {
    *error = name + ".source is " +
             (source == nullptr               ? std::string("missing")
              : source->kind != Json::kString ? kind_name(source->kind)
                                              : "empty") +
             ": say where the number comes from, or \"estimate: ...\" and why";
    return false;
  }
  const std::string &v = value->text;
  if (c.ns != nullptr) {
    if (v[0] == '-') {
      *error = name + ".value is negative (" + v + "): a latency is a whole number of ns, 0 or more";
      return false;
    }
    if (v.find_first_not_of("0123456789") != std::string::npos) {
      *error = name + ".value is " + v + ", not a whole number of ns";
      return false;
    }
    errno = 0;
    const unsigned long long ns = strtoull(v.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      *error = name + ".value is " + v + ", too large";
      return false;
    }
    out->*c.ns = ns;
  } else {
    const double rate = strtod(v.c_str(), nullptr);
    if (!(rate > 0) || !std::isfinite(rate)) {
      *error = name + ".value is " + v + ": a rate (" +
               (c.rate == &SimTimingProfile::cycles_per_us ? "the clock in MHz" : "GB/s or GiB/s") +
               ") must be a positive number";
      return false;
    }
    out->*c.rate = rate;
  }
  return true;
}

bool check_profile(const Json &doc, SimTimingProfile *out, std::string *error) {
  if (doc.kind != Json::kObject) {
    *error = std::string("the file holds ") + kind_name(doc.kind) + ", not a profile object";
    return false;
  }
  for (const auto &m : doc.members) {
    if (m.first != "about" && m.first != "family" && m.first != "constants") {
      *error = "unknown key \"" + m.first +
               "\" (a profile has \"family\", \"constants\" and optionally \"about\")";
      return false;
    }
  }
  const Json *family = doc.member("family");
  if (family == nullptr || family->kind != Json::kString || family->text.empty()) {
    *error = std::string("\"family\" is ") +
             (family == nullptr               ? "missing"
              : family->kind != Json::kString ? kind_name(family->kind)
                                              : "empty") +
             ": name the chip family the profile is for (\"a2a3\", \"a5\")";
    return false;
  }
  out->family = family->text;
  const Json *constants = doc.member("constants");
  if (constants == nullptr || constants->kind != Json::kObject) {
    *error = std::string("\"constants\" is ") +
             (constants == nullptr ? "missing" : kind_name(constants->kind)) + ", not an object";
    return false;
  }
  for (const auto &m : constants->members) {
    bool known = false;
    for (const Constant &c : kConstants) known = known || m.first == c.name;
    if (!known) {
      *error = "constants has an unknown key \"" + m.first +
               "\" (the constants are " + constant_names() + ")";
      return false;
    }
  }
  for (const Constant &c : kConstants) {
    const Json *j = constants->member(c.name);
    if (j == nullptr && !c.required) continue;
    if (j == nullptr) {
      *error = std::string("constants.") + c.name + " is missing";
      return false;
    }
    if (!read_constant(c, *j, out, error)) return false;
  }
  return true;
}

}  // namespace

bool parse_sim_timing_profile(const std::string &text, SimTimingProfile *out, std::string *error) {
  Json doc;
  if (!JsonReader(text).read(&doc, error)) return false;
  SimTimingProfile p;
  if (!check_profile(doc, &p, error)) return false;
  *out = std::move(p);
  return true;
}

bool read_sim_timing_profile(const std::string &path, SimTimingProfile *out, std::string *error) {
  std::string text;
  if (!read_whole_file(path, &text, error)) return false;
  SimTimingProfile p;
  if (!parse_sim_timing_profile(text, &p, error)) return false;
  p.path = path;
  *out = std::move(p);
  return true;
}

std::string default_sim_timing_profile_path(const std::string &family) {
  // The host program is <root>/runtimes/<backend>/<runtime>/libhost.so and the profiles are
  // <root>/sim_profiles/, <root> the build tree's stage/ directory or the installed package's
  // pto_runtime/ (src/timing_model/CMakeLists.txt puts them there).
  std::string dir = platform_directory_of_this_binary();  // libhost.so's
  for (int up = 0; up < 3 && !dir.empty(); ++up) {
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos || slash == 0 ? std::string() : dir.substr(0, slash);
  }
  if (dir.empty()) return {};
  return dir + "/sim_profiles/" + family + ".json";
}

pto_status load_sim_timing_profile(const char *platform, const char *family, SimTimingProfile *out,
                                   std::string *error) {
  const char *env = getenv("PTO_SIM_PROFILE");
  std::string path, who;
  if (env != nullptr && *env != '\0') {
    path = env;
    who = "PTO_SIM_PROFILE=" + path;
  } else {
    path = default_sim_timing_profile_path(family);
    if (path.empty()) {
      *error = std::string("the ") + family +
               " timing profile: the host program cannot locate itself to find the default profile; name a "
               "profile file with PTO_SIM_PROFILE";
      return PTO_INVALID_ARGUMENT;
    }
    who = std::string("the default ") + family + " timing profile " + path +
          " (PTO_SIM_PROFILE unset; it may name another file)";
  }
  std::string why;
  SimTimingProfile p;
  if (!read_sim_timing_profile(path, &p, &why)) {
    *error = who + ": " + why;
    return PTO_INVALID_ARGUMENT;
  }
  if (p.family != family) {
    *error = who + ": the profile is for family \"" + p.family + "\", the platform " + platform +
             " is of family \"" + family + "\"";
    return PTO_INVALID_ARGUMENT;
  }
  *out = std::move(p);
  return PTO_OK;
}

}  // namespace pto
