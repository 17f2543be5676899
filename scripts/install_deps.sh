#!/usr/bin/env bash
# scripts/install_deps.sh — installs what building and testing PTO Runtime needs on Debian 12:
# Debian packages through apt-get (as root or with sudo), Python packages through pip into the
# project's own venv (.venv/, made or reused by scripts/venv.sh — never into the system python).
# Usage: scripts/install_deps.sh [--test] [--mpi]
#   always: the build tools, clang-19 and libclang-rt-19-dev (the C++23 compiler and its builtins
#          library that tile kernels, those including PTO-ISA, need; pto-isa itself comes from
#          scripts/fetch_pto_isa.sh), and numpy, ml_dtypes (bfloat16 arrays) in the venv
#   --test adds GoogleTest and the Python test tools, and everything --mpi adds (the L4 tests)
#   --mpi  adds Open MPI (Debian's libopenmpi-dev, openmpi-bin: the build then makes the L4
#          module pto_runtime._l4native) and mpi4py (Worker(level=4, comm=), the L4 tests), and
#          StarPU-MPI 1.3 (libstarpu-dev, libstarpumpi-1.3-3, found through pkg-config: the
#          build then makes bench/l4's StarPU-MPI peer l4_starpu and its smoke tests)
set -euo pipefail
. "$(dirname "$0")/help.sh"
cd "$(dirname "$0")/.."
want_tests=0
want_mpi=0
for arg in "$@"; do
  case "$arg" in
    --test) want_tests=1; want_mpi=1 ;;
    --mpi) want_mpi=1 ;;
    *) echo "install_deps.sh: unknown argument '$arg' (allowed: --test, --mpi, -h/--help)" >&2; exit 2 ;;
  esac
done

pkgs=(g++ cmake ninja-build python3-dev libboost-context-dev)  # Boost.Context: the sim's fibers
pkgs+=(clang-19 libclang-rt-19-dev)  # tile kernels: C++23, and __truncsfbf2 for bfloat16 (src/worker/tile_toolchain.h)
[ $want_tests = 1 ] && pkgs+=(libgtest-dev strace ccache)  # strace: tests/package proves where files come from; ccache: test_all.sh
[ $want_mpi = 1 ] && pkgs+=(libopenmpi-dev openmpi-bin)  # L4: mpirun, libmpi and mpi.h
[ $want_mpi = 1 ] && pkgs+=(libstarpu-dev libstarpumpi-1.3-3 pkg-config)  # bench/l4: the StarPU-MPI peer
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

. scripts/venv.sh  # defines pto_apt_install; makes or reuses .venv and puts it first on PATH
if [ ${#missing[@]} -gt 0 ]; then
  pto_apt_install "${missing[@]}"
fi

py=(numpy ml_dtypes nanobind scikit-build-core)
[ $want_tests = 1 ] && py+=(pytest pytest-xdist ruff mypy)
[ $want_mpi = 1 ] && py+=(mpi4py)
have=$(python3 -m pip list --format=freeze 2>/dev/null | tr 'A-Z_' 'a-z-' || true)
need=()
for p in "${py[@]}"; do
  grep -q "^$(echo "$p" | tr 'A-Z_' 'a-z-')==" <<<"$have" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "== pip install ${need[*]} (into $VIRTUAL_ENV)"
  python3 -m pip install -q "${need[@]}"
else
  echo "== Python packages present in $VIRTUAL_ENV: ${py[*]}"
fi
