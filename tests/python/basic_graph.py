"""tests/python/basic_graph.py — the basic example's callable, shared by the Python test modules."""

from __future__ import annotations

from pathlib import Path

import pto_runtime as pto

BASIC = Path(__file__).resolve().parents[2] / "examples" / "basic"


def basic_callable(runtime: str) -> pto.ChipCallable:
    """(a + b + 1)(a + b + 2) from examples/basic: kernels 0..2 on AIV, either runtime."""
    kc = pto.KernelCompiler("a2a3sim")
    orch = "orchestration.cpp" if runtime == "host_build_graph" else "orchestration_tmr.cpp"
    c = pto.ChipCallable(kc.compile_orchestration(runtime, BASIC / orch))
    for func_id, name in enumerate(["kernel_add", "kernel_add_scalar", "kernel_mul"]):
        binary = kc.compile_incore(BASIC / "kernels" / f"{name}.cpp", pto.CoreType.AIV)
        c.add_kernel(func_id, pto.CoreType.AIV, binary)
    return c


def run_basic(worker: pto.ChipWorker, runtime: str = "host_build_graph", n: int = 1024) -> bool:
    """Runs the basic example on `worker`: True when every output is (2 + 3 + 1)(2 + 3 + 2) = 42.

    The bad-input tests call it after each error to show the worker is still usable.
    """
    import numpy as np

    a = np.full(n, 2.0, dtype=np.float32)
    b = np.full(n, 3.0, dtype=np.float32)
    f = np.zeros(n, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a, pto.Direction.INPUT)
    args.add_tensor(b, pto.Direction.INPUT)
    args.add_tensor(f, pto.Direction.OUTPUT)
    worker.run(basic_callable(runtime), args)
    return bool((f == 42.0).all())
