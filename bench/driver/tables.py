"""bench/driver/tables.py — from samples to numbers: rounds merged, METG, the printed tables.

aggregate() merges the rounds of a point (median of medians, min of mins, max of maxes),
metg_table() computes METG(50%) the way Task Bench does, report() prints every table;
write_csv() and read_csv() keep the rows between runs (bench/run.py --from-csv).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from .plan import ALL_RUNTIMES, TIMED

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


def ordered(seq: Iterable[str]) -> list[str]:
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


def read_csv(path: Path) -> list[dict]:
    def value(v: str) -> int | float | str:
        for conv in (int, float):
            try:
                return conv(v)
            except ValueError:
                pass
        return v

    with path.open(newline="") as f:
        return [{k: value(v) for k, v in r.items() if v != ""} for r in csv.DictReader(f)]


def report_round_trip(rows: list[dict], pingpong: list[dict]) -> None:
    """The cross-CPU round trip of this run (bench_pingpong, once per round) and each runtime's
    empty-task chain in those round trips: a dependent chain hands each task from the CPU that
    ran its producer to the one that runs it, so its floor is about one round trip per task."""
    if not pingpong:
        return
    meds = sorted(float(p["median_ns"]) for p in pingpong)
    lo = min(float(p["min_ns"]) for p in pingpong)
    hi = max(float(p["max_ns"]) for p in pingpong)
    rt = meds[len(meds) // 2]
    print(
        f"\ncross-CPU round trip of one cache line (bench_pingpong, {len(pingpong)} round(s)): "
        f"{fmt_spread(rt, lo, hi)} ns"
    )
    chain = [
        r
        for r in rows
        if r["experiment"] == "empty" and r["grain"] == 0 and r["config"].startswith("chain")
    ]
    for r in sorted(chain, key=lambda r: (r["config"], r["label"])):
        print(
            f"  {r['config']} {r['label']}: {float(r['ns_per_task']):.0f} ns per task = "
            f"{float(r['ns_per_task']) / rt:.2f} round trips"
        )
