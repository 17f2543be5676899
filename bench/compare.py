#!/usr/bin/env python3
"""bench/compare.py — two sets of bench/run.py results side by side: did anything get slower?

Usage:
    python3 bench/compare.py --before A.csv [A2.csv ...] --after B.csv [B2.csv ...]

Give each side the main CSVs bench/run.py wrote, one per round (not the -metg ones: METG is
worked out again from each file). Run the two builds in one session, alternating (before, after,
before, after), so both sides see the same machine. For every experiment and runtime this prints
the after/before ratio of wall time per point (empty, fixed, blockdim, matmul, timing) as the
geometric mean over the points with [min-max], and the ratio of METG(50%) per configuration
(each file's METG, then the median of the files). Below 1 is faster. The peers' rows (serial,
OpenMP, oneTBB, StarPU) are the same binaries on both sides when both builds use the same peers:
their ratios show how much the machine moved.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from driver.tables import POINT_KEY, aggregate, metg_table, read_csv

KEY = (*POINT_KEY, "grain")


def _rows(paths: list[Path]) -> list[dict]:
    return aggregate([r for p in paths for r in read_csv(p)])


def _points(rows: list[dict]) -> dict[tuple, float]:
    return {tuple(r.get(k) for k in KEY): float(r["wall_us_median"]) for r in rows}


def _metg(paths: list[Path]) -> dict[tuple[str, str], float]:
    """METG per configuration and runtime: each file's own (one file, one round), then their
    median. (METG of rows merged across rounds is not robust: one slow point in one round can
    move the 50% crossing by orders of magnitude.)"""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    for p in paths:
        for r in metg_table(_rows([p])):
            if isinstance(r["metg_us"], float):
                per[(r["config"], r["label"])].append(r["metg_us"])
    return {k: statistics.median(v) for k, v in per.items()}


def _fmt(ratios: list[float]) -> str:
    gmean = math.exp(statistics.fmean(math.log(x) for x in ratios))
    return f"{gmean:.2f} [{min(ratios):.2f}-{max(ratios):.2f}] ({len(ratios)})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, nargs="+", required=True)
    ap.add_argument("--after", type=Path, nargs="+", required=True)
    a = ap.parse_args(argv)
    for p in (*a.before, *a.after):
        if not p.is_file() or p.name.endswith("-metg.csv"):
            print(f"compare.py: {p}: give bench/run.py's main CSV files", file=sys.stderr)
            return 2
    before_rows, after_rows = _rows(a.before), _rows(a.after)
    before, after = _points(before_rows), _points(after_rows)
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for key, b in before.items():
        if key in after and b > 0 and after[key] > 0:
            where = (str(key[KEY.index("experiment")]), str(key[KEY.index("runtime")]))
            by[where].append(after[key] / b)
    if not by:
        print("compare.py: the two sides share no measured point", file=sys.stderr)
        return 1
    experiments = sorted({e for e, _ in by})
    labels = sorted({lab for _, lab in by})
    print("## wall time after / before, geometric mean over the points [min-max] (points)")
    print("| runtime | " + " | ".join(experiments) + " |")
    print("|---" * (len(experiments) + 1) + "|")
    for lab in labels:
        cells = [_fmt(by[(e, lab)]) if (e, lab) in by else "-" for e in experiments]
        print(f"| {lab} | " + " | ".join(cells) + " |")
    mb, ma = _metg(a.before), _metg(a.after)
    configs = sorted({c for c, _ in mb})
    print("\n## METG(50%) after / before")
    print("| runtime | " + " | ".join(configs) + " |")
    print("|---" * (len(configs) + 1) + "|")
    for lab in sorted({lab for _, lab in mb}):
        cells = []
        for c in configs:
            x, y = mb.get((c, lab)), ma.get((c, lab))
            if x is None or y is None or x <= 0:
                cells.append("-")
            else:
                cells.append(f"{y / x:.2f} ({x:.2f} -> {y:.2f} us)")
        print(f"| {lab} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
