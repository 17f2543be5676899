"""tests/python/test_trace_html.py — pto_runtime.trace: the swimlane HTML page and the PNG."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pto_runtime as pto
import pytest
from pto_runtime.trace import Trace
from trace_helpers import DIAMOND_EDGES, chain, diamond, make_trace, run_cli, svg_of, task


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


def test_html_shows_characters_xml_refuses_as_replacement_characters() -> None:
    # Found by tests/fuzz/fuzz_trace.py: a name with a control character (a hand-written trace;
    # the runtime drops them) made the page's inline SVG ill-formed XML.
    data = diamond(kernels={"0": "add\x03", "1": "mul\x1f\uffff"}, platform="a2a3\x00sim")
    page = Trace.from_dict(data).to_html()
    svg_of(page)  # well-formed XML, or this raises
    assert "add\ufffd" in page and "mul\ufffd\ufffd" in page and "a2a3\ufffdsim" in page
    assert not any(c in page for c in "\x00\x03\x1f\uffff")


def test_html_of_times_past_float_precision_is_drawn(tmp_path: Path) -> None:
    # Found by tests/fuzz/fuzz_trace.py: nanoseconds since the epoch (1.7e18) are past 2**53,
    # where a float's step is 256 ns. Adding the time axis' 50 ns step left a tick where it
    # was and the page was never finished; a run whose times were all one such value divided
    # by zero. run_cli gives up after 120 s, so a hang fails the test.
    epoch = 1_700_000_000_000_000_000
    path = tmp_path / "epoch.json"
    path.write_text(
        json.dumps(make_trace([task(0, 0, "AIV", [1], epoch, epoch + 256)], clusters=1))
    )
    result = run_cli("render", path, "-o", tmp_path / "epoch.html")
    assert result.returncode == 0, result.stderr
    svg = svg_of((tmp_path / "epoch.html").read_text(encoding="utf-8"))
    assert [r.get("data-task") for r in svg.iter("rect") if r.get("data-task")] == ["0"]
    instant = make_trace([task(0, 0, "AIV", [1], 1e17, 1e17)], clusters=1)
    svg = svg_of(Trace.from_dict(instant).to_html())
    assert [r.get("data-task") for r in svg.iter("rect") if r.get("data-task")] == ["0"]


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
