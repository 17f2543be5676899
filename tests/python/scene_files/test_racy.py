"""tests/python/scene_files/test_racy.py — an orchestration whose result depends on the schedule
(the bump declares x as an input): only --fuzz-schedules finds it for sure."""

import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from test_pipeline import KERNELS


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestRacy(SceneTestCase):
    SKIP_GOLDEN = True  # either answer passes a plain run; the fuzzer tells them apart
    CALLABLE = {
        "orchestration": {"source": "kernels/orch_racy.cpp", "signature": [D.INOUT, D.OUTPUT]},
        "incores": KERNELS,
    }
    CASES = [{"name": "racy", "platforms": ["a2a3sim"], "params": {}, "config": {"block_dim": 2}}]

    def generate_args(self, params):
        return TaskArgsBuilder(
            TensorArg("x", np.arange(64, dtype=np.float32)),
            TensorArg("y", np.zeros(64, dtype=np.float32)),
            Scalar("n", 64),
        )
