"""tests/python/test_isolated.py — Worker(level=2, isolate=True): the chip in a child process, so a
kernel that segfaults fails its run with TaskFailedError and this process goes on."""

from __future__ import annotations

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable

SEGV_ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  (void)args;
  g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});
}
"""

SEGV_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL(args) {
  volatile int64_t *p = reinterpret_cast<volatile int64_t *>(args[0]);
  *p = 1;
}
"""


def basic_args(n: int = 1024) -> tuple[pto.ChipStorageTaskArgs, np.ndarray, np.ndarray]:
    a = np.full(n, 2.0, np.float32)
    b = np.full(n, 3.0, np.float32)
    f = np.zeros(n, np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a, "in")
    args.add_tensor(b, "in")
    args.add_tensor(f, "out")
    return args, a, f


@pytest.fixture(scope="module")
def isolated():
    with pto.Worker(level=2, isolate=True, device_id=7) as w:
        yield w


def test_isolated_run_copies_outputs_back(isolated: pto.IsolatedChipWorker) -> None:
    args, a, f = basic_args()
    stats = isolated.run(basic_callable("host_build_graph"), args)
    assert stats.chip_tasks == 1 and stats.failed_tasks == 0
    assert (f == 42.0).all()
    assert (a == 2.0).all()


def test_a_segfaulting_kernel_fails_the_run_and_the_process_lives(
    isolated: pto.IsolatedChipWorker,
) -> None:
    kc = pto.KernelCompiler("a2a3sim")
    c = pto.ChipCallable(
        kc.compile_orchestration_source("host_build_graph", SEGV_ORCH, "segv_orch")
    )
    c.add_kernel(
        0, pto.CoreType.AIV, kc.compile_incore_source(SEGV_KERNEL, "segv", pto.CoreType.AIV)
    )
    before = isolated.chip_pid()
    args = pto.ChipStorageTaskArgs()
    with pytest.raises(pto.TaskFailedError, match="killed by signal 11"):
        isolated.run(c, args)
    # The chip process was replaced and serves the next run.
    args, _, f = basic_args()
    isolated.run(basic_callable("host_build_graph"), args)
    assert (f == 42.0).all()
    assert isolated.chip_pid() != before


WRITE_THEN_FAIL_ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) { g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of(args.tensor(0))}); }
"""

WRITE_THEN_FAIL_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL(args) {
  *pto::tensor<float>(args, 0) = 7.0f;
  pto::fail(args, 3);
}
"""


def test_outputs_are_left_alone_when_the_run_fails(isolated: pto.IsolatedChipWorker) -> None:
    kc = pto.KernelCompiler("a2a3sim")
    c = pto.ChipCallable(
        kc.compile_orchestration_source("host_build_graph", WRITE_THEN_FAIL_ORCH, "wtf_orch")
    )
    c.add_kernel(
        0,
        pto.CoreType.AIV,
        kc.compile_incore_source(WRITE_THEN_FAIL_KERNEL, "wtf", pto.CoreType.AIV),
    )
    f = np.full(4, -1.0, np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(f, "out")
    with pytest.raises(pto.TaskFailedError):
        isolated.run(c, args)
    assert (f == -1.0).all()  # the failed run's writes stay in its heap copy
    args, _, f = basic_args()
    isolated.run(basic_callable("host_build_graph"), args)
    assert (f == 42.0).all()


@pytest.mark.parametrize("call", ["start", "poll", "wait", "abort", "last_trace", "prewarm"])
def test_calls_an_isolated_worker_cannot_serve_say_so(
    isolated: pto.IsolatedChipWorker, call: str
) -> None:
    with pytest.raises(
        pto.NotSupportedError, match=f"ChipWorker.{call} is not supported with isolate=True"
    ):
        getattr(isolated, call)()


def test_raw_addresses_cannot_be_isolated(isolated: pto.IsolatedChipWorker) -> None:
    args = pto.ChipStorageTaskArgs()
    x = np.zeros(4, np.float32)
    args.add_host_tensor(x.ctypes.data, x.nbytes, pto.DType.FLOAT32, [4], pto.Direction.OUTPUT)
    with pytest.raises(pto.InvalidArgumentError, match="raw add_host_tensor"):
        isolated.run(basic_callable("host_build_graph"), args)


def test_isolate_is_an_option_of_level_2_only() -> None:
    with pytest.raises(pto.InvalidArgumentError, match="isolate is an option of level 2"):
        pto.Worker(level=3, isolate=True)


def test_a_finalized_isolated_worker_says_so() -> None:
    w = pto.Worker(level=2, isolate=True, device_id=8)
    w.finalize()
    w.finalize()
    args, _, _ = basic_args()
    with pytest.raises(pto.DeviceError, match="ChipWorker.run: the worker is finalized"):
        w.run(basic_callable("host_build_graph"), args)
