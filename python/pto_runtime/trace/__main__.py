"""python/pto_runtime/trace/__main__.py — the command line: render a saved trace, print its summary.

    python -m pto_runtime.trace render run.json -o run.html --chrome run.perfetto.json
    python -m pto_runtime.trace summary run.json
    python -m pto_runtime.trace info run.perfetto.json   # what a file is: trace or Chrome view

Exit status: 0 done, 2 the input is unreadable or not a trace (the message names the field),
1 an output could not be written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import Error
from .chrome_trace import chrome_info
from .model import Trace, read_json

__all__ = ["main"]

EXIT_BAD_INPUT = 2
EXIT_OUTPUT_FAILED = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pto_runtime.trace",
        description="Render a PTO Runtime trace (the JSON of ChipWorker.last_trace()).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    render = commands.add_parser(
        "render",
        help="write the swimlane page and other views",
        description="Write views of a trace. With no output option, writes TRACE with the "
        "suffix .html.",
    )
    render.add_argument("trace", type=Path, help="trace JSON file")
    render.add_argument("-o", "--html", type=Path, help="self-contained swimlane HTML page")
    render.add_argument("--chrome", type=Path, help="Chrome-trace JSON for ui.perfetto.dev")
    render.add_argument("--dot", type=Path, help="dependency graph as Graphviz DOT")
    render.add_argument("--graph", type=Path, help="dependency graph as JSON")
    render.add_argument("--png", type=Path, help="swimlanes as PNG (needs matplotlib)")
    render.add_argument("--summary", action="store_true", help="print the run summary")
    summary = commands.add_parser("summary", help="print the run summary")
    summary.add_argument("trace", type=Path, help="trace JSON file")
    info = commands.add_parser(
        "info",
        help="say what a file is: a trace, or a Chrome trace this package wrote",
        description="Print what FILE is and the run it shows: for a trace its schema version, "
        "platform, runtime and counts; for a Chrome trace written by render --chrome or "
        "save_chrome_trace() the version of the trace it was made from and the same counts.",
    )
    info.add_argument("trace", type=Path, metavar="FILE", help="trace or Chrome-trace JSON file")
    return parser


def _rows(title: str, rows: list[tuple[str, Any]], notes: Sequence[str]) -> str:
    width = max(len(name) for name, _ in rows) + 2
    lines = [title] + [f"  {name:<{width}}{value}" for name, value in rows]
    return "\n".join(lines + [f"  note: {note}" for note in notes])


def _describe_chrome(path: Path, other: Mapping[str, Any]) -> str:
    rows = [
        ("version", f"{other.get('schema_version')} (of the trace it was made from)"),
        ("platform", other.get("platform")),
        ("runtime", other.get("runtime")),
        ("block_dim", other.get("block_dim")),
        ("aicpu_threads", other.get("aicpu_threads")),
        ("tasks", f"{other.get('tasks')} ({other.get('tasks_not_run')} not run)"),
        ("edges", other.get("edges")),
        ("flows", other.get("flows")),
    ]
    notes = other.get("notes")
    return _rows(
        f"{path}: Chrome trace written by pto_runtime.trace (open it in ui.perfetto.dev)",
        rows,
        notes if isinstance(notes, list) else [],
    )


def _describe_trace(path: Path, trace: Trace) -> str:
    not_run = sum(1 for t in trace.tasks if not t.ran)
    edges = f"{len(trace.edges)}"
    if trace.unmatched_edges:
        edges += f" (+{len(trace.unmatched_edges)} naming tasks the trace does not list)"
    rows = [
        ("version", trace.version),
        ("platform", trace.platform),
        ("runtime", trace.runtime),
        ("block_dim", trace.block_dim),
        ("aicpu_threads", trace.aicpu_threads),
        ("tasks", f"{len(trace.tasks)} ({not_run} not run)"),
        ("edges", edges),
    ]
    return _rows(f"{path}: PTO Runtime trace", rows, trace.notes)


def _info(path: Path) -> int:
    try:
        data = read_json(path)
        other = chrome_info(data)
        text = (
            _describe_chrome(path, other)
            if other is not None
            else _describe_trace(path, Trace.from_dict(data))
        )
    except (Error, OSError) as e:
        print(f"error: cannot read {path}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "info":
        return _info(args.trace)
    try:
        trace = Trace.load(args.trace)
    except (Error, OSError) as e:
        print(f"error: cannot read {args.trace}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT

    if args.command == "summary":
        print(trace.summary())
        return 0

    outputs = [args.html, args.chrome, args.dot, args.graph, args.png]
    if not any(outputs) and not args.summary:
        args.html = args.trace.with_suffix(".html")
    writers = [
        (args.html, trace.render_html),
        (args.chrome, trace.save_chrome_trace),
        (args.dot, trace.save_dot),
        (args.graph, trace.save_graph_json),
        (args.png, trace.render_png),
    ]
    status = 0
    for path, write in writers:
        if path is None:
            continue
        try:
            write(path)
        except (Error, OSError) as e:
            print(f"error: cannot write {path}: {e}", file=sys.stderr)
            status = EXIT_OUTPUT_FAILED
            continue
        print(f"wrote {path}")
    if args.summary:
        print(trace.summary())
    return status


if __name__ == "__main__":
    sys.exit(main())
