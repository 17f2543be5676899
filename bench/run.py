#!/usr/bin/env python3
"""bench/run.py — the benchmark driver: runs the bench binaries, prints tables, writes CSV and plot.

Builds nothing. Build first (bench/README.md), then:

    python3 bench/run.py build/release            # the full sweep (several minutes)
    python3 bench/run.py build/release --smoke    # tiny sizes, 1 repetition, results checked (CI)

Every binary prints one JSON line per measured point (bench/common/harness.h) and checks its
result against the serial reference; a wrong result, a crash or a time-out makes this script
exit non-zero. Timing never does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

# The parts, in bench/driver/: plan.py (what runs: runtimes, workloads, sizes), runner.py
# (running the binaries, collecting their rows), tables.py (rounds merged, METG, the printed
# tables, CSV), plot.py (the PNG). python3 bench/run.py puts bench/ first on sys.path.
from driver.plan import ALL_RUNTIMES, PTO_RUNTIMES, full_plan, smoke_plan
from driver.plot import plot
from driver.runner import (
    BENCH_DIR,
    cpu_seconds,
    find_bin_dir,
    git_describe,
    run_experiment,
    run_pingpong,
)
from driver.tables import aggregate, metg_table, read_csv, report, report_round_trip, write_csv


def rerender(paths: list[Path], no_plot: bool) -> int:
    raw = [r for p in paths for r in read_csv(p)]
    rows = aggregate(raw)  # the same point in several files (or rounds) is merged
    metg = metg_table(rows)
    header = "PTO Runtime bench, re-rendered from " + ", ".join(p.name for p in paths)
    loads = [r["load1_before"] for r in raw if "load1_before" in r]
    if loads:
        header += f"; 1-min load average before each binary: {min(loads):.1f} .. {max(loads):.1f}"
    print(header)
    report(rows, metg)
    stem = paths[0].with_suffix("") if len(paths) == 1 else paths[0].parent / "merged"
    write_csv(Path(f"{stem}-metg.csv"), metg)
    if not no_plot and plot(Path(f"{stem}.png"), rows, metg, header):
        print(f"wrote {stem}.png")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "build_dir",
        type=Path,
        nargs="?",
        help="CMake build directory configured with -DPTO_BUILD_BENCH=ON",
    )
    ap.add_argument(
        "--from-csv",
        type=Path,
        nargs="+",
        help="run nothing: print the tables and redraw the plot of earlier runs' CSVs (merged)",
    )
    ap.add_argument(
        "--smoke", action="store_true", help="tiny sizes, 1 repetition, results checked (CI)"
    )
    ap.add_argument(
        "--reps", type=int, default=None, help="timed repetitions per point (default 5; smoke 1)"
    )
    ap.add_argument(
        "--warmup", type=int, default=None, help="untimed runs before them (default 1; smoke 0)"
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 2,
        help="peer worker threads (default: CPUs)",
    )
    ap.add_argument(
        "--only", default="", help="experiments to run: empty,metg,fixed,blockdim,matmul"
    )
    ap.add_argument(
        "--runtimes",
        default="",
        help="runtimes to run (default all built): " + ",".join(ALL_RUNTIMES),
    )
    ap.add_argument(
        "--timeout", type=float, default=None, help="seconds per binary (default 900; smoke 60)"
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the whole plan N times and merge (robust to slow spells; default 1)",
    )
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="where CSV and PNG go")
    ap.add_argument("--no-plot", action="store_true")
    opts = ap.parse_args()
    opts.reps = opts.reps or (1 if opts.smoke else 5)
    opts.warmup = opts.warmup if opts.warmup is not None else (0 if opts.smoke else 1)
    opts.timeout = opts.timeout or (60.0 if opts.smoke else 900.0)
    opts.runtimes = [r for r in opts.runtimes.split(",") if r]
    if unknown := [r for r in opts.runtimes if r not in ALL_RUNTIMES]:
        ap.error(f"--runtimes: unknown {','.join(unknown)} (known: {','.join(ALL_RUNTIMES)})")
    only = {k for k in opts.only.split(",") if k}

    if opts.from_csv:
        return rerender(opts.from_csv, opts.no_plot)
    if opts.build_dir is None:
        ap.error("give the build directory (or --from-csv)")
    bin_dir = find_bin_dir(opts.build_dir)
    plan = [e for e in (smoke_plan() if opts.smoke else full_plan()) if not only or e.kind in only]
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S") + ("-smoke" if opts.smoke else "")
    load0 = os.getloadavg()[0]
    cpu0 = cpu_seconds()
    header = (
        f"PTO Runtime bench {stamp}, commit {git_describe()}, {platform.node()}, "
        f"{os.cpu_count()} CPUs; peers: {opts.threads} worker threads; "
        f"{opts.reps} reps + {opts.warmup} warm-up per point"
        + (f", {opts.rounds} rounds (median of the rounds' medians)" if opts.rounds > 1 else "")
    )
    print(header, flush=True)
    failures: list[str] = []
    notes: set[str] = set()
    rows: list[dict] = []
    pingpong: list[dict] = []  # per round: the cross-CPU round trip the chain is measured in
    t0 = time.monotonic()
    for rnd in range(1, opts.rounds + 1):
        if not opts.smoke and (pp := run_pingpong(bin_dir, opts.timeout, failures)) is not None:
            pingpong.append(pp)
        for exp in plan:
            g = f"grains {exp.grains[0]}..{exp.grains[-1]}"
            print(f"- round {rnd}/{opts.rounds}, {exp.kind}: {exp.config} ({g})", flush=True)
            for r in run_experiment(exp, bin_dir, opts, failures, notes):
                r["round"] = rnd
                rows.append(r)

    merged = aggregate(rows)
    metg = metg_table(merged)
    geos = sorted(
        {(r["block_dim"], r["aicpu_threads"]) for r in rows if r["runtime"] in PTO_RUNTIMES}
    )
    header += (
        "; ours (pto_*@bdN): a2a3sim, block_dim N of 24 clusters (24 = full geometry: "
        "24 AIC + 48 AIV threads), aicpu_thread_num "
        + "/".join(sorted({str(a) for _, a in geos}))
        + "; efficiency counts the same workers for every runtime"
    )
    cpu1 = cpu_seconds()
    machine = (time.monotonic() - t0) * (os.cpu_count() or 1)
    others = max(0.0, (cpu1[0] - cpu0[0]) - (cpu1[2] - cpu0[2]) - (cpu1[1] - cpu0[1]))
    header += (
        f"; disturbance: other processes used {others / machine:.0%} and the hypervisor stole "
        f"{(cpu1[1] - cpu0[1]) / machine:.0%} of the machine during the run "
        f"(load average before it {load0:.1f})"
    )
    print(f"\n{header}")
    report(merged, metg)
    report_round_trip(merged, pingpong)
    for n in sorted(notes):
        print(f"note: {n}")

    opts.out.mkdir(parents=True, exist_ok=True)
    csv_path = opts.out / f"{stamp}.csv"
    write_csv(csv_path, rows)
    write_csv(opts.out / f"{stamp}-metg.csv", metg)
    print(f"\nwrote {csv_path} and {stamp}-metg.csv")
    if not opts.no_plot:
        try:
            if plot(opts.out / f"{stamp}.png", merged, metg, header):
                print(f"wrote {opts.out / (stamp + '.png')}")
        except Exception as e:  # a plotting problem must not hide the measurements
            print(f"warning: no plot: {type(e).__name__}: {e}")
    print(f"total {time.monotonic() - t0:.0f} s")

    if failures:
        print(f"\n{len(failures)} FAILURE(S):")
        for f in failures:
            print(f"  {f}")
        return 1
    print(f"\nall results correct ({len(rows)} measurements)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
