"""tests/python/test_trace_analysis.py — pto_runtime.trace: critical path, summary, graph export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pto_runtime.trace import Trace
from trace_helpers import BUSY_TASKS, DIAMOND_EDGES, chain, diamond, make_trace, task


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
