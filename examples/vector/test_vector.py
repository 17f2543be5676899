"""examples/vector/test_vector.py — y = relu(a*x + b) over a long vector in chunks, a scene test.

The device orchestration (tensormap_and_ringbuffer) splits x into chunks; per chunk, one AIV
task writes t = a*x + b into a scoped heap temp and a second AIV task writes relu(t) into y's
chunk. The runtime infers the edges from the tensors, so the chunks overlap across the vector
cores. Run it with ``python examples/vector/test_vector.py [-p a2a3sim|a5sim] [--case NAME]``;
main.py runs the same program on the geometry its flags give.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

# 2^20 float32 elements in 64 chunks, y = relu(1.5 x - 0.25).
PARAMS = {"n": 1 << 20, "chunks": 64, "a": 1.5, "b": -0.25, "seed": 0}


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestVector(SceneTestCase):
    CALLABLE = {
        "orchestration": {"source": "orchestration.cpp", "signature": [D.INPUT, D.OUTPUT]},
        "incores": [  # the func_ids the orchestration submits
            {"func_id": 0, "source": "kernels/kernel_axpb.cpp", "core_type": "aiv"},
            {"func_id": 1, "source": "kernels/kernel_relu.cpp", "core_type": "aiv"},
        ],
    }
    CASES = [
        {  # main.py's default geometry
            "name": "one_cluster",
            "platforms": ["a2a3sim", "a5sim"],
            "params": PARAMS,
            "config": {"block_dim": 1, "aicpu_thread_num": 1},
        },
        {"name": "every_cluster", "platforms": ["a2a3sim", "a5sim"], "params": PARAMS},
    ]
    RTOL = ATOL = 1e-6

    def generate_args(self, params: Any) -> TaskArgsBuilder:
        n = params["n"]
        x = np.random.default_rng(params["seed"]).standard_normal(n, dtype=np.float32)
        return TaskArgsBuilder(
            TensorArg("x", x),
            TensorArg("y", np.zeros(n, dtype=np.float32)),
            Scalar("a", float(params["a"])),  # a float goes as float32 bits
            Scalar("b", float(params["b"])),
            Scalar("chunk", n // params["chunks"]),
        )

    def compute_golden(self, args: TaskArgsBuilder, params: Any) -> None:
        a, b = np.float32(params["a"]), np.float32(params["b"])
        args.y[:] = np.maximum(a * args.x + b, np.float32(0))


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
