#!/usr/bin/env python3
"""bench/profiling_overhead.py — what the profiling code costs, off and on (issue 5).

Builds the benchmarks twice in Release — a normal build, and one configured with
-DPTO_PROFILING=OFF, which compiles the trace and PMU code out of the device programs — and
then measures many small tasks (empty kernels, grain 0) three ways, interleaved round by round
so that machine noise hits every variant alike:

  no-code   the build without the profiling code
  off       the normal build, enable_profiling off (what every user runs)
  on        the normal build, enable_profiling on (every task traced)

It prints ns per task (median over rounds, min..max) and the ratios off/no-code and
on/no-code. Usage:

  python3 bench/profiling_overhead.py [--rounds 7] [--reps 5] [--steps 5000] [--skip-build]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILDS = {"no-code": ROOT / "build" / "prof-off", "normal": ROOT / "build" / "prof-on"}
RUNTIME_TARGETS = [
    f"pto_{rt}_{part}_sim"
    for rt in ("host_build_graph", "tensormap_and_ringbuffer")
    for part in ("host", "aicpu", "aicore")
]


def build(workloads: list[str], runtimes: list[str]) -> None:
    jobs = str(os.cpu_count() or 2)
    targets = [f"bench_{w}_{rt}" for w in workloads for rt in runtimes] + RUNTIME_TARGETS
    for name, path in BUILDS.items():
        flags = [
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPTO_BUILD_BENCH=ON",
            "-DPTO_BUILD_TESTS=OFF",
            "-DPTO_BUILD_EXAMPLES=OFF",
            f"-DPTO_PROFILING={'OFF' if name == 'no-code' else 'ON'}",
        ]
        subprocess.run(
            ["cmake", "-S", str(ROOT), "-B", str(path), "-G", "Ninja", *flags],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        cmd = ["cmake", "--build", str(path), "-j", jobs, "--target", *targets]
        subprocess.run(cmd, check=True)


def measure(exe: Path, args: list[str]) -> float:
    """ns per task (the binary's median over its reps); exits if the result is wrong."""
    out = subprocess.run([str(exe), *args], check=False, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{exe.name} failed ({out.returncode}):\n{out.stderr}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    return float(row["ns_per_task"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5000, help="steps of the workloads (x width)")
    ap.add_argument("--workloads", default="independent,chain")
    ap.add_argument("--runtimes", default="pto_hbg,pto_tmr")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the raw samples here")
    o = ap.parse_args()
    workloads, runtimes = o.workloads.split(","), o.runtimes.split(",")
    if not o.skip_build:
        build(workloads, runtimes)

    variants = {  # name -> (build, extra flags)
        "no-code": ("no-code", []),
        "off": ("normal", []),
        "on": ("normal", ["--profiling"]),
    }
    samples: dict[tuple[str, str, str], list[float]] = {}
    for r in range(o.rounds):
        for w in workloads:
            for rt in runtimes:
                width = "4" if w == "independent" else "1"
                base = ["--steps", str(o.steps), "--width", width, "--reps", str(o.reps)]
                for v, (b, extra) in variants.items():
                    exe = BUILDS[b] / "bench" / f"bench_{w}_{rt}"
                    samples.setdefault((w, rt, v), []).append(measure(exe, base + extra))
        print(f"round {r + 1}/{o.rounds} done", file=sys.stderr)

    print(
        f"\nns per task, median of {o.rounds} rounds (min..max); each round is the median of "
        f"{o.reps} runs; full a2a3 geometry, empty kernels"
    )
    print(
        "'vs no-code': ratio of the medians; 'paired': median (min..max) of the per-round "
        "ratios (each round runs the three variants back to back)"
    )
    print(
        f"{'workload':<12} {'runtime':<8} {'variant':<8} {'ns/task':>22} {'vs no-code':>11} "
        f"{'paired':>20}"
    )
    for w in workloads:
        for rt in runtimes:
            nocode = samples[(w, rt, "no-code")]
            base = statistics.median(nocode)
            for v in variants:
                xs = samples[(w, rt, v)]
                med = statistics.median(xs)
                spread = f"{med:9.1f} ({min(xs):.0f}..{max(xs):.0f})"
                ratios = [x / b for x, b in zip(xs, nocode)]
                paired = f"{statistics.median(ratios):.3f} ({min(ratios):.2f}..{max(ratios):.2f})"
                print(f"{w:<12} {rt:<8} {v:<8} {spread:>22} {med / base:>10.3f}x {paired:>20}")
    if o.json:
        o.json.write_text(json.dumps({"|".join(k): v for k, v in samples.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
