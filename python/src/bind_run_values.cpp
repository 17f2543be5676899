// python/src/bind_run_values.cpp — ChipCallConfig, RunStats, PlatformInfo: the plain values of a run.
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "config_enums.h"
#include "pto/chip_worker.h"

namespace pto_py {
namespace {

using nb::literals::operator""_a;
using pto::ChipCallConfig;
using pto::PlatformInfo;
using pto::RunStats;

const char *py_bool(bool b) {
  return b ? "True" : "False";
}

std::string fmt_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", us);
  return buf;
}

std::string field_repr(int v) {
  return std::to_string(v);
}
std::string field_repr(uint32_t v) {
  return std::to_string(v);
}
std::string field_repr(uint64_t v) {
  return std::to_string(v);
}
std::string field_repr(int64_t v) {
  return std::to_string(v);
}
std::string field_repr(bool v) {
  return py_bool(v);
}

// The enum an enumerated field holds (config_enums.h); void for the other fields. A field listed
// here takes and returns that enum in Python; test_config_enums.py checks every field is classified.
template <auto Field>
struct FieldEnum {
  using type = void;
};
#define PTO_PY_FIELD_ENUM(field, E)          \
  template <>                                \
  struct FieldEnum<&ChipCallConfig::field> { \
    using type = E;                          \
  };
PTO_PY_FIELD_ENUM(task_window_overflow, pto::WindowOverflow)
PTO_PY_FIELD_ENUM(pipeline_scope, pto::PipelineScope)
PTO_PY_FIELD_ENUM(dispatch_metric, pto::DispatchMetric)
PTO_PY_FIELD_ENUM(dispatch_scope, pto::DispatchScope)
PTO_PY_FIELD_ENUM(dispatch_below, pto::DispatchPolicy)
PTO_PY_FIELD_ENUM(dispatch_above, pto::DispatchPolicy)
PTO_PY_FIELD_ENUM(log_level, pto_log_level)
#undef PTO_PY_FIELD_ENUM
// (Not FieldEnum<F>::type in the X macros below: there `type` is a macro parameter.)
template <auto Field>
using field_enum_t = typename FieldEnum<Field>::type;

// An enumerated field's range (pto/call_config.h) is its enum's values, 0 .. count - 1.
template <typename E>
constexpr bool enum_range_matches(long long lo, unsigned long long hi) {
  if constexpr (std::is_void_v<E>) {
    return true;
  } else {
    return lo == 0 && hi + 1 == EnumSpec<E>::count;
  }
}
#define PTO_CHECK_RANGE(type, name, def, lo, hi, doc)                            \
  static_assert(enum_range_matches<field_enum_t<&ChipCallConfig::name>>(lo, hi), \
                "ChipCallConfig::" #name ": its range in pto/call_config.h is not its enum's values");
PTO_CHIP_CALL_CONFIG_FIELDS(PTO_CHECK_RANGE)
#undef PTO_CHECK_RANGE

// What Python reads from field `v`: its enum's member for an enumerated field, else v.
template <typename E, typename T>
auto field_out(T v) {
  if constexpr (std::is_void_v<E>) {
    return v;
  } else {
    return static_cast<E>(v);
  }
}

// A field's value in reprs: an enumerated field's name ('per_stream', as CompileOptions' repr).
template <typename E, typename T>
std::string field_text(T v) {
  if constexpr (std::is_void_v<E>) {
    return field_repr(v);
  } else {
    return py_quote(enum_name(static_cast<E>(v)));
  }
}

std::string config_repr(const ChipCallConfig &c) {
  std::string r;
#define PTO_REPR_FIELD(type, name, def, lo, hi, doc)    \
  r += std::string(r.empty() ? "" : ", ") + #name "=" + \
       field_text<field_enum_t<&ChipCallConfig::name>>(c.name);
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_REPR_FIELD)
#undef PTO_REPR_FIELD
  return "ChipCallConfig(" + r + ")";
}

// Pickled state and equality: the fields in declaration order, as a tuple.
#define PTO_FIELD_TYPE(type, name, def, lo, hi, doc) , type
using ConfigState = std::tuple<bool PTO_CHIP_CALL_CONFIG_FIELDS(PTO_FIELD_TYPE)>;
#undef PTO_FIELD_TYPE

ConfigState config_state(const ChipCallConfig &c) {
#define PTO_FIELD_VALUE(type, name, def, lo, hi, doc) , c.name
  return ConfigState{true PTO_CHIP_CALL_CONFIG_FIELDS(PTO_FIELD_VALUE)};
#undef PTO_FIELD_VALUE
}

[[noreturn]] void bad_field(const char *name, nb::handle value, long long lo, unsigned long long hi,
                            const char *doc) {
  throw pto::Error(PTO_INVALID_ARGUMENT,
                   "ChipCallConfig." + pto::config_field_range_message(
                                           name, nb::cast<std::string>(nb::repr(value)), lo, hi, doc));
}

// Python value -> field, checked against the field's range (pto/call_config.h): out of range or
// beyond the C type gives InvalidArgumentError naming field, value and range (never a silent
// wrap or std::bad_cast); a value of the wrong type gives TypeError, as Python's own do. A bool field also
// takes the ints 0 and 1 (seed-001 scripts write `config.enable_pmu = 0`), nothing else, so typos do not turn
// into True.
template <typename T>
void set_field(T &field, nb::handle value, const char *name, long long lo, unsigned long long hi,
               const char *doc) {
  PyObject *o = value.ptr();
  if (!PyLong_Check(o) || (PyBool_Check(o) && !std::is_same_v<T, bool>)) {
    const std::string message = std::string("ChipCallConfig.") + name + "=" +
                                nb::cast<std::string>(nb::repr(value)) + " is not " +
                                (std::is_same_v<T, bool> ? "a bool" : "an int") + " (" + doc + ")";
    throw nb::type_error(message.c_str());
  }
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow < 0 || (overflow == 0 && !pto::config_field_in_range(s, lo, hi)))
    bad_field(name, value, lo, hi, doc);
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      bad_field(name, value, lo, hi, doc);
    }
    if (!pto::config_field_in_range(u, lo, hi)) bad_field(name, value, lo, hi, doc);
    field = static_cast<T>(u);
    return;
  }
  field = static_cast<T>(s);
}

// set_field, or for an enumerated field (E not void) the shared conversion of config_enums.h.
template <typename E, typename T>
void set_any_field(T &field, nb::handle value, const char *name, long long lo, unsigned long long hi,
                   const char *doc) {
  if constexpr (std::is_void_v<E>) {
    set_field(field, value, name, lo, hi, doc);
  } else {
    field = static_cast<T>(enum_value<E>(value, std::string("ChipCallConfig.") + name));
  }
}

// Sets the field called `name`; false if there is none.
bool set_named(ChipCallConfig &c, const std::string &name, nb::handle value) {
#define PTO_SET_FIELD(type, field, def, lo, hi, doc)                                          \
  if (name == #field) {                                                                       \
    set_any_field<field_enum_t<&ChipCallConfig::field>>(c.field, value, #field, lo, hi, doc); \
    return true;                                                                              \
  }
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_SET_FIELD)
#undef PTO_SET_FIELD
  return false;
}

// "bool = False", "int = 16", "PipelineScope | str | int = PipelineScope.GLOBAL": a field's
// parameter in the __init__ signature.
// `module` qualifies the enum's name, as nanobind's own signatures do (stubgen resolves it).
template <typename E, typename T>
std::string field_signature(T def, const std::string &module) {
  if constexpr (std::is_void_v<E>) {
    return std::string(std::is_same_v<T, bool> ? "bool" : "int") + " = " + field_repr(def);
  } else {
    const std::string cls = module + "." + EnumSpec<E>::py_name;
    return cls + " | str | int = " + cls + "." + member_name(enum_name(static_cast<E>(def)));
  }
}

// "def __init__(self, block_dim: int = 1, aicpu_thread_num: int = 1, *, enable_profiling: bool =
// False, ...) -> None": the stub shows every field with its type and default, so a type checker
// sees a misspelt keyword; the binding itself takes **kwargs and checks each name.
const char *init_signature(const std::string &module) {
  static const std::string sig = [&] {
    std::string out = "def __init__(self";
    int position = 0;
#define PTO_SIG_FIELD(type, name, def, lo, hi, doc) \
  if (position++ == 2) out += ", *";                \
  out += std::string(", ") + #name + ": " +         \
         field_signature<field_enum_t<&ChipCallConfig::name>, type>(static_cast<type>(def), module);
    PTO_CHIP_CALL_CONFIG_FIELDS(PTO_SIG_FIELD)
#undef PTO_SIG_FIELD
    return out + ") -> None";
  }();
  return sig.c_str();
}

// The property of one field: a number (or bool) checked against lo..hi, or for an enumerated
// field its enum (any of its spellings in, the member out), typed so in the stub.
template <typename E, typename T, T ChipCallConfig::*Field>
void def_field(nb::class_<ChipCallConfig> &cls, const char *name, long long lo, unsigned long long hi,
               const char *doc) {
  if constexpr (std::is_void_v<E>) {
    cls.def_prop_rw(
        name, [](const ChipCallConfig &c) -> T { return c.*Field; },
        [name, lo, hi, doc](ChipCallConfig &c, nb::handle v) { set_field(c.*Field, v, name, lo, hi, doc); },
        doc);
  } else {
    cls.def_prop_rw(
        name, [](const ChipCallConfig &c) { return field_out<E>(c.*Field); },
        [name](ChipCallConfig &c, EnumArg<E> v) {
          c.*Field = static_cast<T>(enum_value<E>(v.value, std::string("ChipCallConfig.") + name));
        },
        (std::string(doc) + "; a " + EnumSpec<E>::py_name + " (a member, its name in any case or its number)")
            .c_str());  // nanobind copies the doc
  }
}

void bind_call_config(nb::module_ &m) {
  nb::class_<ChipCallConfig> cls(
      m, "ChipCallConfig",
      "Per-run configuration. block_dim and aicpu_thread_num may be given by position, every "
      "field by keyword; see the field docs (and docs/guide/configuration.md) for meanings, defaults "
      "and ranges. "
      "A value out of its field's range raises InvalidArgumentError naming field, value and range "
      "(block_dim and aicpu_thread_num are also checked against the platform at run). An "
      "enumerated field (task_window_overflow, pipeline_scope, dispatch_metric, dispatch_scope, "
      "dispatch_below, dispatch_above, log_level) takes its enum's member, the member's name in any "
      "case or its number, and reads back as the member.");
  cls.def(
      "__init__",
      [](ChipCallConfig *self, nb::handle block_dim, nb::handle aicpu_thread_num, const nb::kwargs &kw) {
        ChipCallConfig c;
        if (!block_dim.is_none()) set_named(c, "block_dim", block_dim);
        if (!aicpu_thread_num.is_none()) set_named(c, "aicpu_thread_num", aicpu_thread_num);
        for (auto [key, value] : kw) {
          const std::string k = nb::cast<std::string>(key);
          if ((k == "block_dim" && !block_dim.is_none()) ||
              (k == "aicpu_thread_num" && !aicpu_thread_num.is_none()))
            throw nb::type_error(("ChipCallConfig() got multiple values for argument '" + k + "'").c_str());
          if (!set_named(c, k, value))
            throw nb::type_error(("ChipCallConfig() got an unexpected keyword argument '" + k + "'").c_str());
        }
        new (self) ChipCallConfig(c);
      },
      "block_dim"_a.none() = nb::none(), "aicpu_thread_num"_a.none() = nb::none(), "kwargs"_a,
      nb::sig(init_signature(nb::cast<std::string>(m.attr("__name__")))));
#define PTO_DEF_FIELD(type, name, def, lo, hi, doc) \
  def_field<field_enum_t<&ChipCallConfig::name>, type, &ChipCallConfig::name>(cls, #name, lo, hi, doc);
  PTO_CHIP_CALL_CONFIG_FIELDS(PTO_DEF_FIELD)
#undef PTO_DEF_FIELD
  cls.def("__repr__", &config_repr)
      .def(
          "__eq__",
          [](const ChipCallConfig &a, nb::handle b) -> nb::object {
            if (!nb::isinstance<ChipCallConfig>(b)) return nb::borrow(Py_NotImplemented);
            return nb::bool_(config_state(a) == config_state(nb::cast<const ChipCallConfig &>(b)));
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__getstate__", &config_state)
      .def("__setstate__", [](ChipCallConfig &c, const ConfigState &s) {
        ChipCallConfig *n = new (&c) ChipCallConfig();
        bool unused;
#define PTO_FIELD_REF(type, name, def, lo, hi, doc) , n->name
        std::tie(unused PTO_CHIP_CALL_CONFIG_FIELDS(PTO_FIELD_REF)) = s;
#undef PTO_FIELD_REF
      });
  // __eq__ without __hash__: the config is mutable, so it must not be hashable.
  cls.attr("__hash__") = nb::none();
}

void bind_run_stats(nb::module_ &m) {
  nb::class_<RunStats::Ring>(m, "RingStats", "Occupancy and back-pressure of one ring of a run.")
      .def_ro("capacity", &RunStats::Ring::capacity, "slots, bytes or entries")
      .def_ro("high_water", &RunStats::Ring::high_water, "the most in use at once")
      .def_ro("stalls", &RunStats::Ring::stalls, "times the orchestrator waited for space")
      .def_ro("stall_us", &RunStats::Ring::stall_us, "time it spent waiting, in us")
      .def("__repr__", [](const RunStats::Ring &r) {
        return "RingStats(capacity=" + std::to_string(r.capacity) +
               ", high_water=" + std::to_string(r.high_water) + ", stalls=" + std::to_string(r.stalls) +
               ", stall_us=" + fmt_us(r.stall_us) + ")";
      });
  nb::class_<RunStats::Core>(m, "CoreStats", "What one compute core did during a run (always collected).")
      .def_ro("slot", &RunStats::Core::slot, "handshake slot: AIC cores first, then AIV")
      .def_ro("type", &RunStats::Core::type, "CoreType.AIC or CoreType.AIV")
      .def_ro("cluster", &RunStats::Core::cluster)
      .def_ro("tasks", &RunStats::Core::tasks, "kernels run (a MIX task counts on each of its cores)")
      .def_ro("busy_us", &RunStats::Core::busy_us, "time running kernels, in us")
      .def_ro("busy_fraction", &RunStats::Core::busy_fraction, "busy_us / the run's effective_us")
      .def_ro("predicted_utilisation", &RunStats::Core::predicted_utilisation,
              "sim_timing: busy_us / the run's predicted_makespan_us (0 otherwise)")
      .def("__repr__", [](const RunStats::Core &c) {
        return std::string("CoreStats(slot=") + std::to_string(c.slot) +
               ", type=" + pto_core_type_name(c.type) + ", tasks=" + std::to_string(c.tasks) +
               ", busy_us=" + fmt_us(c.busy_us) +
               ", busy_fraction=" + std::to_string(c.busy_fraction).substr(0, 5) + ")";
      });
  nb::class_<RunStats>(m, "RunStats", "What a run did and how long it took.")
      .def(nb::init<>())
      .def_ro("tasks_run", &RunStats::tasks_run, "tasks executed")
      .def_ro("aic_tasks", &RunStats::aic_tasks, "tasks run on cube cores")
      .def_ro("aiv_tasks", &RunStats::aiv_tasks, "tasks run on vector cores")
      .def_ro("mix_tasks", &RunStats::mix_tasks, "whole-cluster (MIX) tasks run")
      .def_ro("orchestration_us", &RunStats::orchestration_us, "building the graph, in us")
      .def_ro("device_us", &RunStats::device_us, "launch to completion, in us")
      .def_ro("total_us", &RunStats::total_us, "the whole run call, in us")
      .def_ro("load_us", &RunStats::load_us,
              "of total_us: opening programs (kernels, orchestration) on their first use in this worker")
      .def_ro("cores_used", &RunStats::cores_used, "compute cores the run used (3 per cluster)")
      .def_ro("aicpu_threads_used", &RunStats::aicpu_threads_used, "AICPU threads of the run")
      .def_ro("window", &RunStats::window, "tensormap runtime: the task window (slots)")
      .def_ro("heap", &RunStats::heap, "tensormap runtime: the heap ring (bytes)")
      .def_ro("dep_pool", &RunStats::dep_pool, "tensormap runtime: the dependency-list pool (entries)")
      .def_ro("tensormap", &RunStats::tensormap, "tensormap runtime: the TensorMap pool (entries)")
      .def_ro("effective_us", &RunStats::effective_us, "earliest kernel start to latest kernel end, in us")
      .def_ro("scheduling_us", &RunStats::scheduling_us,
              "AICPU scheduler threads' time not parked, summed over threads, in us")
      .def_ro("cores", &RunStats::cores, "CoreStats of every core of the clusters the run used")
      .def_ro("predicted_makespan_us", &RunStats::predicted_makespan_us,
              "sim_timing: the device makespan in virtual time, as the timing model predicts it, in us "
              "(0 otherwise)")
      .def_ro("priced_isa_model", &RunStats::priced_isa_model,
              "sim_timing: kernel invocations priced by PTO-ISA's cost model (0 otherwise)")
      .def_ro("priced_table", &RunStats::priced_table,
              "sim_timing: kernel invocations priced by PTO_SIM_KERNEL_COSTS (0 otherwise)")
      .def_ro("priced_host_time", &RunStats::priced_host_time,
              "sim_timing: kernel invocations priced by their measured host time (0 otherwise)")
      .def_ro("kernel_pricing", &RunStats::kernel_pricing,
              "sim_timing: (func_id, 'isa_model' | 'table' | 'host_time') for each kernel of the "
              "callable, by func_id ([] otherwise)")
      .def_ro("price_note", &RunStats::price_note,
              "sim_timing: kernels a cost model was given for and not used, and why ('' if none)")
      .def_ro("dump_dir", &RunStats::dump_dir,
              "enable_dump_tensor: the directory of this run's .npy files and index.json ('' when off)")
      .def_prop_ro(
          "window_overflow",
          [](const RunStats &s) {
            return enum_value<pto::WindowOverflow>(nb::str(s.window_overflow.c_str()),
                                                   "RunStats.window_overflow");
          },
          "the task window's overflow mode the run used (the WindowOverflow member, as "
          "ChipCallConfig.task_window_overflow reads)")
      .def_ro("pipeline_deferred", &RunStats::pipeline_deferred,
              "pipeline_depth: tasks that found no token at their gate and waited (0 without gates)")
      .def_ro("pipeline_max_in_flight", &RunStats::pipeline_max_in_flight,
              "pipeline_depth: the most tasks in flight in any one gate (0 without gates)")
      .def_ro("batch_flushes", &RunStats::batch_flushes,
              "batch_deps: dependency batches filed into the TensorMap (0 when off, and in host_build_graph)")
      .def_ro("batch_local_hits", &RunStats::batch_local_hits,
              "batch_deps: TensorMap look-ups skipped because an earlier write in the batch covered the view")
      .def_ro("batch_unfiled", &RunStats::batch_unfiled,
              "batch_deps: accesses never filed into the TensorMap (a later write in the batch covered them)")
      .def_ro("dispatch_locality", &RunStats::dispatch_locality,
              "dispatch_threshold: tasks placed under the locality policy (0 when off)")
      .def_ro("dispatch_round_robin", &RunStats::dispatch_round_robin,
              "dispatch_threshold: tasks placed under the round_robin policy (0 when off)")
      .def_ro("dispatch_work_stealing", &RunStats::dispatch_work_stealing,
              "dispatch_threshold: tasks placed under the work_stealing policy (0 when off)")
      .def_ro("dispatch_switches", &RunStats::dispatch_switches,
              "dispatch_threshold: decisions that flipped between below and above the threshold, "
              "against the same scheduler thread's previous one in that scope (0 when off)")
      .def_ro("tasks_retired_inline", &RunStats::tasks_retired_inline,
              "tasks finished without a core: dependency-only tasks and tasks whose dispatch "
              "predicate was false (not in tasks_run)")
      .def_ro("predicted_device_us", &RunStats::predicted_device_us,
              "sim_timing: the predicted device time of the whole AICPU run, predicted_makespan_us "
              "plus the platform profile's device preamble and teardown (0 otherwise)")
      .def_prop_ro(
          "task_timing_slots",
          [](const RunStats &s) {
            std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> out;
            for (const RunStats::TaskTimingSlot &t : s.task_timing_slots)
              out.emplace_back(t.slot, t.dispatch_ns, t.finish_ns);
            return out;
          },
          "task timing slots (set_task_timing_slot / Launch.timing_slot): (slot, dispatch_ns, "
          "finish_ns) for each slot some task was tagged with, the earliest dispatch and latest "
          "finish of its tasks in ns since the launch (sim_timing: predicted virtual ns)")
      .def_ro("pmu_note", &RunStats::pmu_note,
              "enable_pmu: which counters could not be read and why ('' if none); the per-task "
              "counters are in the trace")
      .def("table", &RunStats::table, "A short printable table of the run's statistics.")
      .def("__str__", &RunStats::table)
      .def("__repr__", [](const RunStats &s) {
        return "RunStats(tasks_run=" + std::to_string(s.tasks_run) +
               ", aic_tasks=" + std::to_string(s.aic_tasks) + ", aiv_tasks=" + std::to_string(s.aiv_tasks) +
               ", orchestration_us=" + fmt_us(s.orchestration_us) + ", device_us=" + fmt_us(s.device_us) +
               ", total_us=" + fmt_us(s.total_us) + ", effective_us=" + fmt_us(s.effective_us) +
               ", cores_used=" + std::to_string(s.cores_used) +
               ", aicpu_threads_used=" + std::to_string(s.aicpu_threads_used) + ")";
      });
}

void bind_platform_info(nb::module_ &m) {
  nb::class_<PlatformInfo>(m, "PlatformInfo", "Geometry of a platform (chip generation).")
      .def_ro("platform", &PlatformInfo::platform)
      .def_ro("num_clusters", &PlatformInfo::num_clusters, "1 AIC + 2 AIV per cluster")
      .def_ro("max_aicpu_threads", &PlatformInfo::max_aicpu_threads)
      .def_ro("num_devices", &PlatformInfo::num_devices)
      .def("__repr__", [](const PlatformInfo &p) {
        return "PlatformInfo(platform='" + p.platform + "', num_clusters=" + std::to_string(p.num_clusters) +
               ", max_aicpu_threads=" + std::to_string(p.max_aicpu_threads) +
               ", num_devices=" + std::to_string(p.num_devices) + ")";
      });
}

}  // namespace

void bind_run_values(nb::module_ &m) {
  bind_call_config(m);
  bind_run_stats(m);
  bind_platform_info(m);
}

}  // namespace pto_py
