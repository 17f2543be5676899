"""examples/l3_data_parallel/main.py — data parallel on 4 simulated chips, then a host reduction.

Usage: python examples/l3_data_parallel/main.py [--mode thread|process] [-p a2a3sim|a5sim]

x is split into one shard per chip. Each chip runs the tiled graph of examples/vector on its
shard (per chunk: t = a*x + b, then y = relu(t); tensormap_and_ringbuffer runtime), and a host
SUB task reduces all shards to total = sum(y) once every chip task is done; the SUB task's
dependencies on the four chip tasks are inferred from the arrays it reads. Checks y and total
against NumPy. In process mode every chip is its own process and x, y live in the worker's
shared host heap (Worker.alloc), which every chip process sees at the same address.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
VECTOR = HERE.parent / "vector"  # the kernels and orchestration of the single-chip example
RUNTIME = "tensormap_and_ringbuffer"
CHIPS = 4
SHARD = 1 << 18  # float32 elements per chip
CHUNKS = 16  # tiles per shard
A, B = 1.5, -0.25


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # pto.ChipMode("process") is the member named so: argparse checks the name and converts it.
    p.add_argument(
        "--mode", default=pto.ChipMode.THREAD, type=pto.ChipMode, choices=list(pto.ChipMode)
    )
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    return p.parse_args(argv)


def build_callable(platform: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    callable_ = pto.ChipCallable(kc.compile_orchestration(RUNTIME, VECTOR / "orchestration.cpp"))
    for func_id, source in [(0, "kernel_axpb.cpp"), (1, "kernel_relu.cpp")]:
        binary = kc.compile_incore(VECTOR / "kernels" / source, pto.CoreType.AIV)
        callable_.add_kernel(func_id, pto.CoreType.AIV, binary)
    return callable_


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    print(f"=== l3_data_parallel: {CHIPS} chips x {SHARD} float32, mode {opts.mode} ===")
    callable_ = build_callable(opts.platform)  # compile before the worker forks its chips
    config = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=2)
    worker = pto.Worker(
        level=3,
        device_ids=list(range(CHIPS)),
        num_sub_workers=1,
        platform=opts.platform,
        runtime=RUNTIME,
        mode=opts.mode,
    )
    with worker:
        x = worker.alloc((CHIPS, SHARD), np.float32)
        y = worker.alloc((CHIPS, SHARD), np.float32)
        total = worker.alloc(1, np.float64)
        x[:] = np.random.default_rng(0).standard_normal((CHIPS, SHARD), dtype=np.float32)
        y[:] = np.nan

        def reduce(ctx: pto.SubContext) -> None:
            total[0] = y.sum(dtype=np.float64)

        def orchestration(o: pto.Orchestrator) -> None:
            for chip in range(CHIPS):
                args = pto.ChipStorageTaskArgs()
                args.add_tensor(x[chip], "in")
                args.add_tensor(y[chip], "out")
                args.add_scalar_f32(A)
                args.add_scalar_f32(B)
                args.add_scalar_i64(SHARD // CHUNKS)
                o.submit_chip(callable_, args, config, chip=chip, name=f"shard{chip}")
            o.submit_sub(reduce, inputs=[y], outputs=[total], name="reduce")

        stats = worker.run(orchestration, timeout=120)
        print(stats.table(), end="")

        expected = np.maximum(np.float32(A) * x + np.float32(B), np.float32(0))
        wrong = np.flatnonzero(~np.isclose(y, expected, rtol=1e-6, atol=1e-6))
        if wrong.size:
            i = int(wrong[0])
            print(f"✗ FAILED: y.flat[{i}] is {y.flat[i]}, expected {expected.flat[i]}")
            return 1
        want = expected.sum(dtype=np.float64)
        if not np.isclose(total[0], want, rtol=1e-9):
            print(f"✗ FAILED: total is {total[0]}, expected {want}")
            return 1
        if stats.chip_tasks != CHIPS or list(stats.tasks_per_chip) != [1] * CHIPS:
            print(f"✗ FAILED: expected one task per chip, got {list(stats.tasks_per_chip)}")
            return 1
    print(f"✓ SUCCESS: {CHIPS} shards of relu(a*x + b) and their sum ({want:.3f}) match NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
