"""bench/driver/runner.py — running the bench binaries and collecting their samples.

run_experiment() runs one experiment's binaries, one per runtime, and turns each JSON line they
print (bench/common/harness.h) into a row; a wrong result, a crash or a time-out becomes a
failure. cpu_seconds() and git_describe() record how disturbed the machine was and what ran.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from .plan import ALWAYS_BUILT, PTO_RUNTIMES, PTO_VARIANTS, Experiment

BENCH_DIR = Path(__file__).resolve().parent.parent  # bench/


def find_bin_dir(build: Path) -> Path:
    for cand in (build / "bench", build):
        if any(cand.glob("bench_*_serial")):
            return cand
    sys.exit(
        f"run.py: no bench binaries under {build} — configure with -DPTO_BUILD_BENCH=ON and build "
        "(see bench/README.md)"
    )


def label_of(r: dict) -> str:
    if r["runtime"] in PTO_RUNTIMES:
        return f"{r['runtime']}@bd{r['block_dim']}"
    return r["runtime"]


def run_experiment(
    exp: Experiment, bin_dir: Path, opts: argparse.Namespace, failures: list[str], notes: set[str]
) -> list[dict]:
    rows: list[dict] = []
    reps = exp.reps if exp.reps is not None else opts.reps
    for rt in exp.runtimes:
        if opts.runtimes and rt not in opts.runtimes:
            continue
        binary, env_extra = PTO_VARIANTS.get(rt, (rt, {}))
        exe = bin_dir / f"bench_{exp.workload}_{binary}"
        if not exe.exists():
            msg = f"{exe.name} not built"
            if rt in ALWAYS_BUILT:
                failures.append(msg)
            else:
                notes.add(f"{rt}: not built here (bench/setup.sh installs its library); skipped")
            continue
        cmd = [str(exe), *exp.args, "--grain", ",".join(map(str, exp.grains)), "--reps", str(reps)]
        cmd += ["--warmup", str(opts.warmup), "--threads", str(opts.threads)]
        if rt in PTO_RUNTIMES:
            cmd += ["--block-dim", ",".join(map(str, exp.block_dims))]
        t0 = time.monotonic()
        load1 = os.getloadavg()[0]  # stored with the rows: a loaded machine explains outliers
        try:
            env = {**os.environ, **env_extra} if env_extra else None
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=opts.timeout, env=env)
        except subprocess.TimeoutExpired:
            failures.append(f"{rt} ({exe.name}): timed out after {opts.timeout} s: {' '.join(cmd)}")
            print(f"  {rt:<32} TIMEOUT", flush=True)
            continue
        name = exe.name if not env_extra else f"{exe.name} [{rt}]"
        got = []
        for line in p.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                r["runtime"] = rt  # the variant, not the binary's own name
                r["experiment"] = exp.kind
                r["config"] = exp.config
                r["label"] = label_of(r)
                r["load1_before"] = round(load1, 2)
                got.append(r)
                if r["check"] not in ("ok", "off"):
                    failures.append(f"{name} grain {r['grain']}: {r['check']}")
        ok = p.returncode == 0
        if not ok:
            tail = "\n".join(p.stderr.strip().splitlines()[-6:])
            failures.append(f"{name} exited {p.returncode}: {' '.join(cmd)}\n{tail}")
        status = "ok" if ok else f"FAILED ({p.returncode})"
        print(f"  {name:<32} {status:<12} {time.monotonic() - t0:6.1f} s", flush=True)
        rows.extend(got)
    return rows


def cpu_seconds() -> tuple[float, float, float]:
    """(busy CPU-seconds of the whole machine, of which stolen by the hypervisor, ours).

    "Ours" is this script plus the benchmark binaries it ran; busy minus ours is what other
    processes took from the machine while the benchmark ran, the honest measure of how
    disturbed a run was (the load average counts the benchmark's own threads too).
    """
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    busy = (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / tick
    steal = (v[7] if len(v) > 7 else 0) / tick
    own = sum(
        u.ru_utime + u.ru_stime
        for u in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )
    return busy, steal, own


def git_describe() -> str:
    if os.environ.get("PTO_BENCH_COMMIT"):  # a source snapshot outside git says what it is
        return os.environ["PTO_BENCH_COMMIT"]
    try:
        p = subprocess.run(
            ["git", "-C", str(BENCH_DIR), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        )
        return p.stdout.strip() or "?"
    except OSError:
        return "?"


def run_pingpong(bin_dir: Path, timeout: float, failures: list[str]) -> dict | None:
    """One run of bench_pingpong (a cache line's round trip between two CPUs): its JSON line,
    or None when it was not built."""
    exe = bin_dir / "bench_pingpong"
    if not exe.exists():
        return None
    try:
        p = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        failures.append(f"bench_pingpong: no result within {timeout:.0f} s")
        return None
    if p.returncode != 0:
        failures.append(f"bench_pingpong: exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])
