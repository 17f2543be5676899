"""python/pto_runtime/trace/schema.py — checks a trace dict against schema version 1 and types it.

The trace comes from ``ChipWorker.last_trace()`` or from a JSON file someone saved, edited or
wrote by hand, so every field is checked and every failure names the field the way it would
be indexed (``tasks[3].cores``) — an error a person can act on without reading this file.
Unknown keys are ignored, so a newer runtime may add fields without breaking older readers.
Edges that name a task the trace does not list (one past ``trace_tasks``, or one the runtime
never recorded) are the one tolerated inconsistency: they are kept apart and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NoReturn, overload

from ..errors import ErrorCode, error_from_code
from .chrome_trace import chrome_info, describe_chrome_trace, is_chrome_trace
from .records import (
    CORE_TYPES,
    COST_SOURCES,
    EDGE_KINDS,
    EDGE_SOURCES,
    EVENT_KINDS,
    PIPES,
    ROLES,
    RUNTIMES,
    SHAPES,
    STATUSES,
    AicpuThread,
    Core,
    Cost,
    Edge,
    Task,
)

__all__ = ["SCHEMA_VERSION", "parse", "trace_error"]

SCHEMA_VERSION = 1
# The largest time either way, in ns: the runtime's clock counts 64 bits of them. Bounding
# times keeps every difference, sum and conversion the views make a finite float.
MAX_TIME_NS = 2**64


# enable_pmu: the counters a task may carry.
PMU_COUNTERS = ("cycles", "instructions", "cache_misses")
# dispatch_threshold: the policies a task may have been placed under (pto/schedule_config.h).
DISPATCH_POLICIES = ("locality", "round_robin", "work_stealing")


def trace_error(where: str, message: str) -> Exception:
    """The InvalidArgumentError for a bad field ``where`` (not raised here)."""
    return error_from_code(ErrorCode.INVALID_ARGUMENT, f"trace: {where}: {message}")


def _fail(where: str, message: str) -> NoReturn:
    raise trace_error(where, message)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(obj: Mapping[str, Any], key: str, where: str, minimum: int | None = None) -> int:
    if key not in obj:
        _fail(f"{where}{key}", "missing (an integer is required)")
    value = obj[key]
    if not _is_int(value):
        _fail(f"{where}{key}", f"expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        _fail(f"{where}{key}", f"must be >= {minimum}, got {value}")
    return value


def _choice(obj: Mapping[str, Any], key: str, where: str, choices: tuple[str, ...]) -> str:
    if key not in obj:
        _fail(f"{where}{key}", f"missing (one of {', '.join(choices)})")
    value = obj[key]
    if value not in choices or not isinstance(value, str):
        _fail(f"{where}{key}", f"expected one of {', '.join(choices)}, got {value!r}")
    return value


@overload
def _time(value: Any, where: str, nullable: Literal[False]) -> float: ...
@overload
def _time(value: Any, where: str, nullable: bool) -> float | None: ...
def _time(value: Any, where: str, nullable: bool) -> float | None:
    if value is None and nullable:
        return None
    # The comparison also turns away NaN, the infinities and integers too large for a float.
    if not (_is_int(value) or isinstance(value, float)) or not -MAX_TIME_NS <= value <= MAX_TIME_NS:
        kind = "a number of ns in [-2**64, 2**64]" + (" or null" if nullable else "")
        _fail(where, f"expected {kind}, got {value!r}")
    return value


def _text(value: str, where: str) -> str:
    """``value``, which must be text that can be written out: no lone surrogate (a JSON escape
    such as ``\\ud83d`` without its other half reads as one)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        _fail(where, f"{value!r} is not valid Unicode text ({e.reason} at {e.start})")
    return value


def _list(obj: Mapping[str, Any], key: str, where: str, required: bool) -> list[Any]:
    if key not in obj:
        if required:
            _fail(f"{where}{key}", "missing (a list is required)")
        return []
    value = obj[key]
    if not isinstance(value, (list, tuple)):
        _fail(f"{where}{key}", f"expected a list, got {type(value).__name__}")
    return list(value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        _fail(where, f"expected an object, got {type(value).__name__}")
    return value


def _cores(raw: Mapping[str, Any]) -> tuple[Core, ...]:
    cores = []
    seen: set[int] = set()
    for i, item in enumerate(_list(raw, "cores", "", required=True)):
        where = f"cores[{i}]."
        entry = _mapping(item, f"cores[{i}]")
        slot = _int(entry, "slot", where, minimum=0)
        if slot in seen:
            _fail(f"{where}slot", f"slot {slot} is listed twice")
        seen.add(slot)
        core_type = _choice(entry, "type", where, CORE_TYPES)
        cores.append(Core(slot, core_type, _int(entry, "cluster", where, minimum=0)))
    return tuple(cores)


def _cost(value: Any, where: str) -> Cost:
    """The member ``cost`` (timing mode): its source, and for the ISA cost model its cycles and
    per-pipe busy µs."""
    entry = _mapping(value, where[:-1])
    source = _choice(entry, "source", where, COST_SOURCES)
    if source != "isa_model":
        for key in ("cycles", "pipes_us"):
            if key in entry:
                _fail(f"{where}{key}", f"only an isa_model cost has {key}, this one is {source!r}")
        return Cost(source)
    cycles = _int(entry, "cycles", where, minimum=0)
    if "pipes_us" not in entry:
        _fail(f"{where}pipes_us", "missing (an isa_model cost has each pipe's busy µs)")
    raw = _mapping(entry["pipes_us"], f"{where}pipes_us")
    for pipe, us in raw.items():
        if not isinstance(pipe, str) or not pipe:
            _fail(f"{where}pipes_us", f"expected pipe names, got key {pipe!r}")
        _text(pipe, f"{where}pipes_us")
        # Busy time is a time: bounded like one (MAX_TIME_NS, in µs), so sums stay finite.
        if not (_is_int(us) or isinstance(us, float)) or not 0 <= us <= MAX_TIME_NS / 1e3:
            _fail(
                f"{where}pipes_us.{pipe}",
                f"expected busy µs (a number in [0, 2**64 / 1000]), got {us!r}",
            )
    order = [p for p in PIPES if p in raw] + [p for p in raw if p not in PIPES]
    return Cost(source, cycles, {p: raw[p] for p in order})


def _task(entry: Mapping[str, Any], where: str, core_type: dict[int, str], threads: int) -> Task:
    task_id = _int(entry, "id", where, minimum=0)
    func = _int(entry, "func", where)
    shape = _choice(entry, "shape", where, SHAPES)
    status = _choice(entry, "status", where, STATUSES)
    start = _time(entry.get("start"), f"{where}start", nullable=True)
    end = _time(entry.get("end"), f"{where}end", nullable=True)
    if (start is None) != (end is None):
        _fail(f"{where}start", "start and end must both be numbers or both be null")
    if start is None and status == "done":
        _fail(f"{where}start", "a task with status 'done' needs start and end times")
    if start is not None and end is not None and end < start:
        _fail(f"{where}end", f"ends before it starts ({end} < {start})")

    cores = _list(entry, "cores", where, required=True)
    for j, slot in enumerate(cores):
        if not _is_int(slot):
            _fail(f"{where}cores[{j}]", f"expected a core slot (integer), got {slot!r}")
        if slot not in core_type:
            _fail(f"{where}cores[{j}]", f"core slot {slot} is not in the trace's 'cores' list")
    if len(set(cores)) != len(cores):
        _fail(f"{where}cores", f"a core is listed twice in {cores}")
    # A dependency-only task, and one retired because its dispatch predicate was false, finish
    # without a core: nothing to list, no start or end.
    if (shape == "DUMMY" or status == "retired") and (cores or start is not None):
        what = "a DUMMY (dependency-only) task" if shape == "DUMMY" else "a retired task"
        _fail(
            f"{where}cores",
            f"{what} takes no core: cores must be [] and start/end null, got cores {cores}"
            f" and start {start}",
        )
    # A task that never reached a core (skipped) may list none; one that ran lists where.
    if cores or start is not None:
        need = 3 if shape == "MIX" else 1
        if len(cores) != need:
            _fail(f"{where}cores", f"a {shape} task runs on {need} core(s), got {cores}")
        if shape != "MIX" and core_type[cores[0]] != shape:
            _fail(
                f"{where}cores",
                f"an {shape} task cannot run on core {cores[0]}, an {core_type[cores[0]]} core",
            )

    submit = _time(entry.get("submit"), f"{where}submit", nullable=True)
    thread = entry.get("thread")
    if thread is not None and (not _is_int(thread) or not 0 <= thread < threads):
        _fail(f"{where}thread", f"expected an AICPU thread in [0, {threads}), got {thread!r}")
    pmu = entry.get("pmu")
    if pmu is not None:
        pmu = dict(_mapping(pmu, f"{where}pmu"))
        for name in PMU_COUNTERS:
            value = pmu.get(name)
            if value is not None and (not _is_int(value) or value < 0):
                _fail(f"{where}pmu.{name}", f"expected a count (>= 0) or null, got {value!r}")
        pmu = {name: pmu.get(name) for name in PMU_COUNTERS}
    policy = entry.get("dispatch_policy")
    if policy is not None and policy not in DISPATCH_POLICIES:
        _fail(f"{where}dispatch_policy", f"expected one of {DISPATCH_POLICIES}, got {policy!r}")
    metric = entry.get("dispatch_metric")
    if metric is not None and (not _is_int(metric) or metric < 0):
        _fail(f"{where}dispatch_metric", f"expected a count (>= 0), got {metric!r}")
    cost = _cost(entry["cost"], f"{where}cost.") if entry.get("cost") is not None else None
    return Task(
        task_id,
        func,
        shape,
        tuple(cores),
        start,
        end,
        status,
        submit,
        thread,
        pmu,
        policy,
        metric,
        cost,
    )


def _tasks(raw: Mapping[str, Any], cores: tuple[Core, ...], threads: int) -> tuple[Task, ...]:
    core_type = {c.slot: c.type for c in cores}
    tasks = []
    seen: set[int] = set()
    for i, item in enumerate(_list(raw, "tasks", "", required=True)):
        task = _task(_mapping(item, f"tasks[{i}]"), f"tasks[{i}].", core_type, threads)
        if task.id in seen:
            _fail(f"tasks[{i}].id", f"task id {task.id} is listed twice")
        seen.add(task.id)
        tasks.append(task)
    return tuple(tasks)


def _edges(raw: Mapping[str, Any], task_ids: set[int]) -> tuple[tuple[Edge, ...], tuple[Edge, ...]]:
    """(edges between listed tasks, edges naming a task the trace does not list)."""
    edges: list[Edge] = []
    unmatched: list[Edge] = []
    for i, item in enumerate(_list(raw, "edges", "", required=False)):
        where = f"edges[{i}]."
        entry = _mapping(item, f"edges[{i}]")
        src = _int(entry, "from", where, minimum=0)
        dst = _int(entry, "to", where, minimum=0)
        if src == dst:
            _fail(f"edges[{i}]", f"task {src} depends on itself")
        kind = _choice(entry, "kind", where, EDGE_KINDS)
        source = _choice(entry, "source", where, EDGE_SOURCES) if "source" in entry else None
        if source is not None and kind == "explicit":
            _fail(f"{where}source", "an explicit edge has no source (it was not inferred)")
        edge = Edge(src, dst, kind, source)
        # A task past the trace's capacity (dropped_tasks), or one the runtime never recorded,
        # can still be named by an edge. The graph among the tasks we have is still right, so
        # such edges are set aside and counted rather than failing the whole trace.
        (edges if src in task_ids and dst in task_ids else unmatched).append(edge)
    return tuple(edges), tuple(unmatched)


def _check_acyclic(task_ids: list[int], edges: tuple[Edge, ...]) -> None:
    # Kahn's algorithm; whatever is left unvisited lies on or behind a cycle.
    indegree = dict.fromkeys(task_ids, 0)
    successors: dict[int, list[int]] = {t: [] for t in task_ids}
    for e in edges:
        indegree[e.dst] += 1
        successors[e.src].append(e.dst)
    ready = [t for t, d in indegree.items() if d == 0]
    visited = 0
    while ready:
        t = ready.pop()
        visited += 1
        for s in successors[t]:
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
    if visited != len(task_ids):
        stuck = sorted(t for t, d in indegree.items() if d > 0)
        shown = ", ".join(map(str, stuck[:10])) + (", ..." if len(stuck) > 10 else "")
        _fail("edges", f"the dependencies form a cycle (tasks on or after it: {shown})")


def _aicpu(raw: Mapping[str, Any], task_ids: set[int], count: int) -> tuple[AicpuThread, ...]:
    threads = []
    seen: set[int] = set()
    for i, item in enumerate(_list(raw, "aicpu", "", required=False)):
        where = f"aicpu[{i}]."
        entry = _mapping(item, f"aicpu[{i}]")
        thread = _int(entry, "thread", where, minimum=0)
        if thread >= count:
            _fail(f"{where}thread", f"the run had {count} AICPU thread(s), got thread {thread}")
        if thread in seen:
            _fail(f"{where}thread", f"AICPU thread {thread} is listed twice")
        seen.add(thread)
        role = _choice(entry, "role", where, ROLES)
        events = []
        for j, event in enumerate(_list(entry, "events", where, required=False)):
            ewhere = f"{where}events[{j}]"
            if not isinstance(event, (list, tuple)) or len(event) != 3:
                _fail(ewhere, f"expected [time, kind, task_id], got {event!r}")
            time = _time(event[0], f"{ewhere}[0]", nullable=False)
            if event[1] not in EVENT_KINDS:
                _fail(f"{ewhere}[1]", f"expected one of {', '.join(EVENT_KINDS)}, got {event[1]!r}")
            if not _is_int(event[2]) or event[2] not in task_ids:
                _fail(f"{ewhere}[2]", f"{event[2]!r} is not a task id in the trace")
            events.append((time, event[1], event[2]))
        threads.append(AicpuThread(thread, role, tuple(events)))
    return tuple(threads)


def _kernels(raw: Mapping[str, Any]) -> dict[int, str]:
    if "kernels" not in raw or raw["kernels"] is None:
        return {}
    table = _mapping(raw["kernels"], "kernels")
    kernels: dict[int, str] = {}
    keys: dict[int, Any] = {}
    for key, name in table.items():
        # JSON object keys are strings; a dict built in Python may use ints.
        try:
            func = int(key)
        except (TypeError, ValueError):
            _fail("kernels", f"key {key!r} is not a func id (an integer)")
        if func in keys:  # "7" and "07", say: one name would be lost
            _fail("kernels", f"keys {keys[func]!r} and {key!r} both name func {func}")
        keys[func] = key
        if not isinstance(name, str):
            _fail(f"kernels[{key!r}]", f"expected a kernel name (string), got {name!r}")
        kernels[func] = _text(name, f"kernels[{key!r}]")
    return kernels


def _count(raw: Mapping[str, Any], key: str) -> int:
    return _int(raw, key, "", minimum=0) if raw.get(key) is not None else 0


def parse(raw: Any) -> dict[str, Any]:
    """Checks ``raw`` against schema version 1; returns the keyword arguments of ``Trace``.

    Raises InvalidArgumentError naming the first bad field.
    """
    if raw is None:  # what ChipWorker.last_trace() returns for a run without profiling
        _fail(
            "the trace",
            "got None: run with ChipCallConfig(enable_profiling=True), then call "
            "worker.last_trace() before the next run",
        )
    if is_chrome_trace(raw):  # e.g. the file save_chrome_trace wrote, given back to load
        if chrome_info(raw) is not None:
            advice = "a view for ui.perfetto.dev, not a trace; load the trace it was made from"
        else:
            advice = "not a trace"
        _fail(
            "the trace",
            f"this is {describe_chrome_trace(raw)}: {advice} (the JSON of "
            "ChipWorker.last_trace(), which Trace.save() writes)",
        )
    raw = _mapping(raw, "the trace")
    version = _int(raw, "version", "")
    if version != SCHEMA_VERSION:
        _fail("version", f"this pto_runtime reads version {SCHEMA_VERSION}, got {version}")
    platform = raw.get("platform")
    if not isinstance(platform, str) or not platform:
        _fail("platform", f"expected the platform name (e.g. 'a2a3sim'), got {platform!r}")
    _text(platform, "platform")
    runtime = _choice(raw, "runtime", "", RUNTIMES)
    block_dim = _int(raw, "block_dim", "", minimum=1)
    aicpu_threads = _int(raw, "aicpu_threads", "", minimum=1)
    if raw.get("clock") != "ns":
        _fail("clock", f"expected 'ns' (the only clock of version 1), got {raw.get('clock')!r}")
    cores = _cores(raw)
    tasks = _tasks(raw, cores, aicpu_threads)
    ids = [t.id for t in tasks]
    id_set = set(ids)
    edges, unmatched = _edges(raw, id_set)
    _check_acyclic(ids, edges)
    return {
        "platform": platform,
        "runtime": runtime,
        "block_dim": block_dim,
        "aicpu_threads": aicpu_threads,
        "cores": cores,
        "tasks": tasks,
        "edges": edges,
        "aicpu": _aicpu(raw, id_set, aicpu_threads),
        "kernels": _kernels(raw),
        "unmatched_edges": unmatched,
        "dropped_tasks": _count(raw, "dropped_tasks"),
        "dropped_edges": _count(raw, "dropped_edges"),
        "pmu_note": _pmu_note(raw),
    }


def _pmu_note(raw: Mapping[str, Any]) -> str:
    note = raw.get("pmu_note", "")
    if not isinstance(note, str):
        _fail("pmu_note", f"expected text, got {note!r}")
    return _text(note, "pmu_note")
