"""python/pto_runtime/trace/__init__.py — look at a profiled run: swimlanes, graph, critical path.

Run with ``ChipCallConfig(enable_profiling=True)``, then::

    from pto_runtime.trace import Trace

    trace = Trace.from_dict(worker.last_trace())
    print(trace.summary())                      # counts, makespan, busy %, critical path
    trace.save_chrome_trace("run.json")         # open in ui.perfetto.dev
    trace.render_html("run.html")               # self-contained swimlane page
    trace.save_dot("graph.dot")                 # dependency graph for Graphviz

or from a shell: ``python -m pto_runtime.trace render run.trace.json -o run.html``.
Pure Python; the schema is in docs/guide/profiling.md.
"""

from __future__ import annotations

from .compare import compare_page, write_swimlanes
from .critical_path import CriticalPath
from .model import Trace
from .records import COST_SOURCES, PIPES, AicpuThread, Core, Cost, Edge, Task
from .schema import SCHEMA_VERSION
from .summary import KernelPipes, KernelTime, Summary

__all__ = [
    "COST_SOURCES",
    "PIPES",
    "SCHEMA_VERSION",
    "AicpuThread",
    "Core",
    "Cost",
    "CriticalPath",
    "Edge",
    "KernelPipes",
    "KernelTime",
    "Summary",
    "Task",
    "Trace",
    "compare_page",
    "write_swimlanes",
]
