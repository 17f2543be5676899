"""bench/driver/plot.py — the PNG of a run: METG, empty tasks, efficiency, block_dim sweep."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from .tables import label_order, ordered, serial_index


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

    def bars(ax: Any, values: dict[tuple[str, str], float | None], ylabel: str, sub: str) -> None:
        """One bar per (label, config) of values, grouped by config in the order first seen."""
        cfgs = ordered(c for _, c in values)
        labels = label_order({lbl for lbl, _ in values})
        n = max(1, len(labels))
        width = 0.8 / n
        for k, lbl in enumerate(labels):
            xs, ys = [], []
            for i, c in enumerate(cfgs):
                v = values.get((lbl, c))
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

    bars(
        axes[0][0],
        {(m["label"], m["config"]): m["metg_us"] for m in metg},
        "METG(50%), us (lower is better)",
        "METG(50%), missing bar = efficiency never reached 50%",
    )
    empty = [r for r in rows if r["experiment"] == "empty" and r["grain"] == 0]
    bars(
        axes[0][1],
        {(r["label"], r["config"]): r["ns_per_task"] for r in empty},
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
