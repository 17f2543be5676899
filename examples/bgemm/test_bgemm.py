"""examples/bgemm/test_bgemm.py — batched tiled GEMM (AIC TMATMUL + AIV TADD) as a scene test.

C[g][i] = sum over k of A[g][k][i] @ B[g][k][i] for G groups of L square T x T tiles. One class
per orchestration, sharing the kernels, the cases and the data: tensormap_and_ringbuffer
(orchestration_tmr.cpp), host_build_graph (orchestration_hbg.cpp) and the reference
implementation's orchestration API on tensormap_and_ringbuffer (orchestration_ref.cpp). Inputs
are scaled by 0.01 so the float32 sums stay inside rtol = atol = 1e-3; the golden is computed
in float32 with BLAS, as the kernels accumulate. The tile kernels need a PTO-ISA checkout
(PTO_ISA_ROOT) and clang++-19. Run it with ``python examples/bgemm/test_bgemm.py [-p PLATFORM]
[--case NAME] [--manual include]``; main.py runs one case of any size from its flags.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

INCORES = [  # the func_ids the orchestrations submit
    {"func_id": 0, "source": "kernels/kernel_gemm.cpp", "core_type": "aic"},
    {"func_id": 1, "source": "kernels/kernel_add.cpp", "core_type": "aiv"},
]
# C is accumulated into (INOUT): its zeros must reach the device.
SIGNATURE = [D.INPUT, D.INPUT, D.INOUT]  # A, B, C
TILES = (16, 32, 64, 128)  # the tile edges T the kernels are compiled for
DTYPES = {"float32": np.float32, "float16": np.float16}  # of A and B; C is float32
SIM = ["a2a3sim", "a5sim"]
# main.py's defaults: 4 groups x 2 k-steps, 2 tiles of 64 x 64 per task, float32.
DEFAULT = {"groups": 4, "grid_k": 2, "tile_loop": 2, "tile": 64, "dtype": "float32", "seed": 0}


class BgemmScene(SceneTestCase):
    """The cases and data of every orchestration's class (not a scene test itself)."""

    CASES = [
        {"name": "default", "platforms": SIM, "params": DEFAULT},
        {
            "name": "tile32",
            "platforms": SIM,
            "params": {**DEFAULT, "groups": 3, "grid_k": 3, "tile": 32},
        },
        {
            "name": "float16",
            "platforms": SIM,
            "params": {**DEFAULT, "groups": 2, "dtype": "float16"},
        },
        {  # one cluster, one AICPU thread: the orchestrator also schedules (tensormap runtime)
            "name": "one_cluster",
            "platforms": SIM,
            "params": DEFAULT,
            "config": {"block_dim": 1, "aicpu_thread_num": 1},
        },
        {  # the reference benchmark's Case0: 500 GEMM + 500 ADD tasks (seconds, not ms)
            "name": "case0",
            "platforms": SIM,
            "params": {**DEFAULT, "groups": 250, "tile_loop": 4, "tile": 128},
            "manual": True,
        },
    ]
    RTOL = ATOL = 1e-3

    def generate_args(self, params: Any) -> TaskArgsBuilder:
        g, k, n, t = params["groups"], params["grid_k"], params["tile_loop"], params["tile"]
        if t not in TILES:
            raise ValueError(f"tile {t} is not one the kernels are compiled for {TILES}")
        rng = np.random.default_rng(params["seed"])
        dtype = DTYPES[params["dtype"]]
        shape = (g, k, n, t, t)
        return TaskArgsBuilder(
            TensorArg("a", (rng.standard_normal(shape, np.float32) * 0.01).astype(dtype)),
            TensorArg("b", (rng.standard_normal(shape, np.float32) * 0.01).astype(dtype)),
            TensorArg("c", np.zeros((g, n, t, t), dtype=np.float32)),
        )

    def compute_golden(self, args: TaskArgsBuilder, params: Any) -> None:
        # float32 with BLAS: within 1e-8 of a float64 golden here, and ten times faster at case0.
        a32, b32 = args.a.astype(np.float32), args.b.astype(np.float32)
        args.c[:] = np.matmul(a32, b32).sum(axis=1, dtype=np.float32)


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestBgemmTmr(BgemmScene):
    CALLABLE = {
        "orchestration": {"source": "orchestration_tmr.cpp", "signature": SIGNATURE},
        "incores": INCORES,
    }


@scene_test(level=2, runtime="host_build_graph")
class TestBgemmHbg(BgemmScene):
    CALLABLE = {
        "orchestration": {"source": "orchestration_hbg.cpp", "signature": SIGNATURE},
        "incores": INCORES,
    }


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestBgemmRefApi(BgemmScene):
    """The same graph written against the reference's API (pto_orchestration_api.h)."""

    CALLABLE = {
        "orchestration": {"source": "orchestration_ref.cpp", "signature": SIGNATURE},
        "incores": INCORES,
    }


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
