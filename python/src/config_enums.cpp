// python/src/config_enums.cpp — the Python enums of the enumerated settings and the one conversion
// of a value given for such a setting (config_enums.h).
#include "config_enums.h"

#include <cctype>
#include <unordered_map>

#include "pto/error.h"

namespace pto_py {
namespace {

using nb::literals::operator""_a;

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The index of `name` among the names (any case), or count if it is none of them.
uint32_t find_name(const EnumFacts &f, const std::string &name) {
  const std::string l = lower(name);
  for (uint32_t i = 0; i < f.count; ++i)
    if (l == f.names[i]) return i;
  return f.count;
}

// Every enum this file bound, by its Python class: what enum_value(enum_type, ...) looks up.
std::unordered_map<PyObject *, EnumFacts> &registry() {
  static auto *r = new std::unordered_map<PyObject *, EnumFacts>();  // never freed, as the enums
  return *r;
}

template <typename E>
void bind_enum(nb::module_ &m) {
  using S = EnumSpec<E>;
  if constexpr (S::is_str) {
    nb::enum_<E> e(m, S::py_name, nb::is_str(), S::doc);
    for (uint32_t i = 0; i < S::count; ++i)
      e.str_value(member_name(S::names[i]).c_str(), static_cast<E>(i), S::names[i]);
    // As the standard library's StrEnum: str() and format() give the name ("per_stream"), the
    // word the trace and RunStats print; repr() stays PipelineScope.PER_STREAM.
    nb::handle str_type(reinterpret_cast<PyObject *>(&PyUnicode_Type));
    e.attr("__str__") = str_type.attr("__str__");
    e.attr("__format__") = str_type.attr("__format__");
  } else {
    nb::enum_<E> e(m, S::py_name, nb::is_arithmetic(), S::doc);
    for (uint32_t i = 0; i < S::count; ++i) e.value(member_name(S::names[i]).c_str(), static_cast<E>(i));
  }
  registry()[nb::type<E>().ptr()] = enum_facts<E>();
}

}  // namespace

std::string member_name(const char *name) {
  std::string s(name);
  for (char &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

uint32_t enum_number(const EnumFacts &f, nb::handle value, const std::string &field) {
  const std::string names = [&] {
    std::string out;
    for (uint32_t i = 0; i < f.count; ++i) out += std::string(i ? ", '" : "'") + f.names[i] + "'";
    return out;
  }();
  const std::string numbers = "0.." + std::to_string(f.count - 1);
  const std::string ways = " (a " + std::string(f.py_name) +
                           " member, one of these names in any case, or a number " + numbers + ")";
  const std::string given = field + "=" + nb::cast<std::string>(nb::repr(value));
  PyObject *o = value.ptr();

  const int own = PyObject_IsInstance(o, f.type.ptr());
  if (own < 0) throw nb::python_error();
  if (own) return find_name(f, nb::cast<std::string>(value.attr("name")));

  static PyObject *enum_base = nb::object(nb::module_::import_("enum").attr("Enum")).release().ptr();
  const int other = PyObject_IsInstance(o, enum_base);
  if (other < 0) throw nb::python_error();
  if (other) {
    const std::string their =
        nb::cast<std::string>(nb::handle(reinterpret_cast<PyObject *>(Py_TYPE(o))).attr("__name__"));
    throw nb::type_error(
        (given + " is a " + their + ", not a " + f.py_name + "; allowed: " + names + ways).c_str());
  }
  if (PyUnicode_Check(o)) {
    const uint32_t i = find_name(f, nb::cast<std::string>(value));
    if (i == f.count) throw pto::Error(PTO_INVALID_ARGUMENT, given + " is not one of " + names + ways);
    return i;
  }
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || n < 0 || n >= static_cast<long long>(f.count))
      throw pto::Error(PTO_INVALID_ARGUMENT, given + " is outside " + numbers + "; allowed: " + names + ways);
    return static_cast<uint32_t>(n);
  }
  throw nb::type_error((given + " is not a " + f.py_name + "; allowed: " + names + ways).c_str());
}

void bind_config_enums(nb::module_ &m) {
  bind_enum<pto::WindowOverflow>(m);
  bind_enum<pto::PipelineScope>(m);
  bind_enum<pto::DispatchMetric>(m);
  bind_enum<pto::DispatchScope>(m);
  bind_enum<pto::DispatchPolicy>(m);
  bind_enum<pto_log_level>(m);
  bind_enum<pto::ChipMode>(m);

  m.def(
      "enum_value",
      [](nb::handle enum_type, nb::handle value, const std::string &field) -> nb::object {
        const auto it = registry().find(enum_type.ptr());
        if (it == registry().end())
          throw nb::type_error(("enum_value: " + nb::cast<std::string>(nb::repr(enum_type)) +
                                " is not one of pto_runtime's setting enums")
                                   .c_str());
        const uint32_t i = enum_number(it->second, value, field);
        const nb::str name(member_name(it->second.names[i]).c_str());
        PyObject *member = PyObject_GetItem(enum_type.ptr(), name.ptr());  // PipelineScope["PER_POOL"]
        if (!member) throw nb::python_error();
        return nb::steal(member);
      },
      "enum_type"_a, "value"_a.none(), "field"_a,
      nb::sig("def enum_value(enum_type: type[_E], value: object, field: str) -> _E"),
      "The member of enum_type (one of the setting enums: PipelineScope, ChipMode, ...) that value "
      "stands for: a member, a name in any case or a number, as every setting of that type takes "
      "it. Raises InvalidArgumentError (unknown name, number out of range) or TypeError naming "
      "field and value and listing the names.");
}

}  // namespace pto_py
