// python/src/bind_backend.cpp — backends(), get_backend(), Backend, BackendInfo, CompileOptions
// (include/pto/backend.h).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "config_enums.h"
#include "pto/backend.h"
#include "pto/compile_options.h"

namespace pto_py {
namespace {

using nb::literals::operator""_a;
namespace fs = std::filesystem;
using Options = pto::BackendOptions;

const char *py_bool(bool b) {
  return b ? "True" : "False";
}

std::string names_repr(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names) out += (out.empty() ? "" : ", ") + py_quote(n);
  return "[" + out + "]";
}

std::string options_repr(const Options &o) {
  return "CompileOptions(target=" + py_quote(o.target) + ", platform=" + py_quote(o.platform) +
         ", opt_level=" + std::to_string(o.opt_level) + ", debug=" + py_bool(o.debug) +
         ", profiling=" + py_bool(o.profiling) + ", host_threads=" + std::to_string(o.host_threads) +
         ", aicpu_threads=" + std::to_string(o.aicpu_threads) +
         ", task_window=" + std::to_string(o.sched.task_window) +
         ", window_overflow=" + py_quote(enum_name(o.sched.window_overflow)) +
         ", pipeline_depth=" + std::to_string(o.sched.pipeline_depth) +
         ", pipeline_scope=" + py_quote(enum_name(o.sched.pipeline_scope)) +
         ", batch_deps=" + std::to_string(o.sched.batch_deps) +
         ", dispatch_metric=" + py_quote(enum_name(o.sched.dispatch_metric)) +
         ", dispatch_threshold=" + std::to_string(o.sched.dispatch_threshold) +
         ", dispatch_scope=" + py_quote(enum_name(o.sched.dispatch_scope)) +
         ", dispatch_below=" + py_quote(enum_name(o.sched.dispatch_below)) +
         ", dispatch_above=" + py_quote(enum_name(o.sched.dispatch_above)) +
         ", active_cores_below=" + std::to_string(o.sched.active_cores_below) + ")";
}

bool options_equal(const Options &a, const Options &b) {
  return a.target == b.target && a.platform == b.platform && a.opt_level == b.opt_level &&
         a.debug == b.debug && a.profiling == b.profiling && a.host_threads == b.host_threads &&
         a.aicpu_threads == b.aicpu_threads && a.sched == b.sched;
}

// A schedule mode as CompileOptions.<field> takes it: the member, its name or its number
// (config_enums.h, shared with ChipCallConfig's fields).
template <typename E>
E mode_of(const char *field, const EnumArg<E> &v) {
  return enum_value<E>(v.value, std::string("CompileOptions.") + field);
}

// dispatch_threshold and active_cores_below are 16 bits in ScheduleConfig: a larger Python int
// is refused here rather than silently truncated.
uint16_t u16_of(const char *field, uint32_t v) {
  if (v > pto::kMaxDispatchThreshold)
    throw pto::Error(PTO_INVALID_ARGUMENT, std::string("CompileOptions.") + field + "=" + std::to_string(v) +
                                               " is outside 0..65535");
  return static_cast<uint16_t>(v);
}

void check(const Options &o) {
  pto::get_backend(o.target).check(o);
}

}  // namespace

void bind_backend(nb::module_ &m) {
  nb::class_<pto::BackendInfo>(m, "BackendInfo",
                               "One row of backends(): name, available, reason (why not; '' when "
                               "available) and the platform names that run on it.")
      .def_ro("name", &pto::BackendInfo::name)
      .def_ro("available", &pto::BackendInfo::available)
      .def_ro("reason", &pto::BackendInfo::reason)
      .def_ro("platforms", &pto::BackendInfo::platforms)
      .def("__repr__", [](const pto::BackendInfo &b) {
        return "BackendInfo(name=" + py_quote(b.name) + ", available=" + py_bool(b.available) +
               ", reason=" + py_quote(b.reason) + ", platforms=" + names_repr(b.platforms) + ")";
      });

  nb::class_<pto::Backend>(m, "Backend", "An available backend (get_backend); owned by the registry.")
      .def_prop_ro("name", [](const pto::Backend &b) { return std::string(b.name()); })
      .def_prop_ro(
          "program_dir", [](const pto::Backend &b) { return std::string(b.program_dir()); },
          "Folder of its runtime programs under RuntimeBuilder.lib_root().")
      .def_prop_ro("host_compiled_kernels", &pto::Backend::host_compiled_kernels,
                   "Whether KernelCompiler builds its kernels with the host compiler.")
      .def_prop_ro("platforms", &pto::Backend::platforms, "The platform names that run on it.")
      .def("check", &pto::Backend::check, "options"_a,
           "Raises InvalidArgumentError (or NotSupportedError) naming the first field of options "
           "this backend cannot take.")
      .def("__repr__", [](const pto::Backend &b) { return "Backend(" + py_quote(b.name()) + ")"; });

  m.def("backends", &pto::backends,
        "Every registered backend with its availability, sorted by name: cpu_sim (available), "
        "ascend_npu (needs CANN at build time), amd_aie (not implemented).");
  m.def("get_backend", &pto::get_backend, "name"_a, nb::rv_policy::reference,
        "The backend `name`. InvalidArgumentError for an unknown name, NotSupportedError with the "
        "reason for one that is unavailable here.");
  m.def(
      "backend_for_platform",
      [](const std::string &platform) -> const pto::Backend & { return pto::backend_for_platform(platform); },
      "platform"_a, nb::rv_policy::reference, "The backend a platform name (e.g. 'a2a3sim') runs on.");

  nb::class_<Options>(
      m, "CompileOptions",
      "What a compile for a backend is asked to do: target (backend name), platform ('' = the "
      "backend's first), opt_level 0..3, debug (-g), profiling (runs record a trace), host_threads "
      "(0 = the backend's default), aicpu_threads (0 = the default), and the schedule primitives: "
      "task_window (0 = the call config's) with window_overflow (WindowOverflow), pipeline_depth "
      "(0 = off) with pipeline_scope (PipelineScope), batch_deps (0 = off; submits per dependency "
      "batch, tensormap runtime), dispatch_metric (DispatchMetric, NONE = off) with "
      "dispatch_threshold, dispatch_scope (DispatchScope), dispatch_below / dispatch_above "
      "(DispatchPolicy) and active_cores_below (0 = all). A mode takes its enum's member, its name "
      "in any case ('per_stream') or its number, and reads back as the member, as the "
      "ChipCallConfig fields it lowers to do. Checked when made and again by every method; "
      "kernel_compiler() and call_config() apply it.")
      .def(
          "__init__",
          [](Options *self, std::string target, std::string platform, int opt_level, bool debug,
             bool profiling, int host_threads, int aicpu_threads, uint32_t task_window,
             EnumArg<pto::WindowOverflow> window_overflow, uint32_t pipeline_depth,
             EnumArg<pto::PipelineScope> pipeline_scope, uint32_t batch_deps,
             EnumArg<pto::DispatchMetric> dispatch_metric, uint32_t dispatch_threshold,
             EnumArg<pto::DispatchScope> dispatch_scope, EnumArg<pto::DispatchPolicy> dispatch_below,
             EnumArg<pto::DispatchPolicy> dispatch_above, uint32_t active_cores_below) {
            Options o;
            o.target = std::move(target);
            o.platform = std::move(platform);
            o.opt_level = opt_level;
            o.debug = debug;
            o.profiling = profiling;
            o.host_threads = host_threads;
            o.aicpu_threads = aicpu_threads;
            o.sched.task_window = task_window;
            o.sched.window_overflow = mode_of("window_overflow", window_overflow);
            o.sched.pipeline_depth = pipeline_depth;
            o.sched.pipeline_scope = mode_of("pipeline_scope", pipeline_scope);
            o.sched.batch_deps = batch_deps;
            o.sched.dispatch_metric = mode_of("dispatch_metric", dispatch_metric);
            o.sched.dispatch_threshold = u16_of("dispatch_threshold", dispatch_threshold);
            o.sched.dispatch_scope = mode_of("dispatch_scope", dispatch_scope);
            o.sched.dispatch_below = mode_of("dispatch_below", dispatch_below);
            o.sched.dispatch_above = mode_of("dispatch_above", dispatch_above);
            o.sched.active_cores_below = u16_of("active_cores_below", active_cores_below);
            check(o);  // a typo or an unavailable target is reported where it was written
            new (self) Options(std::move(o));
          },
          nb::kw_only(), "target"_a = Options{}.target, "platform"_a = "",
          "opt_level"_a = Options{}.opt_level, "debug"_a = false, "profiling"_a = false, "host_threads"_a = 0,
          "aicpu_threads"_a = 0, "task_window"_a = 0u, "window_overflow"_a = pto::WindowOverflow::kStall,
          "pipeline_depth"_a = 0u, "pipeline_scope"_a = pto::PipelineScope::kGlobal, "batch_deps"_a = 0u,
          "dispatch_metric"_a = pto::DispatchMetric::kNone, "dispatch_threshold"_a = 0u,
          "dispatch_scope"_a = pto::DispatchScope::kGlobal,
          "dispatch_below"_a = pto::DispatchPolicy::kLocality,
          "dispatch_above"_a = pto::DispatchPolicy::kLocality, "active_cores_below"_a = 0u)
      .def_rw("target", &Options::target)
      .def_rw("platform", &Options::platform)
      .def_rw("opt_level", &Options::opt_level)
      .def_rw("debug", &Options::debug)
      .def_rw("profiling", &Options::profiling)
      .def_rw("host_threads", &Options::host_threads)
      .def_rw("aicpu_threads", &Options::aicpu_threads)
      .def_prop_rw(
          "task_window", [](const Options &o) { return o.sched.task_window; },
          [](Options &o, uint32_t v) { o.sched.task_window = v; })
      .def_prop_rw(
          "window_overflow", [](const Options &o) { return o.sched.window_overflow; },
          [](Options &o, EnumArg<pto::WindowOverflow> v) {
            o.sched.window_overflow = mode_of("window_overflow", v);
          })
      .def_prop_rw(
          "pipeline_depth", [](const Options &o) { return o.sched.pipeline_depth; },
          [](Options &o, uint32_t v) { o.sched.pipeline_depth = v; })
      .def_prop_rw(
          "pipeline_scope", [](const Options &o) { return o.sched.pipeline_scope; },
          [](Options &o, EnumArg<pto::PipelineScope> v) {
            o.sched.pipeline_scope = mode_of("pipeline_scope", v);
          })
      .def_prop_rw(
          "batch_deps", [](const Options &o) { return o.sched.batch_deps; },
          [](Options &o, uint32_t v) { o.sched.batch_deps = v; })
      .def_prop_rw(
          "dispatch_metric", [](const Options &o) { return o.sched.dispatch_metric; },
          [](Options &o, EnumArg<pto::DispatchMetric> v) {
            o.sched.dispatch_metric = mode_of("dispatch_metric", v);
          })
      .def_prop_rw(
          "dispatch_threshold", [](const Options &o) { return uint32_t{o.sched.dispatch_threshold}; },
          [](Options &o, uint32_t v) { o.sched.dispatch_threshold = u16_of("dispatch_threshold", v); })
      .def_prop_rw(
          "dispatch_scope", [](const Options &o) { return o.sched.dispatch_scope; },
          [](Options &o, EnumArg<pto::DispatchScope> v) {
            o.sched.dispatch_scope = mode_of("dispatch_scope", v);
          })
      .def_prop_rw(
          "dispatch_below", [](const Options &o) { return o.sched.dispatch_below; },
          [](Options &o, EnumArg<pto::DispatchPolicy> v) {
            o.sched.dispatch_below = mode_of("dispatch_below", v);
          })
      .def_prop_rw(
          "dispatch_above", [](const Options &o) { return o.sched.dispatch_above; },
          [](Options &o, EnumArg<pto::DispatchPolicy> v) {
            o.sched.dispatch_above = mode_of("dispatch_above", v);
          })
      .def_prop_rw(
          "active_cores_below", [](const Options &o) { return uint32_t{o.sched.active_cores_below}; },
          [](Options &o, uint32_t v) { o.sched.active_cores_below = u16_of("active_cores_below", v); })
      .def("check", &check, "Raises what get_backend(target).check(self) raises.")
      .def_prop_ro("resolved_platform", &pto::platform_of,
                   "platform, or the first platform of the target backend when platform is ''.")
      .def(
          "kernel_compiler",
          [](const Options &o, const std::vector<fs::path> &include_dirs,
             const std::vector<std::string> &defines, std::optional<fs::path> pto_isa_root, bool cache) {
            pto::CompileOptions base;
            for (const auto &d : include_dirs) base.include_dirs.push_back(d.string());
            base.defines = defines;
            if (pto_isa_root) base.pto_isa_root = pto_isa_root->string();
            base.cache = cache;
            return pto::make_kernel_compiler(o, std::move(base));
          },
          "include_dirs"_a = nb::make_tuple(), "defines"_a = nb::make_tuple(),
          "pto_isa_root"_a.none() = nb::none(), nb::kw_only(), "cache"_a = true,
          "A KernelCompiler for resolved_platform with -O<opt_level> (and -g with debug); the "
          "other arguments as KernelCompiler's.")
      .def(
          "call_config",
          [](const Options &o, std::optional<pto::ChipCallConfig> base) {
            return pto::make_call_config(o, base ? *base : pto::ChipCallConfig{});
          },
          "base"_a.none() = nb::none(),
          "base (or a default ChipCallConfig) with enable_profiling = profiling, aicpu_thread_num = "
          "aicpu_threads and task_window = task_window unless 0, and task_window_overflow "
          "(= window_overflow), pipeline_depth, pipeline_scope, batch_deps and the dispatch_* "
          "fields.")
      .def(
          "__eq__",
          [](const Options &a, nb::handle b) -> nb::object {
            if (!nb::isinstance<Options>(b)) return nb::borrow(Py_NotImplemented);
            return nb::bool_(options_equal(a, nb::cast<const Options &>(b)));
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__repr__", &options_repr);
}

}  // namespace pto_py
