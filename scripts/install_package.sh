#!/usr/bin/env bash
# scripts/install_package.sh — builds the C++ runtime and the Python module and installs the
# package pto_runtime into the project's venv (pip install .), printing progress as it builds.
# Usage: scripts/install_package.sh [EXTRA]   e.g. "[test]" installs .[test]
# The build directory build-py/ is kept, so a second install only rebuilds what changed.
set -euo pipefail
. "$(dirname "$0")/help.sh"
cd "$(dirname "$0")/.."
. scripts/venv.sh
log=build-py/pip-install.log
mkdir -p build-py
echo "== Building and installing pto_runtime into $VIRTUAL_ENV"
echo "   (C++ runtimes, device programs and the Python module: about 1-3 minutes on 2 CPUs the"
echo "    first time, seconds when nothing changed; full log: $log)"
# No build isolation: the build tools are installed by install_deps.sh, and the build reuses
# build-py/. -v makes pip pass CMake's and Ninja's output through to the log.
python3 -m pip install -v --no-build-isolation ".${1:-}" >"$log" 2>&1 &
pid=$!
start=$SECONDS
last_print=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
  sleep 1
  if [ $((SECONDS - last_print)) -ge 10 ]; then
    last_print=$SECONDS
    # Ninja's "[k/n] Building CXX object <file>" lines (pip indents them), else the phase.
    step=$(grep -aoE '\[[0-9]+/[0-9]+\] [A-Za-z]+ [A-Z+]+ [a-z ]*[^ ]+' "$log" | tail -n 1 || true)
    [ -z "$step" ] && step=$(grep -aoE '\*\*\* [A-Za-z].*' "$log" | tail -n 1 || true)
    echo "   $((SECONDS - start)) s: ${step:-starting}"
  fi
done
if ! wait "$pid"; then
  tail -n 40 "$log" >&2
  echo "error: building or installing pto_runtime failed; the full log is $log" >&2
  exit 1
fi
echo "   installed in $((SECONDS - start)) s"
