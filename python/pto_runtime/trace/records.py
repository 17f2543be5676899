"""python/pto_runtime/trace/records.py — the typed rows of a trace: cores, tasks, edges, AICPU.

Immutable, so a ``Trace`` can hand them out without copying. Times are nanoseconds since the
run's launch, as recorded; ``None`` where the runtime recorded nothing (a skipped task).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CORE_TYPES",
    "EDGE_KINDS",
    "EDGE_SOURCES",
    "EVENT_KINDS",
    "ROLES",
    "RUNTIMES",
    "SHAPES",
    "STATUSES",
    "COST_SOURCES",
    "PIPES",
    "AicpuThread",
    "Core",
    "Cost",
    "Edge",
    "Task",
]

# The vocabularies of schema version 1, in display order.
CORE_TYPES = ("AIC", "AIV")
SHAPES = ("AIV", "AIC", "MIX", "DUMMY")  # DUMMY: a dependency-only task (no core)
# retired: finished without a core (dependency-only, or its dispatch predicate was false)
STATUSES = ("done", "failed", "skipped", "retired")
EDGE_KINDS = ("raw", "waw", "war", "explicit")
# Where an inferred edge was found: the TensorMap, or batch_deps' local batch map.
EDGE_SOURCES = ("tensormap", "batch")
ROLES = ("scheduler", "orchestrator")
EVENT_KINDS = ("dispatch", "complete", "submit")
RUNTIMES = ("tensormap_and_ringbuffer", "host_build_graph")
# Timing mode: what priced a task's kernel. "isa_model": PTO-ISA's cost model (cycles and
# per-pipe busy time known); "table": PTO_SIM_KERNEL_COSTS; "host_time": its scaled host time.
COST_SOURCES = ("isa_model", "table", "host_time")
# The AICore pipes of PTO-ISA's cost model, in the order they are shown.
PIPES = ("SCALAR", "MTE2", "MTE1", "CUBE", "FIXP", "VEC", "MTE3")


@dataclass(frozen=True)
class Core:
    """One core the run could use: its slot (the runtime's index), type and cluster."""

    slot: int
    type: str
    cluster: int

    @property
    def label(self) -> str:
        """Lane name, e.g. ``"AIV 5 (cluster 2)"``."""
        return f"{self.type} {self.slot} (cluster {self.cluster})"


@dataclass(frozen=True)
class Cost:
    """How timing mode priced a task's kernel (``Task.cost``; absent outside timing mode).

    ``source`` is one of ``COST_SOURCES``. Only ``"isa_model"`` carries ``cycles`` (the cost
    model's count for the kernel call) and ``pipes_us``: per pipe, its busy time in µs of
    virtual time, a sum of busy intervals. Pipes overlap, so the values need not add up to the
    task's duration; each is at most that duration. Known pipes come first, in ``PIPES``
    order, then any others in the order the trace gave them.
    """

    source: str
    cycles: int | None = None
    pipes_us: dict[str, float] | None = None

    def to_dict(self) -> dict[str, object]:
        """The schema's JSON form of the member ``cost``."""
        row: dict[str, object] = {"source": self.source}
        if self.cycles is not None:
            row["cycles"] = self.cycles
        if self.pipes_us is not None:
            row["pipes_us"] = dict(self.pipes_us)
        return row


@dataclass(frozen=True)
class Task:
    """One task: what ran (``func``, ``shape``), where (``cores``), when, and how it ended."""

    id: int
    func: int
    shape: str
    cores: tuple[int, ...]
    start: float | None
    end: float | None
    status: str
    submit: float | None = None  # tensormap runtime only: when the orchestrator submitted it
    thread: int | None = None  # the AICPU thread that dispatched it
    # enable_pmu: {"cycles": int, "instructions": int | None, "cache_misses": int | None}
    # (None where the counter could not be read; Trace.pmu_note says why)
    pmu: dict[str, int | None] | None = None
    # dispatch_threshold's decision when the task was placed: its policy ("locality",
    # "round_robin", "work_stealing"; "locality" when the run had none) and the metric then
    dispatch_policy: str | None = None
    dispatch_metric: int | None = None
    # timing mode: how the kernel was priced (None outside timing mode and in older traces)
    cost: Cost | None = None

    @property
    def ran(self) -> bool:
        """Whether the task has a start and an end (skipped tasks do not)."""
        return self.start is not None and self.end is not None

    @property
    def duration(self) -> float:
        """``end - start`` in ns; 0 for a task that did not run."""
        if self.start is None or self.end is None:
            return 0
        return self.end - self.start


@dataclass(frozen=True)
class Edge:
    """A dependency: ``dst`` waited for ``src``. ``kind`` is raw, waw, war or explicit.

    ``source`` (an inferred edge of the tensormap runtime): ``"tensormap"`` or ``"batch"``,
    where the edge was found; ``"batch"`` means only batch_deps' local batch map found it.
    ``None`` for an explicit edge and in traces written before the field existed.
    """

    src: int
    dst: int
    kind: str
    source: str | None = None


@dataclass(frozen=True)
class AicpuThread:
    """One AICPU thread and what it did: ``events`` are ``(time, kind, task)`` with kind
    ``"dispatch"`` or ``"complete"`` (schedulers) or ``"submit"`` (the orchestrator)."""

    thread: int
    role: str
    events: tuple[tuple[float, str, int], ...]
