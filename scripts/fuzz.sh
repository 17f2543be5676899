#!/usr/bin/env bash
# scripts/fuzz.sh — builds the libFuzzer targets (the fuzz preset: clang-19, ASan + UBSan) if
# needed and runs them (docs/fuzzing.md).
# Usage: scripts/fuzz.sh TARGET SECONDS | scripts/fuzz.sh all SECONDS
#   TARGET is one of: parsers, config, tmr, c_api, l3 (tests/fuzz/fuzz_TARGET.cpp), trace (the
#   Python trace reader, tests/fuzz/fuzz_trace.py under atheris); `all` runs each for SECONDS,
#   as many at once as CPUs. A target reads its committed seed corpus tests/fuzz/corpus/TARGET/ and keeps what
#   it finds in build/fuzz/corpus/TARGET/ (the committed one is never written).
#   Kernels and orchestrations the targets compile at run time are sanitized too
#   (CXX=clang++-19, PTO_KERNEL_CFLAGS; set either to override).
#   trace runs in the project's venv with the package installed from this tree, with its test
#   extras (atheris): scripts/install_package.sh "[test]" first, seconds when nothing changed.
#   It needs no C++ fuzz build, so `scripts/fuzz.sh trace N` makes none.
#   A crash, leak, UBSan report, oracle failure or hang (an input running over 60 s) exits 1 and
#   prints the reproducer file and the command that reruns it; logs: build/fuzz/logs/TARGET.log.
set -euo pipefail
. "$(dirname "$0")/help.sh"
targets=(parsers config tmr c_api l3 trace)
python_targets=(trace)  # tests/fuzz/fuzz_NAME.py; the others are C++
if [ $# -ne 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]] || [ "$2" -eq 0 ]; then
  echo "fuzz.sh: usage: scripts/fuzz.sh TARGET|all SECONDS (SECONDS a whole number > 0; targets: ${targets[*]})" >&2
  exit 2
fi
what=$1
seconds=$2
if [ "$what" = all ]; then
  run=("${targets[@]}")
elif [[ " ${targets[*]} " == *" $what "* ]]; then
  run=("$what")
else
  echo "fuzz.sh: unknown target '$what' (targets: ${targets[*]}, or all)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
root=$(pwd)
build=$root/build/fuzz

is_python() { [[ " ${python_targets[*]} " == *" $1 "* ]]; }
need_cxx=0
need_python=0
for t in "${run[@]}"; do
  if is_python "$t"; then need_python=1; else need_cxx=1; fi
done

start=$(date +%s)
if [ $need_cxx = 1 ]; then
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$(nproc)"
  echo "== fuzz build: $(($(date +%s) - start)) s"
fi
if [ $need_python = 1 ]; then
  . scripts/venv.sh  # python3 below is the project's venv
  # The build tools install_package.sh needs, on a machine that has never had them.
  python3 -c "import nanobind, scikit_build_core" >/dev/null 2>&1 || scripts/install_deps.sh
  scripts/install_package.sh "[test]"  # the package as this tree has it, and atheris
  if ! python3 -c "import atheris" >/dev/null 2>&1; then
    echo "fuzz.sh: atheris is not installed in $VIRTUAL_ENV (pyproject.toml's test extras" \
      "install it on x86_64, where it has wheels)" >&2
    exit 1
  fi
  python=$(command -v python3)
fi

export CXX="${CXX:-clang++-19}"
export PTO_KERNEL_CFLAGS="${PTO_KERNEL_CFLAGS:--fsanitize=address,undefined -fno-sanitize-recover=undefined}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$build/logs" "$build/artifacts"
# One target: runs it, then writes what to print into $build/logs/$t.summary and its exit status
# into $build/logs/$t.rc. The targets run side by side, as many at once as CPUs (each is one process on
# one CPU); the summaries are printed in order afterwards.
fuzz_one() {
  local t=$1 envs=() exe corpus log before rc=0 t0
  if is_python "$t"; then
    exe=("$python" "$root/tests/fuzz/fuzz_$t.py")
    # Where the target writes the files it reads back: inside the build tree, emptied per run.
    rm -rf "$build/tmp/$t" && mkdir -p "$build/tmp/$t"
    envs=("TMPDIR=$build/tmp/$t")
  else
    exe=("$build/tests/fuzz/fuzz_$t")
  fi
  corpus=$build/corpus/$t
  mkdir -p "$corpus"
  log=$build/logs/$t.log
  before=$(ls "$build/artifacts" | grep "^$t-" || true)
  t0=$(date +%s)
  env "${envs[@]}" "${exe[@]}" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$corpus" "$root/tests/fuzz/corpus/$t" >"$log" 2>&1 </dev/null || rc=$?
  {
    echo "== fuzz_$t: $seconds s (log: $log)"
    # The last status line: executions (#N), coverage (cov: edges, ft: features), corpus size.
    grep -E '^#[0-9]+' "$log" | tail -n 1 || true
    echo "   $(($(date +%s) - t0)) s, exit $rc"
    if [ $rc -ne 0 ]; then
      grep -E 'ERROR: |runtime error:|fuzz oracle:|SUMMARY: |^[A-Za-z]*Error: ' "$log" | head -n 5 || true
      for a in $(ls -t "$build/artifacts" | grep "^$t-"); do
        if ! grep -qx "$a" <<<"$before"; then
          echo "   reproducer: $build/artifacts/$a"
          if is_python "$t"; then
            echo "   rerun: ${exe[*]} $build/artifacts/$a"
            echo "   (PTO_FUZZ_PRINT=1 prints the trace fuzz_trace made of it)"
          else
            echo "   rerun: CXX='$CXX' PTO_KERNEL_CFLAGS='$PTO_KERNEL_CFLAGS' ${exe[*]} $build/artifacts/$a"
            echo "   (PTO_FUZZ_PRINT=1 prints the program fuzz_tmr / fuzz_config made of it)"
          fi
          break
        fi
      done
    fi
  } >"$build/logs/$t.summary"
  echo $rc >"$build/logs/$t.rc"
}
echo "== fuzzing ${run[*]}, $seconds s each, $(nproc) at a time"
for t in "${run[@]}"; do
  rm -f "$build/logs/$t.rc"
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
failed=()
for t in "${run[@]}"; do
  cat "$build/logs/$t.summary"
  [ "$(cat "$build/logs/$t.rc" 2>/dev/null)" = 0 ] || failed+=("$t")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "== fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "== fuzz.sh: ${run[*]}: no crash, leak, UBSan report or hang ($(($(date +%s) - start)) s in all)"
