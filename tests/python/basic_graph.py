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
