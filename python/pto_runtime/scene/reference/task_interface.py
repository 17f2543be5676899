"""python/pto_runtime/scene/reference/task_interface.py — ``simpler.task_interface`` here.

What the reference's scene tests take from it: ``ArgDirection`` (a signature's directions, here
the members of ``pto_runtime.Direction``), ``TensorArgType`` (an L3 task argument's tag),
``DataType``, ``TaskArgs`` (an L3 task's arguments), ``CallConfig``, ``scalar_to_uint64`` and the
communication domain's ``CommBufferSpec``, ``ChipDomainContext`` and ``CommDomainHandle``
(pto_runtime.comm's). The rest of the reference's module (its native records, global domains
across hosts, remote buffers) has no counterpart here and raises NOT_SUPPORTED naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from ..._native import ChipCallConfig, Direction, DType
from ...comm import ChipDomainContext, CommBufferSpec
from ...comm import CommDomain as CommDomainHandle
from .. import record
from ..build import CompiledCallable
from ..execute import scalar_bits

__all__ = [
    "ArgDirection",
    "CallConfig",
    "ChipCallable",
    "ChipDomainContext",
    "CommBufferSpec",
    "CommDomainHandle",
    "CoreCallable",
    "DataType",
    "TaskArgs",
    "TensorArgType",
    "scalar_to_uint64",
]


class ArgDirection:
    """A signature entry: ``D.IN``, ``D.OUT``, ``D.INOUT`` are pto_runtime.Direction members."""

    IN = Direction.INPUT
    OUT = Direction.OUTPUT
    INOUT = Direction.INOUT
    SCALAR = None  # a scalar position: never a tensor's direction


class TensorArgType(IntEnum):
    """How an L3 task uses a tensor (the reference's tags); :meth:`direction` is ours."""

    INPUT = 0
    OUTPUT = 1
    INOUT = 2
    OUTPUT_EXISTING = 3
    NO_DEP = 4

    def direction(self) -> Direction:
        if self in (TensorArgType.OUTPUT, TensorArgType.OUTPUT_EXISTING):
            return Direction.OUTPUT
        if self == TensorArgType.INOUT:
            return Direction.INOUT
        return Direction.INPUT


class DataType:
    """The reference's dtypes, as pto_runtime.DType members."""

    FLOAT32 = DType.FLOAT32
    FLOAT16 = DType.FLOAT16
    BFLOAT16 = DType.BFLOAT16
    INT8 = DType.INT8
    INT16 = DType.INT16
    INT32 = DType.INT32
    INT64 = DType.INT64
    UINT8 = DType.UINT8
    UINT16 = DType.UINT16
    UINT32 = DType.UINT32
    UINT64 = DType.UINT64
    BOOL = DType.BOOL

    @staticmethod
    def of_torch(dtype: Any) -> DType:
        name = str(dtype).replace("torch.", "").upper()
        found = getattr(DataType, {"FLOAT": "FLOAT32", "HALF": "FLOAT16"}.get(name, name), None)
        if not isinstance(found, DType):
            raise ValueError(f"torch dtype {dtype} has no pto_runtime.DType")
        return found


class CoreCallable:
    """A tile kernel for ``ChipCallable.build``: its signature and its compiled binary (from
    ``simpler_setup.kernel_compiler.KernelCompiler.compile_incore``)."""

    def __init__(self, signature: Sequence[Any], binary: Any) -> None:
        self.signature = list(signature)
        self.binary = binary

    @classmethod
    def build(cls, signature: Sequence[Any] = (), binary: Any = b"") -> CoreCallable:
        from .kernel_compiler import KernelBinary

        if not isinstance(binary, KernelBinary):
            raise record.not_supported(
                "the reference's internal Python API",
                "CoreCallable.build takes the binary KernelCompiler.compile_incore returned "
                f"(got {type(binary).__name__}); raw kernel bytes cannot be loaded here",
            )
        return cls(signature, binary)


class ChipCallable:
    """``ChipCallable.build(signature=, func_name=, binary=, children=[(func_id,
    CoreCallable)], config_name=)``: the orchestration and its kernels as one chip callable (a
    scene CompiledCallable, which ``Worker.register`` and the orchestrator take)."""

    @staticmethod
    def build(
        signature: Sequence[Any] = (),
        func_name: str | None = None,
        binary: Any = b"",
        children: Sequence[tuple[int, CoreCallable]] = (),
        config_name: str | None = None,
        **_options: Any,
    ) -> CompiledCallable:
        from ..._native import ChipCallable as _Native
        from ..._native import KernelCompiler
        from ..build import orchestration_defines
        from .kernel_compiler import OrchestrationBinary

        if not isinstance(binary, OrchestrationBinary):
            raise record.not_supported(
                "the reference's internal Python API",
                "ChipCallable.build takes the binary KernelCompiler.compile_orchestration "
                f"returned (got {type(binary).__name__})",
            )
        defines = orchestration_defines(func_name, config_name)
        path = binary.path
        if defines:
            path = KernelCompiler(binary.platform, defines=defines).compile_orchestration(
                binary.runtime, binary.source
            )
        native = _Native(path)
        compiled = CompiledCallable(native, binary.platform, binary.runtime, list(signature))
        compiled.binary_size = len(binary) + sum(len(core.binary) for _, core in children)
        seen: set[int] = set()
        for func_id, core in children:
            if func_id in seen:
                raise ValueError(f"ChipCallable.build: children name func_id {func_id} twice")
            seen.add(func_id)
            kernel = core.binary
            native.add_kernel(func_id, kernel.core_type, kernel.path)
            compiled.groups.append((kernel.compiler, [(func_id, kernel.core_type, kernel.source)]))
        return compiled


def scalar_to_uint64(value: Any) -> int:
    """A scalar's 64 bits as the kernel reads them (floats as float32 bits)."""
    return scalar_bits(value)


class TaskArgs:
    """An L3 task's arguments: tensors with their tags, then scalars."""

    def __init__(self) -> None:
        self.tensors: list[tuple[Any, TensorArgType]] = []
        self.scalars: list[Any] = []

    def add_tensor(self, tensor: Any, tag: TensorArgType = TensorArgType.INPUT) -> None:
        self.tensors.append((tensor, TensorArgType(tag)))

    def add_scalar(self, value: Any) -> None:
        self.scalars.append(value)

    def clear(self) -> None:
        self.tensors.clear()
        self.scalars.clear()

    def tensor_count(self) -> int:
        return len(self.tensors)

    def scalar_count(self) -> int:
        return len(self.scalars)

    def __len__(self) -> int:
        return len(self.tensors) + len(self.scalars)


class _RuntimeEnv:
    def __init__(self) -> None:
        self.ring_task_window = 0
        self.ring_heap = 0
        self.ring_dep_pool = 0


class CallConfig:
    """The reference's per-run config; :meth:`to_native` makes this runtime's ChipCallConfig."""

    def __init__(self) -> None:
        self.aicpu_thread_num = 0
        self.enable_chip_swimlane = 0
        self.enable_dump_args = 0
        self.enable_pmu = 0
        self.enable_dep_gen = 0
        self.enable_scope_stats = 0
        self.output_prefix = ""
        self.runtime_env = _RuntimeEnv()

    def to_native(self, platform: str, info: Any = None) -> ChipCallConfig:
        from ..execute import RunOptions, build_config
        from .simpler_setup import device_log_level

        env = {k: getattr(self.runtime_env, k) for k in vars(self.runtime_env)}
        options = RunOptions(
            profiling=bool(self.enable_chip_swimlane),
            pmu=bool(self.enable_pmu),
            dump_tensors=bool(self.enable_dump_args),
        )
        config = {"aicpu_thread_num": self.aicpu_thread_num, "runtime_env": env}
        native = build_config(platform, info, config, options)
        native.log_level = device_log_level()  # simpler_setup.configure_logging's
        return native


_COMM = {
    "GlobalCommDomainHandle",
    "GlobalCommDomainView",
}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from . import stand_in

    feature = (
        "communication domains across hosts (global domains)"
        if name in _COMM
        else "the reference's internal Python API"
    )
    return stand_in(feature, f"simpler.task_interface.{name}")
