"""tests/python/test_trace_costs.py — pto_runtime.trace: timing mode's kernel costs and pipes."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from pto_runtime.trace import PIPES, Cost, Trace
from trace_helpers import assert_valid_chrome_trace, chain, diamond, run_cli, svg_of

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
