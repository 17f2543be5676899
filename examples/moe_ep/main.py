"""examples/moe_ep/main.py — mixture-of-experts dispatch and combine across expert-parallel chips.

Usage: python examples/moe_ep/main.py [--chips 2 4 8] [--mode thread process] [-p a2a3sim]

One expert per chip. Every chip holds T tokens and a router's choice of expert for each; one
kernel per chip (kernels/moe_dispatch_combine.cpp) sends each token to its expert's chip through
a communication domain, applies its own expert (y = x * (e + 1) + e / 2) to what it received and
sends each result back to the token's chip, in the token's place. Checked against NumPy bit for
bit; the routing is random, so chips receive different numbers of tokens.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
RUNTIME = "host_build_graph"
T, D = 32, 64  # tokens per chip, hidden width


def build(platform: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    orch = kc.compile_orchestration(RUNTIME, HERE.parent / "allreduce/orchestration.cpp")
    c = pto.ChipCallable(orch)
    kernel = kc.compile_incore(HERE / "kernels/moe_dispatch_combine.cpp", pto.CoreType.AIV)
    c.add_kernel(0, pto.CoreType.AIV, kernel)
    return c


def run(callable_: pto.ChipCallable, platform: str, chips: int, mode: str) -> int:
    """Dispatch and combine on ``chips`` chips; returns the number of tokens that differ."""
    rng = np.random.default_rng(chips)
    with pto.Worker(level=3, device_ids=list(range(chips)), num_sub_workers=0, platform=platform,
                    runtime=RUNTIME, mode=mode) as w:  # fmt: skip
        xs, routes, outs = [], [], []
        for _ in range(chips):
            xs.append(w.alloc((T, D)))
            xs[-1][:] = rng.standard_normal((T, D), dtype=np.float32)
            routes.append(w.alloc(T, np.int32))
            routes[-1][:] = rng.integers(0, chips, T, dtype=np.int32)
            outs.append(w.alloc((T, D)))
        buffers = [
            pto.CommBufferSpec("recv", "float32", chips * T * D),
            pto.CommBufferSpec("ids", "int32", chips * T),
            pto.CommBufferSpec("counts", "int32", chips),
            pto.CommBufferSpec("back", "float32", T * D),
            pto.CommBufferSpec("flags", "int32", 2),
        ]
        window = 4 * (chips * T * D + chips * T + chips + T * D + 2)
        config = pto.ChipCallConfig(block_dim=1, aicpu_thread_num=1)

        def orch(o: pto.Orchestrator) -> None:
            with o.allocate_domain("ep", list(range(chips)), window, buffers) as domain:
                parts = []
                for r in range(chips):
                    ctx = domain[r]
                    args = pto.ChipStorageTaskArgs()
                    args.add_tensor(xs[r], "in")
                    args.add_tensor(routes[r], "in")
                    args.add_tensor(outs[r], "out")
                    for name in ("recv", "ids", "counts", "back", "flags"):
                        args.add_tensor(ctx.buffers[name].tensor(), "inout")
                    for v in (T, D, ctx.device_ctx):
                        args.add_scalar(v)
                    parts.append(args)
                o.submit_chip_group(callable_, parts, config, chips=list(range(chips)))

        w.run(orch)
        bad = 0
        for x, route, out in zip(xs, routes, outs):
            e = route.astype(np.float32)[:, None]
            want = x * (e + np.float32(1)) + e * np.float32(0.5)
            bad += int(np.sum(np.any(out != want, axis=1)))
        return bad


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chips", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument(
        "--mode", nargs="+", default=["thread", "process"], choices=["thread", "process"]
    )
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    opts = p.parse_args(argv)
    callable_ = build(opts.platform)
    failed = 0
    for mode in opts.mode:
        for chips in opts.chips:
            bad = run(callable_, opts.platform, chips, mode)
            failed += bad != 0
            verdict = "OK" if bad == 0 else f"{bad} tokens differ"
            print(f"{mode:7s} MoE dispatch/combine, {chips} experts x {T} tokens x {D}: {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
