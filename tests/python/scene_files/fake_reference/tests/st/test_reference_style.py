"""tests/python/scene_files/fake_reference/tests/st/test_reference_style.py — a scene test
written against the reference implementation's import names, run unchanged by the runner."""

import numpy as np
from simpler.task_interface import ArgDirection as D
from simpler.task_interface import GlobalCommDomainHandle
from simpler_setup import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from simpler_setup.goldens import ramp

K = "../../../kernels"


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestReferenceStyle(SceneTestCase):
    CALLABLE = {
        "orchestration": {
            "source": f"{K}/orch.cpp",
            "function_name": "aicpu_orchestration_entry",
            "signature": [D.INOUT, D.OUT],
        },
        "incores": [
            {"func_id": 0, "source": f"{K}/bump.cpp", "core_type": "aiv", "signature": [D.INOUT]},
            {"func_id": 1, "source": f"{K}/double.cpp", "core_type": "aiv"},
        ],
    }
    CASES = [
        {"name": "runs", "platforms": ["a2a3sim", "a2a3"], "params": {}},
        {"name": "needs_comm", "platforms": ["a2a3sim"], "params": {"comm": True}},
    ]

    def generate_args(self, params):
        if params.get("comm"):
            GlobalCommDomainHandle("win")
        return TaskArgsBuilder(
            TensorArg("x", ramp(32)), TensorArg("y", np.zeros(32, np.float32)), Scalar("n", 32)
        )

    def compute_golden(self, args, params):
        args.x[:] = args.x + 1
        args.y[:] = 2 * args.x


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
