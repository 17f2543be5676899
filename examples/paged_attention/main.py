"""examples/paged_attention/main.py — paged decode attention with PTO-ISA tile kernels (AIC + AIV).

Usage: python examples/paged_attention/main.py [-p a2a3sim|a5sim]
                                               [-r tensormap_and_ringbuffer|host_build_graph]
                                               [--block-dim N] [--aicpu-threads N]
                                               [--case small|varseq4|mid|wide]
                                               [--dtype bfloat16|float16] [--scale S] [--seed S]
                                               [--portable] [--save PATH] [--timing [-o DIR]]

One decode step: each request's query heads attend over its context, stored in a paged KV cache
(blocks of block_size tokens, listed per request in a block table). Per query tile and KV block
the orchestration submits QK (AIC), softmax-prepare (AIV), PV (AIC) and the online update (AIV).
This runs one case of test_paged_attention.py's scene test (its kernels, data and NumPy golden,
rtol = atol = 1e-3) with the shapes, type and scale the flags give, on the platform's full
geometry unless told, and ends with the scene table; test_paged_attention.py runs its own
cases. The tile kernels need a PTO-ISA checkout (PTO_ISA_ROOT) and clang++-19.

--timing runs the program a second time in the sim's timing mode with each tile kernel priced by
PTO-ISA's cost model (docs/design/sim_execution.md), checks that result too, prints the predicted
makespan and writes the measured, predicted and side-by-side swimlanes to DIR (default: .); the
table's last lines name them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pto_runtime as pto
from pto_runtime import scene
from pto_runtime.scene import SceneTestCase, TaskArgsBuilder
from pto_runtime.scene.build import CompiledCallable
from test_paged_attention import (
    DTYPES,
    SHAPES,
    TestPagedAttentionHbg,
    TestPagedAttentionTmr,
    case_params,
)

CLASSES = {
    "tensormap_and_ringbuffer": TestPagedAttentionTmr,
    "host_build_graph": TestPagedAttentionHbg,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("-r", "--runtime", default="tensormap_and_ringbuffer", choices=list(CLASSES))
    p.add_argument("--block-dim", type=int, help="clusters (default: all)")
    p.add_argument("--aicpu-threads", type=int, help="AICPU threads (default: all)")
    p.add_argument("--case", default="small", choices=list(SHAPES), help="shapes (default small)")
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
    return opts


class CommandLine(SceneTestCase):
    """Mixed into a scene class for main.py's one case: --save writes the output the golden is
    compared with; --portable builds the kernels for any x86-64 (KernelCompiler native=False),
    which the scene layer's own build does not offer."""

    save: str | None = None
    portable = False

    def compare_outputs(
        self, test_args: TaskArgsBuilder, golden: TaskArgsBuilder, names: list[str], params: Any
    ) -> None:
        if self.save:
            np.save(self.save, getattr(test_args, names[-1]))
        super().compare_outputs(test_args, golden, names, params)

    @classmethod
    def compile_chip_callable(cls, platform: str, *, progress: bool = True) -> CompiledCallable:
        if not cls.portable:
            return super().compile_chip_callable(platform, progress=progress)
        orch, incores = cls.CALLABLE["orchestration"], cls.CALLABLE["incores"]
        kc = pto.KernelCompiler(platform, native=False)
        kernels = [
            (k["func_id"], pto.CoreType[k["core_type"].upper()], k["source"]) for k in incores
        ]
        paths = kc.compile_incore_many([(src, core) for _, core, src in kernels], progress=progress)
        callable_ = pto.ChipCallable(
            kc.compile_orchestration(cls._st_runtime, orch["source"]),
            [(func_id, core, path) for (func_id, core, _), path in zip(kernels, paths)],
        )
        return CompiledCallable(
            callable_, platform, cls._st_runtime, orch["signature"], [(kc, kernels)]
        )


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    shape = SHAPES[opts.case]
    block_size, context_lens = shape["block_size"], shape["context_lens"]
    blocks = sum(-(-n // block_size) for n in context_lens)
    q_tiles = shape["heads"] // min(shape["heads"], 128)
    print(
        f"=== paged_attention ({opts.case}): batch {len(context_lens)}, {shape['heads']} heads, "
        f"head_dim {shape['head_dim']}, block_size {block_size}, context_lens {context_lens}, "
        f"{opts.dtype} -> {4 * blocks * q_tiles} tasks ==="
    )
    case = {
        "name": "command_line",
        "platforms": [opts.platform],
        "params": case_params(opts.case, opts.dtype, opts.scale, opts.seed),
        # None: the scene layer's defaults, every cluster and all the platform's AICPU threads.
        "config": {"block_dim": opts.block_dim, "aicpu_thread_num": opts.aicpu_threads},
    }
    base = CLASSES[opts.runtime]
    attrs = {"CASES": [case], "save": opts.save, "portable": opts.portable}
    cls = type(base.__name__, (CommandLine, base), attrs)
    records = scene.run(cls, platform=opts.platform, timing=opts.timing, timing_dir=opts.out)
    for rec in records:
        for note in rec.notes:
            print(f"note: {note}")
        if rec.predicted_makespan_us is not None:
            print(f"predicted makespan: {rec.predicted_makespan_us:.1f} us")
    return 0 if all(rec.result == "PASSED" for rec in records) else 1


if __name__ == "__main__":
    sys.exit(main())
