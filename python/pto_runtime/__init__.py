"""python/pto_runtime/__init__.py — PTO Runtime: task graphs on a (simulated) Ascend-like chip.

Backends: ``pto.backends()`` lists cpu_sim (the simulated chips), ascend_npu and amd_aie with
their availability; ``pto.CompileOptions(target="cpu_sim", opt_level=3)`` drives both
``.kernel_compiler()`` and ``.call_config()``.

Many chips on one host (L3): ``pto.Worker(level=3, device_ids=[0, 1], mode="process")``,
see ``pto_runtime.l3``. Many hosts on MPI (L4): ``pto.Worker(level=4, ...)`` under ``mpirun``,
see ``pto_runtime.l4``.

One chip (L2)::

    import numpy as np
    import pto_runtime as pto

    kc = pto.KernelCompiler("a2a3sim")
    callable = pto.ChipCallable(kc.compile_orchestration("host_build_graph", "orch.cpp"))
    callable.add_kernel(0, pto.CoreType.AIV, kc.compile_incore("add.cpp", pto.CoreType.AIV))
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a)
    args.add_tensor(out, "out")
    with pto.Worker(level=2, platform="a2a3sim") as worker:
        stats = worker.run(callable, args, pto.ChipCallConfig(block_dim=4))

Enumerated settings take a Python enum: ``pto.ChipCallConfig(pipeline_scope=pto.PipelineScope.
PER_STREAM)``, or its name in any case (``"per_stream"``) or its number, and read back as the
member; ``CompileOptions`` takes the same enums for the same settings.

Everything native lives in the private module ``_native``; this package re-exports it, adds
the NumPy-facing ``ChipStorageTaskArgs`` and the ``Worker`` factory, and turns every runtime
failure into a ``pto_runtime.Error`` subclass (see ``errors``).
"""

from __future__ import annotations

try:
    from . import _native
except ImportError as e:  # e.g. importing python/pto_runtime from the source tree
    raise ImportError(
        f"pto_runtime's native module is missing next to {__file__}: build and install the "
        "package with `pip install .` from the repository root (never `pip install -e`)"
    ) from e
from . import l4 as l4  # pto_runtime.l4.Orchestrator, the L4 types
from ._native import (
    Backend,
    BackendInfo,
    ChipCallable,
    ChipCallConfig,
    ChipMode,
    ChipWorker,
    CompileOptions,
    CoreType,
    CostModelBuild,
    Direction,
    DispatchMetric,
    DispatchPolicy,
    DispatchScope,
    DType,
    KernelCompiler,
    KernelTableRow,
    LogLevel,
    PipelineScope,
    PlatformInfo,
    RunStats,
    RuntimeBinaries,
    RuntimeBuilder,
    WindowOverflow,
    backend_for_platform,
    backends,
    get_backend,
    read_kernel_table,
)
from .comm import ChipDomainContext, CommBuffer, CommBufferSpec, CommDomain, DeviceTensor
from .errors import (
    DeviceError,
    Error,
    ErrorCode,
    InvalidArgumentError,
    KernelCompileError,
    LoadError,
    MissingDependencyError,
    NotSupportedError,
    OrchestrationError,
    RingCapacityError,
    RunTimeoutError,
    TaskFailedError,
    error_from_code,
)
from .fuzz import ScheduleFuzzReport, TensorDiff, fuzz_schedules
from .isolated import IsolatedChipWorker
from .l3 import Event, Orchestrator, RunHandle, SubContext, WorkerRunStats
from .task_args import ChipStorageTaskArgs
from .timing import add_cost_models, report_timing, timed_rerun
from .trace import Trace
from .worker import Worker

# From here on every pto::Error thrown in C++ is raised as the class errors.py assigns its code.
_native.set_error_factory(error_from_code)


__version__: str = _native.VERSION

__all__ = [
    "Backend",
    "BackendInfo",
    "ChipCallConfig",
    "ChipCallable",
    "ChipDomainContext",
    "ChipMode",
    "ChipStorageTaskArgs",
    "ChipWorker",
    "CommBuffer",
    "CommBufferSpec",
    "CommDomain",
    "CompileOptions",
    "CoreType",
    "CostModelBuild",
    "DType",
    "DeviceError",
    "DeviceTensor",
    "Event",
    "Direction",
    "DispatchMetric",
    "DispatchPolicy",
    "DispatchScope",
    "Error",
    "ErrorCode",
    "InvalidArgumentError",
    "IsolatedChipWorker",
    "KernelCompileError",
    "KernelCompiler",
    "KernelTableRow",
    "LoadError",
    "LogLevel",
    "MissingDependencyError",
    "NotSupportedError",
    "Orchestrator",
    "OrchestrationError",
    "PipelineScope",
    "PlatformInfo",
    "RingCapacityError",
    "RunHandle",
    "RunStats",
    "RunTimeoutError",
    "RuntimeBinaries",
    "RuntimeBuilder",
    "ScheduleFuzzReport",
    "SubContext",
    "TaskFailedError",
    "TensorDiff",
    "Trace",
    "Worker",
    "WindowOverflow",
    "WorkerRunStats",
    "__version__",
    "add_cost_models",
    "backend_for_platform",
    "backends",
    "fuzz_schedules",
    "get_backend",
    "read_kernel_table",
    "report_timing",
    "timed_rerun",
]
