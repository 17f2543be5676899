"""python/pto_runtime/trace/summary.py — what a person reads first: counts, busy time, hot kernels.

Busy fraction of a core type = time its cores spent running tasks / (its core count x
makespan), counting every core the run could use: idle cores are the point. A MIX task
occupies each of its three cores for its whole duration. Overlapping intervals on one core
(which a correct runtime never records) are merged rather than double-counted.

A timing-mode trace says how each kernel was priced (``Task.cost``): the summary counts tasks
by cost source and, per kernel, sums the ISA cost model's cycles and per-pipe busy time over
its isa_model-priced tasks. Both are empty for a trace without costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .critical_path import CriticalPath
from .display import format_ns
from .records import CORE_TYPES, COST_SOURCES, PIPES, SHAPES, STATUSES, Core, Task

__all__ = ["KernelPipes", "KernelTime", "Summary", "core_busy_ns", "pipe_names", "summarize"]


@dataclass(frozen=True)
class KernelTime:
    """Total task time of one kernel (sum of its tasks' durations, a MIX task counted once)."""

    func: int
    name: str
    tasks: int
    total: float


@dataclass(frozen=True)
class KernelPipes:
    """One kernel's ISA cost model totals over its isa_model-priced tasks: ``tasks`` of them,
    ``total`` their summed duration (ns), ``cycles`` summed, and per pipe the busy µs summed
    (``pipes_us``, in ``pipe_names`` order).
    """

    func: int
    name: str
    tasks: int
    total: float
    cycles: int
    pipes_us: dict[str, float]


def pipe_names(tasks: Sequence[Task]) -> list[str]:
    """The pipes any task's isa_model cost names: ``PIPES`` first, in order, then the others."""
    seen: dict[str, None] = {}
    for t in tasks:
        if t.cost is not None and t.cost.pipes_us is not None:
            seen.update(dict.fromkeys(t.cost.pipes_us))
    return [p for p in PIPES if p in seen] + [p for p in seen if p not in PIPES]


@dataclass(frozen=True)
class Summary:
    """A run at a glance; ``str()`` gives the printable table, ``to_dict()`` the JSON form."""

    platform: str
    runtime: str
    block_dim: int
    aicpu_threads: int
    tasks_by_shape: dict[str, int]
    tasks_by_status: dict[str, int]
    makespan: float
    first_start: float | None
    last_end: float | None
    cores_by_type: dict[str, int]
    busy_by_type: dict[str, float]  # fraction in [0, 1] per core type present in the trace
    critical_path: CriticalPath
    top_kernels: tuple[KernelTime, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = ()  # what the trace leaves out (Trace.notes)
    # timing mode: tasks per cost source (every COST_SOURCES key, plus "none" when some tasks
    # have no cost); empty when no task has a cost
    cost_sources: dict[str, int] = field(default_factory=dict)
    # per kernel with isa_model-priced tasks, by total cycles, most first
    kernel_pipes: tuple[KernelPipes, ...] = ()

    @property
    def task_count(self) -> int:
        return sum(self.tasks_by_shape.values())

    def to_dict(self) -> dict[str, Any]:
        cp = self.critical_path
        return {
            "platform": self.platform,
            "runtime": self.runtime,
            "block_dim": self.block_dim,
            "aicpu_threads": self.aicpu_threads,
            "tasks": self.task_count,
            "tasks_by_shape": dict(self.tasks_by_shape),
            "tasks_by_status": dict(self.tasks_by_status),
            "makespan_ns": self.makespan,
            "cores_by_type": dict(self.cores_by_type),
            "busy_by_type": dict(self.busy_by_type),
            "critical_path": {
                "tasks": list(cp.tasks),
                "length_ns": cp.length,
                "share": cp.share,
                "from_edges": cp.from_edges,
            },
            "top_kernels": [
                {"func": k.func, "name": k.name, "tasks": k.tasks, "total_ns": k.total}
                for k in self.top_kernels
            ],
            "notes": list(self.notes),
            "cost_sources": dict(self.cost_sources),
            "kernel_pipes": [
                {
                    "func": k.func,
                    "name": k.name,
                    "tasks": k.tasks,
                    "total_ns": k.total,
                    "cycles": k.cycles,
                    "pipes_us": dict(k.pipes_us),
                }
                for k in self.kernel_pipes
            ],
        }

    def cost_sources_text(self) -> str:
        """``"isa_model 500, table 0, host_time 500"``: tasks per cost source ("" if none)."""
        return ", ".join(f"{k} {v}" for k, v in self.cost_sources.items())

    def __str__(self) -> str:
        def counts(table: dict[str, int]) -> str:
            return ", ".join(f"{k} {v}" for k, v in table.items() if v) or "none"

        rows = [
            (
                "tasks",
                f"{self.task_count}  ({counts(self.tasks_by_shape)}; "
                f"{counts(self.tasks_by_status)})",
            ),
        ]
        span = format_ns(self.makespan)
        if self.first_start is not None and self.last_end is not None:
            span += (
                f"  (first start {format_ns(self.first_start)}, "
                f"last end {format_ns(self.last_end)})"
            )
        rows.append(("makespan", span))
        for core_type, fraction in self.busy_by_type.items():
            n = self.cores_by_type[core_type]
            rows.append((f"busy {core_type}", f"{100 * fraction:5.1f}%  of {n} core(s)"))
        cp = self.critical_path
        note = "" if cp.from_edges else "  (no edges: longest single task)"
        rows.append(
            (
                "critical path",
                f"{format_ns(cp.length)} = {100 * cp.share:.1f}% of makespan, "
                f"{len(cp.tasks)} task(s){note}",
            )
        )
        rows.append(("", cp.chain_text()))
        if self.cost_sources:
            rows.append(("kernels priced by", self.cost_sources_text()))
        width = max(len(r[0]) for r in rows) + 2
        lines = [
            f"{self.platform} · {self.runtime} · block_dim {self.block_dim} · "
            f"{self.aicpu_threads} AICPU thread(s)"
        ]
        lines += [f"  {name:<{width}}{value}" for name, value in rows]
        if self.top_kernels:
            name_width = max(len(k.name) for k in self.top_kernels) + 2
            lines.append("  top kernels by time")
            for k in self.top_kernels:
                lines.append(
                    f"    {k.name:<{name_width}}{format_ns(k.total):>10}  {k.tasks:>6} task(s)"
                )
        lines += self._kernel_pipes_lines()
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def _kernel_pipes_lines(self) -> list[str]:
        if not self.kernel_pipes:
            return []
        pipes = list(self.kernel_pipes[0].pipes_us)
        name_width = max(len("kernel"), *(len(k.name) for k in self.kernel_pipes)) + 2
        head = f"    {'kernel':<{name_width}}{'tasks':>6}{'cycles':>12}"
        head += "".join(f"{p:>9}" for p in pipes)
        lines = ["  pipe busy by kernel (isa_model tasks; µs of virtual time, summed)", head]
        for k in self.kernel_pipes:
            row = f"    {k.name:<{name_width}}{k.tasks:>6}{k.cycles:>12}"
            row += "".join(f"{k.pipes_us[p]:>9.1f}" for p in pipes)
            lines.append(row)
        return lines


def core_busy_ns(cores: Sequence[Core], tasks: Sequence[Task]) -> dict[int, float]:
    """Per core slot, the time (ns) it spent running tasks."""
    intervals: dict[int, list[tuple[float, float]]] = {c.slot: [] for c in cores}
    for t in tasks:
        if t.ran:
            for slot in t.cores:
                intervals[slot].append((t.start, t.end))  # type: ignore[arg-type]
    busy = {}
    for slot, spans in intervals.items():
        total = 0.0
        cur_start = cur_end = None
        for s, e in sorted(spans):
            if cur_end is None or s > cur_end:
                if cur_end is not None:
                    total += cur_end - cur_start  # type: ignore[operator]
                cur_start, cur_end = s, e
            else:
                cur_end = max(cur_end, e)
        if cur_end is not None:
            total += cur_end - cur_start  # type: ignore[operator]
        busy[slot] = total
    return busy


def summarize(trace: Any, critical: CriticalPath, kernel_name: Any, top: int = 5) -> Summary:
    """The Summary of ``trace`` (a Trace), given its critical path and a func -> name lookup."""
    tasks: Sequence[Task] = trace.tasks
    cores: Sequence[Core] = trace.cores
    by_shape = {s: sum(1 for t in tasks if t.shape == s) for s in SHAPES}
    by_status = {s: sum(1 for t in tasks if t.status == s) for s in STATUSES}
    # Only runs with dependency-only tasks or dispatch predicates have these: listed when present.
    if by_shape["DUMMY"] == 0:
        del by_shape["DUMMY"]
    if by_status["retired"] == 0:
        del by_status["retired"]
    ran = [t for t in tasks if t.ran]
    first = min((t.start for t in ran if t.start is not None), default=None)
    last = max((t.end for t in ran if t.end is not None), default=None)
    span = critical.makespan

    busy = core_busy_ns(cores, tasks)
    cores_by_type = {ct: sum(1 for c in cores if c.type == ct) for ct in CORE_TYPES}
    cores_by_type = {ct: n for ct, n in cores_by_type.items() if n}
    busy_by_type = {}
    for ct, n in cores_by_type.items():
        total = sum(busy[c.slot] for c in cores if c.type == ct)
        busy_by_type[ct] = total / (n * span) if span > 0 else 0.0

    per_func: dict[int, list[float]] = {}
    for t in ran:
        per_func.setdefault(t.func, []).append(t.duration)
    kernels = sorted(
        (KernelTime(f, kernel_name(f), len(d), sum(d)) for f, d in per_func.items()),
        key=lambda k: (-k.total, k.func),
    )
    cost_sources, kernel_pipes = _costs(tasks, kernel_name)
    return Summary(
        platform=trace.platform,
        runtime=trace.runtime,
        block_dim=trace.block_dim,
        aicpu_threads=trace.aicpu_threads,
        tasks_by_shape=by_shape,
        tasks_by_status=by_status,
        makespan=span,
        first_start=first,
        last_end=last,
        cores_by_type=cores_by_type,
        busy_by_type=busy_by_type,
        critical_path=critical,
        top_kernels=tuple(kernels[:top]),
        notes=trace.notes,
        cost_sources=cost_sources,
        kernel_pipes=kernel_pipes,
    )


def _costs(
    tasks: Sequence[Task], kernel_name: Any
) -> tuple[dict[str, int], tuple[KernelPipes, ...]]:
    """(tasks per cost source, per-kernel isa_model totals); both empty if no task has a cost."""
    if all(t.cost is None for t in tasks):
        return {}, ()
    sources = dict.fromkeys(COST_SOURCES, 0)
    for t in tasks:
        key = t.cost.source if t.cost is not None else "none"
        sources[key] = sources.get(key, 0) + 1
    pipes = pipe_names(tasks)
    per_func: dict[int, tuple[list[tuple[float, int]], dict[str, float]]] = {}
    for t in tasks:
        if t.cost is None or t.cost.pipes_us is None:
            continue
        runs, busy = per_func.setdefault(t.func, ([], dict.fromkeys(pipes, 0.0)))
        runs.append((t.duration, t.cost.cycles or 0))
        for p, us in t.cost.pipes_us.items():
            busy[p] += us
    kernels = sorted(
        (
            KernelPipes(f, kernel_name(f), len(r), sum(d for d, _ in r), sum(c for _, c in r), b)
            for f, (r, b) in per_func.items()
        ),
        key=lambda k: (-k.cycles, k.func),
    )
    return sources, tuple(kernels)
