"""tests/python/test_tensor_dump.py — enable_dump_tensor writes selected tasks' tensors as .npy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable


def run_basic(runtime: str, **cfg):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(256).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    f = np.zeros(256, np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a)
    args.add_tensor(b)
    args.add_tensor(f, pto.Direction.OUTPUT)
    with pto.Worker(level=2, runtime=runtime) as w:
        stats = w.run(basic_callable(runtime), args, pto.ChipCallConfig(2, 2, **cfg))
    return a, b, f, stats


def load(stats):
    d = Path(stats.dump_dir)
    index = json.loads((d / "index.json").read_text())
    arrays = {(t["task"], t["arg"], t["phase"]): np.load(d / t["file"]) for t in index["tensors"]}
    return index, arrays


@pytest.fixture(autouse=True)
def dump_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PTO_DUMP_DIR", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("runtime", ["host_build_graph", "tensormap_and_ringbuffer"])
def test_dumped_tensors_round_trip_to_the_values_each_task_saw(runtime, dump_dir):
    a, b, f, stats = run_basic(runtime, enable_dump_tensor=True)
    assert stats.dump_dir.startswith(str(dump_dir))
    index, arrays = load(stats)
    assert index["dropped"] == 0 and index["tasks_selected"] == 4
    c = a + b
    # task 0: c = a + b; task 1: d = c + 1; task 3: f = d * e
    np.testing.assert_array_equal(arrays[(0, 0, "before")], a)
    np.testing.assert_array_equal(arrays[(0, 1, "before")], b)
    np.testing.assert_array_equal(arrays[(0, 2, "after")], c)
    np.testing.assert_array_equal(arrays[(1, 2, "after")], c + np.float32(1))
    np.testing.assert_array_equal(arrays[(3, 2, "after")], f)
    assert all(arr.dtype == np.float32 and arr.shape == (256,) for arr in arrays.values())
    if runtime == "tensormap_and_ringbuffer":
        # Directions are known: inputs only before, outputs only after.
        assert (0, 0, "after") not in arrays and (0, 2, "before") not in arrays
    else:
        # host_build_graph knows no directions: every tensor before and after.
        np.testing.assert_array_equal(arrays[(0, 0, "after")], a)
        assert (0, 2, "before") in arrays


def test_dump_selects_by_kernel_first_task_and_count():
    _, _, _, stats = run_basic("host_build_graph", enable_dump_tensor=True, dump_kernel=1)
    index, _ = load(stats)
    assert {t["task"] for t in index["tensors"]} == {1, 2}  # the two add_scalar tasks
    _, _, _, stats = run_basic(
        "tensormap_and_ringbuffer", enable_dump_tensor=True, dump_first_task=1, dump_max_tasks=2
    )
    index, _ = load(stats)
    assert {t["task"] for t in index["tensors"]} == {1, 2} and index["tasks_selected"] == 2


def test_copies_that_do_not_fit_are_counted_not_written():
    _, _, _, stats = run_basic("host_build_graph", enable_dump_tensor=True, dump_bytes=2048)
    index, arrays = load(stats)
    assert index["dropped"] > 0 and 0 < len(arrays) <= 2  # 1 KiB per copy


STRIDED_ORCH = """
#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(o) {
  using pto::Arg;
  const pto::TensorView x = o.tensor(0), y = o.tensor(1);
  // a 3 x 2 window of the 8 x 8 input, columns 2..3, rows 1..3 (strided)
  o.submit_task(0, PTO_CORE_AIV, {Arg::in(x.tile(1, 2, 3, 2)), Arg::out(y), Arg::i64(6)});
}
"""

COPY_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL(args) {  // y[i] = x's window, row by row (x has 8 columns)
  const float *x = pto::tensor<float>(args, 0);
  float *y = pto::tensor<float>(args, 1);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) y[r * 2 + c] = x[r * 8 + c];
}
"""


def test_strided_views_are_dumped_as_their_elements():
    kc = pto.KernelCompiler("a2a3sim")
    c = pto.ChipCallable(
        kc.compile_orchestration_source("tensormap_and_ringbuffer", STRIDED_ORCH, "strided")
    )
    c.add_kernel(
        0, pto.CoreType.AIV, kc.compile_incore_source(COPY_KERNEL, "copy", pto.CoreType.AIV)
    )
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    y = np.zeros(6, np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x)
    args.add_tensor(y, pto.Direction.OUTPUT)
    with pto.Worker(level=2, runtime="tensormap_and_ringbuffer") as w:
        stats = w.run(c, args, pto.ChipCallConfig(enable_dump_tensor=True))
    _, arrays = load(stats)
    np.testing.assert_array_equal(arrays[(0, 0, "before")], x[1:4, 2:4])
    np.testing.assert_array_equal(arrays[(0, 1, "after")], x[1:4, 2:4].ravel())


def test_a_failed_run_names_its_dump():
    kc = pto.KernelCompiler("a2a3sim")
    orch = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) { g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of(args.tensor(0))}); }
"""
    c = pto.ChipCallable(kc.compile_orchestration_source("host_build_graph", orch, "dump_fail"))
    fail = (
        '#include "pto/kernel.h"\n'
        "PTO_KERNEL(args) { pto::tensor<float>(args, 0)[0] = 9; pto::fail(args, 3); }\n"
    )
    c.add_kernel(0, pto.CoreType.AIV, kc.compile_incore_source(fail, "fail3", pto.CoreType.AIV))
    x = np.zeros(4, np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x, pto.Direction.INOUT)
    with pto.Worker(level=2) as w, pytest.raises(pto.TaskFailedError, match="dumped to") as info:
        w.run(c, args, pto.ChipCallConfig(enable_dump_tensor=True))
    where = str(info.value).split("dumped to ")[1].rstrip(")")
    after = np.load(Path(where) / "task0_arg0_after.npy")
    assert after[0] == 9  # what the failing kernel left behind


def test_bad_dump_settings_are_rejected():
    with pytest.raises(pto.InvalidArgumentError, match="dump_max_tasks"):
        run_basic("host_build_graph", enable_dump_tensor=True, dump_max_tasks=0)
