"""examples/bgemm/main.py — batched tiled GEMM with PTO-ISA tile kernels (AIC TMATMUL, AIV TADD).

Usage: python examples/bgemm/main.py [-p a2a3sim|a5sim]
                                     [-r tensormap_and_ringbuffer|host_build_graph]
                                     [--block-dim N] [--aicpu-threads N] [--groups G] [--grid-k K]
                                     [--tile-loop L] [--tile T] [--dtype float32|float16] [--case0]
                                     [--api native|reference] [--timing [-o DIR]]

C[g][i] = sum over k of A[g][k][i] @ B[g][k][i] for G groups of L square T x T tiles: per group
and k, one AIC task multiplies the group's L tiles (TLOAD, TEXTRACT, TMATMUL, TSTORE) into a
temp, one AIV task adds the temp into the group's C tiles (TADD). --case0 is the reference
benchmark's Case0: 500 GEMM + 500 ADD tasks (250 groups, grid_k 2, 4 tiles of 128 x 128 per
task). --api reference runs the orchestration written against the reference implementation's
API (pto_orchestration_api.h, tensormap_and_ringbuffer only). Inputs are scaled by 0.01 so the
float32 sums stay inside rtol = atol = 1e-3. The tile kernels need a PTO-ISA checkout
(PTO_ISA_ROOT) and clang++-19.

--timing runs the program a second time in the sim's timing mode with each tile kernel priced by
PTO-ISA's cost model (its cost-model twin, docs/design/sim_execution.md), checks that result too,
prints the predicted makespan and writes bgemm.measured.html, bgemm.predicted.html and
bgemm.compare.html to DIR (default: the current directory).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
KERNELS = [  # (func_id, core type, source): the ids the orchestrations use
    (0, pto.CoreType.AIC, "kernel_gemm.cpp"),
    (1, pto.CoreType.AIV, "kernel_add.cpp"),
]
ORCHESTRATIONS = {  # (runtime, API) -> source
    ("tensormap_and_ringbuffer", "native"): "orchestration_tmr.cpp",
    ("tensormap_and_ringbuffer", "reference"): "orchestration_ref.cpp",
    ("host_build_graph", "native"): "orchestration_hbg.cpp",
}
RUNTIMES = ["tensormap_and_ringbuffer", "host_build_graph"]
TILES = (16, 32, 64, 128)  # the tile edges the kernels are compiled for
DTYPES = {"float32": np.float32, "float16": np.float16}
RTOL = ATOL = 1e-3
FULL_GEOMETRY = {"a2a3sim": (24, 4), "a5sim": (18, 7)}  # (clusters, AICPU threads)
CASE0 = {"groups": 250, "grid_k": 2, "tile_loop": 4, "tile": 128}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("-r", "--runtime", default="tensormap_and_ringbuffer", choices=RUNTIMES)
    p.add_argument("--block-dim", type=int, help="clusters (default: all)")
    p.add_argument("--aicpu-threads", type=int, help="AICPU threads (default: all)")
    p.add_argument("--groups", type=int, default=4, help="independent groups G (default 4)")
    p.add_argument("--grid-k", type=int, default=2, help="GEMM+ADD pairs per group (default 2)")
    p.add_argument("--tile-loop", type=int, default=2, help="tiles per task L (default 2)")
    p.add_argument("--tile", type=int, default=64, choices=TILES, help="tile edge T (default 64)")
    p.add_argument(
        "--dtype", default="float32", choices=list(DTYPES), help="A and B (C is float32)"
    )
    p.add_argument("--case0", action="store_true", help="the reference's Case0 sizes")
    p.add_argument(
        "--api",
        default="native",
        choices=["native", "reference"],
        help="orchestration API: ours, or the reference's (tensormap_and_ringbuffer only)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--portable",
        action="store_true",
        help="build the tile kernels for any x86-64, not this CPU (slower, same results)",
    )
    p.add_argument("--save", metavar="PATH", help="also write the output array to PATH (.npy)")
    p.add_argument(
        "--timing",
        action="store_true",
        help="also run in timing mode, kernels priced by PTO-ISA's cost model; print the "
        "predicted makespan and write the swimlanes",
    )
    p.add_argument("-o", "--out", type=Path, default=Path("."), help="--timing: where the pages go")
    opts = p.parse_args(argv)
    if (opts.runtime, opts.api) not in ORCHESTRATIONS:
        p.error(f"--api {opts.api} has no orchestration for {opts.runtime}")
    clusters, threads = FULL_GEOMETRY[opts.platform]
    opts.block_dim = clusters if opts.block_dim is None else opts.block_dim
    opts.aicpu_threads = threads if opts.aicpu_threads is None else opts.aicpu_threads
    if opts.case0:
        for name, value in CASE0.items():
            setattr(opts, name, value)
    for name in ("groups", "grid_k", "tile_loop"):
        if getattr(opts, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return opts


def build_callable(
    platform: str, runtime: str, api: str, portable: bool = False, cost_models: bool = False
) -> pto.ChipCallable:
    """The orchestration and the kernels, compiled in parallel (cached after the first time).

    Tile kernels are built for this CPU unless ``portable`` (same results either way). With
    ``cost_models``, each kernel's cost-model twin too: timing mode prices it with PTO-ISA's
    cost model (a kernel whose twin cannot be built is priced by its host time, and the run's
    ``price_note`` says why)."""
    kc = pto.KernelCompiler(
        platform, pto_isa_root=os.environ.get("PTO_ISA_ROOT"), native=False if portable else None
    )
    orchestration = HERE / ORCHESTRATIONS[(runtime, api)]
    callable_ = pto.ChipCallable(kc.compile_orchestration(runtime, orchestration))
    paths = kc.compile_incore_many(
        [(HERE / "kernels" / source, core_type) for _, core_type, source in KERNELS], progress=True
    )
    for (func_id, core_type, _), path in zip(KERNELS, paths):
        callable_.add_kernel(func_id, core_type, path)
    if cost_models:
        pto.add_cost_models(
            kc, callable_, [(i, core, HERE / "kernels" / src) for i, core, src in KERNELS], True
        )
    return callable_


def worst_mismatch(got: np.ndarray, expected: np.ndarray) -> tuple[int, ...] | None:
    """Index of the element furthest outside the tolerance, or None when all are inside it."""
    excess = np.abs(got - expected) - (ATOL + RTOL * np.abs(expected))
    worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
    return tuple(int(i) for i in worst) if excess[worst] > 0 else None


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    g, k, n_tiles, t = opts.groups, opts.grid_k, opts.tile_loop, opts.tile
    print(
        f"=== bgemm: {g} groups x {k} k-steps, {n_tiles} tiles of {t}x{t} per task, "
        f"{opts.dtype} -> {g * k} GEMM + {g * k} ADD tasks ==="
    )
    print(
        f"platform {opts.platform}, runtime {opts.runtime} ({opts.api} API), "
        f"block_dim {opts.block_dim}, aicpu_threads {opts.aicpu_threads}"
    )
    start = time.perf_counter()
    callable_ = build_callable(opts.platform, opts.runtime, opts.api, opts.portable, opts.timing)
    print(f"kernels and orchestration ready in {time.perf_counter() - start:.1f} s")

    rng = np.random.default_rng(opts.seed)
    dtype = DTYPES[opts.dtype]
    shape = (g, k, n_tiles, t, t)
    a = (rng.standard_normal(shape, dtype=np.float32) * 0.01).astype(dtype, copy=False)
    b = (rng.standard_normal(shape, dtype=np.float32) * 0.01).astype(dtype, copy=False)
    c = np.zeros((g, n_tiles, t, t), dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a, pto.Direction.INPUT)
    args.add_tensor(b, pto.Direction.INPUT)
    args.add_tensor(c, pto.Direction.INOUT)  # accumulated into: its zeros must reach the device
    config = dict(
        block_dim=opts.block_dim, aicpu_thread_num=opts.aicpu_threads, enable_profiling=opts.timing
    )
    # The golden in float32 with BLAS (the kernels accumulate in float32 too): within 1e-8 of a
    # float64 one here, and ten times faster at --case0.
    a32, b32 = a.astype(np.float32, copy=False), b.astype(np.float32, copy=False)
    expected = np.matmul(a32, b32).sum(axis=1, dtype=np.float32)

    with pto.Worker(level=2, platform=opts.platform, runtime=opts.runtime) as worker:
        stats = worker.run(callable_, args, pto.ChipCallConfig(**config))
        print(
            f"ran {stats.tasks_run} tasks ({stats.aic_tasks} AIC, {stats.aiv_tasks} AIV) "
            f"in {stats.device_us / 1e3:.1f} ms on the device"
        )
        if opts.save:
            np.save(opts.save, c)
        if not matches(c, expected, "parallel"):
            return 1
        if opts.timing:  # the same program again, in virtual time, priced by the twins
            timed = pto.ChipCallConfig(**config, sim_seed=opts.seed, sim_timing=True)
            t_stats, measured, predicted = pto.timed_rerun(
                worker, callable_, args, timed, reset=lambda: c.fill(0)
            )
            if not matches(c, expected, "timed"):
                return 1
            pto.report_timing(stats, t_stats, measured, predicted, opts.out, "bgemm")
    print(f"SUCCESS: all {c.size} elements of C match NumPy (rtol {RTOL}, atol {ATOL})")
    return 0


def matches(c: np.ndarray, expected: np.ndarray, run: str) -> bool:
    """Whether C matches the golden; prints the worst mismatch of the ``run`` if not."""
    bad = worst_mismatch(c, expected)
    if bad is not None:
        print(
            f"FAILED ({run} run): worst mismatch C{list(bad)} = {c[bad]!r}, expected "
            f"{expected[bad]!r} (rtol {RTOL}, atol {ATOL})"
        )
    return bad is None


if __name__ == "__main__":
    sys.exit(main())
