"""tests/python/scene_files/test_broken.py — cases that fail each way the runner must survive:
a wrong golden, a crash, a hang, a missing feature, a run over its time limit. Only for
tests/python/test_scene.py."""

import os
import signal
import time

import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from test_pipeline import KERNELS  # a sibling file (its folder is on sys.path)


def _args() -> TaskArgsBuilder:
    """x and y of 16 zeros, n = 16: what kernels/orch.cpp takes."""
    from pto_runtime.scene import Scalar

    return TaskArgsBuilder(
        TensorArg("x", np.zeros(16, dtype=np.float32)),
        TensorArg("y", np.zeros(16, dtype=np.float32)),
        Scalar("n", 16),
    )


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestBroken(SceneTestCase):
    CALLABLE = {
        "orchestration": {"source": "kernels/orch.cpp", "signature": [D.INOUT, D.OUTPUT]},
        "incores": KERNELS,
    }
    CASES = [
        {"name": "wrong_golden", "platforms": ["a2a3sim"], "params": {"how": "golden"}},
        {"name": "crash", "platforms": ["a2a3sim"], "params": {"how": "crash"}},
        {"name": "hang", "platforms": ["a2a3sim"], "params": {"how": "hang"}},
        {"name": "passes", "platforms": ["a2a3sim"], "params": {"how": "none"}},
    ]

    def generate_args(self, params):
        if params["how"] == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if params["how"] == "hang":
            time.sleep(3600)
        return _args()

    def compute_golden(self, args, params):
        args.x[:] = 1
        args.y[:] = 2 if params["how"] != "golden" else 3


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestSlowRun(SceneTestCase):
    """A chip run of 2 s: passes under the default run limit, not under --run-timeout 0.5."""

    CALLABLE = {
        "orchestration": {"source": "kernels/orch.cpp", "signature": [D.INOUT, D.OUTPUT]},
        "incores": [
            {"func_id": 0, "source": "kernels/slow_bump.cpp", "core_type": "aiv"},
            KERNELS[1],
        ],
    }
    CASES = [{"name": "slow_run", "platforms": ["a2a3sim"], "params": {}}]

    def generate_args(self, params):
        return _args()

    def compute_golden(self, args, params):
        args.x[:] = 1
        args.y[:] = 2


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
