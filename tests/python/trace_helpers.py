"""tests/python/trace_helpers.py — shared by the test_trace_*.py files: hand-built traces with
known answers and the checks every view of a trace must pass."""

from __future__ import annotations

import copy
import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

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


# Busy fractions by hand: makespan 100; AIC cores 0 and 3 ran 40 and 10 of 2 x 100 ns;
# AIV cores 1, 2, 4, 5 ran 100, 25, 10, 10 of 4 x 100 ns. The MIX task counts on all three.
BUSY_TASKS = [
    task(0, 0, "AIC", [0], 0, 40),
    task(1, 1, "AIV", [1], 0, 100),
    task(2, 1, "AIV", [2], 50, 75),
    task(3, 3, "MIX", [3, 4, 5], 20, 30),
]


# --- what every Chrome trace, swimlane page and command-line call is checked with ---------

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


def svg_of(page: str) -> ET.Element:
    match = re.search(r'<div class="lanes">(<svg.*?</svg>)</div>', page, re.S)
    assert match, "no swimlane SVG in the page"
    return ET.fromstring(match.group(1))  # well-formed XML, or this raises


def run_cli(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pto_runtime.trace", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
