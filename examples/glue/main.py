"""examples/glue/main.py — thin glue: one kernel list, one binary, a TaskBuilder orchestration.

Usage: python examples/glue/main.py [-p a2a3sim|a5sim] [--tiles T] [--aicpu-threads N] [--profile]

kernels.h lists three kernels once (KERNEL_LIST); kernels.cpp links all three into one binary
whose dispatch switch picks the kernel by id; orchestration.cpp builds f = s * (a + b)^2 tile by
tile with TaskBuilder. CompileOptions(target="cpu_sim") configures both the compile and the run.
The result is checked against NumPy; with --profile the trace names every task by its kernel.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
N = 8192
SCALE = 2.5


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("--tiles", type=int, default=8, help="tiles (each 3 tasks); must divide 8192")
    p.add_argument("--aicpu-threads", type=int, default=2, help="AICPU threads (default 2)")
    p.add_argument("--profile", action="store_true", help="record a trace and print its kernels")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    options = pto.CompileOptions(
        target="cpu_sim",
        platform=opts.platform,
        profiling=opts.profile,
        aicpu_threads=opts.aicpu_threads,
    )
    kc = options.kernel_compiler()
    program = kc.compile_incore(HERE / "kernels.cpp", pto.CoreType.AIV)
    callable_ = pto.ChipCallable(
        kc.compile_orchestration("tensormap_and_ringbuffer", HERE / "orchestration.cpp")
    )
    callable_.add_kernels(program)
    names = [k.name for k in pto.read_kernel_table(program)]
    print(f"kernel program: {len(names)} kernels in one binary: {', '.join(names)}")

    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    f = np.zeros(N, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a, pto.Direction.INPUT)
    args.add_tensor(b, pto.Direction.INPUT)
    args.add_tensor(f, pto.Direction.OUTPUT)
    args.add_scalar(opts.tiles)
    args.add_scalar_f32(SCALE)  # a float32 scalar travels as its bits

    with pto.Worker(
        level=2, platform=options.resolved_platform, runtime="tensormap_and_ringbuffer"
    ) as worker:
        stats = worker.run(callable_, args, options.call_config(pto.ChipCallConfig(block_dim=4)))
        raw = worker.last_trace() if opts.profile else None
        trace = pto.Trace.from_dict(raw) if raw is not None else None

    sum_ = a + b
    expected = (sum_ * np.float32(SCALE)) * sum_
    if not np.allclose(f, expected, rtol=1e-6, atol=1e-6):
        bad = int(np.flatnonzero(~np.isclose(f, expected, rtol=1e-6, atol=1e-6))[0])
        print(f"✗ FAILED: element {bad} is {f[bad]}, expected {expected[bad]}")
        return 1
    if trace is not None:
        used = sorted({trace.kernel_name(t.func) for t in trace.tasks})
        print(f"trace: {len(trace.tasks)} tasks, kernels {', '.join(used)}")
    print(
        f"✓ SUCCESS: {N} elements of s * (a + b)^2 match NumPy "
        f"({opts.tiles} tiles, {stats.tasks_run} tasks)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
