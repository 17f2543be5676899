"""tests/python/test_trace_cli.py — pto_runtime.trace: the command line (python -m)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pto_runtime as pto
import pytest
from pto_runtime.trace import Trace
from trace_helpers import BUSY_TASKS, assert_valid_chrome_trace, diamond, make_trace, run_cli


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
