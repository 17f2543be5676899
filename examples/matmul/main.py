"""examples/matmul/main.py — tiled C = A @ B on cube and vector cores (TMR runtime).

Usage: python examples/matmul/main.py [-p a2a3sim|a5sim] [--block-dim N] [--aicpu-threads N]

For each output tile C[i,j] the device orchestration submits, per k, an AIC task computing
P_k = A[i,k] @ B[k,j] into a scoped heap temp and an AIV task adding P_k into C[i,j]. The runtime
infers that the GEMMs are independent and that the adds into one tile are ordered. Checks C
against NumPy's A @ B.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
RUNTIME = "tensormap_and_ringbuffer"
M = N = K = 256
TILE_M = TILE_N = TILE_K = 64
KERNELS = [  # (func_id, core type, source): the ids the orchestration uses
    (0, pto.CoreType.AIC, "kernel_gemm.cpp"),
    (1, pto.CoreType.AIV, "kernel_add_tile.cpp"),
]
RTOL, ATOL = 1e-4, 1e-4  # float32 sums of K products, in a different order than BLAS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("--block-dim", type=int, default=1, help="clusters used (default 1)")
    p.add_argument("--aicpu-threads", type=int, default=1, help="AICPU threads (default 1)")
    p.add_argument(
        "--profile",
        metavar="DIR",
        help="record a trace and write DIR/trace.json, trace.chrome.json and trace.html",
    )
    return p.parse_args(argv)


def build_callable(platform: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    callable_ = pto.ChipCallable(kc.compile_orchestration(RUNTIME, HERE / "orchestration.cpp"))
    for func_id, core_type, source in KERNELS:
        callable_.add_kernel(
            func_id, core_type, kc.compile_incore(HERE / "kernels" / source, core_type)
        )
    return callable_


def first_mismatch(got: np.ndarray, expected: np.ndarray) -> tuple[int, ...] | None:
    wrong = np.argwhere(~np.isclose(got, expected, rtol=RTOL, atol=ATOL))
    return tuple(int(i) for i in wrong[0]) if wrong.size else None


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    print(f"=== matmul: C = A @ B, M={M} N={N} K={K}, tiles {TILE_M}x{TILE_N}x{TILE_K} ===")
    print(
        f"platform {opts.platform}, block_dim {opts.block_dim}, aicpu_threads {opts.aicpu_threads}"
    )

    callable_ = build_callable(opts.platform)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    c = np.zeros((M, N), dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a, pto.Direction.INPUT)
    args.add_tensor(b, pto.Direction.INPUT)
    args.add_tensor(c, pto.Direction.OUTPUT)
    for tile in (TILE_M, TILE_N, TILE_K):
        args.add_scalar_i64(tile)
    config = pto.ChipCallConfig(
        block_dim=opts.block_dim,
        aicpu_thread_num=opts.aicpu_threads,
        enable_profiling=opts.profile is not None,
    )

    with pto.Worker(level=2, platform=opts.platform, runtime=RUNTIME) as worker:
        stats = worker.run(callable_, args, config)
        trace = worker.last_trace()
    if opts.profile:
        assert trace is not None  # the run had enable_profiling
        out = Path(opts.profile)
        out.mkdir(parents=True, exist_ok=True)
        t = pto.Trace.from_dict(trace)
        t.save(out / "trace.json")
        t.save_chrome_trace(out / "trace.chrome.json")
        t.render_html(out / "trace.html")
        print(t.summary())
        print(f"trace written to {out}/ (open trace.html, or trace.chrome.json in ui.perfetto.dev)")
    print(
        f"ran {stats.tasks_run} tasks ({stats.aic_tasks} AIC, {stats.aiv_tasks} AIV) "
        f"in {stats.device_us / 1e3:.1f} ms on the device"
    )

    expected = a.astype(np.float64) @ b.astype(np.float64)
    bad = first_mismatch(c, expected)
    if bad is not None:
        print(f"✗ FAILED: C[{bad[0]}, {bad[1]}] is {c[bad]}, expected {expected[bad]}")
        return 1
    print(f"✓ SUCCESS: all {M}x{N} elements of C match A @ B (rtol {RTOL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
