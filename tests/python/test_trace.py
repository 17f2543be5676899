"""tests/python/test_trace.py — pto_runtime.trace on hand-built traces with known answers."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable
from pto_runtime.trace import PIPES, Cost, Trace

# --- hand-built traces -------------------------------------------------------------------


def cores(clusters: int) -> list[dict[str, Any]]:
    """a2a3-like geometry: cluster c is AIC slot 3c and AIV slots 3c+1, 3c+2."""
    rows = []
    for c in range(clusters):
        rows.append({"slot": 3 * c, "type": "AIC", "cluster": c})
        rows += [{"slot": 3 * c + k, "type": "AIV", "cluster": c} for k in (1, 2)]
    return rows


def task(tid: int, func: int, shape: str, on: list[int], start, end, status="done", **extra):
    return {
        "id": tid,
        "func": func,
        "shape": shape,
        "cores": on,
        "start": start,
        "end": end,
        "status": status,
        **extra,
    }


def make_trace(tasks, edges=(), clusters=2, aicpu=(), kernels=None, **top) -> dict[str, Any]:
    trace = {
        "version": 1,
        "platform": "a2a3sim",
        "runtime": "host_build_graph",
        "block_dim": clusters,
        "aicpu_threads": 2,
        "clock": "ns",
        "cores": cores(clusters),
        "tasks": list(tasks),
        "edges": [{"from": a, "to": b, "kind": k} for a, b, k in edges],
        "aicpu": list(aicpu),
        "kernels": {"0": "kernel_add", "1": "kernel_mul", "3": "kernel_mix"}
        if kernels is None
        else kernels,
    }
    trace.update(top)
    return trace


# The diamond 0 -> {1, 2} -> 3 with one edge of each kind and gaps between tasks, so the
# critical path (durations only) is shorter than the makespan. Chain 0-1-3: 10 + 30 + 5 = 45;
# chain 0-2-3: 10 + 20 + 5 = 35; makespan 165 - 100 = 65.
DIAMOND_TASKS = [
    task(0, 0, "AIV", [1], 100, 110, submit=50, thread=0),
    task(1, 1, "AIV", [2], 120, 150, submit=60, thread=0),
    task(2, 2, "AIC", [0], 115, 135, submit=70, thread=0),
    task(3, 3, "MIX", [3, 4, 5], 160, 165, submit=80, thread=0),
]
DIAMOND_EDGES = [(0, 1, "raw"), (0, 2, "war"), (1, 3, "waw"), (2, 3, "explicit")]
DIAMOND_AICPU = [
    {
        "thread": 0,
        "role": "scheduler",
        "events": [
            [95, "dispatch", 0],
            [112, "complete", 0],
            [113, "dispatch", 2],
            [118, "dispatch", 1],
            [137, "complete", 2],
            [152, "complete", 1],
            [158, "dispatch", 3],
            [166, "complete", 3],
        ],
    },
    {"thread": 1, "role": "orchestrator", "events": []},
]


def diamond(**top) -> dict[str, Any]:
    return make_trace(
        copy.deepcopy(DIAMOND_TASKS),
        DIAMOND_EDGES,
        aicpu=copy.deepcopy(DIAMOND_AICPU),
        runtime="tensormap_and_ringbuffer",
        **top,
    )


def chain(n: int) -> dict[str, Any]:
    """n AIV tasks one after another on alternating cores, each 10 ns, raw edges between."""
    tasks = [task(i, i % 3, "AIV", [1 + i % 2], 10 * i, 10 * i + 10) for i in range(n)]
    return make_trace(tasks, [(i, i + 1, "raw") for i in range(n - 1)], clusters=1)


# --- loading and the schema --------------------------------------------------------------


def test_a_trace_saved_and_loaded_is_unchanged(tmp_path: Path) -> None:
    trace = Trace.from_dict(diamond())
    path = tmp_path / "run.json"
    trace.save(path)
    again = Trace.load(path)
    assert again.to_dict() == trace.to_dict()
    assert again.to_dict()["tasks"] == diamond()["tasks"]
    assert again.kernels == {0: "kernel_add", 1: "kernel_mul", 3: "kernel_mix"}


def test_edge_sources_round_trip_and_label_the_flows() -> None:
    # Where the tensormap runtime found each inferred edge (batch_deps: the batch map or the
    # TensorMap); an explicit edge, and a trace from before the field, have none.
    data = diamond()
    data["edges"][0]["source"] = "batch"
    data["edges"][1]["source"] = "tensormap"
    trace = Trace.from_dict(data)
    assert [e.source for e in trace.edges] == ["batch", "tensormap", None, None]
    assert trace.to_dict()["edges"] == data["edges"]
    again = Trace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert again.edges == trace.edges
    assert Trace.from_dict(diamond()).to_dict()["edges"] == diamond()["edges"]  # no source added
    flows = [e for e in trace.to_chrome_trace()["traceEvents"] if e["ph"] == "s"]
    assert sorted(e.get("args", {}).get("source", "-") for e in flows) == [
        "-",
        "-",
        "batch",
        "tensormap",
    ]


def test_missing_kernel_names_fall_back_to_the_func_id() -> None:
    trace = Trace.from_dict(diamond())
    assert trace.kernel_name(1) == "kernel_mul"
    assert trace.kernel_name(2) == "func 2"


def _set(path: str, value: Any):
    """A mutator that sets d[a][b]... (path 'tasks.1.start') to value."""

    def mutate(d: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            d = d[int(key)] if isinstance(d, list) else d[key]
        if isinstance(d, list):
            d[int(last)] = value
        else:
            d[last] = value

    return mutate


def _delete(key: str):
    return lambda d: d.pop(key)


SCHEMA_ERRORS = [
    (_delete("tasks"), "tasks"),
    (_set("version", 2), "version"),
    (_set("runtime", "fast_runtime"), "runtime"),
    (_set("clock", "us"), "clock"),
    (_set("block_dim", 0), "block_dim"),
    (_set("cores.0.type", "CPU"), "cores[0].type"),
    (_set("cores.1.slot", 0), "cores[1].slot"),
    (_set("tasks.1.start", "soon"), "tasks[1].start"),
    (_set("tasks.1.start", float("nan")), "tasks[1].start"),
    (_set("tasks.1.end", 119), "tasks[1].end"),
    (_set("tasks.1.status", "ok"), "tasks[1].status"),
    (_set("tasks.1.shape", "CUBE"), "tasks[1].shape"),
    (_set("tasks.1.cores", [99]), "tasks[1].cores[0]"),
    (_set("tasks.3.cores", [3]), "tasks[3].cores"),
    (_set("tasks.0.cores", [0]), "tasks[0].cores"),  # an AIV task on an AIC core
    (_set("tasks.0.start", None), "tasks[0].start"),  # only one of start/end
    (_set("tasks.1.id", 0), "tasks[1].id"),
    (_set("tasks.1.thread", -1), "tasks[1].thread"),
    (_set("tasks.1.thread", 2), "tasks[1].thread"),  # the run had 2 AICPU threads
    (_set("aicpu.1.thread", 5), "aicpu[1].thread"),
    (_set("edges.0.kind", "rar"), "edges[0].kind"),
    (_set("edges.0.source", "cache"), "edges[0].source"),
    (_set("edges.3.source", "batch"), "edges[3].source"),  # explicit: not inferred, no source
    (_set("edges.0.to", -1), "edges[0].to"),
    (_set("edges.0.to", "3"), "edges[0].to"),
    (_set("edges.3.from", 3), "edges[3]"),  # a self-loop
    (lambda d: d["edges"].append({"from": 3, "to": 0, "kind": "raw"}), "cycle"),
    (_set("aicpu.0.role", "helper"), "aicpu[0].role"),
    (_set("aicpu.0.events.0", [95, "retire", 0]), "aicpu[0].events[0][1]"),
    (_set("aicpu.0.events.0", [95, "dispatch", 77]), "aicpu[0].events[0][2]"),
    (_set("kernels", {"mul": "kernel_mul"}), "kernels"),
    (_set("dropped_tasks", -2), "dropped_tasks"),
    (_set("tasks.1.cost", 5), "tasks[1].cost"),
    (_set("tasks.1.cost", {"source": "guess"}), "tasks[1].cost.source"),
    (_set("tasks.1.cost", {"source": "table", "cycles": 5}), "tasks[1].cost.cycles"),
    (_set("tasks.1.cost", {"source": "host_time", "pipes_us": {}}), "tasks[1].cost.pipes_us"),
    (_set("tasks.1.cost", {"source": "isa_model", "pipes_us": {}}), "tasks[1].cost.cycles"),
    (_set("tasks.1.cost", {"source": "isa_model", "cycles": 9}), "tasks[1].cost.pipes_us"),
    (
        _set("tasks.1.cost", {"source": "isa_model", "cycles": 9, "pipes_us": {"CUBE": -1}}),
        "tasks[1].cost.pipes_us.CUBE",
    ),
    (
        _set("tasks.1.cost", {"source": "isa_model", "cycles": 9, "pipes_us": {"VEC": "1"}}),
        "tasks[1].cost.pipes_us.VEC",
    ),
]


@pytest.mark.parametrize(("mutate", "field"), SCHEMA_ERRORS, ids=[f for _, f in SCHEMA_ERRORS])
def test_a_schema_violation_raises_invalid_argument_naming_the_field(mutate, field: str) -> None:
    data = diamond()
    mutate(data)
    with pytest.raises(pto.InvalidArgumentError, match=re.escape(field)):
        Trace.from_dict(data)


def test_a_trace_that_is_not_an_object_is_rejected() -> None:
    with pytest.raises(pto.InvalidArgumentError, match="the trace"):
        Trace.from_dict([1, 2, 3])  # type: ignore[arg-type]


def test_no_trace_says_how_to_get_one() -> None:
    with pytest.raises(pto.InvalidArgumentError, match="enable_profiling=True"):
        Trace.from_dict(None)  # type: ignore[arg-type]


def test_a_file_that_is_not_json_raises_invalid_argument(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"version": 1,')
    with pytest.raises(pto.InvalidArgumentError, match="not JSON"):
        Trace.load(path)


def test_edges_naming_unlisted_tasks_are_set_aside_and_counted(tmp_path: Path) -> None:
    # What a truncated run looks like: tasks past trace_tasks are missing, edges still name them.
    data = diamond(dropped_tasks=2)
    data["edges"] += [{"from": 3, "to": 4, "kind": "raw"}, {"from": 4, "to": 5, "kind": "war"}]
    trace = Trace.from_dict(data)
    assert [(e.src, e.dst) for e in trace.edges] == [(s, d) for s, d, _ in DIAMOND_EDGES]
    assert [(e.src, e.dst) for e in trace.unmatched_edges] == [(3, 4), (4, 5)]
    assert trace.critical_path().tasks == (0, 1, 3)
    notes = trace.summary().notes
    assert any("2 task(s) past the trace capacity" in n for n in notes)
    assert any("2 edge(s) name a task the trace does not list" in n for n in notes)
    assert "trace_tasks" in str(trace.summary())
    assert trace.to_chrome_trace()["otherData"]["notes"] == list(notes)
    trace.save(tmp_path / "t.json")  # and the saved file keeps everything it was given
    assert Trace.load(tmp_path / "t.json").to_dict() == trace.to_dict()
    assert len(trace.to_dict()["edges"]) == 6 and trace.to_dict()["dropped_tasks"] == 2


def test_skipped_tasks_need_no_times_or_cores() -> None:
    tasks = [*copy.deepcopy(DIAMOND_TASKS), task(4, 1, "AIV", [], None, None, "skipped")]
    trace = Trace.from_dict(make_trace(tasks, [*DIAMOND_EDGES, (3, 4, "raw")]))
    assert not trace.task(4).ran
    assert trace.critical_path().tasks == (0, 1, 3)  # the skipped successor adds nothing


# --- critical path and summary ------------------------------------------------------------


def test_critical_path_of_the_diamond_is_the_longer_branch() -> None:
    cp = Trace.from_dict(diamond()).critical_path()
    assert cp.tasks == (0, 1, 3)
    assert cp.length == 45
    assert cp.makespan == 65
    assert cp.share == pytest.approx(45 / 65)
    assert cp.from_edges


def test_critical_path_ties_go_to_the_smaller_task_id() -> None:
    data = diamond()
    data["tasks"][2]["end"] = 145  # branch 0-2-3 now as long as 0-1-3
    assert Trace.from_dict(data).critical_path().tasks == (0, 1, 3)
    data["tasks"][1]["end"] = 140  # now 0-2-3 is longer
    assert Trace.from_dict(data).critical_path().tasks == (0, 2, 3)


def test_critical_path_without_edges_is_the_longest_single_task() -> None:
    tasks = [
        task(0, 0, "AIV", [1], 0, 10),
        task(1, 0, "AIV", [2], 0, 40),
        task(2, 1, "AIV", [4], 5, 45),
    ]
    cp = Trace.from_dict(make_trace(tasks)).critical_path()
    assert cp.tasks == (1,)  # 1 and 2 both last 40; the smaller id wins
    assert cp.length == 40
    assert cp.makespan == 45
    assert not cp.from_edges


def test_critical_path_of_a_long_chain_is_the_whole_chain() -> None:
    cp = Trace.from_dict(chain(500)).critical_path()
    assert cp.tasks == tuple(range(500))
    assert cp.length == 5000
    assert cp.share == 1.0


# Busy fractions by hand: makespan 100; AIC cores 0 and 3 ran 40 and 10 of 2 x 100 ns;
# AIV cores 1, 2, 4, 5 ran 100, 25, 10, 10 of 4 x 100 ns. The MIX task counts on all three.
BUSY_TASKS = [
    task(0, 0, "AIC", [0], 0, 40),
    task(1, 1, "AIV", [1], 0, 100),
    task(2, 1, "AIV", [2], 50, 75),
    task(3, 3, "MIX", [3, 4, 5], 20, 30),
]


def test_busy_fraction_per_core_type_counts_every_core() -> None:
    trace = Trace.from_dict(make_trace(BUSY_TASKS))
    summary = trace.summary()
    assert summary.makespan == 100
    assert summary.busy_by_type == {"AIC": pytest.approx(0.25), "AIV": pytest.approx(0.3625)}
    assert trace.core_busy() == pytest.approx({0: 0.4, 1: 1.0, 2: 0.25, 3: 0.1, 4: 0.1, 5: 0.1})


def test_summary_counts_and_top_kernels() -> None:
    summary = Trace.from_dict(make_trace(BUSY_TASKS)).summary()
    assert summary.tasks_by_shape == {"AIV": 2, "AIC": 1, "MIX": 1}
    assert summary.tasks_by_status == {"done": 4, "failed": 0, "skipped": 0}
    assert [(k.name, k.tasks, k.total) for k in summary.top_kernels] == [
        ("kernel_mul", 2, 125),
        ("kernel_add", 1, 40),
        ("kernel_mix", 1, 10),
    ]
    text = str(summary)
    for needle in ("tasks", "makespan", "busy AIC", "36.2%", "critical path", "kernel_mul"):
        assert needle in text
    json.dumps(summary.to_dict(), allow_nan=False)


def test_an_empty_run_has_a_zero_makespan_and_no_division_by_zero() -> None:
    data = make_trace([task(0, 0, "AIV", [], None, None, "skipped")])
    summary = Trace.from_dict(data).summary()
    assert summary.makespan == 0
    assert summary.critical_path.tasks == ()
    assert summary.busy_by_type == {"AIC": 0.0, "AIV": 0.0}
    str(summary)


# --- dependency graph export --------------------------------------------------------------


def test_graph_json_keeps_every_edge_kind() -> None:
    graph = Trace.from_dict(diamond()).graph_json()
    assert [(e["from"], e["to"], e["kind"]) for e in graph["edges"]] == DIAMOND_EDGES
    assert [t["kernel"] for t in graph["tasks"]] == [
        "kernel_add",
        "kernel_mul",
        "func 2",
        "kernel_mix",
    ]
    assert graph["critical_path"] == [0, 1, 3]
    json.dumps(graph, allow_nan=False)


def test_dot_draws_each_edge_kind_in_its_style(tmp_path: Path) -> None:
    trace = Trace.from_dict(diamond())
    dot = trace.to_dot()
    style = {"raw": "solid", "waw": "bold", "war": "dashed", "explicit": "dotted"}
    for src, dst, kind in DIAMOND_EDGES:
        line = re.search(rf"^\s*t{src} -> t{dst} \[(.*)\];$", dot, re.M)
        assert line, f"edge {src}->{dst} missing from DOT"
        assert f'label="{kind}"' in line.group(1)
        assert f"style={style[kind]}" in line.group(1)
    assert dot.count("->") == len(DIAMOND_EDGES)
    assert dot.strip().startswith("//") and dot.rstrip().endswith("}")
    trace.save_dot(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text() == dot


def test_dot_escapes_quotes_in_kernel_names() -> None:
    dot = Trace.from_dict(diamond(kernels={"0": 'say "hi" \\ bye'})).to_dot()
    assert 'label="#0 say \\"hi\\" \\\\ bye\\n' in dot


# --- Chrome trace ---------------------------------------------------------------------------

PHASE_KEYS = {
    "X": {"name", "ts", "dur", "pid", "tid"},
    "i": {"name", "ts", "pid", "tid", "s"},
    "s": {"name", "cat", "id", "ts", "pid", "tid"},
    "f": {"name", "cat", "id", "ts", "pid", "tid"},
    "M": {"name", "pid", "tid", "args"},
}
METADATA_NAMES = {"process_name", "thread_name", "process_sort_index", "thread_sort_index"}


def assert_valid_chrome_trace(doc: dict[str, Any]) -> None:
    """The checks of the Trace Event Format that matter for loading in Chrome and Perfetto."""
    json.dumps(doc, allow_nan=False)  # plain JSON, no NaN or Infinity
    assert isinstance(doc["traceEvents"], list)
    assert doc["displayTimeUnit"] in ("ms", "ns")
    named: set[tuple[int, int]] = set()
    slices: dict[tuple[int, int], list[tuple[float, float]]] = {}
    flows: dict[Any, dict[str, dict[str, Any]]] = {}
    for e in doc["traceEvents"]:
        assert e["ph"] in PHASE_KEYS, e
        missing = PHASE_KEYS[e["ph"]] - e.keys()
        assert not missing, f"{e} lacks {missing}"
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        for key in ("ts", "dur"):
            if key in e:
                assert isinstance(e[key], (int, float)) and math.isfinite(e[key]), e
        lane = (e["pid"], e["tid"])
        if e["ph"] == "M":
            assert e["name"] in METADATA_NAMES
            if e["name"] == "thread_name":
                assert isinstance(e["args"]["name"], str)
                named.add(lane)
        elif e["ph"] == "X":
            assert e["dur"] >= 0
            slices.setdefault(lane, []).append((e["ts"], e["ts"] + e["dur"]))
        elif e["ph"] == "i":
            assert e["s"] in ("g", "p", "t")
        else:
            assert e["ph"] not in flows.get(e["id"], {}), f"flow {e['id']} has two {e['ph']}"
            flows.setdefault(e["id"], {})[e["ph"]] = e
    used = {(e["pid"], e["tid"]) for e in doc["traceEvents"] if e["ph"] != "M"}
    assert used <= named, f"lanes without a thread_name: {used - named}"
    for flow_id, ends in flows.items():
        assert set(ends) == {"s", "f"}, f"flow {flow_id} lacks a start or a finish"
        s, f = ends["s"], ends["f"]
        assert (s["cat"], s["name"]) == (f["cat"], f["name"])
        assert f["ts"] >= s["ts"]
        assert f.get("bp") == "e"
        for end in (s, f):  # each end lies inside a slice of its lane, so it binds to it
            lane = (end["pid"], end["tid"])
            assert any(a <= end["ts"] <= b for a, b in slices.get(lane, [])), end


def lane_names(doc: dict[str, Any]) -> dict[int, str]:
    return {
        e["tid"]: e["args"]["name"]
        for e in doc["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


def test_chrome_trace_is_valid_with_all_flows() -> None:
    doc = Trace.from_dict(diamond()).to_chrome_trace()
    assert_valid_chrome_trace(doc)
    flows = [e for e in doc["traceEvents"] if e["ph"] == "s"]
    assert sorted(e["name"] for e in flows) == sorted(k for _, _, k in DIAMOND_EDGES)
    assert "4 dependency arrows" in doc["otherData"]["flows"]


def test_chrome_trace_has_a_lane_per_core_and_per_aicpu_thread() -> None:
    doc = Trace.from_dict(diamond()).to_chrome_trace()
    names = set(lane_names(doc).values())
    for c in cores(2):
        assert f"{c['type']} {c['slot']} (cluster {c['cluster']})" in names
    assert {"AICPU 0 (scheduler)", "AICPU 1 (orchestrator)"} <= names
    assert len(names) == 6 + 2


def test_chrome_trace_times_are_microseconds() -> None:
    doc = Trace.from_dict(diamond()).to_chrome_trace()
    (t1,) = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["args"]["task"] == 1]
    assert (t1["ts"], t1["dur"]) == (pytest.approx(0.120), pytest.approx(0.030))
    assert t1["name"] == "kernel_mul"
    assert t1["args"]["status"] == "done" and t1["args"]["func"] == 1


def test_a_mix_task_appears_on_all_three_of_its_cores() -> None:
    doc = Trace.from_dict(diamond()).to_chrome_trace()
    names = lane_names(doc)
    mix = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["args"]["task"] == 3]
    assert sorted(names[e["tid"]] for e in mix) == [
        "AIC 3 (cluster 1)",
        "AIV 4 (cluster 1)",
        "AIV 5 (cluster 1)",
    ]


def test_aicpu_activity_and_submits_are_instants_on_their_lanes() -> None:
    doc = Trace.from_dict(diamond()).to_chrome_trace()
    names = lane_names(doc)
    instants = Counter((names[e["tid"]], e["name"]) for e in doc["traceEvents"] if e["ph"] == "i")
    assert instants == {
        ("AICPU 0 (scheduler)", "dispatch"): 4,
        ("AICPU 0 (scheduler)", "complete"): 4,
        ("AICPU 1 (orchestrator)", "submit"): 4,
    }


def test_recorded_submit_events_are_not_drawn_twice() -> None:
    # The runtime may record submits as orchestrator events as well as on the tasks.
    data = diamond()
    data["aicpu"][1]["events"] = [[t["submit"], "submit", t["id"]] for t in data["tasks"]]
    doc = Trace.from_dict(data).to_chrome_trace()
    names = lane_names(doc)
    submits = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["name"] == "submit"]
    assert len(submits) == 4
    assert {names[e["tid"]] for e in submits} == {"AICPU 1 (orchestrator)"}
    svg = svg_of(Trace.from_dict(data).to_html())
    ticks = [t for t in svg.iter("title") if (t.text or "").startswith("submit task")]
    assert len(ticks) == 4


def test_flows_are_dropped_above_the_limit_and_the_metadata_says_so() -> None:
    doc = Trace.from_dict(chain(2002)).to_chrome_trace()  # 2001 edges > 2000
    assert_valid_chrome_trace(doc)
    assert not [e for e in doc["traceEvents"] if e["ph"] in "sf"]
    assert "dropped" in doc["otherData"]["flows"]
    small = Trace.from_dict(diamond()).to_chrome_trace(max_flows=3)
    assert "dropped" in small["otherData"]["flows"]


def test_empty_kernels_skipped_and_failed_tasks_still_give_a_valid_trace(tmp_path: Path) -> None:
    tasks = [
        task(0, 0, "AIV", [1], 100, 100),  # an empty kernel: start == end
        task(1, 1, "AIV", [2], 100, 130, "failed"),
        task(2, 1, "AIV", [], None, None, "skipped"),
    ]
    trace = Trace.from_dict(make_trace(tasks, [(0, 1, "raw"), (1, 2, "raw")]))
    path = tmp_path / "chrome.json"
    trace.save_chrome_trace(path)
    doc = json.loads(path.read_text())
    assert_valid_chrome_trace(doc)
    slices = {e["args"]["task"]: e for e in doc["traceEvents"] if e["ph"] == "X"}
    assert set(slices) == {0, 1}
    assert slices[0]["dur"] == 0
    assert slices[1]["args"]["status"] == "failed"


# --- HTML page and PNG ----------------------------------------------------------------------


def svg_of(page: str) -> ET.Element:
    match = re.search(r'<div class="lanes">(<svg.*?</svg>)</div>', page, re.S)
    assert match, "no swimlane SVG in the page"
    return ET.fromstring(match.group(1))  # well-formed XML, or this raises


def test_html_page_is_self_contained(tmp_path: Path) -> None:
    path = tmp_path / "run.html"
    Trace.from_dict(diamond()).render_html(path)
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "http" not in page.lower()
    for tag in ("<script", "<link", "<iframe", "<img", "@import", "@font-face"):
        assert tag not in page.lower()


def test_html_page_has_one_lane_per_core_and_the_legend() -> None:
    trace = Trace.from_dict(diamond())
    page = trace.to_html()
    lanes = [t.text for t in svg_of(page).iter("text") if t.get("class") == "lane"]
    assert lanes == [
        "AICPU 0 (scheduler)",
        "AICPU 1 (orchestrator)",
        *(c.label for c in trace.cores),
    ]
    legend = re.search(r'<ul class="legend" id="legend">(.*?)</ul>', page, re.S)
    assert legend
    for name in ("kernel_add", "kernel_mul", "func 2", "kernel_mix"):
        assert name in legend.group(1)


def test_html_header_summarises_the_run() -> None:
    page = Trace.from_dict(diamond()).to_html()
    header = page.split('<div class="lanes">')[0]
    assert "<td>tasks</td><td>4 " in header
    assert "<td>makespan</td><td>65 ns</td>" in header
    assert "busy AIC" in header and "busy AIV" in header
    assert "45 ns, 69.2% of the makespan" in header
    assert "0 -&gt; 1 -&gt; 3" in header


def test_html_tooltips_name_the_task_and_its_predecessors() -> None:
    svg = svg_of(Trace.from_dict(diamond()).to_html())
    rects = [r for r in svg.iter("rect") if r.get("data-task") == "3"]
    assert len(rects) == 3  # MIX: one bar per core
    tip = rects[0].find("title").text
    for needle in (
        "task 3",
        "kernel_mix",
        "start 160 ns",
        "end 165 ns",
        "duration 5 ns",
        "predecessors: 1 (waw), 2 (explicit)",
        "critical path",
    ):
        assert needle in tip


def test_html_draws_arrows_for_small_graphs_only() -> None:
    small = svg_of(Trace.from_dict(diamond()).to_html())
    (deps,) = [g for g in small.iter("g") if g.get("class") == "deps"]
    assert len(list(deps)) == len(DIAMOND_EDGES)
    page = Trace.from_dict(chain(302)).to_html()  # 301 edges
    assert not [g for g in svg_of(page).iter("g") if g.get("class") == "deps"]
    assert "arrows are hidden" in page


def test_html_escapes_kernel_names() -> None:
    page = Trace.from_dict(diamond(kernels={"0": "<script>alert(1)</script>"})).to_html()
    assert "<script" not in page
    assert "&lt;script&gt;" in page


def test_png_is_written_when_matplotlib_is_available(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "run.png"
    Trace.from_dict(diamond()).render_png(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_without_matplotlib_raises_not_supported(monkeypatch, tmp_path: Path) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.patches"):
        monkeypatch.setitem(sys.modules, name, None)  # makes `import matplotlib...` fail
    with pytest.raises(pto.NotSupportedError, match="matplotlib"):
        Trace.from_dict(diamond()).render_png(tmp_path / "run.png")
    assert not (tmp_path / "run.png").exists()


# --- timing mode: kernel costs and pipe breakdowns -------------------------------------------

# The diamond as timing mode would price it: tasks 1 (kernel_mul, 30 ns) and 2 (func 2, 20 ns)
# by PTO-ISA's cost model, task 0 by the cost table, task 3 by its host time. pipes_us is in µs:
# task 1's MTE2 0.015 µs = 15 ns = 50 % of its 30 ns. The pipes are given out of order.
PIPES_1 = {"MTE3": 0.006, "VEC": 0.024, "MTE2": 0.015, "SCALAR": 0.003}
PIPES_2 = {
    "SCALAR": 0.001,
    "MTE2": 0.01,
    "MTE1": 0.004,
    "CUBE": 0.016,
    "FIXP": 0.002,
    "VEC": 0,
    "MTE3": 0,
}
COSTS = {
    0: {"source": "table"},
    1: {"source": "isa_model", "cycles": 1234, "pipes_us": PIPES_1},
    2: {"source": "isa_model", "cycles": 567, "pipes_us": PIPES_2},
    3: {"source": "host_time"},
}


def priced_diamond() -> dict[str, Any]:
    data = diamond()
    for row in data["tasks"]:
        row["cost"] = copy.deepcopy(COSTS[row["id"]])
    return data


def test_costs_are_parsed_into_the_tasks_and_round_trip(tmp_path: Path) -> None:
    trace = Trace.from_dict(priced_diamond())
    assert trace.task(0).cost == Cost("table")
    assert trace.task(3).cost == Cost("host_time")
    one = trace.task(1).cost
    assert one is not None and one.source == "isa_model" and one.cycles == 1234
    assert one.pipes_us == PIPES_1
    assert list(one.pipes_us) == ["SCALAR", "MTE2", "VEC", "MTE3"]  # in PIPES order
    two = trace.task(2).cost
    assert two is not None and two.pipes_us is not None and list(two.pipes_us) == list(PIPES)
    assert trace.to_dict()["tasks"] == priced_diamond()["tasks"]
    trace.save(tmp_path / "priced.json")
    assert Trace.load(tmp_path / "priced.json").to_dict() == trace.to_dict()
    # Outside timing mode (and in older traces) there is no cost, and none is written.
    plain = Trace.from_dict(diamond())
    assert all(t.cost is None for t in plain.tasks)
    assert all("cost" not in row for row in plain.to_dict()["tasks"])


def test_an_unknown_pipe_is_kept_after_the_known_ones() -> None:
    data = priced_diamond()
    data["tasks"][1]["cost"]["pipes_us"] = {"NEWPIPE": 0.001, "CUBE": 0.002}
    pipes = Trace.from_dict(data).task(1).cost.pipes_us  # type: ignore[union-attr]
    assert list(pipes) == ["CUBE", "NEWPIPE"]  # type: ignore[arg-type]


def test_summary_counts_tasks_by_cost_source_and_sums_pipes_per_kernel() -> None:
    summary = Trace.from_dict(priced_diamond()).summary()
    assert summary.cost_sources == {"isa_model": 2, "table": 1, "host_time": 1}
    assert [(k.name, k.tasks, k.cycles, k.total) for k in summary.kernel_pipes] == [
        ("kernel_mul", 1, 1234, 30),
        ("func 2", 1, 567, 20),
    ]
    mul = summary.kernel_pipes[0].pipes_us
    assert list(mul) == list(PIPES)  # every pipe any task names, 0 where this kernel has none
    assert mul == pytest.approx({**dict.fromkeys(PIPES, 0.0), **PIPES_1})
    text = str(summary)
    assert re.search(r"kernels priced by\s+isa_model 2, table 1, host_time 1$", text, re.M)
    assert re.search(r"^\s+kernel_mul\s+1\s+1234\s+0\.0\s+0\.0\s+0\.0\s+0\.0\s+0\.0", text, re.M)
    assert summary.to_dict()["cost_sources"] == summary.cost_sources
    json.dumps(summary.to_dict(), allow_nan=False)


def test_summary_sums_a_kernels_isa_model_tasks_and_counts_tasks_without_cost() -> None:
    # chain(6): func i % 3, 10 ns each; func 0's tasks 0 and 3 are priced by the cost model.
    data = chain(6)
    data["tasks"][0]["cost"] = {"source": "isa_model", "cycles": 100, "pipes_us": {"VEC": 0.005}}
    data["tasks"][3]["cost"] = {"source": "isa_model", "cycles": 200, "pipes_us": {"VEC": 0.002}}
    data["tasks"][1]["cost"] = {"source": "host_time"}
    summary = Trace.from_dict(data).summary()
    assert summary.cost_sources == {"isa_model": 2, "table": 0, "host_time": 1, "none": 3}
    (add,) = summary.kernel_pipes
    assert (add.name, add.tasks, add.cycles, add.total) == ("kernel_add", 2, 300, 20)
    assert add.pipes_us == pytest.approx({"VEC": 0.007})
    assert "isa_model 2, table 0, host_time 1, none 3" in str(summary)


def test_a_summary_without_costs_says_nothing_about_them() -> None:
    summary = Trace.from_dict(diamond()).summary()
    assert summary.cost_sources == {} and summary.kernel_pipes == ()
    assert "priced" not in str(summary) and "pipe" not in str(summary)


def title_of(element: ET.Element) -> str:
    """The text of an SVG element's <title> (its tooltip)."""
    title = element.find("title")
    assert title is not None and title.text is not None
    return title.text


def test_html_opens_a_pipe_breakdown_for_a_task_priced_by_the_isa_model() -> None:
    page = Trace.from_dict(priced_diamond()).to_html()
    header = page.split('<div class="lanes">')[0]
    assert "<td>kernels priced by</td><td>isa_model 2, table 1, host_time 1</td>" in header
    svg = svg_of(page)
    # The bars of task 1 are a link to its card; the table- and host-priced tasks are not.
    links = {a.get("href"): a for a in svg.iter("a")}
    assert set(links) == {"#task-1", "#task-2"}
    (rect,) = links["#task-1"].iter("rect")
    tip = title_of(rect)
    assert "priced by isa_model · 1234 cycles" in tip
    assert re.search(r"^  MTE2 +15 ns  50% █████$", tip, re.M)
    assert re.search(r"^  VEC +24 ns  80% ████████$", tip, re.M)
    assert "click for the pipe breakdown" in tip
    tip0 = title_of(next(r for r in svg.iter("rect") if r.get("data-task") == "0"))
    assert "priced by table" in tip0 and "cycles" not in tip0 and "click" not in tip0
    # The card: hidden until the URL names it, one bar per pipe, width = % of the task.
    card = re.search(r'<div class="card" id="task-1">(.*?)</div>', page, re.S)
    assert card, "no pipe breakdown card for task 1"
    body = card.group(1)
    assert "task 1 · kernel_mul" in body and "isa_model · 1234 cycles" in body
    bars = re.findall(
        r"<tr><td>(\w+)</td><td><span class=\"bar\"><span style=\"width:([\d.]+)%", body
    )
    assert bars == [("SCALAR", "10.0"), ("MTE2", "50.0"), ("VEC", "80.0"), ("MTE3", "20.0")]
    assert "24 ns · 80%" in body
    assert 'id="task-0"' not in page and 'id="task-3"' not in page
    assert ".card:target { display: block; }" in page and ".card { display: none;" in page
    # The per-kernel table lists both priced kernels with every pipe as a column.
    table = re.search(r'<table class="pipes" id="kernel-pipes">(.*?)</table>', page, re.S)
    assert table
    assert all(f"<th>{p}</th>" in table.group(1) for p in PIPES)
    assert "<td>kernel_mul</td><td>1</td><td>1234</td>" in table.group(1)
    assert "<td>func 2</td><td>1</td><td>567</td>" in table.group(1)


def test_html_with_costs_is_still_self_contained(tmp_path: Path) -> None:
    page = Trace.from_dict(priced_diamond()).to_html()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "http" not in page.lower()
    for tag in ("<script", "<link", "<iframe", "<img", "@import", "@font-face"):
        assert tag not in page.lower()


def test_html_without_costs_has_no_breakdown() -> None:
    page = Trace.from_dict(diamond()).to_html()
    svg = svg_of(page)
    assert not list(svg.iter("a"))
    assert "priced" not in page and 'class="card"' not in page and "kernel-pipes" not in page
    assert len([r for r in svg.iter("rect") if r.get("data-task") is not None]) == 6


def test_html_gives_cards_to_the_first_max_cards_priced_tasks_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pto_runtime.trace import swimlane_html

    monkeypatch.setattr(swimlane_html, "MAX_CARDS", 1)
    page = Trace.from_dict(priced_diamond()).to_html()
    assert 'id="task-1"' in page and 'id="task-2"' not in page
    assert "1 priced task(s) past the first 1" in page


def test_chrome_trace_carries_the_cost() -> None:
    doc = Trace.from_dict(priced_diamond()).to_chrome_trace()
    assert_valid_chrome_trace(doc)
    args = {e["args"]["task"]: e["args"] for e in doc["traceEvents"] if e["ph"] == "X"}
    assert args[1]["cost_source"] == "isa_model" and args[1]["cost_cycles"] == 1234
    assert args[1]["pipes_us"] == PIPES_1
    assert args[0]["cost_source"] == "table" and "pipes_us" not in args[0]


def test_cli_summary_prints_cost_sources_and_pipe_totals(tmp_path: Path) -> None:
    src = tmp_path / "priced.json"
    Trace.from_dict(priced_diamond()).save(src)
    result = run_cli("summary", src)
    assert result.returncode == 0, result.stderr
    assert "isa_model 2, table 1, host_time 1" in result.stdout
    assert "pipe busy by kernel" in result.stdout and "kernel_mul" in result.stdout


# --- command line ---------------------------------------------------------------------------


def run_cli(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pto_runtime.trace", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_renders_every_view_of_a_saved_trace(tmp_path: Path) -> None:
    src = tmp_path / "run.json"
    Trace.from_dict(diamond()).save(src)
    out = {k: tmp_path / f"out.{k}" for k in ("html", "chrome.json", "dot", "graph.json")}
    result = run_cli(
        "render",
        src,
        "-o",
        out["html"],
        "--chrome",
        out["chrome.json"],
        "--dot",
        out["dot"],
        "--graph",
        out["graph.json"],
        "--summary",
    )
    assert result.returncode == 0, result.stderr
    assert "critical path" in result.stdout
    assert_valid_chrome_trace(json.loads(out["chrome.json"].read_text()))
    assert "t1 -> t3" in out["dot"].read_text()
    assert json.loads(out["graph.json"].read_text())["critical_path"] == [0, 1, 3]
    assert "kernel_mix" in out["html"].read_text(encoding="utf-8")


def test_cli_render_defaults_to_an_html_page_next_to_the_trace(tmp_path: Path) -> None:
    src = tmp_path / "run.json"
    Trace.from_dict(diamond()).save(src)
    result = run_cli("render", src)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run.html").exists()


def test_cli_summary_prints_the_table(tmp_path: Path) -> None:
    src = tmp_path / "run.json"
    Trace.from_dict(make_trace(BUSY_TASKS)).save(src)
    result = run_cli("summary", src)
    assert result.returncode == 0, result.stderr
    assert "36.2%" in result.stdout


def test_cli_info_reports_the_version_of_a_chrome_trace_it_wrote(tmp_path: Path) -> None:
    # The package's own writer, through the command line as a user would call it.
    src, chrome = tmp_path / "run.json", tmp_path / "run.perfetto.json"
    Trace.from_dict(diamond()).save(src)
    assert run_cli("render", src, "--chrome", chrome).returncode == 0
    result = run_cli("info", chrome)
    assert result.returncode == 0, result.stderr
    assert "missing" not in result.stdout
    assert "Chrome trace written by pto_runtime.trace" in result.stdout
    assert re.search(r"^\s+version\s+1 \(of the trace it was made from\)$", result.stdout, re.M)
    for needle in ("tensormap_and_ringbuffer", "4 (0 not run)", "4 dependency arrows drawn"):
        assert needle in result.stdout


def test_cli_info_reports_the_version_of_a_trace(tmp_path: Path) -> None:
    src = tmp_path / "run.json"
    Trace.from_dict(diamond(dropped_tasks=2)).save(src)
    result = run_cli("info", src)
    assert result.returncode == 0, result.stderr
    assert "PTO Runtime trace" in result.stdout
    assert re.search(r"^\s+version\s+1$", result.stdout, re.M)
    assert "2 task(s) past the trace capacity" in result.stdout


def test_summary_of_a_chrome_trace_it_wrote_names_the_file_and_its_version(tmp_path: Path) -> None:
    chrome = tmp_path / "run.perfetto.json"
    Trace.from_dict(diamond()).save_chrome_trace(chrome)
    result = run_cli("summary", chrome)
    assert result.returncode == 2
    assert "missing" not in result.stderr
    assert "Chrome trace written by pto_runtime.trace from a version 1 trace" in result.stderr
    assert "Traceback" not in result.stderr
    with pytest.raises(pto.InvalidArgumentError, match="load the trace it was made from"):
        Trace.load(chrome)


def test_a_chrome_trace_from_elsewhere_is_not_taken_for_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "ts": 0, "dur": 1}]}))
    with pytest.raises(pto.InvalidArgumentError, match="pto_runtime.trace did not write"):
        Trace.load(path)
    result = run_cli("info", path)
    assert result.returncode == 2
    assert "did not write" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "No such file"),
        ("not json at all", "not JSON"),
        (json.dumps({"version": 1}), "platform"),
        (
            json.dumps({**make_trace(BUSY_TASKS), "edges": [{"from": 0, "to": 1, "kind": "rar"}]}),
            "edges[0].kind",
        ),
    ],
    ids=["missing", "not-json", "not-a-trace", "bad-edge"],
)
def test_cli_exits_2_with_a_clear_message_on_bad_input(tmp_path: Path, content, message) -> None:
    src = tmp_path / "run.json"
    if content is not None:
        src.write_text(content)
    result = run_cli("render", src, "-o", tmp_path / "out.html")
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.html").exists()


# --- real runs ------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def basic_run(runtime: str) -> tuple[Any, dict[str, Any]]:
    """The basic example (4 AIV tasks, a diamond) with profiling on: (RunStats, trace dict)."""
    callable_ = basic_callable(runtime)
    a, b = np.full(1024, 2, np.float32), np.full(1024, 3, np.float32)
    f = np.zeros(1024, np.float32)
    args = pto.ChipStorageTaskArgs()
    for tensor in (a, b):
        args.add_tensor(tensor)
    args.add_tensor(f, pto.Direction.OUTPUT)
    with pto.Worker(level=2, runtime=runtime) as worker:
        stats = worker.run(callable_, args, pto.ChipCallConfig(2, 3, enable_profiling=True))
        trace = worker.last_trace()
    assert (f == 42).all()
    return stats, trace


def matmul_run() -> tuple[Any, dict[str, Any]]:
    """The tiled GEMM example (AIC GEMMs, AIV adds) with profiling on: (RunStats, trace dict)."""
    spec = importlib.util.spec_from_file_location("matmul_example", EXAMPLES / "matmul" / "main.py")
    example = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(example)  # type: ignore[union-attr]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((example.M, example.K), dtype=np.float32)
    b = rng.standard_normal((example.K, example.N), dtype=np.float32)
    c = np.zeros((example.M, example.N), np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a, pto.Direction.INPUT)
    args.add_tensor(b, pto.Direction.INPUT)
    args.add_tensor(c, pto.Direction.OUTPUT)
    for tile in (example.TILE_M, example.TILE_N, example.TILE_K):
        args.add_scalar_i64(tile)
    config = pto.ChipCallConfig(block_dim=4, aicpu_thread_num=3, enable_profiling=True)
    with pto.Worker(level=2, runtime=example.RUNTIME) as worker:
        stats = worker.run(example.build_callable("a2a3sim"), args, config)
        trace = worker.last_trace()
    assert np.allclose(c, a @ b, rtol=example.RTOL, atol=example.ATOL)
    return stats, trace


@pytest.mark.parametrize(
    "run",
    [
        lambda: basic_run("host_build_graph"),
        lambda: basic_run("tensormap_and_ringbuffer"),
        matmul_run,
    ],
    ids=["basic-hbg", "basic-tmr", "matmul-tmr"],
)
def test_a_real_run_gives_a_trace_every_view_accepts(run, tmp_path: Path) -> None:
    stats, data = run()
    trace = Trace.from_dict(data)
    assert len(trace.tasks) == stats.tasks_run
    assert all(t.status == "done" for t in trace.tasks)
    assert trace.summary().task_count == stats.tasks_run
    assert 0 < trace.critical_path().share <= 1
    assert_valid_chrome_trace(trace.to_chrome_trace())
    trace.render_html(tmp_path / "run.html")
    lanes = [t for t in svg_of((tmp_path / "run.html").read_text()).iter("text")]
    assert (
        sum(1 for t in lanes if t.get("class") == "lane") == len(trace.cores) + trace.aicpu_threads
    )
    assert trace.to_dot().count("->") == len(trace.edges)
