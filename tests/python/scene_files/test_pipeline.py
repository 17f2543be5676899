"""tests/python/scene_files/test_pipeline.py — a passing scene test: x += 1, y = 2 x (NumPy)."""

import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

KERNELS = [
    {"func_id": 0, "source": "kernels/bump.cpp", "core_type": "aiv"},
    {"func_id": 1, "source": "kernels/double.cpp", "core_type": "aiv"},
]


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestPipeline(SceneTestCase):
    CALLABLE = {
        "orchestration": {"source": "kernels/orch.cpp", "signature": [D.INOUT, D.OUTPUT]},
        "incores": KERNELS,
    }
    CASES = [
        {"name": "small", "platforms": ["a2a3sim", "a5sim"], "params": {"n": 64}},
        {
            "name": "one_cluster",
            "platforms": ["a2a3sim"],
            "params": {"n": 1000},
            "config": {"block_dim": 1, "aicpu_thread_num": 2},
        },
        {"name": "big", "platforms": ["a2a3sim"], "manual": True, "params": {"n": 1 << 16}},
        {"name": "hardware_only", "platforms": ["a2a3"], "params": {"n": 8}},
    ]

    def generate_args(self, params):
        n = params["n"]
        return TaskArgsBuilder(
            TensorArg("x", np.arange(n, dtype=np.float32)),
            TensorArg("y", np.zeros(n, dtype=np.float32)),
            Scalar("n", n),
        )

    def compute_golden(self, args, params):
        args.x[:] = args.x + 1
        args.y[:] = 2 * args.x


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
