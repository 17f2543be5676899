// python/src/config_enums.h — the enumerated settings of the Python API: one Python enum per C++
// enum (nb::enum_, so both languages share one definition), and the one conversion every field
// of such a type goes through (ChipCallConfig, CompileOptions, the L3/L4 worker's mode).
//
// A field takes a member of its enum, the member's name in any case ("per_stream",
// "PER_STREAM") or its number (the C API's encoding, so ints keep working), and reads back as
// the member. Anything else is InvalidArgumentError (an unknown name, a number out of range) or
// TypeError (a value of another type, a member of another enum), naming the field and the value
// and listing the names.
//
// Modes (WindowOverflow, PipelineScope, DispatchMetric, DispatchScope, DispatchPolicy,
// ChipMode) are StrEnums: a member is its name, the spelling the trace, RunStats, reprs and
// messages use, so it prints, compares and serializes as that name. LogLevel is an IntEnum:
// it is a severity, and its members order by it (LogLevel.INFO < LogLevel.WARN), as the
// logging module's levels do.
#ifndef PTO_PYTHON_CONFIG_ENUMS_H
#define PTO_PYTHON_CONFIG_ENUMS_H

#include <cstdint>
#include <string>

#include "bindings.h"
#include "pto/device_log.h"
#include "pto/schedule_config.h"
#include "pto/worker.h"

namespace pto_py {

// What Python knows of enum E: its class name, the name of each value (value i is names[i],
// lower case), whether it is a StrEnum (else an IntEnum) and its doc.
template <typename E>
struct EnumSpec;

// The names of the values of the enums that include/pto has no table for.
inline constexpr const char *kLogLevelNames[] = {"debug", "info", "warn", "error", "off"};
inline constexpr const char *kChipModeNames[] = {"thread", "process"};
static_assert(PTO_LOG_DEBUG == 0 && PTO_LOG_INFO == 1 && PTO_LOG_WARN == 2 && PTO_LOG_ERROR == 3 &&
                  PTO_LOG_OFF == 4,
              "kLogLevelNames is by pto_log_level value");
static_assert(static_cast<int>(pto::ChipMode::kThread) == 0 && static_cast<int>(pto::ChipMode::kProcess) == 1,
              "kChipModeNames is by ChipMode value");

#define PTO_PY_ENUM_SPEC(E, py_name_, table, is_str_, doc_)             \
  template <>                                                           \
  struct EnumSpec<E> {                                                  \
    static constexpr const char *py_name = py_name_;                    \
    static constexpr auto &names = table;                               \
    static constexpr uint32_t count = sizeof(table) / sizeof(table[0]); \
    static constexpr bool is_str = is_str_;                             \
    static constexpr const char *doc = doc_;                            \
  };
PTO_PY_ENUM_SPEC(pto::WindowOverflow, "WindowOverflow", pto::kWindowOverflowNames, true,
                 "What a submit does when the task window is full: STALL until a quarter of it is "
                 "free, EVICT_COMPLETED (wait for the oldest task only), ERROR (the window is a "
                 "capacity).")
PTO_PY_ENUM_SPEC(pto::PipelineScope, "PipelineScope", pto::kPipelineScopeNames, true,
                 "Which tasks share a pipeline_depth gate: GLOBAL (one gate), PER_STREAM, PER_POOL "
                 "(AIC, AIV, MIX), PER_TARGET (tasks without a target are not gated).")
PTO_PY_ENUM_SPEC(pto::DispatchMetric, "DispatchMetric", pto::kDispatchMetricNames, true,
                 "What dispatch_threshold measures: NONE (off) or READY (tasks ready in the scope).")
PTO_PY_ENUM_SPEC(pto::DispatchScope, "DispatchScope", pto::kDispatchScopeNames, true,
                 "Over which tasks dispatch_metric is taken: GLOBAL (every pool) or PER_POOL.")
PTO_PY_ENUM_SPEC(pto::DispatchPolicy, "DispatchPolicy", pto::kDispatchPolicyNames, true,
                 "How a scheduler places a task (dispatch_below, dispatch_above): LOCALITY (a warm "
                 "core), ROUND_ROBIN, WORK_STEALING (the shared queue, a peer takes it).")
PTO_PY_ENUM_SPEC(pto_log_level, "LogLevel", kLogLevelNames, false,
                 "Least severity of the device logs a run writes (ChipCallConfig.log_level); OFF "
                 "writes none. An IntEnum: levels order by severity.")
PTO_PY_ENUM_SPEC(pto::ChipMode, "ChipMode", kChipModeNames, true,
                 "Where an L3/L4 worker runs its chips: THREAD (a ChipWorker per chip in this "
                 "process) or PROCESS (a forked process per chip).")
#undef PTO_PY_ENUM_SPEC

// The parts of the conversion that need not be compiled once per enum (config_enums.cpp).
// `field` names the setting as the user wrote it ("ChipCallConfig.pipeline_scope").
struct EnumFacts {
  nb::handle type;  // the Python enum
  const char *py_name;
  const char *const *names;
  uint32_t count;
};
// The number value stands for, or throws as the header says.
uint32_t enum_number(const EnumFacts &facts, nb::handle value, const std::string &field);

template <typename E>
EnumFacts enum_facts() {
  return EnumFacts{nb::type<E>(), EnumSpec<E>::py_name, EnumSpec<E>::names, EnumSpec<E>::count};
}

// What a field of type E is given (a member, a name or a number) as E; throws as the header says.
template <typename E>
E enum_value(nb::handle value, const std::string &field) {
  return static_cast<E>(enum_number(enum_facts<E>(), value, field));
}

// The Python name of value v of E ("per_stream"), for reprs.
template <typename E>
const char *enum_name(E v) {
  const auto i = static_cast<uint32_t>(v);
  return i < EnumSpec<E>::count ? EnumSpec<E>::names[i] : "?";
}

// The Python member name of a value's name: "per_stream" -> "PER_STREAM".
std::string member_name(const char *name);

// What a binding takes for a field of type E: the Python object as given, converted in the body
// with enum_value (which knows the field's name for the message). Its stub type is
// "E | str | int".
template <typename E>
struct EnumArg {
  nb::handle value;
};

// Registers the enums above on the module (bind_config_enums.cpp), and
// enum_value(enum_type, value, field), the same conversion for the package's Python code.
void bind_config_enums(nb::module_ &m);

}  // namespace pto_py

namespace nanobind::detail {

template <typename E>
struct type_caster<pto_py::EnumArg<E>> {
  NB_TYPE_CASTER(pto_py::EnumArg<E>, const_name<E>() + const_name(" | str | int"))
  bool from_python(handle src, uint32_t, cleanup_list *) noexcept {
    value.value = src;
    return true;
  }
};

}  // namespace nanobind::detail

#endif  // PTO_PYTHON_CONFIG_ENUMS_H
