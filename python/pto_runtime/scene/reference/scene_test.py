"""python/pto_runtime/scene/reference/scene_test.py — ``simpler_setup.scene_test`` on this runtime.

The reference's scene-test module: the public classes (this runtime's), and the private
helpers its tests call by name (argument builders, the default comparison, the diagnostics
folder), each doing here what it does there. Other private names raise NOT_SUPPORTED.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..case import SceneTestCase, scene_test
from ..execute import build_chip_args, default_compare
from ..l3 import CallableNamespace, build_l3_task_args
from ..spec import (
    Scalar,
    SceneTestLevel,
    TaskArgsBuilder,
    TensorArg,
    is_manual_for_platform,
    scene_level,
)

__all__ = [
    "CallableNamespace",
    "Scalar",
    "SceneTestCase",
    "SceneTestLevel",
    "TaskArgsBuilder",
    "TensorArg",
    "is_manual_for_platform",
    "scene_level",
    "scene_test",
]


def _outputs_dir() -> Path:
    """Where diagnostics go: ``outputs/`` under the current directory."""
    return Path.cwd() / "outputs"


def _sanitize_for_filename(s: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in s)


def _compare_outputs(
    test_args: TaskArgsBuilder,
    golden_args: TaskArgsBuilder,
    output_names: list[str],
    rtol: float,
    atol: float,
) -> None:
    default_compare(test_args, golden_args, output_names, rtol, atol)


def _build_chip_task_args(test_args: TaskArgsBuilder, orch_signature: Sequence[Any]) -> Any:
    return build_chip_args(test_args, orch_signature)


def _build_l2_ref_args(
    test_args: TaskArgsBuilder, orch_signature: Sequence[Any], worker: Any = None
) -> Any:
    return build_chip_args(test_args, orch_signature)


def _build_l3_task_args(
    test_args: TaskArgsBuilder, orch_signature: Sequence[Any], worker: Any = None
) -> Any:
    return build_l3_task_args(test_args, orch_signature)


def _rehosted_ref(test_args: TaskArgsBuilder, name: str) -> Any:
    """The tensor ``name`` as an L3 task argument: the tensor itself (chips run in this
    process's address space)."""
    return getattr(test_args, name)


def _rehosted_ref_for(test_args: TaskArgsBuilder, tensor: Any) -> Any:
    return tensor


def _l3_ref(test_args: TaskArgsBuilder, name: str, worker: Any = None) -> Any:
    return getattr(test_args, name)


def clear_compile_cache() -> None:
    from .. import case

    case._compiled.clear()


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from . import stand_in

    return stand_in("the reference's internal Python API", f"simpler_setup.scene_test.{name}")
