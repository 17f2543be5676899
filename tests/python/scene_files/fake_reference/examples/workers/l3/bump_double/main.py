"""tests/python/scene_files/fake_reference/examples/workers/l3/bump_double/main.py — an example
program written against the reference implementation's Worker API, as its examples/workers
programs are: it compiles its kernels, assembles the chip callable, names memory through buffer
handles and checks its own results. Returns 0 when every check holds."""

from pathlib import Path

import numpy as np
from simpler.task_interface import ArgDirection as D
from simpler.task_interface import (
    CallConfig,
    ChipCallable,
    CoreCallable,
    DataType,
    TaskArgs,
    TensorArgType,
)
from simpler.worker import Worker
from simpler_setup.kernel_compiler import KernelCompiler

K = Path(__file__).resolve().parents[5] / "kernels"
N = 32
RUNTIME = "tensormap_and_ringbuffer"


def build(platform):
    kc = KernelCompiler(platform=platform)
    dirs = kc.get_orchestration_include_dirs(RUNTIME) + [str(kc.project_root / "src" / "common")]
    bump = kc.compile_incore(source_path=K / "bump.cpp", core_type="aiv", extra_include_dirs=dirs)
    double = kc.compile_incore(source_path=K / "double.cpp", core_type="aiv")
    orch = kc.compile_orchestration(runtime_name=RUNTIME, source_path=K / "orch.cpp")
    return ChipCallable.build(
        signature=[D.INOUT, D.OUT],
        func_name="aicpu_orchestration_entry",
        binary=orch,
        children=[
            (0, CoreCallable.build(signature=[D.INOUT], binary=bump)),
            (1, CoreCallable.build(signature=[D.IN, D.OUT], binary=double)),
        ],
    )


def run(platform, device_ids):
    worker = Worker(level=3, platform=platform, runtime=RUNTIME, device_ids=device_ids)
    handle = worker.register(build(platform))
    worker.init()
    try:
        x_buf = worker.create_buffer(N * 4)  # host memory every chip reaches
        x = np.frombuffer(x_buf.shm.buf, np.float32)
        x[:] = np.arange(N, dtype=np.float32)
        y0 = np.zeros(N, np.float32)
        y1 = np.zeros(N, np.float32)
        back = np.zeros(N, np.float32)
        state = {}

        def orch_fn(orch, _args, cfg):
            # Chip 1 gets its own copy of x in its memory, used in place.
            dev = orch.alloc_child_tensor(worker_id=1, shapes=(N,), dtype=DataType.FLOAT32)
            orch.copy_to(dev, x_buf)
            state["dev"] = dev
            a0 = TaskArgs()
            a0.add_tensor(x_buf.tensor((N,), DataType.FLOAT32), TensorArgType.INOUT)
            a0.add_tensor(
                worker.make_tensor_arg(y0, shapes=(N,), dtype=0), TensorArgType.OUTPUT_EXISTING
            )
            orch.submit_next_level(handle, a0, cfg, worker=0)
            a1 = TaskArgs()
            a1.add_tensor(dev.tensor((N,), DataType.FLOAT32), TensorArgType.INOUT)
            a1.add_tensor(y1, TensorArgType.OUTPUT_EXISTING)
            orch.submit_next_level(handle, a1, cfg, worker=1)

        assert worker.run(orch_fn, args=None, config=CallConfig()) is None
        worker.copy_from(back, state["dev"])
        want = np.arange(N, dtype=np.float32) + 1
        checks = {
            "x bumped in place": np.array_equal(x, want),
            "y0 = 2 x": np.array_equal(y0, 2 * want),
            "chip 1's copy bumped": np.array_equal(back, want),
            "y1 = 2 x": np.array_equal(y1, 2 * want),
        }
        for name, ok in checks.items():
            print(f"[bump_double] {name}: {'ok' if ok else 'WRONG'}")
        if not all(checks.values()):
            return 1
        print("[bump_double] checks PASSED")
        return 0
    finally:
        worker.close()
