"""python/pto_runtime/scene/build.py — a scene test's CALLABLE compiled into a ChipCallable.

An L2 ``CALLABLE`` (or one entry of an L3 ``CALLABLE["callables"]``) names an orchestration —
``source``, ``function_name``, ``signature`` — and its incores, each ``func_id``, ``source``,
``core_type`` (``"aic"``, ``"aiv"`` or ``"mix"``), ``signature`` and optional
``extra_include_dirs``. The orchestration and every incore compile in parallel on the kernel
compiler's pool, printing progress to stderr; binaries are cached on disk by the compiler and,
per process, here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._native import ChipCallable, CoreType, KernelCompiler
from ..errors import ErrorCode, error_from_code
from ..timing import add_cost_models
from . import record

__all__ = [
    "CompiledCallable",
    "DEFAULT_ENTRY",
    "compile_spec",
    "core_type_of",
    "orchestration_defines",
    "resolve_spec_paths",
]

DEFAULT_ENTRY = "aicpu_orchestration_entry"
DEFAULT_CONFIG = "aicpu_orchestration_config"
_CORE_TYPES = {"aic": CoreType.AIC, "aiv": CoreType.AIV, "mix": CoreType.MIX}


@dataclass
class CompiledCallable:
    """A compiled chip callable and what it was built from (timing mode adds cost models)."""

    callable: ChipCallable
    platform: str
    runtime: str
    signature: list[Any]
    # Each compiler (one per set of extra include dirs) with the kernels it built:
    # (func_id, core type, source).
    groups: list[tuple[KernelCompiler, list[tuple[int, CoreType, str]]]] = field(
        default_factory=list
    )
    cost_models: bool = False
    binary_size: int = 0  # bytes of the orchestration and kernel objects, when known

    def __getattr__(self, name: str) -> Any:
        # Only for names the dataclass lacks: the reference's ChipCallable internals.
        raise record.reference_internal(
            name,
            f"ChipCallable.{name} (the reference's callable registry: hashid, prepare, unregister)",
        )

    def add_cost_models(self) -> list[str]:
        """Attaches every tile kernel's cost-model twin (once); returns why some have none."""
        if self.cost_models:
            return []
        missing: list[str] = []
        for compiler, kernels in self.groups:
            missing += add_cost_models(compiler, self.callable, kernels, progress=True)
        self.cost_models = True
        return missing


def core_type_of(value: Any, where: str) -> CoreType:
    """``"aic"``/``"aiv"``/``"mix"`` (any case) or a CoreType; ValueError naming ``where``."""
    if isinstance(value, CoreType):
        return value
    if isinstance(value, str) and value.lower() in _CORE_TYPES:
        return _CORE_TYPES[value.lower()]
    raise ValueError(f"{where}: core_type {value!r} is not one of 'aic', 'aiv', 'mix'")


def resolve_spec_paths(spec: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """A copy of a chip spec (orchestration + incores) with relative paths made absolute
    against ``base`` (the test file's folder); ``$VAR`` include dirs are left for later."""
    out = dict(spec)
    orch = spec.get("orchestration")
    if isinstance(orch, Mapping) and "source" in orch:
        out["orchestration"] = {**orch, "source": str(_absolute(orch["source"], base))}
    if "incores" in spec:
        incores = []
        for k in spec["incores"]:
            k = dict(k)
            if "source" in k:
                k["source"] = str(_absolute(k["source"], base))
            if k.get("extra_include_dirs"):
                k["extra_include_dirs"] = [
                    d if "$" in str(d) else str(_absolute(d, base)) for d in k["extra_include_dirs"]
                ]
            incores.append(k)
        out["incores"] = incores
    return out


def _absolute(path: str | os.PathLike[str], base: Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else (base / p).resolve()


def _include_dirs(incore: Mapping[str, Any]) -> tuple[str, ...]:
    """An incore's extra include dirs with ``$VAR`` expanded; those that do not exist are
    dropped, but a declared set of which none exists is an error naming them."""
    dirs = incore.get("extra_include_dirs") or []
    found = []
    for raw in dirs:
        expanded = os.path.expandvars(str(raw))
        if "$" in expanded:
            raise error_from_code(
                ErrorCode.MISSING_DEPENDENCY,
                f"incore {incore.get('source')}: extra_include_dirs entry {raw!r} names an "
                "environment variable that is not set",
            )
        if Path(expanded).is_dir():
            found.append(expanded)
    if dirs and not found:
        raise error_from_code(
            ErrorCode.MISSING_DEPENDENCY,
            f"incore {incore.get('source')}: none of its extra_include_dirs exists here: "
            + ", ".join(os.path.expandvars(str(d)) for d in dirs),
        )
    return tuple(found)


def orchestration_defines(function_name: str | None, config_name: str | None) -> list[str]:
    """The defines that bind an orchestration's entry and config functions to other names than
    the defaults (this runtime binds them when the orchestration compiles)."""
    defines = []
    if function_name and function_name != DEFAULT_ENTRY:
        defines.append(f"PTO_ORCHESTRATION_ENTRY={function_name}")
    if config_name and config_name != DEFAULT_CONFIG:
        defines.append(f"PTO_ORCHESTRATION_CONFIG={config_name}")
    return defines


def compile_spec(
    spec: Mapping[str, Any], platform: str, runtime: str, *, progress: bool = True
) -> CompiledCallable:
    """Compiles a chip spec (paths already absolute) for ``platform``/``runtime``."""
    orch = spec.get("orchestration")
    if not isinstance(orch, Mapping) or "source" not in orch:
        raise ValueError("CALLABLE['orchestration'] must be a mapping with a 'source'")
    incores = list(spec.get("incores", []))

    defines = orchestration_defines(orch.get("function_name"), orch.get("config_name"))
    orch_path = KernelCompiler(platform, defines=defines).compile_orchestration(
        runtime, orch["source"]
    )
    callable_ = ChipCallable(orch_path)
    compiled = CompiledCallable(callable_, platform, runtime, list(orch.get("signature", [])))

    groups: dict[tuple[str, ...], list[tuple[int, CoreType, str]]] = {}
    seen: set[int] = set()
    for i, k in enumerate(incores):
        where = f"CALLABLE['incores'][{i}]"
        func_id = k.get("func_id")
        if isinstance(func_id, bool) or not isinstance(func_id, int) or func_id < 0:
            raise ValueError(f"{where}: func_id {func_id!r} is not an int >= 0")
        if func_id in seen:
            raise ValueError(f"{where}: func_id {func_id} is declared twice")
        seen.add(func_id)
        dirs = _include_dirs(k)
        kernel = (func_id, core_type_of(k.get("core_type"), where), k["source"])
        groups.setdefault(dirs, []).append(kernel)
    for dirs, kernels in groups.items():
        kc = KernelCompiler(platform, include_dirs=list(dirs))
        paths = kc.compile_incore_many(
            [(source, core) for _, core, source in kernels], progress=progress
        )
        for (func_id, core, _), path in zip(kernels, paths):
            callable_.add_kernel(func_id, core, path)
        compiled.groups.append((kc, kernels))
    return compiled


def signature_of(spec: Mapping[str, Any]) -> Sequence[Any]:
    """The orchestration's signature in a chip spec (empty when it declares none)."""
    orch = spec.get("orchestration")
    return list(orch.get("signature", [])) if isinstance(orch, Mapping) else []
