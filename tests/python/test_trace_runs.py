"""tests/python/test_trace_runs.py — pto_runtime.trace on the traces of real runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable
from pto_runtime.trace import Trace
from trace_helpers import assert_valid_chrome_trace, svg_of

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
