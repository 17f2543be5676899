"""python/pto_runtime/scene/__init__.py — scene tests: a workload declared as a class, then checked.

A scene test says what to compile (``CALLABLE``), the cases to run (``CASES``) and how to make
and check the data (``generate_args``, ``compute_golden``); the framework compiles the kernels
in parallel, runs every case on the simulated chip, compares the outputs with the golden and
prints a table::

    import numpy as np
    from pto_runtime import Direction as D
    from pto_runtime.scene import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

    @scene_test(level=2, runtime="tensormap_and_ringbuffer")
    class TestAdd(SceneTestCase):
        CALLABLE = {
            "orchestration": {"source": "orch.cpp", "signature": [D.INPUT, D.INPUT, D.OUTPUT]},
            "incores": [{"func_id": 0, "source": "add.cpp", "core_type": "aiv"}],
        }
        CASES = [{"name": "default", "platforms": ["a2a3sim", "a5sim"], "params": {}}]

        def generate_args(self, params):
            return TaskArgsBuilder(TensorArg("a", np.ones(1024, np.float32)),
                                   TensorArg("b", np.ones(1024, np.float32)),
                                   TensorArg("out", np.zeros(1024, np.float32)))

        def compute_golden(self, args, params):
            args.out[:] = args.a + args.b

    if __name__ == "__main__":
        SceneTestCase.run_module(__name__)

Run it with ``python test_add.py [-p a2a3sim] [--case NAME] [--manual include]``, with pytest
(``-p pto_runtime.scene.pytest_plugin``), many files with ``python -m pto_runtime.scene``, or
from a program with ``pto_runtime.scene.run(TestAdd, platform="a5sim", timing=True)``.
Arrays may be NumPy arrays or torch tensors (torch is optional). docs/guide/scene_tests.md.
"""

from __future__ import annotations

from .case import SceneTestCase, scene_test
from .cli import run
from .record import CaseRecord
from .spec import Scalar, SceneTestLevel, TaskArgsBuilder, TensorArg, scene_level

__all__ = [
    "CaseRecord",
    "Scalar",
    "SceneTestCase",
    "SceneTestLevel",
    "TaskArgsBuilder",
    "TensorArg",
    "run",
    "scene_level",
    "scene_test",
]
