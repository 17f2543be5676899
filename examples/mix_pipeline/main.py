"""examples/mix_pipeline/main.py — AIC -> AIV tile pipeline inside MIX tasks: softmax(q k^T) (TMR).

Usage: python examples/mix_pipeline/main.py [-p a2a3sim|a5sim] [--block-dim N] [--aicpu-threads N]

One MIX task per block of query rows runs on a whole cluster: its AIC part computes score
tiles s = q k^T and pushes them through two MIX pipes (pto::pipe_push), its two AIV parts pop
them (pto::pipe_pop) and write the row softmax. Full pipes suspend the AIC part, empty ones
the AIV parts (docs/design/mix_sync.md). Checks the result against NumPy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
RUNTIME = "tensormap_and_ringbuffer"
M, N, D = 256, 256, 64  # queries, keys, head dimension
BLOCK_ROWS = 32  # query rows per MIX task: 4 tiles of 8 rows
RTOL, ATOL = 1e-4, 1e-7  # float32 dot products of 64 terms, expf, a 256-term sum per row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("--block-dim", type=int, default=4, help="clusters used (default 4)")
    p.add_argument("--aicpu-threads", type=int, default=3, help="AICPU threads (default 3)")
    return p.parse_args(argv)


def build_callable(platform: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    callable_ = pto.ChipCallable(kc.compile_orchestration(RUNTIME, HERE / "orchestration.cpp"))
    kernel = kc.compile_incore(HERE / "kernels" / "kernel_scores_softmax.cpp", pto.CoreType.MIX)
    callable_.add_kernel(0, pto.CoreType.MIX, kernel)
    return callable_


def reference(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    s = q.astype(np.float64) @ k.astype(np.float64).T
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def first_mismatch(got: np.ndarray, expected: np.ndarray) -> tuple[int, ...] | None:
    wrong = np.argwhere(~np.isclose(got, expected, rtol=RTOL, atol=ATOL))
    return tuple(int(i) for i in wrong[0]) if wrong.size else None


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    tasks = M // BLOCK_ROWS
    print(f"=== mix_pipeline: softmax(q k^T), q {M}x{D}, k {N}x{D}, {tasks} MIX tasks ===")
    print(
        f"platform {opts.platform}, block_dim {opts.block_dim}, aicpu_threads {opts.aicpu_threads}"
    )

    callable_ = build_callable(opts.platform)
    rng = np.random.default_rng(0)
    q = (0.25 * rng.standard_normal((M, D))).astype(np.float32)
    k = (0.25 * rng.standard_normal((N, D))).astype(np.float32)
    out = np.zeros((M, N), dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(q, pto.Direction.INPUT)
    args.add_tensor(k, pto.Direction.INPUT)
    args.add_tensor(out, pto.Direction.OUTPUT)
    args.add_scalar_i64(BLOCK_ROWS)
    config = pto.ChipCallConfig(block_dim=opts.block_dim, aicpu_thread_num=opts.aicpu_threads)

    with pto.Worker(level=2, platform=opts.platform, runtime=RUNTIME) as worker:
        stats = worker.run(callable_, args, config)
    print(f"ran {stats.mix_tasks} MIX tasks in {stats.device_us / 1e3:.1f} ms on the device")

    expected = reference(q, k)
    bad = first_mismatch(out, expected)
    if bad is not None:
        print(f"✗ FAILED: out[{bad[0]}, {bad[1]}] is {out[bad]}, expected {expected[bad]}")
        return 1
    print(f"✓ SUCCESS: all {M}x{N} elements match NumPy softmax(q k^T) (rtol {RTOL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
