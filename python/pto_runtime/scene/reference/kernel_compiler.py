"""python/pto_runtime/scene/reference/kernel_compiler.py — ``simpler_setup.kernel_compiler``.

The reference's example programs compile their own kernels and assemble the chip callable by
hand: ``KernelCompiler(platform=).compile_incore(source_path=, core_type=, ...)`` and
``.compile_orchestration(runtime_name=, source_path=)`` give binaries, which
``CoreCallable.build(signature=, binary=)`` and ``ChipCallable.build(signature=, func_name=,
binary=, children=)`` (``simpler.task_interface``) put together. Here the compiler is this
runtime's (``pto_runtime.KernelCompiler``, its disk cache included), and a binary is the
compiled shared object's bytes that also remembers where it came from: ``ChipCallable.build``
loads the object itself, and recompiles the orchestration when ``func_name``/``config_name``
name another entry than the default, which this runtime binds at compile time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._native import KernelCompiler as _NativeCompiler
from ..build import core_type_of

__all__ = ["KernelBinary", "KernelCompiler", "OrchestrationBinary"]


class _Binary(bytes):
    """A compiled shared object's bytes, with its ``path`` and ``source``."""

    path: str
    source: str

    @classmethod
    def of(cls, path: str, source: str, **built_from: Any) -> Any:
        out = cls(Path(path).read_bytes())
        out.path, out.source = path, source
        for key, value in built_from.items():
            setattr(out, key, value)
        return out


class KernelBinary(_Binary):
    """A compiled tile kernel, with the compiler and core type it was built with (what
    ``CoreCallable.build`` needs)."""

    compiler: _NativeCompiler
    core_type: Any


class OrchestrationBinary(_Binary):
    """A compiled orchestration (default entry names), with what rebuilding it takes."""

    platform: str
    runtime: str


def _include_dirs(dirs: Sequence[Any] | None) -> list[str]:
    """The extra include dirs that exist here (the reference's own source tree does not)."""
    return [str(d) for d in dirs or () if Path(str(d)).is_dir()]


class KernelCompiler:
    """The reference's kernel compiler, on this runtime's."""

    def __init__(self, platform: str = "a2a3sim", **_options: Any) -> None:
        self.platform = platform

    @property
    def project_root(self) -> Path:
        """The reference checkout the tests come from (its ``src/`` is not there: include dirs
        under it are dropped)."""
        from .simpler_setup import _project_root

        return _project_root()

    def get_orchestration_include_dirs(self, runtime: str = "") -> list[str]:
        """Where this runtime's orchestration and kernel ABI headers are."""
        import pto_runtime

        abi = Path(pto_runtime.__file__).parent / "include" / "pto_abi"
        return [str(abi)] if abi.is_dir() else []

    def compile_incore(
        self,
        source_path: str | os.PathLike[str],
        core_type: Any = "aiv",
        pto_isa_root: str | None = None,
        extra_include_dirs: Sequence[Any] | None = None,
        **_options: Any,
    ) -> KernelBinary:
        core = core_type_of(core_type, f"compile_incore({source_path})")
        compiler = _NativeCompiler(
            self.platform, include_dirs=_include_dirs(extra_include_dirs), pto_isa_root=pto_isa_root
        )
        source = str(Path(source_path).resolve())
        path = compiler.compile_incore(source, core)
        return KernelBinary.of(path, source, compiler=compiler, core_type=core)

    def compile_orchestration(
        self, runtime_name: str, source_path: str | os.PathLike[str], **_options: Any
    ) -> OrchestrationBinary:
        source = str(Path(source_path).resolve())
        path = _NativeCompiler(self.platform).compile_orchestration(runtime_name, source)
        return OrchestrationBinary.of(path, source, platform=self.platform, runtime=runtime_name)
