"""examples/allreduce/main.py — all-reduce across simulated chips through a communication domain.

Usage: python examples/allreduce/main.py [--chips 2 4 8] [--mode thread process]
                                         [--algorithm mesh ring twophase] [-n 65536] [-p a2a3sim]

Each chip holds a float32 vector; afterwards every chip holds the sum of all of them. The
orchestration allocates a domain over the chips (a window per chip that all of them can read and
write) and submits one chip task per chip as a group; the kernels move the data through the
windows and synchronise with PTO-ISA's TNOTIFY and TWAIT:
  - mesh (kernels/allreduce_mesh.cpp): every rank publishes its vector, then sums all of them;
  - ring (kernels/allreduce_ring.cpp): reduce-scatter then all-gather around the ring;
  - twophase (kernels/allreduce_twophase.cpp): every rank sums one chunk of every rank's
    window, then copies the other chunks' sums from their owners' windows.
Every run does two all-reduces in one domain (epochs 1 and 2: the flags only grow), and checks
each chip's result against NumPy bit for bit (the kernels sum in a fixed order NumPy mirrors).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
RUNTIME = "host_build_graph"
ALGORITHMS = ("mesh", "ring", "twophase")


def build_callables(platform: str) -> dict[str, pto.ChipCallable]:
    """One ChipCallable per algorithm (the orchestration is the same one-task program)."""
    kc = pto.KernelCompiler(platform)
    orch = kc.compile_orchestration(RUNTIME, HERE / "orchestration.cpp")
    out = {}
    for name in ALGORITHMS:
        c = pto.ChipCallable(orch)
        c.add_kernel(
            0,
            pto.CoreType.AIV,
            kc.compile_incore(HERE / "kernels" / f"allreduce_{name}.cpp", pto.CoreType.AIV),
        )
        out[name] = c
    return out


def window_layout(algorithm: str, ranks: int, n: int) -> tuple[int, list[pto.CommBufferSpec]]:
    """The window size and the buffers ``algorithm`` needs for ``n`` floats on ``ranks`` chips."""
    if algorithm == "mesh":
        data, flags = n, 2 * ranks
    elif algorithm == "twophase":
        data, flags = n, 3 * ranks
    else:
        data, flags = 2 * (ranks - 1) * (n // ranks), 2 * (ranks - 1) + 1
    buffers = [
        pto.CommBufferSpec("data", "float32", data),
        pto.CommBufferSpec("flags", "int32", flags),
    ]
    return data * 4 + flags * 4, buffers


def allreduce_orch(
    callable_: pto.ChipCallable,
    algorithm: str,
    inputs: list[np.ndarray],
    outputs: list[list[np.ndarray]],
    chips: list[int],
    config: pto.ChipCallConfig | None = None,
) -> Callable[[pto.Orchestrator], None]:
    """An orchestration function: one domain over ``chips``, then one all-reduce per entry of
    ``outputs`` (``outputs[e][r]``: rank r's result of epoch e + 1), each a chip group."""
    ranks, n = len(chips), inputs[0].size

    def orch(o: pto.Orchestrator) -> None:
        size, buffers = window_layout(algorithm, ranks, n)
        with o.allocate_domain("allreduce", chips, size, buffers) as domain:
            for epoch, outs in enumerate(outputs, start=1):
                parts = []
                for rank, chip in enumerate(chips):
                    ctx = domain[chip]
                    args = pto.ChipStorageTaskArgs()
                    args.add_tensor(inputs[rank], "in")
                    args.add_tensor(outs[rank], "out")
                    args.add_tensor(ctx.buffers["data"].tensor(), "inout")
                    args.add_tensor(ctx.buffers["flags"].tensor(), "inout")
                    args.add_scalar(n)
                    args.add_scalar(ctx.device_ctx)
                    args.add_scalar(epoch)
                    parts.append(args)
                o.submit_chip_group(
                    callable_, parts, config, chips=chips, name=f"{algorithm}{epoch}"
                )

    return orch


def expected(algorithm: str, inputs: list[np.ndarray]) -> np.ndarray:
    """The all-reduce in the kernels' order of additions, in float32."""
    ranks = len(inputs)
    if algorithm in ("mesh", "twophase"):  # in_0 + in_1 + ... everywhere
        acc = inputs[0].copy()
        for x in inputs[1:]:
            acc += x
        return acc
    chunk = inputs[0].size // ranks
    out = np.empty_like(inputs[0])
    for k in range(ranks):  # chunk k: in_k + in_(k+1) + ... around the ring
        part = slice(k * chunk, (k + 1) * chunk)
        acc = inputs[k][part].copy()
        for j in range(1, ranks):
            acc = inputs[(k + j) % ranks][part] + acc
        out[part] = acc
    return out


def run(
    callables: dict[str, pto.ChipCallable],
    platform: str,
    chips: int,
    mode: str,
    algorithm: str,
    n: int,
    epochs: int = 2,
) -> float:
    """Runs ``epochs`` all-reduces of ``n`` floats on ``chips`` chips; returns the largest
    difference from NumPy (0.0 when every chip agrees bit for bit) and raises on an error."""
    rng = np.random.default_rng(chips * 7 + n)
    with pto.Worker(level=3, device_ids=list(range(chips)), num_sub_workers=0, platform=platform,
                    runtime=RUNTIME, mode=mode) as w:  # fmt: skip
        inputs = [w.alloc(n) for _ in range(chips)]  # the host heap: chip processes see it too
        for x in inputs:
            x[:] = rng.standard_normal(n, dtype=np.float32)
        outputs = [[w.alloc(n) for _ in range(chips)] for _ in range(epochs)]
        config = pto.ChipCallConfig(block_dim=1, aicpu_thread_num=1)
        w.run(
            allreduce_orch(
                callables[algorithm], algorithm, inputs, outputs, list(range(chips)), config
            )
        )
        want = expected(algorithm, inputs)
        return max(float(np.max(np.abs(out - want))) for outs in outputs for out in outs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chips", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument(
        "--mode", nargs="+", default=["thread", "process"], choices=["thread", "process"]
    )
    p.add_argument("--algorithm", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    p.add_argument("-n", type=int, default=1 << 16, help="float32 elements per chip")
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    opts = p.parse_args(argv)
    callables = build_callables(opts.platform)  # compiled before any worker forks its chips
    failed = 0
    for mode in opts.mode:
        for algorithm in opts.algorithm:
            for chips in opts.chips:
                if algorithm == "ring" and opts.n % chips:
                    print(f"skip {algorithm} on {chips} chips: n = {opts.n} is not a multiple")
                    continue
                diff = run(callables, opts.platform, chips, mode, algorithm, opts.n)
                ok = diff == 0.0
                failed += not ok
                print(f"{mode:7s} {algorithm:4s} {chips} chips x {opts.n} float32: "
                      f"{'OK' if ok else 'MISMATCH'} (max |diff| {diff:g})")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
