#!/usr/bin/env python3
"""bench/scene_vs_reference.py — wall time of the reference implementation's scene suite run
through our runner, against the same suite run by the reference's own sim, per case family.

Run both on the same machine in one session, each warm (a second run, its kernels cached), then:

    python3 bench/scene_vs_reference.py --ours build/reference_suite.json \\
        --reference a2a3sim=ref_a2a3sim.log --reference a5sim=ref_a5sim.log

Each --ours is what ``scripts/reference_suite.sh`` (``python -m pto_runtime.scene <suite> --manual
include --json OUT``) wrote; each --reference is PLATFORM=LOG, the output of the reference
checkout's ``pytest examples tests/st --platform PLATFORM --device 0-1 --max-parallel 1
--manual include --durations=0`` (two devices for its level-3 cases, one case at a time as
our runner's default), or the same with ``FILE::CLASS`` node ids in place of the folders, with
our runner given those files and ``--case CLASS::`` for each. The reference has one test per
scene class (its ``test_run`` runs every case of the class); ours reports each case with the
time of its whole child process (``process_s``), which this script sums per class.

Two comparisons per family:
- "both pass": only classes the reference passed and whose every case passed here too, so the
  same programs ran on both sides;
- "all": every class either side ran, whatever its result (a case one side cannot run, or
  fails at its first comparison, costs that side little, so this ratio may flatter either; it
  is printed only next to the first).
The last rows are the whole runs: the sum of both platforms' pytest session times against our
runner's whole wall time (collection, every child, the summary).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pto_runtime.scene.report import family_of


@dataclass
class Side:
    seconds: float = 0.0
    classes: int = 0


@dataclass
class Family:
    both: tuple[Side, Side] = field(default_factory=lambda: (Side(), Side()))
    all: tuple[Side, Side] = field(default_factory=lambda: (Side(), Side()))


_DURATION = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S+?)::(\w+)::\w+")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)::(\w+)::\w+")
_SESSION = re.compile(r" in ([0-9.]+)s(?: \(|\s*=*$)")


def read_reference(spec: str) -> tuple[str, dict[tuple[str, str, str], tuple[float, bool]], float]:
    """PLATFORM=LOG -> (platform, {(file, class, platform): (seconds, passed)}, session s).

    LOG is the output of the reference's pytest run with --durations=0: its scene classes run
    in child pytest sessions (one per level and runtime) that inherit the options, so each
    prints its setup/call/teardown times; the parent's last line has the whole session's."""
    platform, sep, path = spec.partition("=")
    if not sep or not platform or not path:
        raise SystemExit(f"--reference {spec!r}: expected PLATFORM=PYTEST_LOG")
    classes: dict[tuple[str, str, str], tuple[float, bool]] = {}
    failed: set[tuple[str, str, str]] = set()
    session = 0.0
    for line in Path(path).read_text(errors="replace").splitlines():
        if m := _DURATION.match(line):
            key = (m.group(3), m.group(4), platform)
            seconds, _ = classes.get(key, (0.0, True))
            classes[key] = (seconds + float(m.group(1)), True)
        elif m := _FAILED.match(line):
            failed.add((m.group(1), m.group(2), platform))
        if m := _SESSION.search(line):
            session = float(m.group(1))  # the last one is the parent's
    for key in failed:
        classes[key] = (classes.get(key, (0.0, False))[0], False)
    return platform, classes, session


def read_ours(path: str) -> tuple[dict[tuple[str, str, str], tuple[float, bool]], float, Path]:
    """{(file, class, platform): (seconds, every case passed)}, the run's wall time, its root."""
    data = json.loads(Path(path).read_text())
    root = Path(data["meta"].get("root", "."))
    classes: dict[tuple[str, str, str], tuple[float, bool]] = {}
    for c in data["cases"]:
        file = c["file"]
        if Path(file).is_absolute():
            file = str(Path(file).relative_to(root))
        key = (file, c["cls"], c["platform"])
        seconds, passed = classes.get(key, (0.0, True))
        took = c.get("process_s") or c["wall_s"]
        classes[key] = (seconds + took, passed and c["result"] == "PASSED")
    return classes, float(data["meta"].get("wall_s", 0.0)), root


def ratio(ours: float, ref: float) -> str:
    return f"{ours / ref:.2f}" if ref > 0 else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ours", action="append", required=True, help="our runner's --json output (repeatable)"
    )
    parser.add_argument(
        "--reference", action="append", required=True, help="PLATFORM=pytest log (repeatable)"
    )
    args = parser.parse_args(argv)

    ours: dict[tuple[str, str, str], tuple[float, bool]] = {}
    our_wall = 0.0
    for path in args.ours:
        got, wall, _ = read_ours(path)
        ours.update(got)
        our_wall += wall
    ref: dict[tuple[str, str, str], tuple[float, bool]] = {}
    ref_wall = 0.0
    platforms = []
    for spec in args.reference:
        platform, classes, session = read_reference(spec)
        platforms.append(platform)
        ref.update(classes)
        ref_wall += session
    ours = {k: v for k, v in ours.items() if k[2] in platforms}

    families: dict[str, Family] = defaultdict(Family)
    for key in sorted(set(ours) | set(ref)):
        fam = families[family_of(key[0])]
        o, r = ours.get(key), ref.get(key)
        for i, got in enumerate((r, o)):
            if got is not None:
                fam.all[i].seconds += got[0]
                fam.all[i].classes += 1
        if o is not None and r is not None and o[1] and r[1]:
            fam.both[0].seconds += r[0]
            fam.both[1].seconds += o[0]
            fam.both[0].classes += 1
            fam.both[1].classes += 1

    print(f"platforms: {', '.join(platforms)}")
    print(
        "| family | classes both pass | reference s | ours s | ratio | "
        "all: reference s | all: ours s | all: ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    total = Family()
    for name in sorted(families):
        fam = families[name]
        for a, b in ((total.both, fam.both), (total.all, fam.all)):
            for i in (0, 1):
                a[i].seconds += b[i].seconds
                a[i].classes += b[i].classes
    for name, fam in [*sorted(families.items()), ("**every family**", total)]:
        (rb, ob), (ra, oa) = fam.both, fam.all
        print(
            f"| {name} | {rb.classes} | {rb.seconds:.1f} | {ob.seconds:.1f} | "
            f"{ratio(ob.seconds, rb.seconds)} | {ra.seconds:.1f} | {oa.seconds:.1f} | "
            f"{ratio(oa.seconds, ra.seconds)} |"
        )
    print(
        f"| **whole runs** (sessions) | | | | | {ref_wall:.1f} | {our_wall:.1f} | "
        f"{ratio(our_wall, ref_wall)} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
