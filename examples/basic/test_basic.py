"""examples/basic/test_basic.py — seed 000's graph f = (a + b + 1)(a + b + 2) as a scene test.

One class per runtime, sharing the kernels, the cases and the data: host_build_graph builds the
four-task graph on the host with explicit edges (orchestration.cpp); tensormap_and_ringbuffer
runs orchestration_tmr.cpp on the device and infers the edges from the tensors. Run it with
``python examples/basic/test_basic.py [-p a2a3sim|a5sim] [--case NAME]``
(docs/guide/scene_tests.md); main.py runs the same graph and prints seed 000's output.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

INCORES = [  # the func_ids both orchestrations submit
    {"func_id": 0, "source": "kernels/kernel_add.cpp", "core_type": "aiv"},
    {"func_id": 1, "source": "kernels/kernel_add_scalar.cpp", "core_type": "aiv"},
    {"func_id": 2, "source": "kernels/kernel_mul.cpp", "core_type": "aiv"},
]
SIGNATURE = [D.INPUT, D.INPUT, D.OUTPUT]  # a, b, f


class BasicScene(SceneTestCase):
    """The cases and data of both runtimes' classes (not a scene test itself: no runtime)."""

    CASES = [
        {  # main.py's default geometry
            "name": "one_cluster",
            "platforms": ["a2a3sim", "a5sim"],
            "params": {"n": 16384},
            "config": {"block_dim": 1, "aicpu_thread_num": 1},
        },
        {"name": "every_cluster", "platforms": ["a2a3sim", "a5sim"], "params": {"n": 16384}},
    ]

    def generate_args(self, params: Any) -> TaskArgsBuilder:
        n = params["n"]
        return TaskArgsBuilder(
            TensorArg("a", np.arange(n, dtype=np.float32)),
            TensorArg("b", np.full(n, 3.0, dtype=np.float32)),
            TensorArg("f", np.zeros(n, dtype=np.float32)),
        )

    def compute_golden(self, args: TaskArgsBuilder, params: Any) -> None:
        args.f[:] = (args.a + args.b + 1) * (args.a + args.b + 2)


@scene_test(level=2, runtime="host_build_graph")
class TestBasicHbg(BasicScene):
    CALLABLE = {
        "orchestration": {"source": "orchestration.cpp", "signature": SIGNATURE},
        "incores": INCORES,
    }


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestBasicTmr(BasicScene):
    CALLABLE = {
        "orchestration": {"source": "orchestration_tmr.cpp", "signature": SIGNATURE},
        "incores": INCORES,
    }


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
