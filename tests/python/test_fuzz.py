"""tests/python/test_fuzz.py — the schedule fuzzer (pto_runtime.fuzz_schedules) on seeded runs."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pto_runtime as pto
import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("PTO_SIM_EXEC") == "threads", reason="seeded runs need the sim's fiber pool"
)

N = 64

# Kernel 0 adds 1 to its tensor in place; kernel 1 copies its first tensor, doubled, to its second.
BUMP = """#include "pto/kernel.h"
PTO_KERNEL(args) {
  float *x = pto::tensor<float>(args, 0);
  const int64_t n = pto::scalar_i64(args, 1);
  for (int64_t i = 0; i < n; ++i) x[i] += 1.0f;
}
"""
DOUBLE = """#include "pto/kernel.h"
PTO_KERNEL(args) {
  const float *x = pto::tensor<float>(args, 0);
  float *y = pto::tensor<float>(args, 1);
  const int64_t n = pto::scalar_i64(args, 2);
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
"""
# `{bump}` is how task 0 declares x: Arg::in is the planted bug (it writes x), Arg::inout is right.
ORCH = """#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(orch) {
  using pto::Arg;
  const pto::TensorView x = orch.tensor(0), y = orch.tensor(1);
  orch.submit_task(0, PTO_CORE_AIV, {Arg::%s(x), Arg::i64(x.numel())});
  orch.submit_task(1, PTO_CORE_AIV, {Arg::in(x), Arg::out_existing(y), Arg::i64(x.numel())});
}
"""


def program(tmp_path: Path, bump_access: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler("a2a3sim")
    orch = tmp_path / f"orch_{bump_access}.cpp"
    orch.write_text(ORCH % bump_access)
    c = pto.ChipCallable(kc.compile_orchestration("tensormap_and_ringbuffer", orch))
    for func_id, (name, src) in enumerate([("bump", BUMP), ("double", DOUBLE)]):
        path = tmp_path / f"{name}.cpp"
        path.write_text(src)
        c.add_kernel(func_id, pto.CoreType.AIV, kc.compile_incore(path, pto.CoreType.AIV))
    return c


def make_args() -> pto.ChipStorageTaskArgs:
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(np.arange(N, dtype=np.float32), pto.Direction.INPUT)
    args.add_tensor(np.zeros(N, dtype=np.float32), pto.Direction.OUTPUT)
    return args


@pytest.fixture(scope="module")
def worker():
    with pto.Worker(level=2, platform="a2a3sim", runtime="tensormap_and_ringbuffer") as w:
        yield w


def test_finds_a_kernel_that_writes_a_view_declared_as_input(worker, tmp_path):
    report = pto.fuzz_schedules(
        worker, program(tmp_path, "in"), make_args, pto.ChipCallConfig(block_dim=2), seeds=20
    )
    assert report, report.summary()
    assert report.divergent_seed is not None and report.divergent_seed < 20
    assert report.error is None
    assert report.reproduced is True
    assert [d.index for d in report.diffs] == [1]  # y: 2x before the bump or 2(x + 1) after it
    d = report.diffs[0]
    assert {d.baseline_value, d.divergent_value} == {2.0 * d.first, 2.0 * (d.first + 1)}
    assert report.baseline_trace is not None and report.divergent_trace is not None
    text = report.summary()
    assert f"seed {report.divergent_seed} differs from seed 0" in text and "tensor 1" in text
    written = report.save_traces(tmp_path / "fuzz")
    assert [p.name for p in written] == [
        "fuzz.seed0.trace.json",
        f"fuzz.seed{report.divergent_seed}.trace.json",
    ]


def test_a_correct_orchestration_gives_the_baseline_under_every_seed(worker, tmp_path):
    report = pto.fuzz_schedules(
        worker, program(tmp_path, "inout"), make_args, pto.ChipCallConfig(block_dim=2), seeds=12
    )
    assert not report, report.summary()
    assert report.seeds_run == list(range(12))
    assert "every run gave the buffers of seed 0" in report.summary()


def test_bad_arguments_are_named_and_the_worker_stays_usable(worker, tmp_path):
    c = program(tmp_path, "inout")
    with pytest.raises(pto.InvalidArgumentError, match="seeds=1"):
        pto.fuzz_schedules(worker, c, make_args, seeds=1)
    with pytest.raises(pto.InvalidArgumentError, match="baseline_seed=-3"):
        pto.fuzz_schedules(worker, c, make_args, baseline_seed=-3)
    with pytest.raises(pto.InvalidArgumentError, match="make_args returned list"):
        pto.fuzz_schedules(worker, c, lambda: [], seeds=2)
    assert not pto.fuzz_schedules(worker, c, make_args, seeds=2)
