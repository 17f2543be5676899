#!/usr/bin/env bash
# bench/setup.sh — installs the peer runtimes the benchmarks compare against (idempotent).
#
# Debian packages: libtbb-dev (oneTBB flow graph), libomp-dev (LLVM libomp; GCC's libgomp
# comes with g++), libstarpu-dev (StarPU 1.3), pkg-config and clang (to build against libomp).
# PyPI: matplotlib (bench/run.py's plot), into the project's venv .venv/ (scripts/venv.sh; run
# the benchmarks with .venv/bin/python). Anything already installed is skipped.
set -euo pipefail
. "$(dirname "$0")/../scripts/help.sh"
if [ $# -gt 0 ]; then
  echo "setup.sh: takes no arguments, got '$*' (-h/--help says what it does)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
. scripts/venv.sh  # defines pto_apt_install; python3 below is the venv's

pkgs=(pkg-config clang libomp-dev libtbb-dev libstarpu-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  pto_apt_install "${missing[@]}"
else
  echo "== Debian packages present: ${pkgs[*]}"
fi

if python3 -c "import matplotlib" >/dev/null 2>&1; then
  echo "== matplotlib present"
else
  echo "== pip install matplotlib"
  python3 -m pip install -q matplotlib
fi
