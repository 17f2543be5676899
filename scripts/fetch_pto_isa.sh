#!/usr/bin/env bash
# scripts/fetch_pto_isa.sh — gets PTO-ISA, the tile library tile kernels compile against, at the
# commit this project pins, checks it and prints the PTO_ISA_ROOT to export.
# Usage: scripts/fetch_pto_isa.sh [DIR]
#   DIR defaults to ${XDG_CACHE_HOME:-~/.cache}/pto_runtime/pto-isa-<commit>. A DIR that already
#   holds the pinned commit is only checked. Otherwise the commit alone is fetched (shallow) from
#   https://github.com/hw-native-sys/pto-isa into DIR, which must be empty or absent.
# Offline: a checkout of this project may have the same commit in ../shared/third_party/pto-isa
# (beside the repository; its PIN file names the commit); the script says so and prints the
# export for it. PTO-ISA is not part of this repository and is never copied into it (it has a
# licence of its own: the LICENSE file of the checkout).
set -euo pipefail
. "$(dirname "$0")/help.sh"
if [ $# -gt 1 ]; then
  echo "fetch_pto_isa.sh: takes at most one argument (DIR), got $# (-h/--help says more)" >&2
  exit 2
fi
repo="$(cd "$(dirname "$0")/.." && pwd)"
pin=cd4a3d3f7a1a27fcfe536f617e9bca3008929664
url=https://github.com/hw-native-sys/pto-isa
dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/pto_runtime/pto-isa-$pin}"

checked() {  # true when $1 is a checkout of the pinned commit with the headers tile kernels need
  [ -f "$1/include/pto/pto-inst.hpp" ] && [ "$(git -C "$1" rev-parse HEAD 2>/dev/null)" = "$pin" ]
}

offline_help() {
  echo "error: could not fetch $url at $pin into $dir" >&2
  local shared="$repo/../shared/third_party/pto-isa"
  if [ -f "$shared/include/pto/pto-inst.hpp" ]; then
    shared="$(cd "$shared" && pwd)"
    echo "The pinned copy beside this checkout can be used instead (its PIN file names the commit):" >&2
    echo "export PTO_ISA_ROOT=$shared"
  else
    echo "Without a network, use a copy of that commit: a project checkout has one in" >&2
    echo "../shared/third_party/pto-isa (beside the repository); export PTO_ISA_ROOT=<its path>." >&2
  fi
  exit 1
}

if ! command -v git >/dev/null 2>&1; then
  echo "error: git is needed to fetch PTO-ISA (Debian package git)" >&2
  exit 1
fi
if ! checked "$dir"; then
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    echo "error: $dir exists and is not a checkout of pto-isa $pin; pass an empty or new DIR" >&2
    exit 1
  fi
  echo "== Fetching $url at $pin into $dir" >&2
  mkdir -p "$dir"
  git -C "$dir" init -q
  git -C "$dir" remote add origin "$url" 2>/dev/null || git -C "$dir" remote set-url origin "$url"
  # GIT_TERMINAL_PROMPT=0: an unreachable or private URL fails instead of asking for a password.
  if ! GIT_TERMINAL_PROMPT=0 git -C "$dir" fetch -q --depth 1 origin "$pin" ||
    ! git -C "$dir" -c advice.detachedHead=false checkout -q FETCH_HEAD; then
    rm -rf "$dir"
    offline_help
  fi
  if ! checked "$dir"; then
    echo "error: $dir does not hold include/pto/pto-inst.hpp at $pin after the fetch" >&2
    exit 1
  fi
fi
echo "== pto-isa $pin is in $dir; tile kernels find it through:" >&2
echo "export PTO_ISA_ROOT=$(cd "$dir" && pwd)"
