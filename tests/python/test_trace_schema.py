"""tests/python/test_trace_schema.py — pto_runtime.trace: loading, saving and the schema checks."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pto_runtime as pto
import pytest
from pto_runtime.trace import Trace
from trace_helpers import (
    DIAMOND_EDGES,
    DIAMOND_TASKS,
    assert_valid_chrome_trace,
    diamond,
    make_trace,
    svg_of,
    task,
)


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
    # Found by tests/fuzz/fuzz_trace.py (docs/fuzzing.md, "Findings"): an integer time too
    # large for a float raised OverflowError; times far apart (-1e308 to 150) were accepted and
    # their differences overflowed to inf in the views. Times are bounded by +-2**64 ns.
    (_set("tasks.1.start", 10**400), "tasks[1].start"),
    (_set("tasks.1.start", -1e308), "tasks[1].start"),
    (_set("tasks.1.end", 2**64 + 1), "tasks[1].end"),
    (_set("tasks.1.submit", 10**400), "tasks[1].submit"),
    (_set("aicpu.0.events.0", [-(2**64) - 1, "dispatch", 0]), "aicpu[0].events[0][0]"),
    (
        _set("tasks.1.cost", {"source": "isa_model", "cycles": 9, "pipes_us": {"VEC": 10**400}}),
        "tasks[1].cost.pipes_us.VEC",
    ),
    (
        _set("tasks.1.cost", {"source": "isa_model", "cycles": 9, "pipes_us": {"VEC": 1e300}}),
        "tasks[1].cost.pipes_us.VEC",
    ),
    # ... and two keys naming one func id kept only the last name.
    (_set("kernels", {"1": "kernel_mul", "01": "kernel_other"}), "kernels"),
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


def test_json_python_cannot_hold_is_refused_as_invalid_argument(tmp_path: Path) -> None:
    # Found by tests/fuzz/fuzz_trace.py: arrays nested past the recursion limit raised
    # RecursionError, an integer of more than 4300 digits ValueError, from Trace.load.
    deep = '{"version": ' + "[" * 100_000 + "]" * 100_000 + "}"
    long = '{"version": ' + "7" * 5000 + "}"
    for name, text in (("deep", deep), ("long", long)):
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        with pytest.raises(pto.InvalidArgumentError, match="JSON this reader cannot take in"):
            Trace.load(path)


LONE_SURROGATE = "\ud83d"  # the first half of an emoji, without its second half


def _with_cost_pipe(data: dict[str, Any]) -> None:
    data["tasks"][1]["cost"] = {"source": "isa_model", "cycles": 9, "pipes_us": {"VEC": 1.0}}
    data["tasks"][1]["cost"]["pipes_us"][LONE_SURROGATE] = 2.0


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (_set("platform", "a2a3sim" + LONE_SURROGATE), "platform"),
        (_set("kernels.1", "kernel_" + LONE_SURROGATE), "kernels['1']"),
        (_set("pmu_note", LONE_SURROGATE), "pmu_note"),
        (_with_cost_pipe, "tasks[1].cost.pipes_us"),
    ],
    ids=["platform", "kernel", "pmu_note", "pipe"],
)
def test_text_that_is_not_unicode_is_refused(mutate, field: str, tmp_path: Path) -> None:
    # Found by tests/fuzz/fuzz_trace.py: the JSON escape "\ud83d" without its low half reads
    # as a lone surrogate, which was accepted; render_html and save_dot then failed with
    # UnicodeEncodeError writing the page (no UTF-8 file can hold one).
    data = diamond()
    mutate(data)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))  # ensure_ascii: the file holds the escape "\ud83d"
    assert "\\ud83d" in path.read_text()
    with pytest.raises(pto.InvalidArgumentError, match=re.escape(f"trace: {field}: ")):
        Trace.load(path)


def test_times_at_the_ends_of_the_clock_give_finite_views() -> None:
    # The bound of +-2**64 ns keeps durations (up to 2**65) and their sums finite floats in
    # every view: the Chrome trace stays strict JSON and the page's time axis is drawn.
    data = make_trace(
        [task(0, 0, "AIV", [1], -(2**64), 2**64), task(1, 1, "AIV", [2], 2**64, 2**64)],
        [(0, 1, "raw")],
    )
    trace = Trace.from_dict(data)
    assert trace.critical_path().length == 2**65 and trace.makespan == 2**65
    assert_valid_chrome_trace(trace.to_chrome_trace())
    assert json.loads(json.dumps(trace.summary().to_dict(), allow_nan=False))["tasks"] == 2
    svg_of(trace.to_html())


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
