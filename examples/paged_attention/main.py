"""examples/paged_attention/main.py — paged decode attention with PTO-ISA tile kernels (AIC + AIV).

Usage: python examples/paged_attention/main.py [-p a2a3sim|a5sim]
                                               [-r tensormap_and_ringbuffer|host_build_graph]
                                               [--block-dim N] [--aicpu-threads N]
                                               [--case small|varseq4|mid|wide]
                                               [--dtype bfloat16|float16] [--scale S]
                                               [--timing [-o DIR]]

One decode step: each request's query heads attend over its context, stored in a paged KV cache
(blocks of block_size tokens, listed per request in a block table; context lengths differ per
request). Per query tile and KV block the orchestration submits QK (AIC: S = Q K^T),
softmax-prepare (AIV: scale, row max, exp, row sum), PV (AIC: P V) and the online update (AIV:
running max, sum and output, divided on the last block). Inputs are bfloat16 (via ml_dtypes) or
float16, the output float32; it is checked against a NumPy golden computed in float32 from the
same rounded inputs (rtol = atol = 1e-3). One KV head (kv_head_num 1), so the caches are
(blocks, block_size, head_dim). The tile kernels need a PTO-ISA checkout (PTO_ISA_ROOT) and
clang++-19.

--timing runs the program a second time in the sim's timing mode with each tile kernel priced by
PTO-ISA's cost model (docs/design/sim_execution.md), checks that result too, prints the predicted
makespan and writes paged_attention.{measured,predicted,compare}.html to DIR (default: .).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
KERNELS = [  # (func_id, core type, source): the ids the orchestrations use
    (0, pto.CoreType.AIC, "kernel_qk.cpp"),
    (1, pto.CoreType.AIV, "kernel_softmax_prepare.cpp"),
    (2, pto.CoreType.AIC, "kernel_pv.cpp"),
    (3, pto.CoreType.AIV, "kernel_online_update.cpp"),
]
ORCHESTRATIONS = {
    "tensormap_and_ringbuffer": "orchestration_tmr.cpp",
    "host_build_graph": "orchestration_hbg.cpp",
}
DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16)}
RTOL = ATOL = 1e-3
FULL_GEOMETRY = {"a2a3sim": (24, 4), "a5sim": (18, 7)}  # (clusters, AICPU threads)


@dataclass(frozen=True)
class Case:
    batch: int
    heads: int  # query heads; one query tile of min(heads, 128) rows per task
    head_dim: int
    block_size: int
    context_lens: tuple[int, ...]  # one per request
    max_model_len: int  # block table width = max_model_len // block_size


# (q_tile, head_dim, block_size) of every case is one the kernels are compiled for
# (kernels/pa_tiles.h).
CASES = {
    "small": Case(2, 16, 16, 16, (33, 17), 256),
    "varseq4": Case(4, 16, 16, 16, (33, 64, 128, 15), 256),
    "mid": Case(4, 16, 128, 128, (1024, 700, 257, 129), 2048),
    "wide": Case(2, 64, 128, 64, (300, 129), 512),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument(
        "-r", "--runtime", default="tensormap_and_ringbuffer", choices=list(ORCHESTRATIONS)
    )
    p.add_argument("--block-dim", type=int, help="clusters (default: all)")
    p.add_argument("--aicpu-threads", type=int, help="AICPU threads (default: all)")
    p.add_argument("--case", default="small", choices=list(CASES), help="shapes (default small)")
    p.add_argument("--dtype", default="bfloat16", choices=list(DTYPES), help="query and caches")
    p.add_argument("--scale", type=float, default=1.0, help="score scale (default 1.0)")
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
    clusters, threads = FULL_GEOMETRY[opts.platform]
    opts.block_dim = clusters if opts.block_dim is None else opts.block_dim
    opts.aicpu_threads = threads if opts.aicpu_threads is None else opts.aicpu_threads
    return opts


def build_callable(
    platform: str, runtime: str, portable: bool = False, cost_models: bool = False
) -> pto.ChipCallable:
    """The orchestration and the kernels, compiled in parallel (cached after the first time).

    Tile kernels are built for this CPU unless ``portable`` (same results either way); with
    ``cost_models``, their cost-model twins too (timing mode prices the kernels with them)."""
    kc = pto.KernelCompiler(
        platform, pto_isa_root=os.environ.get("PTO_ISA_ROOT"), native=False if portable else None
    )
    callable_ = pto.ChipCallable(kc.compile_orchestration(runtime, HERE / ORCHESTRATIONS[runtime]))
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


def make_inputs(case: Case, dtype: np.dtype, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    context_lens = np.array(case.context_lens, dtype=np.int32)
    blocks_per_request = -(-int(context_lens.max()) // case.block_size)
    cache_blocks = case.batch * blocks_per_request
    kv_shape = (cache_blocks, case.block_size, case.head_dim)
    return {
        "query": rng.uniform(-0.5, 0.5, (case.batch, case.heads, case.head_dim)).astype(dtype),
        "key_cache": rng.uniform(-0.5, 0.5, kv_shape).astype(dtype),
        "value_cache": rng.uniform(-1.0, 1.0, kv_shape).astype(dtype),
        "block_table": rng.integers(
            0, cache_blocks, (case.batch, case.max_model_len // case.block_size), dtype=np.int32
        ),
        "context_lens": context_lens,
        "out": np.zeros((case.batch, case.heads, case.head_dim), dtype=np.float32),
    }


def golden(inputs: dict[str, np.ndarray], scale: float) -> np.ndarray:
    """The online-softmax recurrence the kernels run, in float32 from the rounded inputs.

    As on the device, the softmax numerators are rounded to the input type before they are summed
    and multiplied with V.
    """
    query, key_cache, value_cache = inputs["query"], inputs["key_cache"], inputs["value_cache"]
    block_size = key_cache.shape[1]
    out = np.zeros(inputs["out"].shape, dtype=np.float32)
    for b, context in enumerate(int(n) for n in inputs["context_lens"]):
        q = query[b].astype(np.float32)
        m = l_sum = o = np.zeros(0, dtype=np.float32)
        for j in range(-(-context // block_size)):
            valid = min(block_size, context - j * block_size)
            block = int(inputs["block_table"][b, j])
            k = key_cache[block, :valid].astype(np.float32)
            v = value_cache[block, :valid].astype(np.float32)
            s = (q @ k.T) * np.float32(scale)
            m_blk = s.max(axis=1, keepdims=True)
            p = np.exp(s - m_blk).astype(query.dtype).astype(np.float32)
            l_blk = p.sum(axis=1, keepdims=True)
            o_blk = p @ v
            if j == 0:
                m, l_sum, o = m_blk, l_blk, o_blk
            else:
                m_new = np.maximum(m, m_blk)
                alpha, beta = np.exp(m - m_new), np.exp(m_blk - m_new)
                l_sum = alpha * l_sum + beta * l_blk
                o = alpha * o + beta * o_blk
                m = m_new
        out[b] = o / l_sum
    return out


def worst_mismatch(got: np.ndarray, expected: np.ndarray) -> tuple[int, ...] | None:
    """Index of the element furthest outside the tolerance, or None when all are inside it."""
    excess = np.abs(got - expected) - (ATOL + RTOL * np.abs(expected))
    excess[np.isnan(got)] = np.inf
    worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
    return tuple(int(i) for i in worst) if excess[worst] > 0 else None


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    case = CASES[opts.case]
    blocks = sum(-(-n // case.block_size) for n in case.context_lens)
    q_tiles = case.heads // min(case.heads, 128)
    print(
        f"=== paged_attention ({opts.case}): batch {case.batch}, {case.heads} heads, head_dim "
        f"{case.head_dim}, block_size {case.block_size}, context_lens {list(case.context_lens)}, "
        f"{opts.dtype} -> {4 * blocks * q_tiles} tasks ==="
    )
    print(
        f"platform {opts.platform}, runtime {opts.runtime}, block_dim {opts.block_dim}, "
        f"aicpu_threads {opts.aicpu_threads}"
    )
    start = time.perf_counter()
    callable_ = build_callable(opts.platform, opts.runtime, opts.portable, opts.timing)
    print(f"kernels and orchestration ready in {time.perf_counter() - start:.1f} s")

    inputs = make_inputs(case, DTYPES[opts.dtype], opts.seed)
    args = pto.ChipStorageTaskArgs()
    for name, array in inputs.items():
        args.add_tensor(array, pto.Direction.OUTPUT if name == "out" else pto.Direction.INPUT)
    args.add_scalar_f32(opts.scale)
    config = dict(
        block_dim=opts.block_dim, aicpu_thread_num=opts.aicpu_threads, enable_profiling=opts.timing
    )
    out, expected = inputs["out"], golden(inputs, opts.scale)

    with pto.Worker(level=2, platform=opts.platform, runtime=opts.runtime) as worker:
        stats = worker.run(callable_, args, pto.ChipCallConfig(**config))
        print(
            f"ran {stats.tasks_run} tasks ({stats.aic_tasks} AIC, {stats.aiv_tasks} AIV) "
            f"in {stats.device_us / 1e3:.1f} ms on the device"
        )
        if opts.save:
            np.save(opts.save, out)
        if not matches(out, expected, "parallel"):
            return 1
        if opts.timing:  # the same program again, in virtual time, priced by the twins
            timed = pto.ChipCallConfig(**config, sim_seed=opts.seed, sim_timing=True)
            t_stats, measured, predicted = pto.timed_rerun(
                worker, callable_, args, timed, reset=lambda: out.fill(0)
            )
            if not matches(out, expected, "timed"):
                return 1
            pto.report_timing(stats, t_stats, measured, predicted, opts.out, "paged_attention")
    print(f"SUCCESS: all {out.size} elements of out match the golden (rtol {RTOL}, atol {ATOL})")
    return 0


def matches(out: np.ndarray, expected: np.ndarray, run: str) -> bool:
    """Whether out matches the golden; prints the worst mismatch of the ``run`` if not."""
    bad = worst_mismatch(out, expected)
    if bad is not None:
        print(
            f"FAILED ({run} run): worst mismatch out{list(bad)} = {out[bad]!r}, expected "
            f"{expected[bad]!r} (rtol {RTOL}, atol {ATOL})"
        )
    return bad is None


if __name__ == "__main__":
    sys.exit(main())
