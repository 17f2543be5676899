"""tests/python/scene_files/test_l3_pipeline.py — a level-3 scene test: a chip task (the
pipeline of test_pipeline.py) and a SUB task that reads its output, ordered by the tensors."""

import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from pto_runtime.scene.l3 import build_l3_task_args
from test_pipeline import KERNELS


def halve(args):
    """SUB: z = y / 2, once the chip task wrote y."""
    y, z = args.tensors[0][0], args.tensors[1][0]
    z[:] = y / 2


def orchestrate(orch, callables, task_args, config):
    chip_args, _ = build_l3_task_args(task_args, callables.pipeline_sig)
    orch.submit_next_level(callables.pipeline, chip_args, config, worker=0)
    from pto_runtime.scene.reference.task_interface import TaskArgs, TensorArgType

    sub_args = TaskArgs()
    sub_args.add_tensor(task_args.y, TensorArgType.INPUT)
    sub_args.add_tensor(task_args.z, TensorArgType.OUTPUT)
    orch.submit_sub(callables.halve, sub_args)


@scene_test(level=3, runtime="tensormap_and_ringbuffer")
class TestL3Pipeline(SceneTestCase):
    CALLABLE = {
        "orchestration": orchestrate,
        "callables": [
            {
                "name": "pipeline",
                "orchestration": {
                    "source": "kernels/orch.cpp",
                    "signature": [D.INOUT, D.OUTPUT, D.INPUT],
                },
                "incores": KERNELS,
            },
            {"name": "halve", "callable": halve},
        ],
    }
    CASES = [
        {
            "name": "chip_then_sub",
            "platforms": ["a2a3sim"],
            "params": {"n": 128},
            "config": {"device_count": 1, "num_sub_workers": 1},
        }
    ]

    def generate_args(self, params):
        n = params["n"]
        return TaskArgsBuilder(
            TensorArg("x", np.arange(n, dtype=np.float32)),
            TensorArg("y", np.zeros(n, dtype=np.float32)),
            TensorArg("z", np.zeros(n, dtype=np.float32)),
            Scalar("n", n),
        )

    def compute_golden(self, args, params):
        args.x[:] = args.x + 1
        args.y[:] = 2 * args.x
        args.z[:] = args.x


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
