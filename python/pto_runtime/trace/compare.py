"""python/pto_runtime/trace/compare.py — a measured and a predicted swimlane, side by side.

A timed run (``ChipCallConfig(sim_seed=N, sim_timing=True, enable_profiling=True)``) leaves
the schedule the timing model predicts; a parallel run of the same program leaves the one this
machine measured. :func:`write_swimlanes` writes both pages and a third that shows them one
above the other (docs/design/sim_execution.md, "Timing mode").
"""

from __future__ import annotations

import html
from pathlib import Path

from .model import Trace

__all__ = ["compare_page", "write_swimlanes"]


def compare_page(measured: str, predicted: str, title: str) -> str:
    """An HTML page framing the two swimlane pages at ``measured`` and ``predicted`` (URLs)."""
    frames = "".join(
        f'<h2>{html.escape(name)}</h2><iframe src="{html.escape(src)}" '
        'style="width:100%;height:46vh;border:1px solid #ccc"></iframe>'
        for name, src in (("measured (this machine's wall clock)", measured),
                          ("predicted (timing mode, virtual time)", predicted))
    )  # fmt: skip
    return (
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<body style='font-family:sans-serif'><h1>{html.escape(title)}</h1>{frames}</body>"
    )


def write_swimlanes(measured: Trace, predicted: Trace, out_dir: Path | str, stem: str) -> Path:
    """Writes ``<stem>.measured.html``, ``<stem>.predicted.html`` and ``<stem>.compare.html``
    (the two one above the other) into ``out_dir``, made if missing; returns the last's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    measured.render_html(out / f"{stem}.measured.html")
    predicted.render_html(out / f"{stem}.predicted.html")
    page = out / f"{stem}.compare.html"
    page.write_text(
        compare_page(f"{stem}.measured.html", f"{stem}.predicted.html", f"{stem} swimlanes"),
        encoding="utf-8",
    )
    return page
