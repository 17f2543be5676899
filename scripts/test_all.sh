#!/usr/bin/env bash
# scripts/test_all.sh — installs what tests need and runs every test: C++ (plain, ThreadSanitizer,
# AddressSanitizer+UBSan), the libFuzzer targets for a short while, a smoke run of the benchmarks,
# Python, the reference implementation's scene tests (scripts/reference_suite.sh --ci), and the
# documentation (the strict site build and every code block of README.md and docs/). .ci/run
# calls exactly this.
# PTO_SKIP_SANITIZERS=1 / PTO_SKIP_BENCH=1 / PTO_SKIP_FUZZ=1 skip those parts for a quick local
# pass; PTO_FUZZ_SECONDS (10) is each fuzz target's time.
set -euo pipefail
. "$(dirname "$0")/help.sh"
if [ $# -gt 0 ]; then
  echo "test_all.sh: takes no arguments, got '$*' (-h/--help says what it does)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
scripts/install_deps.sh --test
# Tile kernels compile against PTO-ISA: the pinned copy beside the checkout unless PTO_ISA_ROOT
# names one (scripts/pto_isa_root.sh). PTO_REQUIRE_TILE=1 turns the tile tests'
# "skipped: no pto-isa / no clang" into failures, so CI cannot pass without running them.
. scripts/pto_isa_root.sh
echo "== PTO_ISA_ROOT=${PTO_ISA_ROOT:-(none: tile tests would fail)}"
export PTO_REQUIRE_TILE="${PTO_REQUIRE_TILE:-1}"
. scripts/venv.sh  # python3 and pip below are the project's venv (.venv/), not the system's
jobs=$(nproc)
# Every step's header says how long the run has taken so far (bash's SECONDS).
echo() {
  if [ "${1:0:3}" = "== " ]; then
    builtin echo "$* [$((SECONDS / 60))m$((SECONDS % 60))s]"
  else
    builtin echo "$@"
  fi
}

# The C++ tests run once per build that checks more than the plain one: all of them under
# ASan+UBSan, the concurrent ones under TSan. The plain dev build (-O2, warnings as errors)
# builds and runs them all only when the sanitizers are skipped; otherwise it builds the
# runtimes, examples and benchmarks and just the test programs it runs (PTO_TESTS_ON_DEMAND).
# threads_run PRESET: the thread-per-core sim (PTO_SIM_EXEC=threads), kept for comparison. Only
# the tests that run device code: compilers, host-side units, L3/L4 and seeded or timed runs
# (which never use the thread-per-core path) do the same thing under either executor. Nor the
# batch-size sweeps of TmrBatchDeps (a third of this run's time): what they vary is how the
# orchestrator finds dependencies, which no executor sees; TmrRandom's configurations run the
# same random programs on the thread-per-core sim.
threads_run() {
  echo "== C++: the thread-per-core sim (PTO_SIM_EXEC=threads, $1 preset), kept for comparison"
  PTO_SIM_EXEC=threads ctest --preset "$1" -E \
    'KernelCompiler|TileKernel|CostModel|IsaTiming|SimTiming|Seeded|^l4\.|L3|l3_|Modes/|TensorMap|Region|HeapRing|CorePool|TaskWindow|DepBatch|HostHeap|Doorbell|FiberPool|MpmcQueue|Geometries|Backend|RuntimeBuilder|ReadyQueueSet|package|portable|ShmBell|TmrBatchDeps'
}

echo "== C++: configure, build (dev preset, with the benchmarks and their peers)"
bench_flag=OFF
if [ "${PTO_SKIP_BENCH:-0}" != 1 ]; then
  bench/setup.sh  # the peer runtimes (Debian packages) the benchmarks build against
  bench_flag=ON
fi
on_demand=ON
[ "${PTO_SKIP_SANITIZERS:-0}" = 1 ] && on_demand=OFF
# -g1, not the preset's -g: what this build runs needs no debug information beyond the line
# tables a backtrace uses, and full -g was a quarter of its compile time (416 -> 321 CPU s).
# `cmake --preset dev` sets -g again (the preset names its flags).
g1="-O2 -g1 -DNDEBUG"
# The Python package (built for the fuzz step's trace target and for pytest) is built with the
# same flags through ccache: the C++ runtimes it links are the sources this build compiles, so it
# takes their objects from the cache instead of compiling them a second time (about 2 minutes).
# Its own build directory, so a local `scripts/install_package.sh` (Release) is not undone.
# ccache hashes the compiler's name and every path as written: both builds name the same
# compiler (CMake's default, which pip's build would replace by Python's own CXX) and use
# absolute paths; NOHASHDIR leaves the build directory out of the hash.
# ccache also hashes the locale, and Python (pip) sets LC_CTYPE=C.UTF-8 where it finds the C
# locale (PEP 538): set it for both.
# Depend mode: a miss costs no extra preprocessor run (ccache reads the compiler's -MD output).
export CCACHE_DIR="$PWD/build/ccache" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 CCACHE_MAXSIZE=5G
[ -z "${LC_ALL:-}${LC_CTYPE:-}${LANG:-}" ] && export LC_CTYPE=C.UTF-8
launch="CMAKE_C_COMPILER=/usr/bin/cc;CMAKE_CXX_COMPILER=/usr/bin/c++"
launch+=";CMAKE_C_COMPILER_LAUNCHER=ccache;CMAKE_CXX_COMPILER_LAUNCHER=ccache"
export SKBUILD_BUILD_DIR="build/py-test/{wheel_tag}" SKBUILD_CMAKE_BUILD_TYPE=RelWithDebInfo
export SKBUILD_CMAKE_DEFINE="CMAKE_C_FLAGS_RELWITHDEBINFO=$g1;CMAKE_CXX_FLAGS_RELWITHDEBINFO=$g1;PTO_WERROR=ON;$launch"
cmake --preset dev -DPTO_BUILD_BENCH=$bench_flag -DPTO_TESTS_ON_DEMAND=$on_demand \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$g1" \
  -D${launch//;/ -D} >/dev/null
cmake --build --preset dev -j "$jobs"
if [ "${PTO_SKIP_SANITIZERS:-0}" = 1 ]; then
  echo "== C++: test (dev preset)"
  ctest --preset dev
  threads_run dev
else
  # What only the plain build runs: the StarPU-MPI peer's smokes (StarPU is not built with
  # the sanitizers) and the doorbells' stress at full length (five times the sanitizers' rounds).
  echo "== C++: the plain-build-only tests (dev preset)"
  cmake --build --preset dev -j "$jobs" --target platform_doorbell l3_shm_bell
  ctest --preset dev -R '^l4\.starpu|^Doorbell\.|^ShmBell\.'
fi

if [ "${PTO_SKIP_BENCH:-0}" != 1 ]; then
  echo "== Benchmarks: smoke run (every result checked; no timing assertions)"
  python3 bench/run.py build/dev --smoke --no-plot
fi

# The Python package (its C++ parts mostly from ccache, above) and its test dependencies (torch
# is large: most of the install's time is unpacking it) install in the background while the
# sanitizer builds compile; the fuzz step and the Python steps wait for it (wait_package).
# A step that fails ends the run: what still runs in the background ends with it.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
package_log=build/install_package.log
scripts/install_package.sh "[test]" >"$package_log" 2>&1 &
package_pid=$!
wait_package() {
  [ -z "$package_pid" ] && return 0
  echo "== Python: the package install started after the dev build (its output follows)"
  local rc=0
  wait "$package_pid" || rc=$?
  package_pid=""
  cat "$package_log"
  ccache --show-stats 2>/dev/null | grep -iE "hits|misses" || true
  return $rc
}

if [ "${PTO_SKIP_SANITIZERS:-0}" != 1 ]; then
  # TSan first: the tile kernels and cost-model twins it compiles into the shared kernel cache
  # (build/kernel_cache) are the same binaries ASan's run would compile again.
  echo "== C++ under tsan"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j "$jobs"
  # Not under TSan what runs one thread (the tensor map's brute-force comparisons) or only
  # compilers (KernelCompiler, the installed package's consumer build, and the tile tests about
  # how a tile kernel is compiled: its precompiled headers, its compiler and flags, which build
  # nothing another run reuses, having a cache or include directory of their own): ASan's run
  # covers them.
  # The tile and cost-model tests that share build/kernel_cache stay (leaving them out would
  # only move their compiles to ASan's run), and so do those of compile_many's threads.
  ctest --preset tsan -E '^TensorMap\.MatchesBruteForce|^KernelCompiler|^package\.|^TilePch\.|^TileKernelTest\.(KernelsThatBeginAlike|APrecompiledHeader|TileKernelIsBuiltBy|KernelCflagsAreNot)'
  echo "== C++ under asan (every test)"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  # GCC 12's LeakSanitizer can crash in its own tracer while it checks for leaks at a test's exit
  # ("Tracer caught signal 11", then "LeakSanitizer has encountered a fatal error"), after every
  # assertion passed. It does so every time for TilePipes.CubeAndVectorParts...hbg_* on a fresh
  # kernel cache (build/kernel_cache) right after the tmr_* tests filled it, and never once the
  # host_build_graph orchestration is cached; the tile kernels are dlopen'd and dlclose'd with
  # thread-local storage. That is the sanitizer failing, not a leak report. Only then are the
  # failed tests run once more, and they must pass; any other failure stops here.
  if ! ctest --preset asan; then
    if grep -q "LeakSanitizer has encountered a fatal error" build/asan/Testing/Temporary/LastTest.log; then
      echo "== asan: LeakSanitizer's tracer crashed at a test's exit; the failed tests once more"
      ctest --preset asan --rerun-failed --output-on-failure
    else
      exit 1
    fi
  fi
  threads_run asan
fi

wait_package

if [ "${PTO_SKIP_FUZZ:-0}" != 1 ]; then
  echo "== Fuzz: every libFuzzer target, ${PTO_FUZZ_SECONDS:-10} s each (docs/fuzzing.md)"
  scripts/fuzz.sh all "${PTO_FUZZ_SECONDS:-10}"
fi

# Lint, type check and the documentation run one CPU's worth of work, mostly waiting on one
# process at a time: in the background while pytest and the scene tests use the CPUs; their
# output comes last. The documentation check is last among them so its closing line
# ("docs: N passed, N failed, N skipped") closes the run.
checks_log=build/python_checks.log
# The doc tools install first, so nothing changes the venv while pytest imports from it.
python3 -m pip install -q -r docs/requirements.txt
(
  set -e
  echo "== Python: lint"
  python3 -m ruff check python tests/python tests/docs tests/fuzz examples bench scripts
  python3 -m ruff format --check python tests/python tests/docs tests/fuzz examples bench scripts
  echo "== Python: type check (mypy, the installed package with its stubs, and every example)"
  # From the repository root so pyproject.toml's [tool.mypy] applies; -p checks the installed
  # package, the examples are checked one by one (each is a module called main).
  python3 -m mypy -p pto_runtime
  for example in examples/*/main.py; do python3 -m mypy "$example"; done
  echo "== Docs: mkdocs build --strict and every code block of README.md and docs/ (scripts/docs.sh)"
  scripts/docs.sh check
) >"$checks_log" 2>&1 &
checks_pid=$!

echo "== Python: pytest (lint, type check and docs run beside it)"
# --durations: the slowest tests, so a CI run that grows says where its time went.
python3 -m pytest -q -n "$jobs" -rs --durations=15 tests/python

echo "== Scene tests: the reference implementation's non-manual sim cases, each result as docs/conformance.md has it"
scripts/reference_suite.sh --ci -j "$jobs"  # as many cases at once as CPUs

echo "== Timing mode against the chip: docs/timing_accuracy.md and README.md's line match this commit's predictions"
python3 scripts/timing_accuracy.py --check -j "$jobs"

if [ "${PTO_SKIP_BENCH:-0}" != 1 ]; then
  echo "== Benchmarks: the tile workloads once (bench/tile/run.py; every run checked against its golden)"
  python3 bench/tile/run.py --reps 1 --no-compile
fi

echo "== Python: lint, type check and docs (run beside pytest; their output follows)"
checks_rc=0
wait "$checks_pid" || checks_rc=$?
cat "$checks_log"
exit $checks_rc
