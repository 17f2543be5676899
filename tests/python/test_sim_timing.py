"""tests/python/test_sim_timing.py — ChipCallConfig.sim_timing from Python: a seeded run in
virtual time returns the predicted device makespan and each core's predicted utilisation
(docs/design/sim_execution.md, "Timing mode")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pto_runtime as pto
import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("PTO_SIM_EXEC") == "threads", reason="timing mode needs the sim's fiber pool"
)

N = 64
TASKS = 4
COST_NS = 10_000

BUMP = """#include "pto/kernel.h"
PTO_KERNEL(args) {
  float *x = pto::tensor<float>(args, 0);
  const int64_t n = pto::scalar_i64(args, 1);
  for (int64_t i = 0; i < n; ++i) x[i] += 1.0f;
}
"""
# TASKS in-place bumps of one tensor: a dependent chain, inferred from the tensor.
ORCH = """#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(orch) {
  const pto::TensorView x = orch.tensor(0);
  for (int i = 0; i < %d; ++i)
    orch.submit_task(0, PTO_CORE_AIV, {pto::Arg::inout(x), pto::Arg::i64(x.numel())});
}
"""


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> pto.ChipCallable:
    tmp: Path = tmp_path_factory.mktemp("timing")
    kc = pto.KernelCompiler("a2a3sim")
    (tmp / "orch.cpp").write_text(ORCH % TASKS)
    (tmp / "bump.cpp").write_text(BUMP)
    c = pto.ChipCallable(kc.compile_orchestration("tensormap_and_ringbuffer", tmp / "orch.cpp"))
    c.add_kernel(0, pto.CoreType.AIV, kc.compile_incore(tmp / "bump.cpp", pto.CoreType.AIV))
    return c


@pytest.fixture(scope="module")
def worker():
    with pto.Worker(level=2, platform="a2a3sim", runtime="tensormap_and_ringbuffer") as w:
        yield w


def run(worker: pto.Worker, chain: pto.ChipCallable, **config: object) -> pto.RunStats:
    args = pto.ChipStorageTaskArgs()
    x = np.zeros(N, dtype=np.float32)
    args.add_tensor(x, pto.Direction.INOUT)
    stats = worker.run(chain, args, pto.ChipCallConfig(block_dim=2, **config))
    np.testing.assert_array_equal(x, np.full(N, TASKS, dtype=np.float32))
    return stats


def test_a_costed_chain_predicts_its_makespan_and_utilisation(worker, chain, monkeypatch):
    monkeypatch.setenv("PTO_SIM_KERNEL_COSTS", f"0={COST_NS}")
    a = run(worker, chain, sim_seed=3, sim_timing=True)
    b = run(worker, chain, sim_seed=3, sim_timing=True)
    assert a.predicted_makespan_us == b.predicted_makespan_us  # same seed, same virtual time
    # The chain runs one task at a time: the makespan is the work plus the hand-offs between tasks.
    work_us = TASKS * COST_NS / 1e3
    assert work_us < a.predicted_makespan_us < work_us * 1.5, a
    busy = [c for c in a.cores if c.tasks > 0]
    assert sum(c.tasks for c in busy) == TASKS
    assert sum(c.busy_us for c in busy) == pytest.approx(work_us)
    for c in busy:
        assert c.predicted_utilisation == pytest.approx(c.busy_us / a.predicted_makespan_us)


def test_untimed_runs_predict_nothing(worker, chain):
    stats = run(worker, chain, sim_seed=3)
    assert stats.predicted_makespan_us == 0
    assert all(c.predicted_utilisation == 0 for c in stats.cores)


def test_timing_without_a_seed_is_a_typed_error_and_the_worker_stays_usable(worker, chain):
    with pytest.raises(pto.InvalidArgumentError, match="sim_timing.*sim_seed|sim_seed.*sim_timing"):
        run(worker, chain, sim_timing=True)
    run(worker, chain)


def test_the_timing_example_predicts_the_same_schedule_in_two_processes(repo_root, tmp_path):
    """examples/timing: both runs match NumPy, the pages are written, and with a cost table the
    predicted makespan of a seed is the same number in two processes."""
    lines = []
    for i in range(2):
        out = tmp_path / str(i)
        costs = "0=3000,1=5000,2=2000"
        result = subprocess.run(
            [sys.executable, str(repo_root / "examples" / "timing" / "main.py"), "-o", str(out),
             "--seed", "7", "--kernel-costs", costs],
            capture_output=True, text=True, encoding="utf-8", timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        success = [ln for ln in result.stdout.splitlines() if ln.startswith("✓ SUCCESS: ")]
        assert success, result.stdout
        lines.append(success[0])
        for page in ("measured", "predicted", "compare"):
            assert (out / f"softmax.{page}.html").stat().st_size > 0
    assert lines[0] == lines[1]
    # 96 tasks of 2-5 us on 16 AIV cores: at least the work spread evenly over the cores.
    predicted = float(lines[0].rsplit("makespan", 1)[1].split()[0])
    assert predicted >= 32 * (3 + 5 + 2) / 16
