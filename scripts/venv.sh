# scripts/venv.sh — sourced (". scripts/venv.sh"), never run: creates or reuses the project's own
# Python environment and puts it first on PATH, so `python3` and `pip` below it are the venv's.
#
# Why: Debian's /usr/bin/python3 is "externally managed" (PEP 668) — `pip install` into it fails
# — and a fresh Debian may lack the venv module (package python3-venv). This file installs that
# package when it is missing, creates the venv from the python3 first on PATH (override with
# PTO_PYTHON=/path/to/python3), and reuses it while it still matches that interpreter's version;
# otherwise it is made again. Location: .venv/ in the repository (override with PTO_VENV=dir).
# Afterwards, in your own shell: `. .venv/bin/activate` (or call .venv/bin/python directly).

pto_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pto_venv="${PTO_VENV:-$pto_repo/.venv}"

pto_apt_install() {  # installs the Debian packages given, as root or through sudo
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "error: need Debian packages $* and cannot install them: not root and no sudo" >&2
      return 1
    fi
    sudo=sudo
  fi
  echo "== apt-get install $*"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

pto_make_venv() {
  # The interpreter the venv is made from: the python3 on PATH, unless PTO_PYTHON names one.
  # A venv that is already active is not a base to build on: start from its base interpreter.
  local base="${PTO_PYTHON:-}"
  if [ -z "$base" ]; then
    local p
    p="$(command -v python3 || true)"
    if [ -z "$p" ]; then
      pto_apt_install python3 || return 1
      p="$(command -v python3)"
    fi
    base="$("$p" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')"
  fi
  local want
  want="$("$base" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')" || return 1

  # Reuse the venv when it runs and has the base interpreter's version.
  if [ -x "$pto_venv/bin/python" ]; then
    local have
    have="$("$pto_venv/bin/python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true)"
    if [ "$have" = "$want" ] && "$pto_venv/bin/python" -m pip --version >/dev/null 2>&1; then
      return 0
    fi
    echo "== $pto_venv is for python ${have:-?} (or has no pip); making it again for $base ($want)"
    rm -rf "$pto_venv"
  fi

  # Debian splits the venv module and ensurepip out of python3 (package python3.X-venv).
  if ! "$base" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    local minor
    minor="$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    pto_apt_install "python${minor}-venv" || return 1
  fi
  echo "== Creating the project's Python environment $pto_venv (from $base, Python $want)"
  "$base" -m venv "$pto_venv" || return 1
  "$pto_venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
}

if ! pto_make_venv; then
  echo "error: could not create the Python environment $pto_venv" >&2
  return 1 2>/dev/null || exit 1
fi
export VIRTUAL_ENV="$pto_venv"
export PATH="$pto_venv/bin:$PATH"
unset PYTHONHOME
hash -r
