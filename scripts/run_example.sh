#!/usr/bin/env bash
# scripts/run_example.sh — first-time set-up: install the package into the project's venv
# (.venv/) and run the basic example on a2a3sim. Arguments go to examples/basic/main.py
# (-h/--help prints this instead).
set -euo pipefail
. "$(dirname "$0")/help.sh"
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/install_package.sh
. scripts/venv.sh
python3 examples/basic/main.py "$@"
echo "== Done. To use this environment yourself: . .venv/bin/activate   (or run .venv/bin/python)"
