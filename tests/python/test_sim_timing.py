"""tests/python/test_sim_timing.py — ChipCallConfig.sim_timing from Python: a seeded run in
virtual time returns the predicted device makespan and each core's predicted utilisation
(docs/sim_execution.md, "Timing mode")."""

from __future__ import annotations

import os
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
