"""examples/bgemm/main.py — batched tiled GEMM with PTO-ISA tile kernels (AIC TMATMUL, AIV TADD).

Usage: python examples/bgemm/main.py [-p a2a3sim|a5sim]
                                     [-r tensormap_and_ringbuffer|host_build_graph]
                                     [--block-dim N] [--aicpu-threads N] [--groups G] [--grid-k K]
                                     [--tile-loop L] [--tile T] [--dtype float32|float16] [--case0]
                                     [--api native|reference] [--seed S] [--portable] [--save PATH]
                                     [--timing [-o DIR]]

C[g][i] = sum over k of A[g][k][i] @ B[g][k][i] for G groups of L square T x T tiles: per group
and k, one AIC task multiplies the group's L tiles (TLOAD, TEXTRACT, TMATMUL, TSTORE) into a
temp, one AIV task adds the temp into the group's C tiles (TADD). This runs one case of
test_bgemm.py's scene test (its kernels, data and NumPy golden) with the sizes the flags give,
on the platform's full geometry unless told, and ends with the scene table; test_bgemm.py runs
its own cases. --case0 is the reference benchmark's Case0: 500 GEMM + 500 ADD tasks (250
groups, grid_k 2, 4 tiles of 128 x 128 per task). --api reference runs the orchestration written
against the reference implementation's API (pto_orchestration_api.h, tensormap_and_ringbuffer
only). The tile kernels need a PTO-ISA checkout (PTO_ISA_ROOT) and clang++-19.

--timing runs the program a second time in the sim's timing mode with each tile kernel priced by
PTO-ISA's cost model (its cost-model twin, docs/design/sim_execution.md), checks that result too,
prints the predicted makespan and writes the measured, predicted and side-by-side swimlanes to
DIR (default: the current directory); the table's last lines name them.
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
from test_bgemm import DEFAULT, DTYPES, TILES, TestBgemmHbg, TestBgemmRefApi, TestBgemmTmr

CLASSES = {  # (runtime, API) -> the scene test's class
    ("tensormap_and_ringbuffer", "native"): TestBgemmTmr,
    ("tensormap_and_ringbuffer", "reference"): TestBgemmRefApi,
    ("host_build_graph", "native"): TestBgemmHbg,
}
RUNTIMES = ["tensormap_and_ringbuffer", "host_build_graph"]
CASE0 = {"groups": 250, "grid_k": 2, "tile_loop": 4, "tile": 128}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("-r", "--runtime", default="tensormap_and_ringbuffer", choices=RUNTIMES)
    p.add_argument("--block-dim", type=int, help="clusters (default: all)")
    p.add_argument("--aicpu-threads", type=int, help="AICPU threads (default: all)")
    p.add_argument("--groups", type=int, default=DEFAULT["groups"], help="groups G (default 4)")
    p.add_argument("--grid-k", type=int, default=DEFAULT["grid_k"], help="GEMM+ADD pairs per group")
    p.add_argument("--tile-loop", type=int, default=DEFAULT["tile_loop"], help="tiles per task L")
    p.add_argument("--tile", type=int, default=DEFAULT["tile"], choices=TILES, help="tile edge T")
    p.add_argument("--dtype", default="float32", choices=list(DTYPES), help="A, B (C: float32)")
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
    if (opts.runtime, opts.api) not in CLASSES:
        p.error(f"--api {opts.api} has no orchestration for {opts.runtime}")
    if opts.case0:
        for name, value in CASE0.items():
            setattr(opts, name, value)
    for name in ("groups", "grid_k", "tile_loop"):
        if getattr(opts, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
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
    g, k, n_tiles, t = opts.groups, opts.grid_k, opts.tile_loop, opts.tile
    print(
        f"=== bgemm: {g} groups x {k} k-steps, {n_tiles} tiles of {t}x{t} per task, "
        f"{opts.dtype} -> {g * k} GEMM + {g * k} ADD tasks ==="
    )
    case = {
        "name": "command_line",
        "platforms": [opts.platform],
        "params": {name: getattr(opts, name) for name in DEFAULT},  # the flags
        # None: the scene layer's defaults, every cluster and all the platform's AICPU threads.
        "config": {"block_dim": opts.block_dim, "aicpu_thread_num": opts.aicpu_threads},
    }
    base = CLASSES[(opts.runtime, opts.api)]
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
