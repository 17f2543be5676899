"""tests/python/test_profiling.py — enable_profiling records a trace that matches the run."""

from __future__ import annotations

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable


def run_basic(runtime: str, profiling: bool, block_dim: int = 2, threads: int = 2, pmu=False):
    a = np.full(1024, 2, np.float32)
    b = np.full(1024, 3, np.float32)
    f = np.zeros(1024, np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a)
    args.add_tensor(b)
    args.add_tensor(f, pto.Direction.OUTPUT)
    cfg = pto.ChipCallConfig(block_dim, threads, enable_profiling=profiling, enable_pmu=pmu)
    with pto.Worker(level=2, runtime=runtime) as w:
        stats = w.run(basic_callable(runtime), args, cfg)
        trace = w.last_trace()
    assert (f == 42).all()
    return stats, trace


@pytest.mark.parametrize("runtime", ["host_build_graph", "tensormap_and_ringbuffer"])
def test_trace_has_every_task_on_a_core_of_the_run(runtime):
    stats, trace = run_basic(runtime, True)
    assert trace["version"] == 1 and trace["runtime"] == runtime
    assert stats.tasks_run == len(trace["tasks"]) == 4
    slots = {c["slot"] for c in trace["cores"]}
    assert len(slots) == 3 * trace["block_dim"]
    for t in trace["tasks"]:
        assert t["status"] == "done" and t["shape"] == "AIV"
        assert len(t["cores"]) == 1 and t["cores"][0] in slots
        assert 0 <= t["start"] <= t["end"]
    assert trace["kernels"] == {"0": "kernel_add", "1": "kernel_add_scalar", "2": "kernel_mul"}
    dispatched = sum(1 for th in trace["aicpu"] for ev in th["events"] if ev[1] == "dispatch")
    assert dispatched == 4


@pytest.mark.parametrize(
    "runtime,kind",
    [("host_build_graph", "explicit"), ("tensormap_and_ringbuffer", "raw")],
)
def test_trace_edges_are_the_graphs_dependencies(runtime, kind):
    _, trace = run_basic(runtime, True)
    edges = {(e["from"], e["to"], e["kind"]) for e in trace["edges"]}
    assert edges == {(0, 1, kind), (0, 2, kind), (1, 3, kind), (2, 3, kind)}
    by_id = {t["id"]: t for t in trace["tasks"]}
    for e in trace["edges"]:  # a consumer starts only after its producer ended
        assert by_id[e["to"]]["start"] >= by_id[e["from"]]["end"]


def test_tensormap_trace_records_submit_times_and_the_orchestrator_lane():
    _, trace = run_basic("tensormap_and_ringbuffer", True, threads=3)
    assert all("submit" in t and t["submit"] <= t["start"] for t in trace["tasks"])
    roles = {th["thread"]: th["role"] for th in trace["aicpu"]}
    assert roles == {0: "scheduler", 1: "scheduler", 2: "orchestrator"}
    submits = [ev for th in trace["aicpu"] for ev in th["events"] if ev[1] == "submit"]
    assert sorted(ev[2] for ev in submits) == [0, 1, 2, 3]


@pytest.mark.parametrize("runtime", ["host_build_graph", "tensormap_and_ringbuffer"])
def test_no_trace_without_profiling(runtime):
    _, trace = run_basic(runtime, False)
    assert trace is None


def test_run_stats_count_the_graph_and_print_a_table():
    stats, _ = run_basic("tensormap_and_ringbuffer", False)
    assert (stats.tasks_run, stats.aiv_tasks, stats.aic_tasks, stats.mix_tasks) == (4, 4, 0, 0)
    assert stats.window.capacity == 1024 and 1 <= stats.window.high_water <= 4
    assert stats.heap.high_water == 3 * 4096  # c, d, e: 1024 float32 each
    text = str(stats)
    assert "tasks run        4" in text and "task window" in text


@pytest.mark.parametrize("runtime", ["host_build_graph", "tensormap_and_ringbuffer"])
def test_pmu_counts_cycles_per_task_and_says_which_counters_are_missing(runtime):
    stats, trace = run_basic(runtime, False, pmu=True)  # enable_pmu alone records the trace
    assert trace is not None and len(trace["tasks"]) == 4
    note = trace.get("pmu_note", "")
    assert note == stats.pmu_note
    for t in trace["tasks"]:
        counters = t["pmu"]
        assert counters["cycles"] > 0, "the kernel ran: its cycles cannot be zero"
        # Where the machine refuses hardware counters (VMs), they are null and the note says
        # why; where it allows them, they are counted and there is no note.
        assert (counters["instructions"] is None) == ("instructions" in note)
        if counters["instructions"] is not None:
            assert counters["instructions"] > 0
    if note:
        assert "perf_event_open" in note and "PMU" in str(stats)
    parsed = pto.Trace.from_dict(trace)
    assert parsed.pmu_note == note and all(t.pmu is not None for t in parsed.tasks)
    assert pto.Trace.from_dict(parsed.to_dict()).tasks == parsed.tasks


def test_pmu_off_records_no_counters():
    _, trace = run_basic("host_build_graph", True)
    assert all("pmu" not in t for t in trace["tasks"]) and "pmu_note" not in trace


FAIL_KERNEL = '#include "pto/kernel.h"\nPTO_KERNEL(args) { pto::fail(args, 5); }\n'
NOOP_KERNEL = '#include "pto/kernel.h"\nPTO_KERNEL(args) { (void)args; }\n'
CHAIN_ORCH = """#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, a) {
  (void)a;
  auto t0 = g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});
  auto t1 = g.add_task(1, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});
  auto t2 = g.add_task(1, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});
  g.add_dependency(t0, t1);
  g.add_dependency(t1, t2);
}
"""


def test_trace_of_a_failed_run_marks_the_failure_and_the_skipped_tasks(tmp_path):
    kc = pto.KernelCompiler("a2a3sim")
    for name, text in [
        ("orch.cpp", CHAIN_ORCH),
        ("fail.cpp", FAIL_KERNEL),
        ("noop.cpp", NOOP_KERNEL),
    ]:
        (tmp_path / name).write_text(text)
    c = pto.ChipCallable(kc.compile_orchestration("host_build_graph", tmp_path / "orch.cpp"))
    c.add_kernel(0, pto.CoreType.AIV, kc.compile_incore(tmp_path / "fail.cpp", pto.CoreType.AIV))
    c.add_kernel(1, pto.CoreType.AIV, kc.compile_incore(tmp_path / "noop.cpp", pto.CoreType.AIV))
    with pto.Worker(level=2) as w:
        with pytest.raises(pto.TaskFailedError):
            w.run(c, pto.ChipStorageTaskArgs(), pto.ChipCallConfig(enable_profiling=True))
        trace = pto.Trace.from_dict(w.last_trace())
    assert [t.status for t in sorted(trace.tasks, key=lambda t: t.id)] == [
        "failed",
        "skipped",
        "skipped",
    ]
    assert not trace.unmatched_edges


FILL_KERNEL = """#include "pto/kernel.h"
PTO_KERNEL(args) {
  float *x = pto::tensor<float>(args, 0);
  for (int64_t i = 0; i < args[1]; ++i) x[i] = 1.0f;
}
"""
COPY_KERNEL = """#include "pto/kernel.h"
PTO_KERNEL(args) {
  const float *x = pto::tensor<float>(args, 0);
  float *y = pto::tensor<float>(args, 1);
  for (int64_t i = 0; i < args[2]; ++i) y[i] = x[i];
}
"""
KINDS_ORCH = """#include "pto/orchestration.h"
using pto::Arg;
PTO_DEVICE_ORCHESTRATION(o) {
  pto::TensorView x = o.tensor(0), y = o.tensor(1);
  const int64_t n = x.numel();
  o.submit_task(0, PTO_CORE_AIV, {Arg::out(x), Arg::i64(n)});               // t0 writes x
  o.submit_task(1, PTO_CORE_AIV, {Arg::in(x), Arg::out(y), Arg::i64(n)});   // t1 reads x
  o.submit_task(0, PTO_CORE_AIV, {Arg::out(x), Arg::i64(n)});               // t2 rewrites x
}
"""


def test_tensormap_trace_labels_raw_waw_and_war_edges(tmp_path):
    kc = pto.KernelCompiler("a2a3sim")
    for name, text in [("o.cpp", KINDS_ORCH), ("fill.cpp", FILL_KERNEL), ("copy.cpp", COPY_KERNEL)]:
        (tmp_path / name).write_text(text)
    c = pto.ChipCallable(kc.compile_orchestration("tensormap_and_ringbuffer", tmp_path / "o.cpp"))
    c.add_kernel(0, pto.CoreType.AIV, kc.compile_incore(tmp_path / "fill.cpp", pto.CoreType.AIV))
    c.add_kernel(1, pto.CoreType.AIV, kc.compile_incore(tmp_path / "copy.cpp", pto.CoreType.AIV))
    x = np.zeros(256, np.float32)
    y = np.zeros(256, np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x, pto.Direction.INOUT)
    args.add_tensor(y, pto.Direction.INOUT)
    with pto.Worker(level=2, runtime="tensormap_and_ringbuffer") as w:
        w.run(c, args, pto.ChipCallConfig(2, 2, enable_profiling=True))
        trace = pto.Trace.from_dict(w.last_trace())
    assert {(e.src, e.dst, e.kind) for e in trace.edges} == {
        (0, 1, "raw"),
        (0, 2, "waw"),
        (1, 2, "war"),
    }
    chrome = trace.to_chrome_trace()  # loads as Chrome-trace JSON: every slice well formed
    slices = [e for e in chrome["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == 3
    assert all({"name", "ts", "dur", "pid", "tid"} <= e.keys() and e["dur"] >= 0 for e in slices)
    assert (y == 1).all()
