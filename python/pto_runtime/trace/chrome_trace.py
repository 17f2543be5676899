"""python/pto_runtime/trace/chrome_trace.py — a Trace as Chrome Trace Event Format JSON (Perfetto).

Format reference: "Trace Event Format" (Google, docs.google.com/document/d/1CvAClvFfyA5R-
PhYUmn5OOQtYMH4h6I0nSsKchNAySU). Layout: one process for the chip; one thread per AICPU
thread (its dispatch/complete instants, and the orchestrator's submit instants) followed by
one thread per core, named like ``AIV 5 (cluster 2)``. Each task is a complete event ("X")
on every core it ran on; each dependency a flow ("s" at the producer, "f" at the consumer).
Timestamps in the format are microseconds, so the trace's ns are divided by 1000.

Flows are drawn only for graphs of at most ``MAX_FLOWS`` edges: beyond that Perfetto's arrow
layer turns to noise and slows loading, and a partial set would suggest a graph that is not
the real one. ``otherData.flows`` says what was done.

``otherData`` also says where the file came from (``source``: ``pto_runtime.trace``) and the
run it shows (``schema_version`` of the trace it was made from, platform, runtime, counts), so
``chrome_info`` can recognise the file later: it is a view, not a trace, and cannot be loaded
back as one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .display import aicpu_lanes, implied_submits, orchestrator_thread

__all__ = [
    "MAX_FLOWS",
    "SOURCE",
    "chrome_info",
    "describe_chrome_trace",
    "is_chrome_trace",
    "to_chrome_trace",
]

MAX_FLOWS = 2000
SOURCE = "pto_runtime.trace"  # otherData.source of every file to_chrome_trace writes
PID = 1  # one process: the chip
_FLOW_CAT = "dependency"


def _us(ns: float) -> float:
    return ns / 1000.0


def _mid(task: Any) -> float:
    # Flow ends bind to the slice enclosing their timestamp; the middle of the task is inside
    # it even when viewers order events with equal timestamps differently.
    return _us((task.start + task.end) / 2)


def to_chrome_trace(trace: Any, max_flows: int = MAX_FLOWS) -> dict[str, Any]:
    """The JSON-object form: ``traceEvents``, ``displayTimeUnit`` and ``otherData``."""
    events: list[dict[str, Any]] = []

    def meta(name: str, tid: int, args: dict[str, Any]) -> None:
        events.append({"ph": "M", "name": name, "pid": PID, "tid": tid, "args": args})

    meta("process_name", 0, {"name": f"{trace.platform} chip · {trace.runtime}"})
    meta("process_sort_index", 0, {"sort_index": 0})

    # AICPU lanes first (tids 1..), then cores; sort_index keeps that order in every viewer.
    lanes = aicpu_lanes(trace)
    aicpu_tid = {thread: 1 + i for i, (thread, _) in enumerate(lanes)}
    core_tid = {c.slot: 1 + len(lanes) + i for i, c in enumerate(trace.cores)}
    for thread, name in lanes:
        meta("thread_name", aicpu_tid[thread], {"name": name})
        meta("thread_sort_index", aicpu_tid[thread], {"sort_index": aicpu_tid[thread]})
    for c in trace.cores:
        meta("thread_name", core_tid[c.slot], {"name": c.label})
        meta("thread_sort_index", core_tid[c.slot], {"sort_index": core_tid[c.slot]})

    for t in trace.tasks:
        if not t.ran:
            continue
        args: dict[str, Any] = {
            "task": t.id,
            "func": t.func,
            "kernel": trace.kernel_name(t.func),
            "shape": t.shape,
            "status": t.status,
            "cores": list(t.cores),
        }
        if t.thread is not None:
            args["aicpu_thread"] = t.thread
        if t.submit is not None:
            args["submit_us"] = _us(t.submit)
        if t.dispatch_policy is not None:
            args["dispatch_policy"] = t.dispatch_policy
            args["dispatch_metric"] = t.dispatch_metric
        if t.pmu is not None:
            args.update({k: v for k, v in t.pmu.items() if v is not None})
        if t.cost is not None:  # timing mode; prefixed, as PMU's "cycles" may be there too
            args["cost_source"] = t.cost.source
            if t.cost.cycles is not None:
                args["cost_cycles"] = t.cost.cycles
            if t.cost.pipes_us is not None:
                args["pipes_us"] = dict(t.cost.pipes_us)
        for slot in t.cores:
            event = {
                "ph": "X",
                "name": trace.kernel_name(t.func),
                "cat": t.shape,
                "ts": _us(t.start),
                "dur": _us(t.end - t.start),
                "pid": PID,
                "tid": core_tid[slot],
                "args": args,
            }
            if t.status == "failed":
                event["cname"] = "terrible"  # a reserved colour of the format; red in Chrome
            events.append(event)

    for a in trace.aicpu:
        for time, kind, task_id in a.events:
            kernel = trace.kernel_name(trace.task(task_id).func)
            events.append(
                {
                    "ph": "i",
                    "s": "t",
                    "name": kind,
                    "cat": "orchestrator" if kind == "submit" else "scheduler",
                    "ts": _us(time),
                    "pid": PID,
                    "tid": aicpu_tid[a.thread],
                    "args": {"task": task_id, "kernel": kernel},
                }
            )
    orch = orchestrator_thread(trace)
    for time, task_id in implied_submits(trace):
        events.append(
            {
                "ph": "i",
                "s": "t",
                "name": "submit",
                "cat": "orchestrator",
                "ts": _us(time),
                "pid": PID,
                "tid": aicpu_tid[orch],  # type: ignore[index]
                "args": {"task": task_id, "kernel": trace.kernel_name(trace.task(task_id).func)},
            }
        )

    drawable = [e for e in trace.edges if trace.task(e.src).ran and trace.task(e.dst).ran]
    if len(drawable) <= max_flows:
        for flow_id, e in enumerate(drawable, start=1):
            src, dst = trace.task(e.src), trace.task(e.dst)
            common: dict[str, Any] = {"name": e.kind, "cat": _FLOW_CAT, "id": flow_id, "pid": PID}
            if e.source is not None:  # where the runtime found it: tensormap or batch
                common["args"] = {"source": e.source}
            events.append({**common, "ph": "s", "ts": _mid(src), "tid": core_tid[src.cores[0]]})
            events.append(
                {**common, "ph": "f", "bp": "e", "ts": _mid(dst), "tid": core_tid[dst.cores[0]]}
            )
        flows = f"{len(drawable)} dependency arrows drawn"
    else:
        flows = (
            f"dependency arrows dropped: {len(drawable)} edges is more than {max_flows}; "
            "see graph_json() or to_dot() for the graph"
        )

    skipped = sum(1 for t in trace.tasks if not t.ran)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "source": SOURCE,
            "schema_version": trace.version,
            "platform": trace.platform,
            "runtime": trace.runtime,
            "block_dim": trace.block_dim,
            "aicpu_threads": trace.aicpu_threads,
            "tasks": len(trace.tasks),
            "tasks_not_run": skipped,
            "edges": len(trace.edges),
            "flows": flows,
            "notes": list(trace.notes),
        },
    }


def is_chrome_trace(data: Any) -> bool:
    """Whether parsed JSON is in Chrome Trace Event Format, by whomever it was written.

    Either form of the format: an object with ``traceEvents``, or a bare list of events.
    """
    if isinstance(data, Mapping):
        return "traceEvents" in data
    return (
        isinstance(data, list)
        and len(data) > 0
        and isinstance(data[0], Mapping)
        and "ph" in data[0]
    )


def chrome_info(data: Any) -> Mapping[str, Any] | None:
    """The ``otherData`` of a Chrome trace that ``to_chrome_trace`` wrote, else None."""
    if not isinstance(data, Mapping) or "traceEvents" not in data:
        return None
    other = data.get("otherData")
    if isinstance(other, Mapping) and other.get("source") == SOURCE:
        return other
    return None


def describe_chrome_trace(data: Any) -> str:
    """What a Chrome trace is, in words, for messages: who wrote it and from which run."""
    info = chrome_info(data)
    if info is None:
        return "a Chrome trace (Trace Event Format) that pto_runtime.trace did not write"
    return (
        f"a Chrome trace written by {SOURCE} from a version {info.get('schema_version')} trace "
        f"({info.get('platform')}, {info.get('runtime')}, {info.get('tasks')} tasks, "
        f"{info.get('edges')} edges)"
    )
