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
import csv
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RUNTIMES = [
    "serial", "omp_gomp", "omp_llvm", "tbb", "starpu",
    "pto_hbg", "pto_tmr", "pto_hbg_threads", "pto_tmr_threads",
]  # fmt: skip
# The *_threads variants run the same binary with the sim's thread-per-core execution path
# (PTO_SIM_EXEC=threads, docs/design/sim_execution.md) instead of fibers, for comparison in one
# run.
PTO_VARIANTS = {
    "pto_hbg": ("pto_hbg", {}),
    "pto_tmr": ("pto_tmr", {}),
    "pto_hbg_threads": ("pto_hbg", {"PTO_SIM_EXEC": "threads"}),
    "pto_tmr_threads": ("pto_tmr", {"PTO_SIM_EXEC": "threads"}),
    "pto_hbg_seeded": ("pto_hbg", {"PTO_SIM_SEED": "1"}),
    "pto_tmr_seeded": ("pto_tmr", {"PTO_SIM_SEED": "1"}),
    "pto_hbg_timed": ("pto_hbg", {"PTO_SIM_SEED": "1", "PTO_SIM_TIMING": "1"}),
    "pto_tmr_timed": ("pto_tmr", {"PTO_SIM_SEED": "1", "PTO_SIM_TIMING": "1"}),
}
# The *_seeded variants: seeded runs (PTO_SIM_SEED, one OS thread per chip in a reproducible
# order), a debugging mode; only in the empty-task experiments, where their cost per task shows.
SEEDED = ["pto_hbg_seeded", "pto_tmr_seeded"]
# The *_timed variants: timing mode (PTO_SIM_TIMING, a seeded run in virtual time); the run also
# reports the device makespan the timing model predicts for the full chip. Only in the 'timing'
# experiments and the tiled GEMM, beside the parallel mode's wall time.
TIMED = ["pto_hbg_timed", "pto_tmr_timed"]
ALL_RUNTIMES = RUNTIMES + SEEDED + TIMED
PTO_RUNTIMES = set(PTO_VARIANTS)
ALWAYS_BUILT = {"serial"} | PTO_RUNTIMES  # the others depend on installed libraries
METG_GRAINS = [2**k for k in range(4, 19)]  # busy rounds: about 30 ns .. 450 us per task here


@dataclass
class Experiment:
    """One binary invocation per runtime: a workload at fixed sizes over grains (and block_dims)."""

    kind: str  # empty | metg | fixed | blockdim | matmul | timing
    workload: str
    config: str  # column label in the tables
    args: list[str]
    grains: list[int]
    block_dims: list[int] = field(default_factory=lambda: [24, 1])
    runtimes: list[str] = field(default_factory=lambda: list(RUNTIMES))
    reps: int | None = None  # None: the run's --reps


def full_plan() -> list[Experiment]:
    e: list[Experiment] = []
    # ns per task with empty kernels (grain 0), ~20k tasks each.
    for wl, cfg, args in [
        ("chain", "chain", ["--steps", "20000"]),
        ("independent", "independent", ["--width", "4", "--steps", "5000"]),
        ("fanout_fanin", "fanout_fanin w8", ["--width", "8", "--steps", "2000"]),
        ("stencil_1d", "stencil_1d w4", ["--width", "4", "--steps", "5000"]),
        ("nearest", "nearest w4 r5", ["--width", "4", "--steps", "5000", "--radix", "5"]),
    ]:
        e.append(Experiment("empty", wl, cfg, args, [0], runtimes=RUNTIMES + SEEDED))
    # METG(50%): grain sweeps, Task Bench style (fixed steps, grain varied).
    for wl, cfg, args in [
        ("independent", "trivial w4", ["--width", "4", "--steps", "100"]),
        ("stencil_1d", "stencil_1d w2", ["--width", "2", "--steps", "100"]),
        ("stencil_1d", "stencil_1d w4", ["--width", "4", "--steps", "100"]),
        ("nearest", "nearest w4 r5", ["--width", "4", "--steps", "100", "--radix", "5"]),
    ]:
        e.append(Experiment("metg", wl, cfg, args, METG_GRAINS))
    # Timing mode's predicted device makespan beside the parallel mode's wall time (stencil).
    e.append(
        Experiment(
            "timing",
            "stencil_1d",
            "stencil_1d w4",
            ["--width", "4", "--steps", "100"],
            [1024, 16384],
            block_dims=[24],
            runtimes=["pto_hbg", "pto_tmr", *TIMED],
        )
    )
    # Fixed cost of one run of a 5-task graph (fan-out 3: 1 + 3 + 1 tasks).
    e.append(
        Experiment(
            "fixed", "fanout_fanin", "5 tasks", ["--width", "3", "--steps", "1"], [0], reps=21
        )
    )
    # Throughput of our runtimes as block_dim grows (independent tasks, empty and ~2 us).
    e.append(
        Experiment(
            "blockdim",
            "independent",
            "independent 10k",
            ["--width", "4", "--steps", "2500"],
            [0, 1024],
            block_dims=[1, 2, 4, 8, 12, 16, 24],
            runtimes=sorted(PTO_RUNTIMES - set(SEEDED) - set(TIMED)),
        )
    )
    # Tiled GEMM, n = 512, three tile sizes.
    for nt, t in [(16, 32), (8, 64), (4, 128)]:
        e.append(
            Experiment(
                "matmul",
                "matmul",
                f"n512 t{t}",
                ["--width", str(nt)],
                [t],
                runtimes=RUNTIMES + TIMED,
            )
        )
    return e


def smoke_plan() -> list[Experiment]:
    e = [
        Experiment(
            "empty", "chain", "chain", ["--steps", "50"], [0, 64], runtimes=RUNTIMES + SEEDED
        ),
        Experiment(
            "empty", "independent", "independent", ["--width", "3", "--steps", "10"], [0, 64]
        ),
        Experiment(
            "empty", "fanout_fanin", "fanout_fanin w3", ["--width", "3", "--steps", "5"], [0, 64]
        ),
        Experiment(
            "metg", "stencil_1d", "stencil_1d w3", ["--width", "3", "--steps", "10"], [16, 256]
        ),
        Experiment(
            "metg",
            "nearest",
            "nearest w4 r5",
            ["--width", "4", "--steps", "10", "--radix", "5"],
            [16, 256],
        ),
        Experiment("fixed", "fanout_fanin", "5 tasks", ["--width", "3", "--steps", "1"], [0]),
        Experiment(
            "blockdim",
            "independent",
            "independent 12",
            ["--width", "3", "--steps", "4"],
            [0],
            block_dims=[1, 2],
            runtimes=sorted(PTO_RUNTIMES - set(SEEDED) - set(TIMED)),
        ),
        Experiment(
            "matmul", "matmul", "n64 t16", ["--width", "4"], [16], runtimes=RUNTIMES + TIMED
        ),
    ]
    return e


# --- running ---------------------------------------------------------------------------------


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


# --- metrics ---------------------------------------------------------------------------------

POINT_KEY = ("experiment", "config", "workload", "runtime", "block_dim", "width", "steps", "radix")


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def aggregate(rows: list[dict]) -> list[dict]:
    """Merges the rounds of a point: median of the rounds' medians, min of mins, max of maxes.

    Rounds run the whole plan again minutes later, so a slow spell of the VM (its vCPUs were
    seen to change speed by 2x for minutes) hits one round of every runtime instead of all
    repetitions of one runtime.
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in POINT_KEY) + (r["grain"],), []).append(r)
    out = []
    for rs in groups.values():
        if len(rs) == 1:
            out.append(rs[0])
            continue
        m = dict(rs[0])
        m["rounds"] = len(rs)
        m["wall_us_median"] = median([r["wall_us_median"] for r in rs])
        m["wall_us_min"] = min(r["wall_us_min"] for r in rs)
        m["wall_us_max"] = max(r["wall_us_max"] for r in rs)
        per = 1000.0 / max(1, m["tasks"])
        for k, wall in (
            ("ns_per_task", "median"),
            ("ns_per_task_min", "min"),
            ("ns_per_task_max", "max"),
        ):
            m[k] = m[f"wall_us_{wall}"] * per
        for k in (
            "orch_us_median",
            "orch_ns_per_task",
            "orch_busy_ns_per_task",
            "device_us_median",
            "predicted_us_median",
        ):
            if all(k in r for r in rs):
                m[k] = median([r[k] for r in rs])
        bad = [r["check"] for r in rs if r["check"] not in ("ok", "off")]
        m["check"] = bad[0] if bad else rs[0]["check"]
        out.append(m)
    return out


def fmt_num(v: float) -> str:
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt_spread(med: float, lo: float, hi: float) -> str:
    return f"{fmt_num(med)} [{fmt_num(lo)}-{fmt_num(hi)}]"


def serial_index(rows: list[dict]) -> dict:
    """(workload, width, steps, radix, grain) -> the serial time of the kernels (us).

    The fastest of serial's repetitions: interference (another process, a descheduled
    thread) only ever adds time, so the minimum is the best estimate of the kernels' own time.
    """
    return {
        (r["workload"], r["width"], r["steps"], r["radix"], r["grain"]): r["wall_us_min"]
        for r in rows
        if r["runtime"] == "serial"
    }


def metg_of(points: list[tuple[int, float, float]]) -> tuple[float | None, bool]:
    """METG(50%) from (grain, efficiency, granularity_us) points, computed as Task Bench does.

    Task Bench (scripts/chart_metg.py): among the points whose efficiency is >= 50 %, take the
    one with the smallest granularity; if the next smaller grain has a smaller granularity
    (it is then below 50 %), interpolate linearly between the two at exactly 50 %. Returns
    (metg, exact): (None, False) if no point reaches 50 %; exact is False when the chosen
    point is the smallest grain measured, so the METG is only an upper bound.
    """
    pts = sorted(points, key=lambda p: -p[0])  # largest grain first, as Task Bench sorts
    above = [i for i, p in enumerate(pts) if p[1] >= 0.5]
    if not above:
        return None, False
    i = min(above, key=lambda k: pts[k][2])
    _, e1, t1 = pts[i]
    if i + 1 < len(pts):
        _, e0, t0 = pts[i + 1]
        if t0 < t1 and e1 != e0:
            return t0 + (0.5 - e0) * (t1 - t0) / (e1 - e0), True
        return t1, True
    return t1, False


def metg_table(rows: list[dict]) -> list[dict]:
    """One row per (config, label): METG from median walls, and from min/max walls as its spread."""
    ser = serial_index(rows)
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        if r["experiment"] == "metg" and r["runtime"] != "serial":
            groups.setdefault((r["config"], r["label"]), []).append(r)
    out = []
    for (cfg, label), rs in groups.items():
        rs.sort(key=lambda r: r["grain"])
        res = {"config": cfg, "label": label, "workers": rs[0]["threads"]}
        for key, wall in (
            ("metg_us", "wall_us_median"),
            ("best", "wall_us_min"),
            ("worst", "wall_us_max"),
        ):
            pts = []
            for r in rs:
                s = ser.get((r["workload"], r["width"], r["steps"], r["radix"], r["grain"]))
                if s is None or r[wall] <= 0:
                    continue
                w = r["threads"]
                pts.append((r["grain"], s / (r[wall] * w), r[wall] * w / r["tasks"]))
            v, exact = metg_of(pts)
            res[key] = v
            res[key + "_exact"] = exact
            if key == "metg_us":
                res["max_efficiency"] = max((p[1] for p in pts), default=0.0)
                res["largest_granularity_us"] = pts[-1][2] if pts else None
        out.append(res)
    return out


def fmt_metg(m: dict) -> str:
    if m["metg_us"] is None:
        g = m.get("largest_granularity_us")
        return (
            f"n/a (eff {m['max_efficiency']:.0%} max)" if g is None else f">{fmt_num(g)} (eff<50%)"
        )
    pre = "" if m["metg_us_exact"] else "<="
    best = "?" if m["best"] is None else fmt_num(m["best"])
    worst = "?" if m["worst"] is None else fmt_num(m["worst"])
    return f"{pre}{fmt_num(m['metg_us'])} [{best}-{worst}]"


# --- tables ----------------------------------------------------------------------------------


def label_order(labels: set[str]) -> list[str]:
    def key(lbl: str) -> tuple[int, int]:
        rt, _, bd = lbl.partition("@bd")
        return (ALL_RUNTIMES.index(rt) if rt in ALL_RUNTIMES else 99, -int(bd) if bd else 0)

    return sorted(labels, key=key)


def print_table(
    title: str, cols: list[str], cells: dict[tuple[str, str], str], note: str = ""
) -> None:
    labels = label_order({lbl for lbl, _ in cells})
    if not labels:
        return
    w0 = max(len("runtime"), *(len(lbl) for lbl in labels))
    widths = [max(len(c), *(len(cells.get((lbl, c), "")) for lbl in labels)) for c in cols]
    print(f"\n## {title}")
    if note:
        print(note)
    print(
        "| "
        + "runtime".ljust(w0)
        + " | "
        + " | ".join(c.ljust(w) for c, w in zip(cols, widths))
        + " |"
    )
    print("|" + "-" * (w0 + 2) + "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for lbl in labels:
        vals = [cells.get((lbl, c), "-").ljust(w) for c, w in zip(cols, widths)]
        print("| " + lbl.ljust(w0) + " | " + " | ".join(vals) + " |")


def ordered(seq):
    return list(dict.fromkeys(seq))


def report(rows: list[dict], metg: list[dict]) -> None:
    # ns per task, empty kernels (grain 0), end to end.
    empty = [r for r in rows if r["experiment"] == "empty" and r["grain"] == 0]
    cols = ordered(r["config"] for r in empty)
    cells = {
        (r["label"], r["config"]): fmt_spread(
            r["ns_per_task"], r["ns_per_task_min"], r["ns_per_task_max"]
        )
        for r in empty
    }
    print_table(
        "ns per task, empty kernels (grain 0), end to end incl. graph building: median [min-max]",
        cols,
        cells,
    )

    cols = ordered(m["config"] for m in metg)
    cells = {(m["label"], m["config"]): fmt_metg(m) for m in metg}
    print_table(
        "METG(50%), us: median [from min walls - from max walls]",
        cols,
        cells,
        "efficiency = serial time (its fastest rep) / (wall x workers); METG = the smallest "
        "granularity (wall x workers / tasks) still >= 50% efficient, interpolated as Task Bench "
        "does; "
        "'>X' = below 50% even at the largest grain (granularity X us); "
        "'<=' = still >= 50% at the smallest grain",
    )

    fixed = [r for r in rows if r["experiment"] == "fixed"]
    cells = {
        (r["label"], r["config"]): fmt_spread(
            r["wall_us_median"], r["wall_us_min"], r["wall_us_max"]
        )
        for r in fixed
    }
    for r in fixed:
        if r.get("first_in_process"):
            load = r.get("first_load_us")
            if load not in (None, ""):  # PTO: the programs' loading, reported apart
                cells[(r["label"], "first run")] = fmt_num(float(r["first_us"]) - float(load))
                cells[(r["label"], "loading")] = fmt_num(float(load))
            else:
                cells[(r["label"], "first run")] = fmt_num(r["first_us"])
    print_table(
        "fixed cost per run, us (5-task graph, empty kernels): median [min-max]",
        ["5 tasks", "first run", "loading"],
        cells,
        "first run: the first run of a fresh worker in its process (device started, nothing run "
        "yet), one sample; for PTO without loading: the programs' first dlopen (kernels and "
        "orchestration, RunStats.load_us) is the loading column",
    )

    orch = [
        r
        for r in rows
        if r["experiment"] == "empty" and "orch_ns_per_task" in r and r["grain"] == 0
    ]
    cols = ordered(r["config"] for r in orch)
    cells = {(r["label"], r["config"]): fmt_num(r["orch_ns_per_task"]) for r in orch}
    print_table(
        "orchestration ns per task (RunStats.orchestration_us / tasks), median",
        cols,
        cells,
        "pto_tmr: device orchestrator, submit with dependency inference ('independent': distinct "
        "views, no edges); pto_hbg: host graph building with explicit edges",
    )

    busy = [r for r in orch if "orch_busy_ns_per_task" in r]
    cells = {(r["label"], r["config"]): fmt_num(r["orch_busy_ns_per_task"]) for r in busy}
    print_table(
        "orchestration ns per task, not counting waits for ring space "
        "((orchestration_us - stall_us of the four rings) / tasks), median",
        cols,
        cells,
        "pto_tmr: what submitting costs; the rest of the row above is the orchestrator waiting for "
        "the task window while the sim runs the tasks (bench_submit measures the submit path "
        "alone: docs/design/tensormap_runtime.md)",
    )

    bd = [r for r in rows if r["experiment"] == "blockdim"]
    cols = [str(b) for b in sorted({r["block_dim"] for r in bd})]
    for g in sorted({r["grain"] for r in bd}):
        cells = {}
        for r in bd:
            if r["grain"] == g:
                mtps = r["tasks"] / r["wall_us_median"]  # tasks per us = M tasks/s
                cells[(r["runtime"], str(r["block_dim"]))] = f"{mtps:.3f}"
        print_table(
            f"throughput, M tasks/s, by block_dim ({bd[0]['config']}, grain {g})", cols, cells
        )

    mm = [r for r in rows if r["experiment"] == "matmul"]
    cols = ordered(r["config"] for r in mm)
    cells = {}
    for r in mm:
        n = r["width"] * r["grain"]
        gflops = 2.0 * n**3 / (r["wall_us_median"] * 1e3)
        ms = fmt_spread(r["wall_us_median"] / 1e3, r["wall_us_min"] / 1e3, r["wall_us_max"] / 1e3)
        cells[(r["label"], r["config"])] = f"{ms} ms, {gflops:.2f} GF/s"
    print_table("tiled GEMM: wall ms median [min-max], GFLOP/s", cols, cells)

    # Timing mode: what the timing model predicts for the full chip, beside the wall time of
    # the parallel mode on this machine (same workload, grain and block_dim).
    walls = {
        (r["runtime"], r["config"], r["grain"], r["block_dim"]): r["wall_us_median"]
        for r in rows
        if r["experiment"] in ("timing", "matmul")
    }
    cells = {}
    for r in rows:
        if "predicted_us_median" not in r or r["runtime"] not in TIMED:
            continue
        col = f"{r['config']} g{r['grain']}"
        par = walls.get(
            (r["runtime"].removesuffix("_timed"), r["config"], r["grain"], r["block_dim"])
        )
        cells[(r["label"], col)] = fmt_num(r["predicted_us_median"]) + (
            f" / {fmt_num(par)}" if par is not None else ""
        )
    cols = ordered(c for _, c in cells)
    print_table(
        "timing mode: predicted device makespan us / parallel mode's wall us on this machine",
        cols,
        cells,
        "predicted: sim_timing's virtual-time makespan for the block_dim's clusters (kernels cost "
        "their host time, scheduler hand-offs the a2a3 profile, docs/design/sim_execution.md); "
        "wall: the same workload in the default (fiber, parallel) mode here",
    )


# --- files -----------------------------------------------------------------------------------


def write_csv(path: Path, rows: list[dict]) -> None:
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def plot(path: Path, rows: list[dict], metg: list[dict], title: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot; bench/setup.sh installs it)")
        return False

    fig, axes = plt.subplots(2, 2, figsize=(15, 10.5))
    fig.suptitle(textwrap.fill(title, 170), fontsize=9)
    # One colour per runtime label of the comparison (the block_dim sweep has its own panel).
    all_labels = label_order({r["label"] for r in rows if r["experiment"] != "blockdim"})
    palette = plt.get_cmap("tab10" if len(all_labels) <= 10 else "tab20").colors
    color = {lbl: palette[i % len(palette)] for i, lbl in enumerate(all_labels)}

    def bars(ax, cfgs, labels, value, ylabel, sub):
        n = max(1, len(labels))
        width = 0.8 / n
        for k, lbl in enumerate(labels):
            xs, ys = [], []
            for i, c in enumerate(cfgs):
                v = value(lbl, c)
                if v is not None and v > 0:
                    xs.append(i + (k - (n - 1) / 2) * width)
                    ys.append(v)
            ax.bar(xs, ys, width, label=lbl, color=color[lbl])
        ax.set_xticks(range(len(cfgs)))
        ax.set_xticklabels(cfgs, fontsize=8)
        if ax.patches:
            ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
        ax.grid(axis="y", which="both", alpha=0.3)

    ax = axes[0][0]
    cfgs = ordered(m["config"] for m in metg)
    labels = label_order({m["label"] for m in metg})
    mv = {(m["label"], m["config"]): m["metg_us"] for m in metg}
    bars(
        ax,
        cfgs,
        labels,
        lambda lbl, c: mv.get((lbl, c)),
        "METG(50%), us (lower is better)",
        "METG(50%), missing bar = efficiency never reached 50%",
    )

    ax = axes[0][1]
    empty = [r for r in rows if r["experiment"] == "empty" and r["grain"] == 0]
    cfgs = ordered(r["config"] for r in empty)
    labels = label_order({r["label"] for r in empty})
    ev = {(r["label"], r["config"]): r["ns_per_task"] for r in empty}
    bars(
        ax,
        cfgs,
        labels,
        lambda lbl, c: ev.get((lbl, c)),
        "ns per task (lower is better)",
        "empty tasks",
    )

    ax = axes[1][0]
    ser = serial_index(rows)
    mrows = [r for r in rows if r["experiment"] == "metg" and r["runtime"] != "serial"]
    cfg = next(
        (c for c in ("stencil_1d w4", "stencil_1d w3") if any(r["config"] == c for r in mrows)),
        None,
    )
    if cfg is None and mrows:
        cfg = mrows[0]["config"]
    for lbl in label_order({r["label"] for r in mrows if r["config"] == cfg}):
        pts = []
        for r in sorted(
            (r for r in mrows if r["config"] == cfg and r["label"] == lbl), key=lambda r: r["grain"]
        ):
            s = ser.get((r["workload"], r["width"], r["steps"], r["radix"], r["grain"]))
            if s:
                w = r["threads"]
                pts.append((r["wall_us_median"] * w / r["tasks"], s / (r["wall_us_median"] * w)))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", color=color[lbl])
    ax.axhline(0.5, color="k", lw=0.8, ls="--")
    if ax.lines[:-1]:
        ax.set_xscale("log")
    ax.set_xlabel("task granularity, us (wall x workers / tasks)")
    ax.set_ylabel("efficiency")
    ax.set_title(f"efficiency vs granularity, {cfg}", fontsize=10)
    ax.grid(which="both", alpha=0.3)

    ax = axes[1][1]
    bd = [r for r in rows if r["experiment"] == "blockdim"]
    for rt in sorted({r["runtime"] for r in bd}):
        for g in sorted({r["grain"] for r in bd}):
            pts = sorted(
                (r["block_dim"], r["tasks"] / r["wall_us_median"])
                for r in bd
                if r["runtime"] == rt and r["grain"] == g
            )
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{rt}, grain {g}")
    ax.set_xlabel("block_dim (clusters)")
    ax.set_ylabel("M tasks/s")
    ax.set_title("throughput vs block_dim (independent tasks)", fontsize=10)
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)

    handles = [plt.Rectangle((0, 0), 1, 1, color=color[lbl]) for lbl in all_labels]
    fig.legend(handles, all_labels, loc="lower center", ncol=len(all_labels), fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# --- main ------------------------------------------------------------------------------------


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


def read_csv(path: Path) -> list[dict]:
    def value(v: str):
        for conv in (int, float):
            try:
                return conv(v)
            except ValueError:
                pass
        return v

    with path.open(newline="") as f:
        return [{k: value(v) for k, v in r.items() if v != ""} for r in csv.DictReader(f)]


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
    t0 = time.monotonic()
    for rnd in range(1, opts.rounds + 1):
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
