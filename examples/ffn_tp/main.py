"""examples/ffn_tp/main.py — a tensor-parallel FFN layer on simulated chips, then an all-reduce.

Usage: python examples/ffn_tp/main.py [--chips 2 4 8] [--mode thread process] [-p a2a3sim]

y = relu(x @ w1) @ w2 with the hidden width split across the chips (Megatron-style): chip r
holds columns r*S..(r+1)*S of w1 and the same rows of w2, computes its partial y_r (its own
kernel, kernels/ffn_shard.cpp), and a ring all-reduce through a communication domain
(examples/allreduce) leaves y = sum of the y_r on every chip. The L3 worker orders each
chip's all-reduce after its FFN task by itself: the all-reduce reads the y_r the FFN task
wrote. Checked against NumPy (float32; the chips sum in another order than NumPy's BLAS).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
RUNTIME = "host_build_graph"
T, D, F = 16, 128, 512  # tokens, model width, hidden width


def allreduce_example() -> ModuleType:
    """examples/allreduce/main.py, whose all-reduce this example reuses."""
    spec = importlib.util.spec_from_file_location(
        "allreduce_example", HERE.parent / "allreduce/main.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def build_ffn(platform: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    c = pto.ChipCallable(
        kc.compile_orchestration(RUNTIME, HERE.parent / "allreduce/orchestration.cpp")
    )
    c.add_kernel(
        0, pto.CoreType.AIV, kc.compile_incore(HERE / "kernels/ffn_shard.cpp", pto.CoreType.AIV)
    )
    return c


def run(
    ffn: pto.ChipCallable,
    allreduce: pto.ChipCallable,
    ar: ModuleType,
    platform: str,
    chips: int,
    mode: str,
) -> float:
    """The layer on ``chips`` chips; returns the largest relative difference from NumPy."""
    rng = np.random.default_rng(chips)
    S = F // chips
    with pto.Worker(level=3, device_ids=list(range(chips)), num_sub_workers=0, platform=platform,
                    runtime=RUNTIME, mode=mode) as w:  # fmt: skip
        x = w.alloc((T, D))
        x[:] = rng.standard_normal((T, D), dtype=np.float32)
        w1 = rng.standard_normal((D, F), dtype=np.float32) / np.sqrt(D)
        w2 = rng.standard_normal((F, D), dtype=np.float32) / np.sqrt(F)
        w1s, w2s, parts, ys = [], [], [], []
        for r in range(chips):
            w1s.append(w.alloc((D, S)))
            w1s[r][:] = w1[:, r * S : (r + 1) * S]
            w2s.append(w.alloc((S, D)))
            w2s[r][:] = w2[r * S : (r + 1) * S, :]
            parts.append(w.alloc((T, D)))
            ys.append(w.alloc((T, D)))
        config = pto.ChipCallConfig(block_dim=1, aicpu_thread_num=1)
        flat = [p.reshape(-1) for p in parts]
        outs = [[y.reshape(-1) for y in ys]]
        reduce = ar.allreduce_orch(allreduce, "ring", flat, outs, list(range(chips)), config)

        def orch(o: pto.Orchestrator) -> None:
            for r in range(chips):
                args = pto.ChipStorageTaskArgs()
                for a, d in ((x, "in"), (w1s[r], "in"), (w2s[r], "in"), (parts[r], "out")):
                    args.add_tensor(a, d)
                for v in (T, D, S):
                    args.add_scalar(v)
                o.submit_chip(ffn, args, config, chip=r, name=f"ffn{r}")
            reduce(o)  # one group; each part after its chip's FFN task (it reads parts[r])

        w.run(orch)
        want = np.maximum(x @ w1, 0) @ w2
        scale = float(np.max(np.abs(want)))
        return max(float(np.max(np.abs(y - want))) / scale for y in ys)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chips", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument(
        "--mode", nargs="+", default=["thread", "process"], choices=["thread", "process"]
    )
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    opts = p.parse_args(argv)
    ar = allreduce_example()
    ffn = build_ffn(opts.platform)
    allreduce = ar.build_callables(opts.platform)["ring"]
    failed = 0
    for mode in opts.mode:
        for chips in opts.chips:
            err = run(ffn, allreduce, ar, opts.platform, chips, mode)
            ok = err < 1e-5
            failed += not ok
            verdict = "OK" if ok else "MISMATCH"
            print(
                f"{mode:7s} FFN {T}x{D}x{F} on {chips} chips: {verdict} (max rel. diff {err:.2e})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
