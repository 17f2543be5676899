"""python/pto_runtime/trace/dep_graph.py — the dependency graph as built: JSON, and Graphviz DOT.

Edge kinds keep their own line style everywhere (DOT here, arrows in the HTML page) so a
reader learns them once: raw solid, waw bold, war dashed, explicit dotted. The critical path
is drawn in red so the chain the summary names can be found in the picture.
"""

from __future__ import annotations

from typing import Any

from .display import format_ns, kernel_colours

__all__ = ["EDGE_STYLE", "graph_json", "to_dot"]

EDGE_STYLE = {"raw": "solid", "waw": "bold", "war": "dashed", "explicit": "dotted"}
EDGE_MEANING = {
    "raw": "read after write",
    "waw": "write after write",
    "war": "write after read",
    "explicit": "explicit",
}
CRITICAL_COLOUR = "#d62728"


def graph_json(trace: Any) -> dict[str, Any]:
    """``{"version", "platform", "runtime", "tasks": [...], "edges": [...], "critical_path"}``."""
    return {
        "version": trace.version,
        "platform": trace.platform,
        "runtime": trace.runtime,
        "tasks": [
            {
                "id": t.id,
                "func": t.func,
                "kernel": trace.kernel_name(t.func),
                "shape": t.shape,
                "status": t.status,
                "duration": t.duration if t.ran else None,
            }
            for t in trace.tasks
        ],
        "edges": [
            {
                "from": e.src,
                "to": e.dst,
                "kind": e.kind,
                **({"source": e.source} if e.source is not None else {}),
            }
            for e in trace.edges
        ],
        "critical_path": list(trace.critical_path().tasks),
    }


def _quote(*lines: str) -> str:
    # A DOT double-quoted string: only the quote and the backslash need escaping. Lines are
    # joined with DOT's centred line break, the two characters backslash-n.
    escaped = (s.replace("\\", "\\\\").replace('"', '\\"') for s in lines)
    return '"' + "\\n".join(escaped) + '"'


def to_dot(trace: Any) -> str:
    """Graphviz text: one box per task (coloured by kernel), one labelled arrow per edge."""
    colours = kernel_colours(t.func for t in trace.tasks)
    chain = trace.critical_path().tasks
    on_chain = set(chain)
    on_path = set(zip(chain, chain[1:]))
    lines = [
        "// Dependency graph from pto_runtime.trace. Render: dot -Tsvg graph.dot -o graph.svg",
        "// Edge styles: "
        + ", ".join(f"{k} ({EDGE_MEANING[k]}) {s}" for k, s in EDGE_STYLE.items()),
        "digraph pto_tasks {",
        f"  label={_quote(f'{trace.platform} · {trace.runtime}: {len(trace.tasks)} tasks')};",
        '  labelloc="t";',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8];',
    ]
    for t in trace.tasks:
        detail = f"{t.shape} · {format_ns(t.duration)}" if t.ran else f"{t.shape} · {t.status}"
        label = _quote(f"#{t.id} {trace.kernel_name(t.func)}", detail)
        attrs = [f"label={label}", f'fillcolor="{colours[t.func]}"']
        if not t.ran:
            attrs.append('style="rounded,dashed"')  # skipped: an outline, no fill
        if t.status == "failed":
            attrs.append('color="black", fontcolor="black", peripheries=2')
        if t.id in on_chain:
            attrs.append(f'color="{CRITICAL_COLOUR}", penwidth=2')
        lines.append(f"  t{t.id} [{', '.join(attrs)}];")
    for e in trace.edges:
        attrs = [f"label={_quote(e.kind)}", f"style={EDGE_STYLE[e.kind]}"]
        if (e.src, e.dst) in on_path:
            attrs.append(f'color="{CRITICAL_COLOUR}", fontcolor="{CRITICAL_COLOUR}"')
        lines.append(f"  t{e.src} -> t{e.dst} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
