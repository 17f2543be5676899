"""tests/python/scene_files/test_torch_args.py — the pipeline of test_pipeline.py with torch
tensors as arguments and golden (torch is optional for the package; this file needs it)."""

import torch
from pto_runtime import Direction as D
from pto_runtime.scene import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from test_pipeline import KERNELS


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestTorchArgs(SceneTestCase):
    CALLABLE = {
        "orchestration": {"source": "kernels/orch.cpp", "signature": [D.INOUT, D.OUTPUT]},
        "incores": KERNELS,
    }
    CASES = [{"name": "float32", "platforms": ["a2a3sim"], "params": {"n": 256}}]

    def generate_args(self, params):
        n = params["n"]
        return TaskArgsBuilder(
            TensorArg("x", torch.arange(n, dtype=torch.float32)),
            TensorArg("y", torch.zeros(n, dtype=torch.float32)),
            Scalar("n", n),
        )

    def compute_golden(self, args, params):
        args.x += 1
        args.y[:] = 2 * args.x


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
