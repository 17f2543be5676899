"""python/pto_runtime/trace/swimlane_html.py — a run as one self-contained HTML page of swimlanes.

The page must open anywhere a trace ends up (a CI artifact, an e-mail, an offline machine),
so it carries everything inline: CSS in a <style>, the picture as inline SVG, details as SVG
<title> tooltips, no script at all and no external URL. One lane per AICPU thread (ticks for
dispatch, complete, submit), then one per core; tasks coloured by kernel; dependency arrows
only for graphs small enough to read (``MAX_ARROWS``), every task's predecessors are in its
tooltip either way.

A timing-mode trace prices each kernel (``Task.cost``). Then the header says how many tasks
each source priced, a table gives each kernel's pipe busy time, and a task priced by PTO-ISA's
cost model has its pipe breakdown twice: as text bars in its tooltip, and as a bar chart
that clicking the task opens. That needs no script: the bar is a link to the task's card,
and CSS shows only the card the URL's fragment names (``:target``).
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

from .display import (
    aicpu_lanes,
    format_ns,
    implied_submits,
    kernel_colours,
    nice_step,
    orchestrator_thread,
)

__all__ = ["DEFAULT_WIDTH", "MAX_ARROWS", "MAX_CARDS", "to_html"]

DEFAULT_WIDTH = 1400  # px, the whole SVG; the page scrolls sideways when it is wider
MAX_ARROWS = 300
MAX_TICKS = 40  # time axis ticks at most (nice_step aims at about 10)
LABEL_W = 160  # px for lane names
AXIS_H = 26
LANE_H = 16
BAR_H = 12
CRITICAL = "#d62728"
TICK_COLOUR = {"dispatch": "#1f77b4", "complete": "#2ca02c", "submit": "#9467bd"}
ARROW_DASH = {"raw": "", "waw": "", "war": "5 3", "explicit": "1.5 2.5"}
ARROW_WIDTH = {"raw": 1.0, "waw": 2.2, "war": 1.0, "explicit": 1.2}
TOOLTIP_LIST = 20  # predecessors/successors named in a tooltip before "and N more"
MAX_CARDS = 2000  # tasks given a pipe breakdown card (about 1 KB each); the rest: tooltip only
TEXT_BAR = 10  # characters of a tooltip's text bar at 100%
PIPE_COLOUR = {
    "SCALAR": "#9c755f",
    "MTE2": "#4e79a7",
    "MTE1": "#76b7b2",
    "CUBE": "#f28e2b",
    "FIXP": "#b07aa1",
    "VEC": "#59a14f",
    "MTE3": "#edc948",
}
OTHER_PIPE_COLOUR = "#79706e"

_CSS = """
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 8px; }
table.summary td { padding: 1px 14px 1px 0; vertical-align: top; }
table.summary td:first-child { color: #555; }
ul.legend { list-style: none; padding: 0; margin: 10px 0; }
ul.legend li { display: inline-block; margin: 2px 16px 2px 0; }
.sw { display: inline-block; width: 12px; height: 12px; vertical-align: -1px;
      margin-right: 5px; border: 1px solid rgba(0,0,0,.3); }
.lanes { overflow-x: auto; border: 1px solid #ddd; }
.note { color: #666; }
svg text { font-size: 11px; fill: #333; }
svg .axis text { fill: #666; }
svg .grid line { stroke: #e4e4e4; }
svg .task:hover { stroke: #000; stroke-width: 1.5; }
svg .crit { stroke: #d62728; stroke-width: 1.5; }
svg .failed { stroke: #000; stroke-width: 1.5; stroke-dasharray: 3 2; }
svg .deps { fill: none; pointer-events: none; }
h2 { font-size: 15px; margin: 16px 0 6px; }
table.pipes { border-collapse: collapse; }
table.pipes td, table.pipes th { padding: 1px 8px 1px 0; text-align: right; white-space: nowrap; }
table.pipes td:first-child, table.pipes th:first-child { text-align: left; }
.bar { display: inline-block; width: 80px; height: 10px; background: #eee;
       vertical-align: -1px; margin-right: 4px; }
.bar span { display: block; height: 100%; }
.card { display: none; position: fixed; right: 16px; bottom: 16px; max-width: 460px;
        background: #fff; border: 1px solid #999; box-shadow: 0 2px 8px rgba(0,0,0,.25);
        padding: 8px 10px; }
.card:target { display: block; }
.card .close { float: right; margin-left: 12px; }
"""

# Characters XML 1.0 does not allow even escaped: the C0 controls but tab, LF and CR, and
# U+FFFE, U+FFFF. A kernel or platform name holding one would make the inline SVG ill-formed.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def escape(text: str) -> str:
    """``text`` for HTML and SVG: markup escaped, characters XML refuses shown as U+FFFD."""
    return _NOT_XML.sub("\ufffd", html.escape(text))


def _time_range(trace: Any) -> tuple[float, float]:
    times = []
    for t in trace.tasks:
        times += [x for x in (t.start, t.end, t.submit) if x is not None]
    for a in trace.aicpu:
        times += [ev[0] for ev in a.events]
    if not times:
        return 0.0, 1.0
    lo, hi = float(min(times)), float(max(times))
    # An empty span gets 1 ns, or one float step where 1 ns is below float precision
    # (beyond 2**53 ns): the layout divides by hi - lo.
    return (lo, hi) if hi > lo else (lo, lo + max(1.0, math.ulp(lo)))


def _names(ids: list[tuple[int, str]]) -> str:
    shown = ", ".join(f"{i} ({k})" for i, k in ids[:TOOLTIP_LIST])
    if len(ids) > TOOLTIP_LIST:
        shown += f" and {len(ids) - TOOLTIP_LIST} more"
    return shown or "none"


def _percent(us: float, duration_ns: float) -> float | None:
    """``us`` (µs) as a percentage of ``duration_ns``; None for an empty task."""
    return 1e5 * us / duration_ns if duration_ns > 0 else None


def _text_bar(percent: float | None) -> str:
    """A bar of block characters, ``TEXT_BAR`` wide at 100% (eighths of a character)."""
    if percent is None:
        return ""
    eighths = round(min(max(percent, 0.0), 100.0) / 100 * TEXT_BAR * 8)
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def _cost_lines(t: Any) -> list[str]:
    """The tooltip lines for ``t.cost``: the source, and an isa_model cost's pipe text bars."""
    cost = t.cost
    if cost is None:
        return []
    if cost.pipes_us is None:
        return [f"priced by {cost.source}"]
    lines = [
        f"priced by {cost.source} · {cost.cycles} cycles",
        f"pipe busy, % of the {format_ns(t.duration)} task:",
    ]
    width = max(len(p) for p in cost.pipes_us) if cost.pipes_us else 0
    for pipe, us in cost.pipes_us.items():
        pct = _percent(us, t.duration)
        shown = f"{pct:3.0f}%" if pct is not None else "   -"
        line = f"  {pipe:<{width}} {format_ns(1e3 * us):>9} {shown} {_text_bar(pct)}"
        lines.append(line.rstrip())
    return lines


def _tooltip(trace: Any, t: Any, slot: int, critical: set[int], card: bool = False) -> str:
    lines = [
        f"task {t.id} · {trace.kernel_name(t.func)} (func {t.func})",
        f"{t.shape} on {trace.core(slot).label} · {t.status}"
        + (f" · AICPU thread {t.thread}" if t.thread is not None else ""),
        f"start {format_ns(t.start)} · end {format_ns(t.end)} · duration {format_ns(t.duration)}",
    ]
    if t.submit is not None:
        lines.append(f"submitted {format_ns(t.submit)}")
    lines.append("predecessors: " + _names([(e.src, e.kind) for e in trace.predecessors(t.id)]))
    lines.append("successors: " + _names([(e.dst, e.kind) for e in trace.successors(t.id)]))
    if t.id in critical:
        lines.append("on the critical path")
    lines += _cost_lines(t)
    if card:
        lines.append("click for the pipe breakdown")
    return "\n".join(lines)


def _summary_table(summary: Any) -> str:
    def counts(table: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in table.items() if v) or "none"

    cp = summary.critical_path
    rows = [
        (
            "tasks",
            f"{summary.task_count} ({counts(summary.tasks_by_shape)}; "
            f"{counts(summary.tasks_by_status)})",
        ),
        ("makespan", format_ns(summary.makespan)),
    ]
    for core_type, fraction in summary.busy_by_type.items():
        n = summary.cores_by_type[core_type]
        rows.append((f"busy {core_type}", f"{100 * fraction:.1f}% of {n} cores"))
    note = "" if cp.from_edges else " (no edges recorded: the longest single task)"
    rows.append(
        (
            "critical path",
            f"{format_ns(cp.length)}, {100 * cp.share:.1f}% of the makespan, "
            f"{len(cp.tasks)} tasks{note}",
        )
    )
    rows.append(("chain", cp.chain_text(max_shown=24)))
    if summary.cost_sources:
        rows.append(("kernels priced by", summary.cost_sources_text()))
    body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="summary">{body}</table>'


def _legend(trace: Any, colours: dict[int, str], arrows: bool) -> str:
    per_func: dict[int, list[float]] = {}
    for t in trace.tasks:
        per_func.setdefault(t.func, []).append(t.duration)
    items = []
    for func in sorted(per_func):
        d = per_func[func]
        items.append(
            f'<li><span class="sw" style="background:{colours[func]}"></span>'
            f"{escape(trace.kernel_name(func))} <span class=note>(func {func}: {len(d)} tasks, "
            f"{escape(format_ns(sum(d)))})</span></li>"
        )
    marks = [
        f'<li><span class="sw" style="background:{c}"></span>{k} (AICPU tick)</li>'
        for k, c in TICK_COLOUR.items()
    ]
    marks.append(
        f'<li><span class="sw" style="border:2px solid {CRITICAL}"></span>critical path</li>'
    )
    if arrows:
        for kind in ARROW_DASH:
            line = (
                f'<line x1="0" y1="6" x2="28" y2="6" stroke="#555" '
                f'stroke-width="{ARROW_WIDTH[kind]}" stroke-dasharray="{ARROW_DASH[kind]}"/>'
            )
            marks.append(f'<li><svg width="30" height="12">{line}</svg> {kind} edge</li>')
    return (
        f'<ul class="legend" id="legend">{"".join(items)}</ul>'
        f'<ul class="legend">{"".join(marks)}</ul>'
    )


class _Layout:
    """Where things go: one row per lane (AICPU threads, then cores), x in pixels per ns."""

    def __init__(self, trace: Any, width: int) -> None:
        lanes = aicpu_lanes(trace)
        self.names = [name for _, name in lanes] + [c.label for c in trace.cores]
        self.aicpu_row = {thread: i for i, (thread, _) in enumerate(lanes)}
        self.core_row = {c.slot: len(lanes) + i for i, c in enumerate(trace.cores)}
        self.width = width
        self.height = AXIS_H + LANE_H * len(self.names) + 4
        self.lo, self.hi = _time_range(trace)
        self.x0 = LABEL_W
        self.k = (width - LABEL_W - 12) / (self.hi - self.lo)

    def x(self, t: float) -> float:
        return self.x0 + (t - self.lo) * self.k

    def top(self, row: int) -> float:
        return AXIS_H + row * LANE_H

    def core_middle(self, slot: int) -> float:
        return self.top(self.core_row[slot]) + LANE_H / 2


def _svg_lanes(at: _Layout) -> list[str]:
    out = ['<g class="lanes-bg">']
    for row, name in enumerate(at.names):
        y = at.top(row)
        if row == len(at.aicpu_row) and at.aicpu_row:  # a rule between AICPU and core lanes
            out.append(f'<line x1="0" x2="{at.width}" y1="{y}" y2="{y}" stroke="#999"/>')
        out.append(
            f'<rect x="0" y="{y}" width="{at.width}" height="{LANE_H}" '
            f'fill="{"#f6f6f6" if row % 2 else "#ffffff"}"/>'
            f'<text class="lane" x="6" y="{y + LANE_H - 4}">{escape(name)}</text>'
        )
    out.append("</g>")
    return out


def _svg_axis(at: _Layout) -> list[str]:
    step = nice_step(at.hi - at.lo)
    labels, grid = ['<g class="axis">'], ['<g class="grid">']
    # Ticks by index: adding step to a time can leave it unchanged when the times are large
    # (1.7e18 ns since the epoch, 50 ns steps), and the loop would never end.
    first, last = math.ceil(at.lo / step), math.floor(at.hi / step + 1e-9)
    for i in range(first, min(last, first + MAX_TICKS) + 1):
        tick = i * step
        px = at.x(tick)
        grid.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{AXIS_H - 4}" y2="{at.height}"/>')
        labels.append(
            f'<text x="{px:.1f}" y="{AXIS_H - 8}" text-anchor="middle">'
            f"{escape(format_ns(tick))}</text>"
        )
    return [*labels, "</g>", *grid, "</g>"]


def _svg_tasks(
    trace: Any, at: _Layout, colours: dict[int, str], critical: set[int], cards: set[int]
) -> list[str]:
    out = ['<g class="tasks">']
    for t in trace.tasks:
        if not t.ran:
            continue
        x0 = at.x(t.start)
        w = max(at.x(t.end) - x0, 1.0)  # an empty kernel still gets a visible sliver
        classes = "task" + (" crit" if t.id in critical else "")
        classes += " failed" if t.status == "failed" else ""
        card = t.id in cards
        if card:  # clicking the bar opens the task's pipe breakdown card
            out.append(f'<a href="#task-{t.id}">')
        for slot in t.cores:  # a MIX task: one bar on each of its three cores
            out.append(
                f'<rect class="{classes}" data-task="{t.id}" x="{x0:.2f}" '
                f'y="{at.top(at.core_row[slot]) + (LANE_H - BAR_H) / 2}" width="{w:.2f}" '
                f'height="{BAR_H}" fill="{colours[t.func]}">'
                f"<title>{escape(_tooltip(trace, t, slot, critical, card))}</title></rect>"
            )
        if card:
            out.append("</a>")
    out.append("</g>")
    return out


def _bar(pipe: str, percent: float | None) -> str:
    width = min(max(percent or 0.0, 0.0), 100.0)
    colour = PIPE_COLOUR.get(pipe, OTHER_PIPE_COLOUR)
    return f'<span class="bar"><span style="width:{width:.1f}%;background:{colour}"></span></span>'


def _pipe_cell(pipe: str, us: float, duration_ns: float) -> str:
    pct = _percent(us, duration_ns)
    shown = f"{pct:.0f}%" if pct is not None else "-"
    return f"<td>{_bar(pipe, pct)}{escape(format_ns(1e3 * us))} · {shown}</td>"


def _kernel_pipes(summary: Any) -> str:
    """Per kernel, its isa_model tasks' pipe busy time summed, as % of their summed duration."""
    if not summary.kernel_pipes:
        return ""
    pipes = list(summary.kernel_pipes[0].pipes_us)
    head = "".join(f"<th>{escape(p)}</th>" for p in pipes)
    rows = []
    for k in summary.kernel_pipes:
        cells = "".join(_pipe_cell(p, k.pipes_us[p], k.total) for p in pipes)
        rows.append(
            f"<tr><td>{escape(k.name)}</td><td>{k.tasks}</td><td>{k.cycles}</td>"
            f"<td>{escape(format_ns(k.total))}</td>{cells}</tr>"
        )
    return (
        '<h2 id="pipes">Pipe busy by kernel (PTO-ISA cost model)</h2>'
        "<p class=\"note\">Each pipe's busy time summed over the kernel's isa_model-priced "
        "tasks, and as a share of their summed duration. Pipes overlap, so the shares need "
        "not add up to 100%. Click a task for its own breakdown.</p>"
        '<table class="pipes" id="kernel-pipes"><tr><th>kernel</th><th>tasks</th>'
        f"<th>cycles</th><th>time</th>{head}</tr>{''.join(rows)}</table>"
    )


def _cards(trace: Any, cards: set[int]) -> str:
    """One hidden card per task in ``cards``; CSS shows the one the URL's fragment names."""
    out = []
    for t in trace.tasks:
        if t.id not in cards:
            continue
        cost = t.cost
        rows = "".join(
            f"<tr><td>{escape(p)}</td>{_pipe_cell(p, us, t.duration)}</tr>"
            for p, us in cost.pipes_us.items()
        )
        out.append(
            f'<div class="card" id="task-{t.id}"><a class="close" href="#_">close</a>'
            f"<b>task {t.id} · {escape(trace.kernel_name(t.func))}</b><br>"
            f"priced by {escape(cost.source)} · {cost.cycles} cycles · "
            f"duration {escape(format_ns(t.duration))}"
            f'<table class="pipes"><tr><th>pipe</th><th>busy · % of the task</th></tr>'
            f"{rows}</table></div>"
        )
    return "".join(out)


def _svg_aicpu(trace: Any, at: _Layout) -> list[str]:
    """A short tick per AICPU event: dispatch in the upper half of the lane, complete in the
    lower, submit across it."""
    out = ['<g class="aicpu">']

    def tick(thread: int, time: float, kind: str, task_id: int) -> None:
        y = at.top(at.aicpu_row[thread])
        y1, y2 = {
            "dispatch": (y + 2, y + LANE_H / 2),
            "complete": (y + LANE_H / 2, y + LANE_H - 2),
        }.get(kind, (y + 2, y + LANE_H - 2))
        name = trace.kernel_name(trace.task(task_id).func)
        out.append(
            f'<line x1="{at.x(time):.2f}" x2="{at.x(time):.2f}" y1="{y1}" y2="{y2}" '
            f'stroke="{TICK_COLOUR[kind]}" stroke-width="1.5"><title>{kind} task {task_id} '
            f"({escape(name)}) at {escape(format_ns(time))}</title></line>"
        )

    for a in trace.aicpu:
        for time, kind, task_id in a.events:
            tick(a.thread, time, kind, task_id)
    orch = orchestrator_thread(trace)
    for time, task_id in implied_submits(trace):
        tick(orch, time, "submit", task_id)  # type: ignore[arg-type]
    out.append("</g>")
    return out


def _svg_arrows(
    trace: Any, at: _Layout, edges: list[Any], on_path: set[tuple[int, int]]
) -> list[str]:
    """One curve per edge, from the producer's end to the consumer's start."""
    out = ['<g class="deps">']
    for e in edges:
        src, dst = trace.task(e.src), trace.task(e.dst)
        x1, y1 = at.x(src.end), at.core_middle(src.cores[0])
        x2, y2 = at.x(dst.start), at.core_middle(dst.cores[0])
        bend = max(12.0, abs(x2 - x1) / 2)
        crit = (e.src, e.dst) in on_path
        dash = f' stroke-dasharray="{ARROW_DASH[e.kind]}"' if ARROW_DASH[e.kind] else ""
        out.append(
            f'<path d="M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} '
            f'{x2:.1f},{y2:.1f}" stroke="{CRITICAL if crit else "#555"}" '
            f'stroke-width="{ARROW_WIDTH[e.kind]}"{dash} stroke-opacity="0.8" '
            f'marker-end="url(#arrow-{"crit" if crit else "dep"})"/>'
        )
    out.append("</g>")
    return out


def to_html(trace: Any, width: int = DEFAULT_WIDTH) -> str:
    """The whole page as a string; see the module comment for what it shows."""
    summary = trace.summary()
    chain = summary.critical_path.tasks
    colours = kernel_colours(t.func for t in trace.tasks)
    at = _Layout(trace, width)
    drawable = [e for e in trace.edges if trace.task(e.src).ran and trace.task(e.dst).ran]
    arrows = len(drawable) <= MAX_ARROWS
    priced = [t.id for t in trace.tasks if t.ran and t.cost is not None and t.cost.pipes_us]
    cards = set(priced[:MAX_CARDS])

    svg = [
        f'<svg width="{width}" height="{at.height}" role="img" '
        f'aria-label="swimlanes: one lane per core">',
        "<defs>",
        *(
            f'<marker id="arrow-{name}" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="7" '
            f'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto">'
            f'<path d="M0,0 L6,3 L0,6 z" fill="{colour}"/></marker>'
            for name, colour in (("dep", "#555"), ("crit", CRITICAL))
        ),
        "</defs>",
        *_svg_lanes(at),
        *_svg_axis(at),
        *_svg_tasks(trace, at, colours, set(chain), cards),
        *_svg_aicpu(trace, at),
        *(_svg_arrows(trace, at, drawable, set(zip(chain, chain[1:]))) if arrows else []),
        "</svg>",
    ]

    notes = ["Hover a task for its id, kernel, times and dependencies."]
    if cards:
        notes.append(
            "Tasks priced by the PTO-ISA cost model also show their pipes' busy time; "
            "click one for its pipe breakdown."
        )
    if len(priced) > len(cards):
        notes.append(
            f"{len(priced) - len(cards)} priced task(s) past the first {MAX_CARDS} have "
            "their pipe breakdown in the tooltip only."
        )
    if not arrows:
        notes.append(
            f"Dependency arrows are hidden: {len(drawable)} edges is more than {MAX_ARROWS}; "
            "each task's tooltip lists its predecessors."
        )
    skipped = sum(1 for t in trace.tasks if not t.ran)
    if skipped:
        notes.append(f"{skipped} task(s) did not run and have no bar.")
    notes += [f"Note: {note}." for note in trace.notes]
    title = f"PTO trace: {trace.platform} · {trace.runtime}"
    subtitle = (
        f"block_dim {trace.block_dim} · {trace.aicpu_threads} AICPU threads · "
        f"{len(trace.cores)} cores · {len(trace.edges)} edges"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            f"<title>{escape(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            f"<h1>{escape(title)}</h1>",
            f'<p class="note">{escape(subtitle)}</p>',
            _summary_table(summary),
            _legend(trace, colours, arrows and bool(drawable)),
            f'<div class="lanes">{"".join(svg)}</div>',
            f'<p class="note">{escape(" ".join(notes))}</p>',
            _kernel_pipes(summary),
            _cards(trace, cards),
            "</body>",
            "</html>",
            "",
        ]
    )
