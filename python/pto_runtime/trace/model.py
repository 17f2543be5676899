"""python/pto_runtime/trace/model.py — Trace: one profiled run, loaded, checked, analysed, exported.

A Trace is built only from a checked dict (``from_dict``, ``load``), so every method may
assume the schema holds: ids unique, edges between known tasks, no cycles. The exports live
in their own modules (chrome_trace, swimlane_html, swimlane_png, dep_graph); the methods here
are the one place a user looks for them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cached_property
from typing import Any, Union

from ..errors import ErrorCode, error_from_code
from . import chrome_trace, dep_graph, swimlane_html, swimlane_png
from .critical_path import CriticalPath, critical_path, makespan
from .records import AicpuThread, Core, Edge, Task
from .schema import SCHEMA_VERSION, parse
from .summary import Summary, core_busy_ns, summarize

__all__ = ["PathLike", "Trace", "read_json"]

PathLike = Union[str, "os.PathLike[str]"]


class Trace:
    """One profiled run: ``cores``, ``tasks``, ``edges``, ``aicpu`` threads and ``kernels`` names.

    Build it with ``Trace.from_dict(worker.last_trace())`` or ``Trace.load("trace.json")``;
    both raise InvalidArgumentError naming the first field that breaks the schema.
    """

    version = SCHEMA_VERSION
    clock = "ns"

    def __init__(
        self,
        *,
        platform: str,
        runtime: str,
        block_dim: int,
        aicpu_threads: int,
        cores: tuple[Core, ...],
        tasks: tuple[Task, ...],
        edges: tuple[Edge, ...] = (),
        aicpu: tuple[AicpuThread, ...] = (),
        kernels: Mapping[int, str] | None = None,
        unmatched_edges: tuple[Edge, ...] = (),
        dropped_tasks: int = 0,
        dropped_edges: int = 0,
        pmu_note: str = "",
    ) -> None:
        """Internal: takes already-checked rows. Use ``from_dict`` or ``load``."""
        self.platform = platform
        self.runtime = runtime
        self.block_dim = block_dim
        self.aicpu_threads = aicpu_threads
        self.cores = tuple(sorted(cores, key=lambda c: c.slot))
        self.tasks = tuple(tasks)
        self.edges = tuple(edges)
        self.aicpu = tuple(sorted(aicpu, key=lambda a: a.thread))
        self.kernels = dict(kernels or {})
        # What the trace does not show: edges naming unlisted tasks, and what the runtime could
        # not record (past ChipCallConfig.trace_tasks).
        self.unmatched_edges = tuple(unmatched_edges)
        self.dropped_tasks = dropped_tasks
        self.dropped_edges = dropped_edges
        # enable_pmu: which counters could not be read, and why ("" if none or PMU off).
        self.pmu_note = pmu_note
        self._task_by_id = {t.id: t for t in self.tasks}
        self._core_by_slot = {c.slot: c for c in self.cores}

    # --- loading and saving -------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trace:
        """A Trace from the dict ``ChipWorker.last_trace()`` returns (or its JSON, parsed)."""
        return cls(**parse(data))

    @classmethod
    def load(cls, path: PathLike) -> Trace:
        """A Trace from a JSON file written by ``save`` (or by anything following the schema).

        Raises OSError if the file cannot be read, InvalidArgumentError if it is not JSON or
        not a trace.
        """
        return cls.from_dict(read_json(path))

    def to_dict(self) -> dict[str, Any]:
        """The trace as the schema's plain dict (JSON-compatible; kernel ids as string keys)."""
        tasks = []
        for t in self.tasks:
            row: dict[str, Any] = {
                "id": t.id,
                "func": t.func,
                "shape": t.shape,
                "cores": list(t.cores),
                "start": t.start,
                "end": t.end,
                "status": t.status,
            }
            if t.submit is not None:
                row["submit"] = t.submit
            if t.thread is not None:
                row["thread"] = t.thread
            if t.pmu is not None:
                row["pmu"] = dict(t.pmu)
            if t.dispatch_policy is not None:
                row["dispatch_policy"] = t.dispatch_policy
            if t.dispatch_metric is not None:
                row["dispatch_metric"] = t.dispatch_metric
            if t.cost is not None:
                row["cost"] = t.cost.to_dict()
            tasks.append(row)
        return {
            "version": self.version,
            "platform": self.platform,
            "runtime": self.runtime,
            "block_dim": self.block_dim,
            "aicpu_threads": self.aicpu_threads,
            "clock": self.clock,
            "cores": [{"slot": c.slot, "type": c.type, "cluster": c.cluster} for c in self.cores],
            "tasks": tasks,
            "edges": [
                {
                    "from": e.src,
                    "to": e.dst,
                    "kind": e.kind,
                    **({"source": e.source} if e.source is not None else {}),
                }
                for e in (*self.edges, *self.unmatched_edges)
            ],
            "aicpu": [
                {"thread": a.thread, "role": a.role, "events": [list(ev) for ev in a.events]}
                for a in self.aicpu
            ],
            "kernels": {str(f): name for f, name in sorted(self.kernels.items())},
            "dropped_tasks": self.dropped_tasks,
            "dropped_edges": self.dropped_edges,
            **({"pmu_note": self.pmu_note} if self.pmu_note else {}),
        }

    def save(self, path: PathLike) -> None:
        """Writes the trace as JSON; ``Trace.load(path)`` reads it back unchanged."""
        _write_json(path, self.to_dict())

    # --- lookups ------------------------------------------------------------------------

    def task(self, task_id: int) -> Task:
        """The task with id ``task_id`` (KeyError if there is none)."""
        return self._task_by_id[task_id]

    def core(self, slot: int) -> Core:
        """The core in slot ``slot`` (KeyError if there is none)."""
        return self._core_by_slot[slot]

    def kernel_name(self, func: int) -> str:
        """The display name of ``func``; ``"func N"`` when the trace has none for it."""
        return self.kernels.get(func) or f"func {func}"

    @cached_property
    def _preds(self) -> dict[int, tuple[Edge, ...]]:
        table: dict[int, list[Edge]] = {t.id: [] for t in self.tasks}
        for e in self.edges:
            table[e.dst].append(e)
        return {t: tuple(es) for t, es in table.items()}

    @cached_property
    def _succs(self) -> dict[int, tuple[Edge, ...]]:
        table: dict[int, list[Edge]] = {t.id: [] for t in self.tasks}
        for e in self.edges:
            table[e.src].append(e)
        return {t: tuple(es) for t, es in table.items()}

    def predecessors(self, task_id: int) -> tuple[Edge, ...]:
        """The edges into ``task_id`` (what it waited for)."""
        return self._preds[task_id]

    def successors(self, task_id: int) -> tuple[Edge, ...]:
        """The edges out of ``task_id`` (what waited for it)."""
        return self._succs[task_id]

    # --- analysis -----------------------------------------------------------------------

    @property
    def notes(self) -> tuple[str, ...]:
        """What the trace leaves out, one sentence each; empty for a complete trace."""
        notes = []
        if self.dropped_tasks:
            notes.append(
                f"{self.dropped_tasks} task(s) past the trace capacity were not recorded "
                "(raise ChipCallConfig.trace_tasks)"
            )
        if self.dropped_edges:
            notes.append(f"{self.dropped_edges} edge(s) past the trace capacity were not recorded")
        if self.pmu_note:
            notes.append(f"PMU: {self.pmu_note}")
        if self.unmatched_edges:
            notes.append(
                f"{len(self.unmatched_edges)} edge(s) name a task the trace does not list; "
                "they are left out of the graph and the critical path"
            )
        return tuple(notes)

    @property
    def makespan(self) -> float:
        """Max end minus min start over the tasks that ran, in ns (0 if none ran)."""
        return makespan(self.tasks)

    @cached_property
    def _critical_path(self) -> CriticalPath:
        return critical_path(self.tasks, self.edges)

    def critical_path(self) -> CriticalPath:
        """The longest chain by task durations along edges; see ``critical_path.py``."""
        return self._critical_path

    def core_busy(self) -> dict[int, float]:
        """Per core slot, the fraction of the makespan it spent running tasks."""
        span = self.makespan
        busy = core_busy_ns(self.cores, self.tasks)
        return {slot: (ns / span if span > 0 else 0.0) for slot, ns in busy.items()}

    def summary(self, top_kernels: int = 5) -> Summary:
        """Counts, makespan, busy fraction per core type, critical path, top kernels.

        ``print(trace.summary())`` shows it as a short table.
        """
        return summarize(self, self._critical_path, self.kernel_name, top=top_kernels)

    # --- exports ------------------------------------------------------------------------

    def to_chrome_trace(self, max_flows: int = chrome_trace.MAX_FLOWS) -> dict[str, Any]:
        """The run as Chrome Trace Event Format JSON (opens in ui.perfetto.dev)."""
        return chrome_trace.to_chrome_trace(self, max_flows=max_flows)

    def save_chrome_trace(self, path: PathLike, max_flows: int = chrome_trace.MAX_FLOWS) -> None:
        """Writes ``to_chrome_trace()`` to ``path``."""
        _write_json(path, self.to_chrome_trace(max_flows=max_flows), indent=None)

    def graph_json(self) -> dict[str, Any]:
        """The dependency graph: tasks (with kernels) and edges (with kinds), JSON-compatible."""
        return dep_graph.graph_json(self)

    def save_graph_json(self, path: PathLike) -> None:
        """Writes ``graph_json()`` to ``path``."""
        _write_json(path, self.graph_json())

    def to_dot(self) -> str:
        """The dependency graph as Graphviz DOT text (``dot -Tsvg`` renders it)."""
        return dep_graph.to_dot(self)

    def save_dot(self, path: PathLike) -> None:
        """Writes ``to_dot()`` to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_dot())

    def to_html(self, width: int = swimlane_html.DEFAULT_WIDTH) -> str:
        """The swimlane page as one self-contained HTML string."""
        return swimlane_html.to_html(self, width=width)

    def render_html(self, path: PathLike, width: int = swimlane_html.DEFAULT_WIDTH) -> None:
        """Writes the swimlane page (inline SVG, no external resources) to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_html(width=width))

    def render_png(self, path: PathLike, dpi: int = 120) -> None:
        """Writes the swimlanes as a PNG; raises NotSupportedError without matplotlib."""
        swimlane_png.render_png(self, path, dpi=dpi)

    def __repr__(self) -> str:
        return (
            f"Trace({self.platform}/{self.runtime}: {len(self.tasks)} tasks, "
            f"{len(self.edges)} edges, {len(self.cores)} cores)"
        )


def read_json(path: PathLike) -> Any:
    """The parsed JSON of ``path``, unchecked.

    Raises OSError if the file cannot be read, InvalidArgumentError if it is not JSON (or
    JSON nested or sized past what Python's reader holds).
    """
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise error_from_code(
                ErrorCode.INVALID_ARGUMENT, f"trace: {os.fspath(path)} is not JSON: {e}"
            ) from e
        except (ValueError, RecursionError) as e:
            # JSON that Python's reader will not hold: an integer of more digits than
            # sys.get_int_max_str_digits() allows, or arrays nested past the recursion limit.
            raise error_from_code(
                ErrorCode.INVALID_ARGUMENT,
                f"trace: {os.fspath(path)} is JSON this reader cannot take in: {e}",
            ) from e


def _write_json(path: PathLike, data: Any, indent: int | None = 1) -> None:
    with open(path, "w", encoding="utf-8") as f:
        # allow_nan=False: a NaN would make the file unreadable by browsers and Perfetto.
        json.dump(data, f, indent=indent, allow_nan=False)
        f.write("\n")
