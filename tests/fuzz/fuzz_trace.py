#!/usr/bin/env python3
"""tests/fuzz/fuzz_trace.py — the trace reader pto_runtime.trace (Trace.load, Trace.from_dict,
schema.parse) and everything a loaded trace offers, under atheris (libFuzzer for Python).

The first byte picks a mode:
  0  raw bytes as a trace file, through Trace.load: a Trace or InvalidArgumentError, nothing
     else; an accepted trace holds what the file says, round-trips through to_dict and save's
     JSON, and every view of it works (below)
  1  a valid trace written from the bytes (cores, tasks with every optional field, edges
     among them and naming unlisted tasks, AICPU events, kernels, unknown keys): accepted with
     exactly the values written, and every view of it works
  2  that trace with one field broken: InvalidArgumentError naming the field the way the
     schema does (``trace: tasks[3].cores: ...``)
  3  a Chrome trace, one to_chrome_trace wrote or a foreign one: the reader refuses it with
     InvalidArgumentError, and the command line's ``info`` describes it

The views of an accepted trace: summary() (its text, and to_dict as strict JSON),
critical_path() (a chain along edges whose length is its tasks' durations), to_chrome_trace()
(strict JSON, as save_chrome_trace writes it, which the reader recognises and refuses),
graph_json(), to_dot() and to_html() (UTF-8 text as the save_/render_ methods write it; the
page's SVG well-formed XML), notes, and the render command writing them all to files. In mode
1 the bytes also pick the views' parameters (max_flows, top_kernels, width, max_shown).
render_png is left out (matplotlib). The temporary files go to a directory under TMPDIR.

A failed oracle raises OracleFailure("fuzz oracle: ..."); an exception the reader should not
raise is reported as one, chained to the original. Run it with scripts/fuzz.sh trace SECONDS.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from typing import Any, Callable

import atheris
import numpy  # noqa: F401  (imported before instrumenting: only pto_runtime is instrumented)

with atheris.instrument_imports(include=["pto_runtime"]):
    import pto_runtime
    from pto_runtime.trace import Trace, chrome_trace, swimlane_html
    from pto_runtime.trace.__main__ import main as trace_cli
    from pto_runtime.trace.chrome_trace import chrome_info, is_chrome_trace
    from pto_runtime.trace.records import (
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
    from pto_runtime.trace.schema import DISPATCH_POLICIES, MAX_TIME_NS, PMU_COUNTERS

InvalidArgumentError = pto_runtime.InvalidArgumentError
# Small inputs cross the page's thresholds too: dependency arrows drawn for at most 4 edges,
# 3 tasks with a pipe breakdown card, 3 predecessors named in a tooltip.
swimlane_html.MAX_ARROWS, swimlane_html.MAX_CARDS, swimlane_html.TOOLTIP_LIST = 4, 3, 3
PATH = os.path.join(tempfile.mkdtemp(prefix="fuzz_trace-"), "trace.json")
MAX_US = MAX_TIME_NS / 1e3  # the largest busy time (µs) a pipe may report


class OracleFailure(AssertionError):
    pass


def check(cond: bool, message: str) -> None:
    if not cond:
        raise OracleFailure(f"fuzz oracle: {message}")


def write(data: bytes) -> str:
    with open(PATH, "wb") as f:
        f.write(data)
    return PATH


def load(data: bytes, what: str) -> Trace | None:
    """Trace.load of ``data`` as a file: the Trace, or None for InvalidArgumentError."""
    try:
        return Trace.load(write(data))
    except InvalidArgumentError as e:
        check(str(e).startswith("trace: "), f"{what}: a refusal that names no field: {e}")
        return None
    except Exception as e:
        raise OracleFailure(
            f"fuzz oracle: {what}: Trace.load raised {type(e).__name__}, not "
            f"InvalidArgumentError: {e}"
        ) from e


def cli_info(data: bytes) -> tuple[int, str]:
    """``python -m pto_runtime.trace info FILE``: (exit status, what it printed)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = trace_cli(["info", write(data)])
    except Exception as e:
        raise OracleFailure(f"fuzz oracle: info raised {type(e).__name__}: {e}") from e
    return status, out.getvalue()


# --- every view of an accepted trace ------------------------------------------------------


def strict_json(value: Any, what: str) -> str:
    """What _write_json writes: no NaN or Infinity."""
    try:
        return json.dumps(value, allow_nan=False)
    except (ValueError, TypeError) as e:
        raise OracleFailure(f"fuzz oracle: {what} is not strict JSON: {e}") from e


def utf8(text: str, what: str) -> None:
    """What the save_/render_ methods do with the text: write it as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise OracleFailure(f"fuzz oracle: {what} cannot be written as UTF-8: {e}") from e


class Knobs:
    """The views' parameters: their defaults, or values the bytes pick (``fdp``)."""

    def __init__(self, fdp: atheris.FuzzedDataProvider | None = None) -> None:
        self.max_flows = fdp.ConsumeIntInRange(0, 12) if fdp else chrome_trace.MAX_FLOWS
        self.top_kernels = fdp.ConsumeIntInRange(0, 6) if fdp else 5
        self.width = fdp.ConsumeIntInRange(0, 3000) if fdp else swimlane_html.DEFAULT_WIDTH
        self.shown = fdp.ConsumeIntInRange(1, 20) if fdp else 16


def check_views(t: Trace, knobs: Knobs) -> None:
    d = t.to_dict()
    again = Trace.from_dict(d).to_dict()
    check(again == d, f"from_dict(to_dict()) changed the trace:\n{d}\n{again}")
    saved = strict_json(d, "to_dict()")  # what save() writes; load() reads it back
    check(Trace.load(write(saved.encode())).to_dict() == d, "save/load changed the trace")
    # The command line writes every view to a file (as UTF-8; Chrome and graph as JSON).
    out = io.StringIO()
    files = {k: f"{PATH}.{k}" for k in ("html", "chrome", "dot", "graph")}
    argv = ["render", PATH, "--summary", *(x for k, f in files.items() for x in (f"--{k}", f))]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = trace_cli(argv)
    check(status == 0, f"render exited {status}: {out.getvalue()}")
    for k in ("chrome", "graph"):
        with open(files[k], encoding="utf-8") as f:
            json.load(f, parse_constant=lambda c, k=k: check(False, f"render --{k} wrote {c}"))

    ran = [x for x in t.tasks if x.ran]
    cp = t.critical_path()
    check(all(t.task(i).ran for i in cp.tasks), f"critical path {cp.tasks} has a task not run")
    links = {(e.src, e.dst) for e in t.edges}
    check(
        all(p in links for p in zip(cp.tasks, cp.tasks[1:])),
        f"critical path {cp.tasks} steps off the edges",
    )
    length: float = 0
    for i in cp.tasks:
        length = t.task(i).duration + length
    check(cp.length == length, f"critical path length {cp.length}, its tasks sum to {length}")
    check(bool(cp.tasks) == bool(ran), f"critical path {cp.tasks} with {len(ran)} tasks run")
    check(cp.makespan == t.makespan, f"critical path makespan {cp.makespan} != {t.makespan}")
    utf8(str(cp), "str(critical_path())")
    utf8(cp.chain_text(knobs.shown), "chain_text()")

    summary = t.summary(knobs.top_kernels)
    check(len(summary.top_kernels) <= knobs.top_kernels, "summary has too many top kernels")
    utf8(str(summary), "str(summary())")
    strict_json(summary.to_dict(), "summary().to_dict()")
    check(summary.task_count == len(t.tasks), "summary counts the tasks wrong")
    check(summary.notes == t.notes and all(isinstance(n, str) for n in t.notes), "notes")

    chrome = t.to_chrome_trace(knobs.max_flows)
    strict_json(chrome, "to_chrome_trace()")
    check(is_chrome_trace(chrome) and chrome_info(chrome) is not None, "chrome not recognised")
    slices = sum(1 for e in chrome["traceEvents"] if e["ph"] == "X")
    check(slices == sum(len(x.cores) for x in ran), f"{slices} chrome slices")
    try:
        Trace.from_dict(chrome)
        check(False, "Trace.from_dict accepted a Chrome trace")
    except InvalidArgumentError as e:
        check("a view for ui.perfetto.dev" in str(e), f"chrome refused with: {e}")

    graph = t.graph_json()
    strict_json(graph, "graph_json()")
    check(len(graph["tasks"]) == len(t.tasks) and len(graph["edges"]) == len(t.edges), "graph")

    dot = t.to_dot()
    utf8(dot, "to_dot()")
    arrows = re.findall(r"^  t\d+ -> t\d+ \[", dot, re.M)
    check(len(arrows) == len(t.edges), f"to_dot() draws {len(arrows)} of {len(t.edges)} edges")

    page = t.to_html(knobs.width)
    utf8(page, "to_html()")
    svg = re.search(r'<div class="lanes">(<svg.*?</svg>)</div>', page, re.S)
    check(svg is not None, "to_html() has no swimlane SVG")
    try:
        root = ET.fromstring(svg.group(1))  # type: ignore[union-attr]
    except ET.ParseError as e:
        raise OracleFailure(f"fuzz oracle: the swimlane SVG is not XML: {e}") from e
    bars = [r for r in root.iter("rect") if (r.get("class") or "").startswith("task")]
    check(len(bars) == sum(len(x.cores) for x in ran), f"{len(bars)} task bars")


# --- mode 0: raw bytes ------------------------------------------------------------------


def raw(data: bytes) -> None:
    t = load(data, "raw bytes")
    status, _ = cli_info(data)
    check(status in (0, 2), f"info exited {status}")
    if t is None:
        return
    check(status == 0, "info refused a file Trace.load accepts")
    d = json.loads(data.decode("utf-8"))
    # What is accepted is what the file says.
    check(t.platform == d["platform"] and t.runtime == d["runtime"], "platform or runtime")
    check((t.block_dim, t.aicpu_threads) == (d["block_dim"], d["aicpu_threads"]), "geometry")
    check(len(t.cores) == len(d["cores"]), "cores")
    check([x.id for x in t.tasks] == [x["id"] for x in d["tasks"]], "task ids")
    check(
        [(x.start, x.end) for x in t.tasks] == [(x.get("start"), x.get("end")) for x in d["tasks"]],
        "times",
    )
    check(len(t.edges) + len(t.unmatched_edges) == len(d.get("edges", [])), "edges")
    check(len(t.aicpu) == len(d.get("aicpu", [])), "aicpu threads")
    check(len(t.kernels) == len(d.get("kernels") or {}), f"{len(t.kernels)} kernels read")
    check_views(t, Knobs())


# --- modes 1 and 2: a valid trace from the bytes -------------------------------------------


def pick(fdp: atheris.FuzzedDataProvider, values: Any) -> Any:
    return fdp.PickValueInList(list(values))


def text(fdp: atheris.FuzzedDataProvider, size: int) -> str:
    return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, size))


def any_json(fdp: atheris.FuzzedDataProvider, depth: int) -> Any:
    """Any JSON value, nested at most ``depth`` more levels (for keys the reader ignores)."""
    kind = fdp.ConsumeIntInRange(0, 6 if depth > 0 else 4)
    if kind == 0:
        return None
    if kind == 1:
        return fdp.ConsumeBool()
    if kind == 2:
        return fdp.ConsumeInt(8)
    if kind == 3:
        return fdp.ConsumeRegularFloat()
    if kind == 4:
        return text(fdp, 8)
    if kind == 5:
        return [any_json(fdp, depth - 1) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    return {text(fdp, 4): any_json(fdp, depth - 1) for _ in range(fdp.ConsumeIntInRange(0, 3))}


def extra_keys(fdp: atheris.FuzzedDataProvider, row: dict[str, Any]) -> None:
    """Keys a newer runtime may add (or the runtime writes and the reader ignores)."""
    for _ in range(fdp.ConsumeIntInRange(0, 3) // 2):  # none half the time, else one
        row["x-" + text(fdp, 6)] = any_json(fdp, 2)


def a_time(fdp: atheris.FuzzedDataProvider, base: int) -> int | float:
    """A time within the schema's range: small, near ``base``, or anywhere (int or float)."""
    kind = fdp.ConsumeIntInRange(0, 4)
    if kind == 0:
        return fdp.ConsumeIntInRange(0, 10**6)
    if kind == 1:
        return fdp.ConsumeFloatInRange(0.0, 1e6)
    if kind == 2:
        return base + fdp.ConsumeIntInRange(0, 1000)
    if kind == 3:
        return fdp.ConsumeIntInRange(-MAX_TIME_NS, MAX_TIME_NS)
    return fdp.ConsumeFloatInRange(-float(MAX_TIME_NS), float(MAX_TIME_NS))


def a_duration(fdp: atheris.FuzzedDataProvider) -> int | float:
    kind = fdp.ConsumeIntInRange(0, 3)
    if kind == 0:
        return fdp.ConsumeIntInRange(0, 1000)
    if kind == 1:
        return fdp.ConsumeFloatInRange(0.0, 1e4)
    if kind == 2:
        return 0
    return fdp.ConsumeIntInRange(0, 2 * MAX_TIME_NS)


def distinct_ints(fdp: atheris.FuzzedDataProvider, n: int, small: bool) -> list[int]:
    """``n`` distinct integers >= 0, in an order the bytes pick."""
    out: list[int] = []
    while len(out) < n:
        v = fdp.ConsumeIntInRange(0, 15 if small else 2**40)
        out.append(v if v not in out else max(out) + 1)
    return out


class Valid:
    """A valid trace (``data``, the JSON-ready dict) and what the reader must make of it."""

    def __init__(self, fdp: atheris.FuzzedDataProvider) -> None:
        self.fdp = fdp
        base = pick(fdp, (0, 1_700_000_000_000_000_000, MAX_TIME_NS - 1000))
        threads = fdp.ConsumeIntInRange(1, 4)
        self.threads = threads
        ncores = fdp.ConsumeIntInRange(0, 6)
        slots = distinct_ints(fdp, ncores, small=fdp.ConsumeBool())
        cores = [
            {"slot": s, "type": pick(fdp, CORE_TYPES), "cluster": fdp.ConsumeIntInRange(0, 3)}
            for s in slots
        ]
        for c in cores:
            extra_keys(fdp, c)
        self.cores = cores
        self.want_cores = tuple(
            sorted((Core(c["slot"], c["type"], c["cluster"]) for c in cores), key=lambda c: c.slot)
        )
        ids = distinct_ints(fdp, fdp.ConsumeIntInRange(0, 8), small=fdp.ConsumeBool())
        self.ids = ids
        tasks, want_tasks = [], []
        for tid in ids:
            row, want = self.task(tid, base)
            tasks.append(row)
            want_tasks.append(want)
        self.want_tasks = tuple(want_tasks)

        # Edges among the tasks, acyclic (earlier to later in an order the bytes pick), and
        # edges naming tasks the trace does not list.
        order = list(ids)
        for i in range(len(order) - 1, 0, -1):
            j = fdp.ConsumeIntInRange(0, i)
            order[i], order[j] = order[j], order[i]
        edges, matched, unmatched = [], [], []
        unknown = max(ids, default=-1) + 1
        for _ in range(fdp.ConsumeIntInRange(0, 10)):
            kind = pick(fdp, EDGE_KINDS)
            source = None if kind == "explicit" or fdp.ConsumeBool() else pick(fdp, EDGE_SOURCES)
            if len(order) >= 2 and fdp.ConsumeIntInRange(0, 3):
                a = fdp.ConsumeIntInRange(0, len(order) - 2)
                b = fdp.ConsumeIntInRange(a + 1, len(order) - 1)
                src, dst, bucket = order[a], order[b], matched
            else:
                src = pick(fdp, [*ids, unknown, unknown + 1])
                dst = pick(fdp, [i for i in (*ids, unknown, unknown + 1) if i != src])
                bucket = matched if src in ids and dst in ids else unmatched
                if bucket is matched and order.index(src) > order.index(dst):
                    src, dst = dst, src
            row = {"from": src, "to": dst, "kind": kind}
            if source is not None:
                row["source"] = source
            extra_keys(fdp, row)
            edges.append(row)
            bucket.append(Edge(src, dst, kind, source))
        self.edges = edges
        self.want_edges, self.want_unmatched = tuple(matched), tuple(unmatched)

        aicpu, want_aicpu = [], []
        for thread in fdp.ConsumeIntListInRange(fdp.ConsumeIntInRange(0, threads), 0, threads - 1):
            if any(a["thread"] == thread for a in aicpu):
                continue
            events = []
            for _ in range(fdp.ConsumeIntInRange(0, 4) if ids else 0):
                events.append([a_time(fdp, base), pick(fdp, EVENT_KINDS), pick(fdp, ids)])
            row = {"thread": thread, "role": pick(fdp, ROLES), "events": events}
            extra_keys(fdp, row)
            aicpu.append(row)
            want_aicpu.append(AicpuThread(thread, row["role"], tuple(map(tuple, events))))
        self.aicpu = aicpu
        self.want_aicpu = tuple(sorted(want_aicpu, key=lambda a: a.thread))

        funcs = sorted({x["func"] for x in tasks} | {fdp.ConsumeIntInRange(-2, 9)})
        self.kernels = {f: text(fdp, 10) for f in funcs if fdp.ConsumeBool()}
        data: dict[str, Any] = {
            "version": 1,
            "platform": text(fdp, 10) or "a2a3sim",
            "runtime": pick(fdp, RUNTIMES),
            "block_dim": fdp.ConsumeIntInRange(1, 2**40),
            "aicpu_threads": threads,
            "clock": "ns",
            "cores": cores,
            "tasks": tasks,
        }
        # Optional members: present, null where the schema allows it, or absent.
        for key, value in (("edges", edges), ("aicpu", aicpu)):
            if value or fdp.ConsumeBool():
                data[key] = value
        if self.kernels or fdp.ConsumeBool():
            data["kernels"] = {str(f): n for f, n in self.kernels.items()} if self.kernels else None
        self.dropped = {}
        for key in ("dropped_tasks", "dropped_edges"):
            value = pick(fdp, (None, 0, "absent", fdp.ConsumeIntInRange(0, 2**70)))
            if value != "absent":
                data[key] = value
            self.dropped[key] = value if isinstance(value, int) else 0
        self.pmu_note = text(fdp, 12) if fdp.ConsumeBool() else ""
        if self.pmu_note or fdp.ConsumeBool():
            data["pmu_note"] = self.pmu_note
        extra_keys(fdp, data)
        self.data = data

    def task(self, tid: int, base: int) -> tuple[dict[str, Any], Task]:
        fdp = self.fdp
        shape = pick(fdp, SHAPES)
        status = pick(fdp, STATUSES)
        by_type = {ct: [c["slot"] for c in self.cores if c["type"] == ct] for ct in CORE_TYPES}
        # A DUMMY (dependency-only) task never takes a core, nor does a retired one.
        fits = [s for s in ("AIV", "AIC") if by_type[s]] + (["MIX"] if len(self.cores) >= 3 else [])
        runs = status == "done" or (status != "retired" and fdp.ConsumeBool())
        if shape not in fits and fits and runs:
            shape = pick(fdp, fits)
        if shape not in fits:
            runs = False
            status = pick(fdp, ("failed", "skipped", "retired"))
        slots: list[int] = []
        if shape in fits and status != "retired" and (runs or fdp.ConsumeBool()):
            if shape == "MIX":
                pool = [c["slot"] for c in self.cores]
                for _ in range(3):
                    slots.append(pool.pop(fdp.ConsumeIntInRange(0, len(pool) - 1)))
            else:
                slots.append(pick(fdp, by_type[shape]))
        start = end = None
        if runs:
            start = a_time(fdp, base)
            # An int start plus a float may round below it: then the task is empty.
            end = max(start, min(start + a_duration(fdp), MAX_TIME_NS))
        row: dict[str, Any] = {
            "id": tid,
            "func": fdp.ConsumeIntInRange(-2, 9) if fdp.ConsumeBool() else fdp.ConsumeInt(9),
            "shape": shape,
            "cores": slots,
            "start": start,
            "end": end,
            "status": status,
        }
        want: dict[str, Any] = {}
        if fdp.ConsumeBool():
            row["submit"] = want["submit"] = a_time(fdp, base) if fdp.ConsumeBool() else None
        if fdp.ConsumeBool():
            row["thread"] = want["thread"] = (
                fdp.ConsumeIntInRange(0, self.threads - 1) if fdp.ConsumeBool() else None
            )
        if fdp.ConsumeBool():
            pmu: dict[str, Any] = {}
            for name in PMU_COUNTERS:
                value = pick(fdp, (None, "absent", fdp.ConsumeIntInRange(0, 2**64)))
                if value != "absent":
                    pmu[name] = value
            row["pmu"] = pmu
            want["pmu"] = {name: pmu.get(name) for name in PMU_COUNTERS}
        if fdp.ConsumeBool():
            row["dispatch_policy"] = want["dispatch_policy"] = pick(fdp, DISPATCH_POLICIES)
            row["dispatch_metric"] = want["dispatch_metric"] = fdp.ConsumeIntInRange(0, 2**40)
        if fdp.ConsumeBool():
            source = pick(fdp, COST_SOURCES)
            cost: dict[str, Any] = {"source": source}
            if source == "isa_model":
                cost["cycles"] = fdp.ConsumeIntInRange(0, 2**64)
                names = [p for p in PIPES if fdp.ConsumeBool()]
                names += [
                    n for n in (text(fdp, 5) for _ in range(fdp.ConsumeIntInRange(0, 2))) if n
                ]
                cost["pipes_us"] = {
                    n: (fdp.ConsumeFloatInRange(0.0, MAX_US) if fdp.ConsumeBool() else
                        fdp.ConsumeIntInRange(0, 10**6))
                    for n in reversed(names)
                }  # fmt: skip
                order = [p for p in PIPES if p in cost["pipes_us"]]
                order += [p for p in cost["pipes_us"] if p not in PIPES]
                want["cost"] = Cost(source, cost["cycles"], {p: cost["pipes_us"][p] for p in order})
            else:
                want["cost"] = Cost(source)
            extra_keys(fdp, cost)
            row["cost"] = cost
        extra_keys(fdp, row)
        return row, Task(tid, row["func"], shape, tuple(slots), start, end, status, **want)

    def check(self, t: Trace, what: str) -> None:
        check(t.platform == self.data["platform"], f"{what}: platform {t.platform!r}")
        check(t.runtime == self.data["runtime"], f"{what}: runtime {t.runtime!r}")
        check(t.block_dim == self.data["block_dim"], f"{what}: block_dim {t.block_dim}")
        check(t.aicpu_threads == self.threads, f"{what}: aicpu_threads {t.aicpu_threads}")
        check(t.cores == self.want_cores, f"{what}: cores read as {t.cores}")
        for got, want in zip(t.tasks, self.want_tasks):
            check(got == want, f"{what}: task read as {got}, written as {want}")
            if want.cost is not None and want.cost.pipes_us is not None:
                got_pipes = list(got.cost.pipes_us)  # type: ignore[union-attr]
                check(got_pipes == list(want.cost.pipes_us), f"{what}: pipe order {got_pipes}")
        check(len(t.tasks) == len(self.want_tasks), f"{what}: {len(t.tasks)} tasks")
        check(t.edges == self.want_edges, f"{what}: edges read as {t.edges}")
        check(t.unmatched_edges == self.want_unmatched, f"{what}: {t.unmatched_edges}")
        check(t.aicpu == self.want_aicpu, f"{what}: aicpu read as {t.aicpu}")
        check(t.kernels == self.kernels, f"{what}: kernels read as {t.kernels}")
        dropped = {"dropped_tasks": t.dropped_tasks, "dropped_edges": t.dropped_edges}
        check(dropped == self.dropped, f"{what}: {dropped}")
        check(t.pmu_note == self.pmu_note, f"{what}: pmu_note {t.pmu_note!r}")


def serialize(fdp: atheris.FuzzedDataProvider, data: Any) -> bytes:
    indent = pick(fdp, (None, 0, 1))
    return json.dumps(data, indent=indent, ensure_ascii=fdp.ConsumeBool()).encode("utf-8")


def show(what: str, data: Any) -> None:
    """PTO_FUZZ_PRINT=1: print the trace the bytes became (to rerun a reproducer by hand)."""
    if os.environ.get("PTO_FUZZ_PRINT"):
        print(f"{what}: {json.dumps(data)}", flush=True)


def valid(fdp: atheris.FuzzedDataProvider) -> None:
    v = Valid(fdp)
    show("valid trace", v.data)
    try:
        direct = Trace.from_dict(v.data)
    except InvalidArgumentError as e:
        raise OracleFailure(f"fuzz oracle: a valid trace is refused: {e}\n{v.data}") from e
    v.check(direct, "from_dict")
    t = load(serialize(fdp, v.data), "a valid trace")
    check(t is not None, f"a valid trace is refused from its JSON:\n{v.data}")
    v.check(t, "load")  # type: ignore[arg-type]
    check_views(t, Knobs(fdp))  # type: ignore[arg-type]


# Wrong values by what the field wants. Each is wrong for every field of its kind.
NOT_INT: tuple[Any, ...] = ("1", 1.5, 1.0, True, None, [], {})
NOT_TEXT: tuple[Any, ...] = (5, None, [], {}, True)
NOT_CHOICE: tuple[Any, ...] = ("", "aiv", "done ", 1, None, ["AIV"], {})
NOT_TIME: tuple[Any, ...] = (
    "1",
    True,
    [],
    {},
    math.nan,
    math.inf,
    -math.inf,
    MAX_TIME_NS + 1,
    -MAX_TIME_NS - 1,
    float(2 * MAX_TIME_NS),
    10**400,
)
NOT_LIST: tuple[Any, ...] = ({}, "x", 5, None, True)
NOT_OBJECT: tuple[Any, ...] = ([], "x", 5, True, [["a", 1]])
LONE_SURROGATE = "\ud83d"  # half a character: not text that can be written out


def breakages(v: Valid, fdp: atheris.FuzzedDataProvider) -> list[tuple[str, Callable[[], None]]]:
    """(the field the error must name, a change that breaks only that field) for ``v.data``.

    Building the list takes no bytes; a change picks its wrong value from the bytes when made.
    """
    d = v.data
    out: list[tuple[str, Callable[[], None]]] = []

    def put(obj: Any, key: Any, where: str, bad: Any, delete: bool = False) -> None:
        """obj[key] = one of ``bad`` (a tuple, or a function giving one), or del obj[key]."""

        def change() -> None:
            if delete and fdp.ConsumeBool():
                del obj[key]
            else:
                obj[key] = pick(fdp, bad() if callable(bad) else bad)

        out.append((where, change))

    def earlier(rows: list[Any], i: int, key: str) -> Callable[[], tuple[Any]]:
        return lambda: (rows[fdp.ConsumeIntInRange(0, i - 1)][key],)

    put(d, "version", "version", (0, 2, -1, *NOT_INT), delete=True)
    put(d, "platform", "platform", ("", LONE_SURROGATE, *NOT_TEXT), delete=True)
    put(d, "runtime", "runtime", NOT_CHOICE, delete=True)
    put(d, "block_dim", "block_dim", (0, -1, *NOT_INT), delete=True)
    put(d, "aicpu_threads", "aicpu_threads", (0, -(2**70), *NOT_INT), delete=True)
    put(d, "clock", "clock", ("us", *NOT_CHOICE), delete=True)
    put(d, "cores", "cores", NOT_LIST, delete=True)
    put(d, "tasks", "tasks", NOT_LIST, delete=True)
    put(d, "edges", "edges", NOT_LIST)
    put(d, "aicpu", "aicpu", NOT_LIST)
    put(d, "kernels", "kernels", ([], "x", 5, True))
    put(d, "dropped_tasks", "dropped_tasks", (-1, "1", 1.5, True))
    put(d, "dropped_edges", "dropped_edges", (-1, "1", 1.5, []))
    put(d, "pmu_note", "pmu_note", (LONE_SURROGATE, "note" + LONE_SURROGATE, *NOT_TEXT))
    kernels = d.get("kernels")
    if kernels:
        for key in kernels:
            put(kernels, key, f"kernels[{key!r}]", (LONE_SURROGATE, *NOT_TEXT))
            # Another key naming the same func id.
            twins = (" " + key, key + " ") if key.startswith("-") else ("0" + key, " " + key)
            out.append(("kernels", lambda k=key, t=twins: kernels.update({pick(fdp, t): k})))
        bad_keys = ("x", "1.5", "", "0x1", "1e3")
        out.append(("kernels", lambda: kernels.update({pick(fdp, bad_keys): "k"})))

    cores = d["cores"]
    for i, c in enumerate(cores):
        put(cores, i, f"cores[{i}]", NOT_OBJECT)
        put(c, "slot", f"cores[{i}].slot", (-1, *NOT_INT), delete=True)
        if i:
            put(c, "slot", f"cores[{i}].slot", earlier(cores, i, "slot"))
        put(c, "type", f"cores[{i}].type", ("MIX", *NOT_CHOICE), delete=True)
        put(c, "cluster", f"cores[{i}].cluster", (-1, *NOT_INT), delete=True)

    slots = {c["slot"]: c["type"] for c in cores}
    tasks = d["tasks"]
    for i, x in enumerate(tasks):
        w = f"tasks[{i}]"
        put(tasks, i, w, NOT_OBJECT)
        put(x, "id", f"{w}.id", (-1, *NOT_INT), delete=True)
        if i:
            put(x, "id", f"{w}.id", earlier(tasks, i, "id"))
        put(x, "func", f"{w}.func", NOT_INT, delete=True)
        put(x, "shape", f"{w}.shape", NOT_CHOICE, delete=True)
        put(x, "status", f"{w}.status", ("ok", *NOT_CHOICE), delete=True)
        put(x, "start", f"{w}.start", NOT_TIME)
        put(x, "end", f"{w}.end", NOT_TIME)
        put(x, "cores", f"{w}.cores", NOT_LIST, delete=True)
        put(x, "submit", f"{w}.submit", NOT_TIME)
        put(x, "thread", f"{w}.thread", (-1, v.threads, *NOT_INT[:4]))
        put(x, "pmu", f"{w}.pmu", NOT_OBJECT)
        put(x, "dispatch_policy", f"{w}.dispatch_policy", ("", "greedy", 1, []))
        put(x, "dispatch_metric", f"{w}.dispatch_metric", (-1, *NOT_INT[:4]))
        put(x, "cost", f"{w}.cost", NOT_OBJECT)
        ran = x["start"] is not None
        if not ran:
            put(x, "status", f"{w}.start", ("done",))  # done needs times
            put(x, "start", f"{w}.start", (0,))  # only one of start and end
        else:
            put(x, "start", f"{w}.start", (None,))
            put(x, "end", f"{w}.start", (None,))  # the start is blamed for the pair
            before = math.nextafter(x["start"], -math.inf) if x["start"] != 0 else -1
            put(x, "end", f"{w}.end", (before,))
        cl = x["cores"]
        if ran or cl:  # a task that took a core cannot be dependency-only, nor retired
            put(x, "shape", f"{w}.cores", ("DUMMY",))
            put(x, "status", f"{w}.cores", ("retired",))
        elif (x["shape"] == "DUMMY" or x["status"] == "retired") and slots:
            out.append((f"{w}.cores", lambda cl=cl: cl.append(pick(fdp, list(slots)))))
            out.append((f"{w}.cores", lambda x=x: x.update(start=0, end=0)))
        unknown = max(slots, default=0) + 1
        for j in range(len(cl)):
            put(cl, j, f"{w}.cores[{j}]", (unknown, -1, "1", 1.0, True, None))
        if cl:
            out.append((f"{w}.cores", lambda cl=cl: cl.append(cl[0])))  # listed twice
        if ran or len(cl) > 1:
            out.append((f"{w}.cores", lambda cl=cl: cl.pop()))  # one too few
        others = [s for s in slots if s not in cl]
        if (ran or cl) and others:
            out.append((f"{w}.cores", lambda cl=cl, o=others: cl.append(pick(fdp, o))))
            wrong = [s for s in others if slots[s] != x["shape"]]
            if x["shape"] != "MIX" and wrong:
                put(cl, 0, f"{w}.cores", wrong)  # a core of the other type
        if isinstance(x.get("pmu"), dict):
            for name in PMU_COUNTERS:
                put(x["pmu"], name, f"{w}.pmu.{name}", (-1, *NOT_INT[:4], []))
        cost = x.get("cost")
        if cost is not None:
            put(cost, "source", f"{w}.cost.source", NOT_CHOICE, delete=True)
            if cost["source"] != "isa_model":
                put(cost, "cycles", f"{w}.cost.cycles", (0, 5))
                put(cost, "pipes_us", f"{w}.cost.pipes_us", ({}, {"VEC": 1.0}))
            else:
                put(cost, "cycles", f"{w}.cost.cycles", (-1, *NOT_INT), delete=True)
                put(cost, "pipes_us", f"{w}.cost.pipes_us", NOT_OBJECT[:3], delete=True)
                pipes = cost["pipes_us"]
                for pipe in dict.fromkeys([*pipes, "VEC"]):
                    put(pipes, pipe, f"{w}.cost.pipes_us.{pipe}", (-1, -0.5, *NOT_TIME[:7]))
                put(pipes, "", f"{w}.cost.pipes_us", (1,))  # a pipe with no name
                put(pipes, LONE_SURROGATE, f"{w}.cost.pipes_us", (1,))

    edges = d["edges"] if "edges" in d else []
    for i, e in enumerate(edges):
        w = f"edges[{i}]"
        put(edges, i, w, NOT_OBJECT)
        put(e, "from", f"{w}.from", (-1, *NOT_INT), delete=True)
        put(e, "to", f"{w}.to", (-1, *NOT_INT), delete=True)
        put(e, "to", w, (e["from"],))  # depends on itself
        put(e, "kind", f"{w}.kind", NOT_CHOICE, delete=True)
        sources = ("cache", None, 1) if e["kind"] != "explicit" else (*EDGE_SOURCES, None)
        put(e, "source", f"{w}.source", sources)
    if len(v.ids) >= 2 and "edges" in d:
        a, b = v.ids[0], v.ids[1]
        cycle = [{"from": a, "to": b, "kind": "raw"}, {"from": b, "to": a, "kind": "war"}]
        out.append(("edges", lambda: edges.extend(cycle)))

    aicpu = d["aicpu"] if "aicpu" in d else []
    for i, a in enumerate(aicpu):
        w = f"aicpu[{i}]"
        put(aicpu, i, w, NOT_OBJECT)
        put(a, "thread", f"{w}.thread", (-1, v.threads, *NOT_INT), delete=True)
        if i:
            put(a, "thread", f"{w}.thread", earlier(aicpu, i, "thread"))
        put(a, "role", f"{w}.role", NOT_CHOICE, delete=True)
        put(a, "events", f"{w}.events", NOT_LIST[:3])
        for j, ev in enumerate(a["events"]):
            put(a["events"], j, f"{w}.events[{j}]", ([], [1, "dispatch"], "x", 5, {"0": 1}))
            put(ev, 0, f"{w}.events[{j}][0]", NOT_TIME)
            put(ev, 1, f"{w}.events[{j}][1]", ("retire", *NOT_CHOICE))
            put(ev, 2, f"{w}.events[{j}][2]", (-1, max(v.ids) + 1, "0", 0.0, None))
    return out


def broken(fdp: atheris.FuzzedDataProvider) -> None:
    choice = fdp.ConsumeIntInRange(0, 2**16 - 1)
    v = Valid(fdp)
    candidates = breakages(v, fdp)
    where, change = candidates[choice % len(candidates)]
    change()
    show(f"trace with {where} broken", v.data)
    data = json.dumps(v.data).encode("utf-8")
    try:
        Trace.load(write(data))
    except InvalidArgumentError as e:
        check(f"trace: {where}: " in str(e), f"broke {where}, the error says: {e}\n{v.data}")
        return
    except Exception as e:
        raise OracleFailure(
            f"fuzz oracle: broke {where}: Trace.load raised {type(e).__name__}: {e}\n{v.data}"
        ) from e
    check(False, f"broke {where} and the trace was accepted:\n{v.data}")


# --- mode 3: Chrome traces ------------------------------------------------------------------


def chrome(fdp: atheris.FuzzedDataProvider) -> None:
    kind = fdp.ConsumeIntInRange(0, 2)
    ours = kind == 0
    if ours:  # what save_chrome_trace wrote, perhaps edited
        doc: Any = Trace.from_dict(Valid(fdp).data).to_chrome_trace()
        for _ in range(fdp.ConsumeIntInRange(0, 2)):
            doc["otherData"][pick(fdp, list(doc["otherData"]))] = any_json(fdp, 2)
    elif kind == 1:  # the object form, by some other tool
        doc = {"traceEvents": any_json(fdp, 2)}
        if fdp.ConsumeBool():
            doc["otherData"] = any_json(fdp, 2)
    else:  # the bare list of events
        doc = [
            {"ph": any_json(fdp, 1)},
            *(any_json(fdp, 2) for _ in range(fdp.ConsumeIntInRange(0, 3))),
        ]
    show("Chrome trace", doc)
    data = json.dumps(doc).encode("utf-8")
    check(load(data, "a Chrome trace") is None, "a Chrome trace was accepted as a trace")
    try:
        Trace.load(PATH)
    except InvalidArgumentError as e:
        check("trace: the trace: this is a Chrome trace" in str(e), f"chrome refused: {e}")
    status, said = cli_info(data)
    recognised = chrome_info(doc) is not None
    check(status == (0 if recognised else 2), f"info exited {status}: {said}")
    if ours and doc["otherData"].get("source") == "pto_runtime.trace":
        check("Chrome trace written by pto_runtime.trace" in said, f"info said: {said}")


def one_input(data: bytes) -> None:
    if not data:
        return
    mode = data[0] % 4
    if mode == 0:
        raw(data[1:])
        return
    fdp = atheris.FuzzedDataProvider(data[1:])
    (valid, broken, chrome)[mode - 1](fdp)


if __name__ == "__main__":
    sys.setrecursionlimit(1000)  # the default: what a user's interpreter has
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
