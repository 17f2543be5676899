// python/src/bind_build.cpp — KernelCompiler, RuntimeBuilder, RuntimeBinaries: what a run is built from.
//
// Paths are taken as std::filesystem::path so str and pathlib.Path both work, and returned as
// str. Compiles release the GIL: a cold compile runs the host compiler for a second or more.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "pto/kernel_compiler.h"
#include "pto/runtime_builder.h"

namespace pto_py {
namespace {

using nb::literals::operator""_a;
namespace fs = std::filesystem;
using pto::KernelCompiler;
using pto::RuntimeBinaries;
using pto::RuntimeBuilder;

using Release = nb::call_guard<nb::gil_scoped_release>;

std::optional<std::string> non_empty(const std::string &s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

void bind_kernel_compiler(nb::module_ &m) {
  nb::class_<pto::CostModelBuild>(
      m, "CostModelBuild",
      "What KernelCompiler.compile_cost_models_many says of one kernel: path (the cost-model "
      "twin's shared object) or unavailable (one line saying why there is none); the other is "
      "None.")
      .def_prop_ro(
          "path", [](const pto::CostModelBuild &b) { return non_empty(b.path); },
          "The twin's shared object, or None.")
      .def_prop_ro(
          "unavailable", [](const pto::CostModelBuild &b) { return non_empty(b.unavailable); },
          "Why there is no twin (for one that does not compile, the compiler's first error line), "
          "or None.")
      .def("__repr__", [](const pto::CostModelBuild &b) {
        return b.path.empty() ? "CostModelBuild(unavailable=" + py_quote(b.unavailable) + ")"
                              : "CostModelBuild(path=" + py_quote(b.path) + ")";
      });

  nb::class_<KernelCompiler>(
      m, "KernelCompiler",
      "Compiles kernel and orchestration sources into shared objects for one platform. Binaries "
      "are cached (cache_dir: PTO_CACHE_DIR, else $XDG_CACHE_HOME/pto_runtime, else "
      "~/.cache/pto_runtime) by the source, the flags, the "
      "compiler and the content of every header the compile read, so editing an included header "
      "rebuilds. cache=False or PTO_KERNEL_CACHE=0 always runs the compiler; clear_cache() empties "
      "the cache. A failed compile raises KernelCompileError with the compiler's output; a source "
      "without the entry the call asks for (PTO_KERNEL, PTO_ORCHESTRATION, "
      "PTO_DEVICE_ORCHESTRATION) raises InvalidArgumentError. A kernel including PTO-ISA headers "
      "(a tile kernel; tile=True/False overrides the guess) is built by a C++23 compiler "
      "(PTO_TILE_CXX, else clang++-19, ...) against pto_isa_root (else PTO_ISA_ROOT); without "
      "them it raises MissingDependencyError saying what to install.")
      .def(
          "__init__",
          [](KernelCompiler *self, std::string platform, const std::vector<fs::path> &include_dirs,
             const std::vector<std::string> &defines, std::optional<fs::path> pto_isa_root,
             std::string opt_level, bool cache, std::optional<bool> tile, std::optional<bool> native) {
            pto::CompileOptions o;
            for (const auto &d : include_dirs) o.include_dirs.push_back(d.string());
            o.defines = defines;
            if (pto_isa_root) o.pto_isa_root = pto_isa_root->string();
            o.opt_level = std::move(opt_level);
            o.cache = cache;
            o.tile = !tile ? pto::TileMode::kAuto : *tile ? pto::TileMode::kOn : pto::TileMode::kOff;
            o.native = !native   ? pto::NativeMode::kTileKernels
                       : *native ? pto::NativeMode::kAll
                                 : pto::NativeMode::kOff;
            new (self) KernelCompiler(std::move(platform), std::move(o));
          },
          "platform"_a, "include_dirs"_a = nb::make_tuple(), "defines"_a = nb::make_tuple(),
          "pto_isa_root"_a.none() = nb::none(), nb::kw_only(),
          "opt_level"_a = pto::CompileOptions{}.opt_level, "cache"_a = true, "tile"_a.none() = nb::none(),
          "native"_a.none() = nb::none(),
          "platform: 'a2a3sim' or 'a5sim'. include_dirs: extra -I; defines: extra -D (NAME or "
          "NAME=VALUE); pto_isa_root: a PTO-ISA checkout (holding include/pto/pto-inst.hpp) for "
          "tile kernels, whose include/ scalar compiles also get. cache=False: never reuse a cached "
          "binary (PTO_KERNEL_CACHE=0 does the same for every compiler). tile: None decides per "
          "kernel from its includes, True/False forces it. native: None builds tile kernels for this "
          "CPU (-march=native without FMA contraction or AVX512-BF16/FP16, so results equal the "
          "portable build's; the CPU joins the cache key) and scalar kernels portably; True builds "
          "every kernel natively, False none.")
      .def(
          "compile_incore",
          [](const KernelCompiler &kc, const fs::path &source_path, pto_core_type core_type) {
            return kc.compile_incore(source_path.string(), core_type);
          },
          "source_path"_a, "core_type"_a, Release(),
          "Compiles a kernel source for core_type; returns the path of the cached shared object.")
      .def(
          "compile_orchestration",
          [](const KernelCompiler &kc, const std::string &runtime, const fs::path &source_path) {
            return kc.compile_orchestration(runtime, source_path.string());
          },
          "runtime"_a, "source_path"_a, Release(),
          "Compiles an orchestration source for runtime (e.g. 'host_build_graph'); returns the "
          "path of the cached shared object.")
      .def(
          "compile_incore_many",
          [](const KernelCompiler &kc, const std::vector<std::pair<fs::path, pto_core_type>> &kernels,
             bool progress) {
            std::vector<std::pair<std::string, pto_core_type>> list;
            list.reserve(kernels.size());
            for (const auto &[path, core] : kernels) list.emplace_back(path.string(), core);
            return kc.compile_incore_many(list, progress);
          },
          "kernels"_a, "progress"_a = false, Release(),
          "Compiles (source_path, core_type) pairs in parallel on min(CPUs, n) threads; returns the "
          "paths in input order. progress=True prints each kernel, its compiler and its seconds (or "
          "'cached') to stderr. Every kernel is tried; a failure raises the first one's error class "
          "with every failing kernel named.")
      .def(
          "compile_incore_cost_model",
          [](const KernelCompiler &kc, const fs::path &source_path, pto_core_type core_type) {
            return kc.compile_incore_cost_model(source_path.string(), core_type);
          },
          "source_path"_a, "core_type"_a, Release(),
          "Compiles the cost-model twin of a tile kernel: the same source in PTO-ISA's cost-model "
          "mode (a2a3), which computes no values but records each instruction's predicted cycles. "
          "Returns the path of the cached shared object, which exports kernel_entry, "
          "pto_costmodel_begin and pto_costmodel_end. Raises InvalidArgumentError for a source "
          "that is not a tile kernel, NotSupportedError on a5sim (the pinned PTO-ISA has no a5 "
          "cost model), MissingDependencyError without python3 for PTO-ISA's formula-table "
          "generator, KernelCompileError when the twin does not compile.")
      .def(
          "compile_cost_models_many",
          [](const KernelCompiler &kc, const std::vector<std::pair<fs::path, pto_core_type>> &kernels,
             bool progress) {
            std::vector<std::pair<std::string, pto_core_type>> list;
            list.reserve(kernels.size());
            for (const auto &[path, core] : kernels) list.emplace_back(path.string(), core);
            return kc.compile_cost_models_many(list, progress);
          },
          "kernels"_a, "progress"_a = false, Release(),
          "compile_incore_cost_model for (source_path, core_type) pairs in parallel, as "
          "compile_incore_many; returns a CostModelBuild per kernel in input order and raises "
          "nothing for one kernel: a kernel without a twin gets its reason in .unavailable.")
      .def(
          "is_tile_kernel",
          [](const KernelCompiler &kc, const fs::path &source_path) {
            return kc.is_tile_kernel(source_path.string());
          },
          "source_path"_a,
          "Whether compile_incore builds this source as a tile kernel (tile=..., else its includes).")
      .def("compile_incore_source", &KernelCompiler::compile_incore_source, "source"_a, "name"_a,
           "core_type"_a, Release(),
           "Like compile_incore, from source text; name appears in messages and the file name.")
      .def("compile_orchestration_source", &KernelCompiler::compile_orchestration_source, "runtime"_a,
           "source"_a, "name"_a, Release(), "Like compile_orchestration, from source text.")
      .def_prop_ro("platform", &KernelCompiler::platform)
      .def_prop_ro("cache_dir", &KernelCompiler::cache_dir, "Where compiled objects are cached.")
      .def_prop_ro("compiler", &KernelCompiler::compiler,
                   "The host compiler of scalar kernels and orchestrations ($CXX or 'c++').")
      .def_prop_ro("tile_compiler", &KernelCompiler::tile_compiler, Release(),
                   "The C++23 compiler of tile kernels (PTO_TILE_CXX, else the first of clang++-19, "
                   "clang++, g++-15, g++-14 that passes a probe); raises MissingDependencyError if none.")
      .def_prop_ro("cache", &KernelCompiler::cache_enabled,
                   "Whether compiles may reuse a cached binary (cache=... and PTO_KERNEL_CACHE).")
      .def("clear_cache", &KernelCompiler::clear_cache,
           "Removes every file the kernel compiler wrote to cache_dir (and nothing else); returns "
           "how many. Binaries already loaded by a worker stay usable.")
      .def("__repr__",
           [](const KernelCompiler &kc) { return "KernelCompiler(" + py_quote(kc.platform()) + ")"; });
}

void bind_runtime_builder(nb::module_ &m) {
  nb::class_<RuntimeBinaries>(
      m, "RuntimeBinaries",
      "The three programs of a (platform, runtime): host, AICPU and AICore shared objects.")
      .def(
          "__init__",
          [](RuntimeBinaries *self, std::string platform, std::string runtime, fs::path host_path,
             fs::path aicpu_path, fs::path aicore_path) {
            new (self) RuntimeBinaries{std::move(platform), std::move(runtime), host_path.string(),
                                       aicpu_path.string(), aicore_path.string()};
          },
          nb::kw_only(), "platform"_a, "runtime"_a, "host_path"_a, "aicpu_path"_a, "aicore_path"_a)
      .def_rw("platform", &RuntimeBinaries::platform)
      .def_rw("runtime", &RuntimeBinaries::runtime)
      .def_rw("host_path", &RuntimeBinaries::host_path)
      .def_rw("aicpu_path", &RuntimeBinaries::aicpu_path)
      .def_rw("aicore_path", &RuntimeBinaries::aicore_path)
      .def("__repr__", [](const RuntimeBinaries &b) {
        return "RuntimeBinaries(platform=" + py_quote(b.platform) + ", runtime=" + py_quote(b.runtime) +
               ", host_path=" + py_quote(b.host_path) + ", aicpu_path=" + py_quote(b.aicpu_path) +
               ", aicore_path=" + py_quote(b.aicore_path) + ")";
      });

  nb::class_<RuntimeBuilder>(m, "RuntimeBuilder",
                             "Finds the prebuilt programs of a platform's runtimes (under lib_root(), or "
                             "$PTO_RUNTIME_LIB_DIR).")
      .def(nb::init<std::string>(), "platform"_a)
      .def("get_binaries", &RuntimeBuilder::get_binaries, "runtime"_a = "host_build_graph",
           "The binaries of runtime; raises InvalidArgumentError for an unknown runtime and "
           "LoadError if a file is missing.")
      .def_static("platforms", &RuntimeBuilder::platforms, "Names of the known platforms.")
      .def_static("runtimes", &RuntimeBuilder::runtimes, "Names of the known runtimes.")
      .def_static("lib_root", &RuntimeBuilder::lib_root, "Directory searched for the programs.")
      .def_prop_ro("platform", &RuntimeBuilder::platform)
      .def("__repr__",
           [](const RuntimeBuilder &rb) { return "RuntimeBuilder(" + py_quote(rb.platform()) + ")"; });
}

}  // namespace

void bind_build(nb::module_ &m) {
  bind_kernel_compiler(m);
  bind_runtime_builder(m);
}

}  // namespace pto_py
