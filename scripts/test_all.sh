#!/usr/bin/env bash
# scripts/test_all.sh — installs what tests need and runs every test: C++ (plain, ThreadSanitizer,
# AddressSanitizer+UBSan), the libFuzzer targets for a short while, a smoke run of the benchmarks,
# Python, the reference implementation's scene tests (scripts/reference_suite.sh --ci), and the
# documentation (the strict site build and every code block of README.md and docs/). .ci/run
# calls exactly this.
# PTO_SKIP_SANITIZERS=1 / PTO_SKIP_BENCH=1 / PTO_SKIP_FUZZ=1 skip those parts for a quick local
# pass; PTO_FUZZ_SECONDS (20) is each fuzz target's time.
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

echo "== C++: configure, build, test (dev preset)"
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev
echo "== C++: the thread-per-core sim (PTO_SIM_EXEC=threads), kept for comparison"
# Only the tests that run device code: compilers, host-side units, L3/L4 and seeded or timed
# runs (which never use the thread-per-core path) do the same thing under either executor.
PTO_SIM_EXEC=threads ctest --preset dev -E \
  'KernelCompiler|TileKernel|CostModel|IsaTiming|SimTiming|Seeded|^l4\.|L3|l3_|Modes/|TensorMap|Region|HeapRing|CorePool|TaskWindow|DepBatch|HostHeap|Doorbell|FiberPool|MpmcQueue|Geometries|Backend|RuntimeBuilder|ReadyQueueSet|package|portable|ShmBell'

if [ "${PTO_SKIP_BENCH:-0}" != 1 ]; then
  echo "== Benchmarks: smoke run (every result checked; no timing assertions)"
  bench/setup.sh
  cmake --preset dev -DPTO_BUILD_BENCH=ON >/dev/null
  cmake --build --preset dev -j "$jobs"
  python3 bench/run.py build/dev --smoke --no-plot
fi

if [ "${PTO_SKIP_SANITIZERS:-0}" != 1 ]; then
  for san in tsan asan; do
    echo "== C++ under ${san}"
    cmake --preset "$san" >/dev/null
    cmake --build --preset "$san" -j "$jobs"
    ctest --preset "$san"
  done
fi

if [ "${PTO_SKIP_FUZZ:-0}" != 1 ]; then
  echo "== Fuzz: every libFuzzer target, ${PTO_FUZZ_SECONDS:-20} s each (docs/fuzzing.md)"
  scripts/fuzz.sh all "${PTO_FUZZ_SECONDS:-20}"
fi

echo "== Python: lint"
python3 -m ruff check python tests/python tests/docs tests/fuzz examples bench scripts
python3 -m ruff format --check python tests/python tests/docs tests/fuzz examples bench scripts

echo "== Python: install the package"
scripts/install_package.sh "[test]"

echo "== Python: type check (mypy, the installed package with its stubs, and every example)"
# From the repository root so pyproject.toml's [tool.mypy] applies; -p checks the installed
# package, the examples are checked one by one (each is a module called main).
python3 -m mypy -p pto_runtime
for example in examples/*/main.py; do python3 -m mypy "$example"; done

echo "== Python: pytest"
python3 -m pytest -q tests/python

echo "== Scene tests: the reference implementation's non-manual sim cases, each result as docs/conformance.md has it"
scripts/reference_suite.sh --ci

echo "== Docs: mkdocs build --strict and every code block of README.md and docs/ (scripts/docs.sh)"
scripts/docs.sh check
