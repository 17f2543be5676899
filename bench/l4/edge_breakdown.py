"""bench/l4/edge_breakdown.py — where the time of one cross-rank edge goes (chain_cross, C++).

Usage:
    mkdir -p /tmp/edges && PTO_L4_EDGE_TRACE=/tmp/edges \\
        mpirun -n 4 --oversubscribe -x PTO_L4_EDGE_TRACE build/release/bench/l4/l4_overhead_cpp
    python bench/l4/edge_breakdown.py /tmp/edges

Joins, on the one CLOCK_MONOTONIC every process of a machine shares, the chain_cross bodies of
the last rep (bodies.rank<r>.tsv, written by the benchmark) with the transfer halves the progress
threads logged (edges.rank<r>.tsv, src/l4/progress_mpi.cpp). Task i (on rank i % R) reads array
a<i>, written by task i-1 on the previous rank: one transfer per edge. Prints the median, 10th
and 90th percentile of each step in µs over every edge of that rep.
"""

from __future__ import annotations

import csv
import re
import statistics
import sys
from pathlib import Path


def read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def main(directory: str) -> None:
    d = Path(directory)
    bodies: dict[int, tuple[int, float, float]] = {}  # task -> (rank, start, end)
    halves: dict[int, list[dict[str, str]]] = {}  # rank -> transfer rows
    for f in sorted(d.glob("bodies.rank*.tsv")):
        rank = int(re.findall(r"\d+", f.name)[-1])
        for row in read(f):
            bodies[int(row["task"])] = (rank, float(row["start"]), float(row["end"]))
    for f in sorted(d.glob("edges.rank*.tsv")):
        halves[int(re.findall(r"\d+", f.name)[-1])] = read(f)
    if not bodies or not halves:
        sys.exit(f"no bodies.rank*.tsv or edges.rank*.tsv in {d}")
    steps: dict[str, list[float]] = {
        k: []
        for k in (
            "producer body ends -> send body posts (L3 on the sender)",
            "send posted -> MPI_Isend issued",
            "Isend -> receiver's Testsome completes it (MPI + progress-thread wake-up)",
            "completed -> receive Event fulfilled (releases the consumer in L3)",
            "fulfilled -> consumer body starts (L3 dispatch on the receiver)",
            "whole edge: producer end -> consumer start",
        )
    }
    names = list(steps)
    recv_first = 0
    for i in sorted(bodies):
        if i == 0 or i - 1 not in bodies:
            continue
        r, start, _ = bodies[i]
        w, _, prod_end = bodies[i - 1]
        if r == w:
            continue
        tag = f" of 'a{i}' ("
        recvs = [
            x
            for x in halves.get(r, [])
            if x["kind"] == "recv" and tag in x["what"] and float(x["completed"]) <= start
        ]
        if not recvs:
            continue
        rv = max(recvs, key=lambda x: float(x["completed"]))
        sends = [x for x in halves.get(w, []) if x["kind"] == "send" and x["seq"] == rv["seq"]]
        if not sends:
            continue
        sd = sends[0]
        vals = [
            float(sd["post_called"]) - prod_end,
            float(sd["issued"]) - float(sd["post_called"]),
            float(rv["completed"]) - float(sd["issued"]),
            float(rv["settled"]) - float(rv["completed"]),
            start - float(rv["settled"]),
            start - prod_end,
        ]
        for k, v in zip(names, vals):
            steps[k].append(v * 1e6)
        recv_first += float(rv["issued"]) <= float(sd["issued"])
    n = len(steps[names[0]])
    if n == 0:
        sys.exit("no edge could be joined (was PTO_L4_EDGE_TRACE given to every rank with -x?)")
    print(f"{n} edges; the receive was posted before the send in {recv_first} of them")
    print("| step | median µs | p10–p90 µs |")
    print("|---|---|---|")
    for k in names:
        xs = steps[k]
        print(f"| {k} | {statistics.median(xs):.1f} | {pct(xs, 0.1):.1f}–{pct(xs, 0.9):.1f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
