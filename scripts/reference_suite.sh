#!/usr/bin/env bash
# scripts/reference_suite.sh — runs the reference implementation's scene-test suite
# (../shared/third_party/simpler, or PTO_REFERENCE_SUITE) through python -m pto_runtime.scene.
#
#   scripts/reference_suite.sh          every sim case, manual ones included; writes
#                                       build/reference_suite.json and regenerates
#                                       docs/conformance.md and tests/reference_suite_expected.json
#   scripts/reference_suite.sh --ci     the non-manual cases only, each result compared with
#                                       tests/reference_suite_expected.json: exit 1 if any differs
#                                       (what CI runs; a case that now passes is only reported)
#
# Extra arguments go to the runner (e.g. -p a5sim, --case NAME, -j 2). Needs the package
# installed (scripts/install_package.sh "[test]": torch among the test extras) and PTO-ISA.
set -euo pipefail
. "$(dirname "$0")/help.sh"
cd "$(dirname "$0")/.."
. scripts/pto_isa_root.sh
. scripts/venv.sh
suite="${PTO_REFERENCE_SUITE:-../shared/third_party/simpler}"
if [ ! -f "$suite/PIN" ]; then
  echo "reference_suite.sh: no reference suite at $suite (set PTO_REFERENCE_SUITE)" >&2
  exit 2
fi
expected=tests/reference_suite_expected.json
mkdir -p build
if [ "${1:-}" = "--ci" ]; then
  shift
  exec python3 -m pto_runtime.scene "$suite" --manual exclude --expect "$expected" \
    --json build/reference_suite_ci.json "$@"
fi
python3 -m pto_runtime.scene "$suite" --manual include --json build/reference_suite.json "$@" \
  || true
# A full run (no selection) refreshes the committed results; a partial one only reports.
if [ $# -eq 0 ]; then
  python3 - build/reference_suite.json "$suite/PIN" "$expected" <<'PY'
import json, subprocess, sys
path, pin_file, expected = sys.argv[1:]
data = json.load(open(path))
data["meta"]["pin"] = open(pin_file).read().split()[1]
data["meta"]["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
json.dump(data, open(path, "w"), indent=1)
# What CI compares: each case and its result (the messages stay in build/, not in git).
keep = ("file", "cls", "case", "platform", "level", "manual", "result", "feature")
slim = {"meta": data["meta"], "cases": [{k: c[k] for k in keep} for c in data["cases"]]}
json.dump(slim, open(expected, "w"), indent=0)
PY
  python3 scripts/conformance_page.py build/reference_suite.json docs/conformance.md \
    tests/reference_suite_notes.json
  echo "== wrote docs/conformance.md and $expected"
fi
# Cases that cannot run make the runner exit 1; only a wrong result fails this script, and not
# one tests/reference_suite_notes.json shows to be the suite's own (a bug in the case's kernel).
if python3 - build/reference_suite.json tests/reference_suite_notes.json <<'PY'; then
import json, sys
from pathlib import Path
results, notes = (json.load(open(p)) for p in sys.argv[1:])
root = Path(results["meta"].get("root", "."))
def rel(f):
    try:
        return str(Path(f).relative_to(root))
    except ValueError:
        return f
explained = {(n["file"], n["cls"], n["case"], n["platform"]) for n in notes["notes"] if n["result"] == "FAILED"}
wrong = [c for c in results["cases"] if c["result"] == "FAILED"
         and (rel(c["file"]), c["cls"], c["case"], c["platform"]) not in explained]
sys.exit(1 if wrong else 0)
PY
  exit 0
fi
echo "reference_suite.sh: a case gave a wrong result (FAILED above)" >&2
exit 1
