#!/usr/bin/env bash
# scripts/docs.sh — the documentation site (mkdocs.yml; pages in docs/, home page README.md):
# installs the pinned doc tools (docs/requirements.txt) into the project's venv, then
#   scripts/docs.sh          builds the site into site/ with `mkdocs build --strict`
#   scripts/docs.sh serve    serves it on http://127.0.0.1:8000 (PTO_DOCS_ADDR=host:port),
#                            rebuilding as pages change
#   scripts/docs.sh check    the strict build, then runs every Python, C++ and shell block of
#                            README.md and docs/ as written (tests/docs/run_code_blocks.py);
#                            scripts/test_all.sh runs this
# The Python API reference and the code blocks use the package installed in the venv: when it
# is missing this installs it first (scripts/install_deps.sh, scripts/install_package.sh);
# after changing the code, scripts/install_package.sh brings it up to date.
set -euo pipefail
. "$(dirname "$0")/help.sh"
mode="${1:-build}"
case "$mode" in
  build | serve | check) ;;
  *) echo "docs.sh: unknown argument '$*' (allowed: serve, check, -h/--help)" >&2; exit 2 ;;
esac
if [ $# -gt 1 ]; then
  echo "docs.sh: takes at most one argument, got '$*' (-h/--help says more)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
. scripts/venv.sh
python3 -m pip install -q -r docs/requirements.txt
if ! python3 -c "import pto_runtime" >/dev/null 2>&1; then
  echo "== pto_runtime is not installed in $VIRTUAL_ENV: installing it (the API reference reads it)"
  scripts/install_deps.sh
  scripts/install_package.sh
fi
export NO_MKDOCS_2_WARNING=1  # mkdocs-material's banner about its successor, on every build
case "$mode" in
  serve) exec python3 -m mkdocs serve --strict -a "${PTO_DOCS_ADDR:-127.0.0.1:8000}" ;;
  build) python3 -m mkdocs build --strict ;;
  check)
    start=$SECONDS
    python3 -m mkdocs build --strict --quiet
    echo "== mkdocs build --strict: $((SECONDS - start)) s; now every code block"
    . scripts/pto_isa_root.sh  # the tile-kernel page's blocks compile against PTO-ISA
    # Last, so its closing line ("docs: N passed, N failed, N skipped") closes the output.
    python3 tests/docs/run_code_blocks.py
    ;;
esac
