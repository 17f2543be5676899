"""examples/l4_reduce/main.py — many hosts (L4): shards on each rank's chips, a cross-rank tree sum.

Usage: mpirun -n 4 --oversubscribe python examples/l4_reduce/main.py [-p a2a3sim|a5sim]
       (as root add --allow-run-as-root; `python examples/l4_reduce/main.py` alone is one rank)

The input x lives on rank 0 (SHARDS distributed arrays, valid there only). Shard s is processed
on rank s % size: the runtime moves x[s] there, a chip task computes y[s] = relu(a*x[s] + b)
(the tiled graph of examples/vector), and a SUB task sums y[s] into partial[s]. A binary tree of
SUB tasks then adds the partial sums across ranks, always in the same order, so the total is
the same bit for bit on any number of ranks. Every dependency and every message is inferred
from what the tasks read and write; no task calls MPI. Rank 0 checks y and the total against
NumPy and prints the SUCCESS line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
VECTOR = HERE.parent / "vector"  # the kernels and orchestration of the single-chip example
RUNTIME = "tensormap_and_ringbuffer"
SHARDS = 8
SHARD = 1 << 14  # float32 elements per shard
CHUNKS = 4  # tiles per shard
CHIPS = 2  # per rank
A, B = 1.5, -0.25


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
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
    callable_ = build_callable(opts.platform)
    config = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=2)
    with pto.Worker(
        level=4,
        device_ids=list(range(CHIPS)),
        num_sub_workers=2,
        platform=opts.platform,
        runtime=RUNTIME,
        peer_timeout=60,
    ) as w:
        if w.rank == 0:
            print(
                f"=== l4_reduce: {w.size} rank(s) x {CHIPS} chips, {SHARDS} shards of {SHARD} ==="
            )
        # Every rank allocates the same arrays in the same order; x is valid on rank 0 only.
        x = [w.alloc(SHARD, np.float32, name=f"x{s}", valid=0) for s in range(SHARDS)]
        y = [w.alloc(SHARD, np.float32, name=f"y{s}") for s in range(SHARDS)]
        partial = [w.alloc(1, np.float64, name=f"partial{s}") for s in range(SHARDS)]
        x_all = np.random.default_rng(0).standard_normal((SHARDS, SHARD), dtype=np.float32)
        if w.rank == 0:
            for s in range(SHARDS):
                x[s][:] = x_all[s]

        def shard_sum(s: int) -> Callable[[pto.SubContext], None]:
            def body(ctx: pto.SubContext) -> None:
                partial[s][0] = y[s].sum(dtype=np.float64)

            return body

        def add_into(dst: int, src: int) -> Callable[[pto.SubContext], None]:
            def body(ctx: pto.SubContext) -> None:
                partial[dst][0] += partial[src][0]

            return body

        def orchestration(o: pto.l4.Orchestrator) -> None:
            for s in range(SHARDS):
                home = s % o.size
                args = pto.ChipStorageTaskArgs()
                args.add_tensor(x[s], "in")
                args.add_tensor(y[s], "out")
                args.add_scalar_f32(A)
                args.add_scalar_f32(B)
                args.add_scalar_i64(SHARD // CHUNKS)
                o.submit_chip(callable_, args, config, rank=home, name=f"relu(ax+b) shard {s}")
                o.submit_sub(
                    shard_sum(s), inputs=[y[s]], outputs=[partial[s]], rank=home, name=f"sum {s}"
                )
            step = 1
            while step < SHARDS:  # the same tree on any number of ranks
                for s in range(0, SHARDS, 2 * step):
                    o.submit_sub(
                        add_into(s, s + step),
                        inputs=[partial[s + step]],
                        inouts=[partial[s]],
                        rank=s % o.size,
                        name=f"partial{s} += partial{s + step}",
                    )
                step *= 2
            for s in range(SHARDS):
                o.fetch(y[s], rank=0)  # rank 0 checks every element
            o.fetch(partial[0], rank=0)

        stats = w.run(orchestration, timeout=300)
        if w.rank != 0:
            return 0  # only rank 0 prints: mpirun may interleave the ranks' lines
        counts = w.transfers
        moves = counts["sends"] + counts["recvs"]
        print(
            f"rank 0 ran {counts['tasks']} tasks ({stats.chip_tasks} chip, "
            f"{stats.sub_tasks - moves} SUB) and {counts['sends']} sends + {counts['recvs']} "
            "receives of the transfers"
        )
        expected = np.maximum(np.float32(A) * x_all + np.float32(B), np.float32(0))
        for s in range(SHARDS):
            wrong = np.flatnonzero(~np.isclose(y[s], expected[s], rtol=1e-6, atol=1e-6))
            if wrong.size:
                i = int(wrong[0])
                print(f"✗ FAILED: y{s}[{i}] is {y[s][i]}, expected {expected[s][i]}")
                return 1
        want = expected.sum(dtype=np.float64)
        total = float(partial[0][0])
        if not np.isclose(total, want, rtol=1e-9):
            print(f"✗ FAILED: total is {total}, expected {want}")
            return 1
    print(
        f"✓ SUCCESS: {SHARDS} shards of relu(a*x + b) on {w.size} rank(s) and their tree sum "
        f"({total!r}) match NumPy"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
