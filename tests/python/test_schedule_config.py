"""tests/python/test_schedule_config.py — the schedule primitives from Python.

CompileOptions' schedule fields, the ChipCallConfig fields they lower to, RunStats' report."""

from __future__ import annotations

import pickle

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable


def test_compile_options_schedule_defaults_ask_for_nothing() -> None:
    o = pto.CompileOptions()
    assert (o.task_window, o.window_overflow, o.pipeline_depth, o.pipeline_scope) == (
        0,
        "stall",
        0,
        "global",
    )
    c = o.call_config()
    assert (c.task_window, c.task_window_overflow, c.pipeline_depth, c.pipeline_scope) == (
        pto.ChipCallConfig().task_window,
        pto.WindowOverflow.STALL,
        0,
        pto.PipelineScope.GLOBAL,
    )


def test_compile_options_schedule_lowers_into_the_call_config_fields() -> None:
    o = pto.CompileOptions(
        task_window=64,
        window_overflow="evict_completed",
        pipeline_depth=2,
        pipeline_scope="per_stream",
    )
    assert "pipeline_scope='per_stream'" in repr(o) and "window_overflow='evict_completed'" in repr(
        o
    )
    c = o.call_config()
    assert (c.task_window, c.task_window_overflow, c.pipeline_depth, c.pipeline_scope) == (
        64,
        pto.WindowOverflow.EVICT_COMPLETED,
        2,
        pto.PipelineScope.PER_STREAM,
    )
    assert o != pto.CompileOptions()
    o.window_overflow = "error"
    o.pipeline_scope = "per_target"
    assert o.call_config().task_window_overflow is pto.WindowOverflow.ERROR
    assert o.call_config().pipeline_scope is pto.PipelineScope.PER_TARGET


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"window_overflow": "evict"},
            "CompileOptions.window_overflow='evict' is not one of 'stall'",
        ),
        (
            {"pipeline_scope": "per_thread"},
            "CompileOptions.pipeline_scope='per_thread' is not one of 'global'",
        ),
        (
            {"pipeline_depth": 70000},
            r"CompileOptions.sched.pipeline_depth=70000 is outside 0..65535",
        ),
        (
            {"task_window": 1 << 25},
            r"CompileOptions.sched.task_window=33554432 is outside 0..16777216",
        ),
    ],
)
def test_bad_schedule_options_name_the_field_and_the_value(kwargs: dict, message: str) -> None:
    with pytest.raises(pto.InvalidArgumentError, match=message):
        pto.CompileOptions(**kwargs)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("task_window_overflow", 3, "ChipCallConfig.task_window_overflow=3 is outside 0..2"),
        ("pipeline_depth", 65536, "ChipCallConfig.pipeline_depth=65536 is outside 0..65535"),
        ("pipeline_scope", 4, "ChipCallConfig.pipeline_scope=4 is outside 0..3"),
    ],
)
def test_call_config_schedule_fields_are_range_checked(
    field: str, value: int, message: str
) -> None:
    with pytest.raises(pto.InvalidArgumentError, match=message):
        pto.ChipCallConfig(**{field: value})


def test_call_config_schedule_fields_round_trip() -> None:
    c = pto.ChipCallConfig(task_window_overflow=2, pipeline_depth=3, pipeline_scope=2)
    assert pickle.loads(pickle.dumps(c)) == c
    assert "pipeline_depth=3" in repr(c)
    assert c != pto.ChipCallConfig()


def _basic_run(runtime: str) -> tuple[np.ndarray, pto.ChipStorageTaskArgs, pto.ChipWorker]:
    """The basic example's output f, its arguments and a worker on device 0 of a2a3sim."""
    a = np.full(64, 2.0, dtype=np.float32)
    b = np.full(64, 3.0, dtype=np.float32)
    f = np.zeros(64, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a, pto.Direction.INPUT)
    args.add_tensor(b, pto.Direction.INPUT)
    args.add_tensor(f, pto.Direction.OUTPUT)
    w = pto.ChipWorker()
    w.init("a2a3sim", runtime)
    w.set_device(0)
    return f, args, w


@pytest.mark.parametrize("runtime", ["host_build_graph", "tensormap_and_ringbuffer"])
def test_run_stats_report_the_schedule_primitives(runtime: str) -> None:
    f, args, w = _basic_run(runtime)
    cfg = pto.CompileOptions(
        pipeline_depth=1, pipeline_scope="global", aicpu_threads=3
    ).call_config(pto.ChipCallConfig(block_dim=2))
    stats = w.run(basic_callable(runtime), args, cfg)
    assert (f == 42.0).all()
    assert stats.window_overflow is pto.WindowOverflow.STALL is cfg.task_window_overflow
    assert stats.pipeline_max_in_flight == 1  # t1 and t2 could run together; the gate allows one
    assert stats.pipeline_deferred <= 1
    plain = w.run(
        basic_callable(runtime), args, pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3)
    )
    assert (plain.pipeline_max_in_flight, plain.pipeline_deferred) == (0, 0)
    w.finalize()


def test_batch_deps_lowers_into_the_call_config_and_repr() -> None:
    o = pto.CompileOptions(batch_deps=8)
    assert o.batch_deps == 8 and "batch_deps=8" in repr(o)
    assert o.call_config().batch_deps == 8
    assert pto.CompileOptions().call_config().batch_deps == 0
    assert o != pto.CompileOptions()
    o.batch_deps = 0
    assert o == pto.CompileOptions()
    c = pto.ChipCallConfig(batch_deps=4)
    assert pickle.loads(pickle.dumps(c)) == c and "batch_deps=4" in repr(c)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: pto.CompileOptions(batch_deps=257),
            r"CompileOptions.sched.batch_deps=257 is outside 0..256",
        ),
        (
            lambda: pto.ChipCallConfig(batch_deps=1000),
            r"ChipCallConfig.batch_deps=1000 is outside 0..256",
        ),
    ],
)
def test_bad_batch_deps_names_the_field_the_value_and_the_range(make, message: str) -> None:
    with pytest.raises(pto.InvalidArgumentError, match=message):
        make()


def test_batch_deps_below_zero_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        pto.CompileOptions(batch_deps=-1)


@pytest.mark.parametrize("runtime", ["host_build_graph", "tensormap_and_ringbuffer"])
def test_batch_deps_runs_and_reports(runtime: str) -> None:
    f, args, w = _basic_run(runtime)
    cfg = pto.CompileOptions(batch_deps=4, aicpu_threads=3).call_config(
        pto.ChipCallConfig(block_dim=2)
    )
    stats = w.run(basic_callable(runtime), args, cfg)
    assert (f == 42.0).all()
    if runtime == "host_build_graph":  # explicit edges built on the host: nothing to batch
        assert (stats.batch_flushes, stats.batch_local_hits, stats.batch_unfiled) == (0, 0, 0)
    else:
        # kernels add, add_scalar, add_scalar, mul in one scope: a batch ends at each kernel
        # change and at the scope's end; no task re-reads a view an earlier one of its batch
        # wrote.
        assert (stats.batch_flushes, stats.batch_local_hits) == (3, 0)
    w.finalize()


@pytest.mark.parametrize("batch", [0, 4])
def test_trace_says_where_each_inferred_edge_was_found(batch: int) -> None:
    # The basic example re-reads no view inside a batch, so the batch map finds no edge: every
    # inferred edge comes from the TensorMap, with or without batch_deps (the C++ test
    # test_tmr_batch_deps.cpp runs a program where the batch map does find edges).
    f, args, w = _basic_run("tensormap_and_ringbuffer")
    cfg = pto.CompileOptions(batch_deps=batch, profiling=True, aicpu_threads=3).call_config(
        pto.ChipCallConfig(block_dim=2)
    )
    try:
        w.run(basic_callable("tensormap_and_ringbuffer"), args, cfg)
        assert (f == 42.0).all()
        trace = pto.Trace.from_dict(w.last_trace())
        inferred = [e for e in trace.edges if e.kind != "explicit"]
        assert inferred and all(e.source == "tensormap" for e in inferred)
        assert pto.Trace.from_dict(trace.to_dict()).edges == trace.edges
    finally:
        w.finalize()


def test_dispatch_threshold_options_lower_into_the_call_config_fields() -> None:
    o = pto.CompileOptions()
    assert (
        o.dispatch_metric,
        o.dispatch_threshold,
        o.dispatch_scope,
        o.dispatch_below,
        o.dispatch_above,
        o.active_cores_below,
    ) == ("none", 0, "global", "locality", "locality", 0)
    o = pto.CompileOptions(
        dispatch_metric="ready",
        dispatch_threshold=8,
        dispatch_scope="per_pool",
        dispatch_below="round_robin",
        dispatch_above="work_stealing",
        active_cores_below=2,
    )
    assert "dispatch_above='work_stealing'" in repr(o) and "active_cores_below=2" in repr(o)
    c = o.call_config()
    assert (
        c.dispatch_metric,
        c.dispatch_threshold,
        c.dispatch_scope,
        c.dispatch_below,
        c.dispatch_above,
        c.active_cores_below,
    ) == ("ready", 8, "per_pool", "round_robin", "work_stealing", 2)
    o.dispatch_below = "locality"
    assert o.call_config().dispatch_below is pto.DispatchPolicy.LOCALITY
    assert pickle.loads(pickle.dumps(c)) == c


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"dispatch_metric": "in_flight"},
            "CompileOptions.dispatch_metric='in_flight' is not one of 'none'",
        ),
        (
            {"dispatch_metric": "ready", "dispatch_below": "random"},
            "CompileOptions.dispatch_below='random' is not one of 'locality', 'round_robin'",
        ),
        (
            {"dispatch_metric": "ready", "dispatch_scope": "per_stream"},
            "CompileOptions.dispatch_scope='per_stream' is not one of 'global', 'per_pool'",
        ),
        (
            {"dispatch_metric": "ready", "dispatch_threshold": 70000},
            r"CompileOptions.dispatch_threshold=70000 is outside 0..65535",
        ),
        (
            {"dispatch_threshold": 4},
            "CompileOptions.sched.dispatch_threshold is set but dispatch_metric is none",
        ),
    ],
)
def test_bad_dispatch_threshold_options_name_the_field_and_the_value(
    kwargs: dict, message: str
) -> None:
    with pytest.raises(pto.InvalidArgumentError, match=message):
        pto.CompileOptions(**kwargs)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dispatch_metric", 2, "ChipCallConfig.dispatch_metric=2 is outside 0..1"),
        ("dispatch_above", 3, "ChipCallConfig.dispatch_above=3 is outside 0..2"),
        (
            "dispatch_threshold",
            65536,
            "ChipCallConfig.dispatch_threshold=65536 is outside 0..65535",
        ),
    ],
)
def test_call_config_dispatch_fields_are_range_checked(
    field: str, value: int, message: str
) -> None:
    with pytest.raises(pto.InvalidArgumentError, match=message):
        pto.ChipCallConfig(**{field: value})


@pytest.mark.parametrize("runtime", ["host_build_graph", "tensormap_and_ringbuffer"])
def test_run_stats_and_trace_report_dispatch_threshold(runtime: str) -> None:
    f, args, w = _basic_run(runtime)
    # Threshold 1: the metric counts the task being placed, so every decision is "above".
    cfg = pto.CompileOptions(
        profiling=True,
        aicpu_threads=3,
        dispatch_metric="ready",
        dispatch_threshold=1,
        dispatch_above="round_robin",
    ).call_config(pto.ChipCallConfig(block_dim=2))
    try:
        stats = w.run(basic_callable(runtime), args, cfg)
        assert (f == 42.0).all()
        assert stats.dispatch_round_robin == stats.tasks_run > 0
        assert (stats.dispatch_locality, stats.dispatch_work_stealing, stats.dispatch_switches) == (
            0,
            0,
            0,
        )
        trace = pto.Trace.from_dict(w.last_trace())
        tasks = [t for t in trace.tasks if t.ran]
        assert tasks and all(
            t.dispatch_policy == "round_robin" and (t.dispatch_metric or 0) >= 1 for t in tasks
        )
        assert pto.Trace.from_dict(trace.to_dict()).tasks == trace.tasks  # saved and loaded alike
        slices = [e for e in trace.to_chrome_trace()["traceEvents"] if e.get("ph") == "X"]
        assert slices and all(e["args"]["dispatch_policy"] == "round_robin" for e in slices)
    finally:
        w.finalize()
