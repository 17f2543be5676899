"""tests/python/test_trace_chrome.py — pto_runtime.trace: the Chrome / Perfetto trace."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pto_runtime.trace import Trace
from trace_helpers import (
    DIAMOND_EDGES,
    assert_valid_chrome_trace,
    chain,
    cores,
    diamond,
    make_trace,
    svg_of,
    task,
)


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
