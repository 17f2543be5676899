"""python/pto_runtime/scene/reference/simpler_setup.py — the reference's ``simpler_setup`` package.

Its scene-test API is this runtime's (``SceneTestCase``, ``scene_test``, ``TaskArgsBuilder``,
``TensorArg``, ``Scalar``, ``CallableNamespace``); the import hook also answers
``simpler_setup.pto_isa``, ``.log_config`` and ``.environment`` with this module. Its kernel
compiler, runtime builder and ELF tools are the reference's own: using them raises
NOT_SUPPORTED. ``simpler_setup.goldens`` and ``.tools`` come from the reference checkout.
"""

from __future__ import annotations

import logging
import os
import sys
import types
from pathlib import Path
from typing import Any

from ...errors import ErrorCode, error_from_code
from ..case import SceneTestCase, scene_test
from ..l3 import CallableNamespace
from ..spec import Scalar, SceneTestLevel, TaskArgsBuilder, TensorArg, scene_level
from .torch_interop import make_chip_tensor_arg, make_tensor_arg, torch_dtype_to_datatype

__all__ = [
    "CallableNamespace",
    "DEFAULT_LOG_LEVEL",
    "LOG_LEVEL_CHOICES",
    "Scalar",
    "SceneTestCase",
    "SceneTestLevel",
    "TaskArgsBuilder",
    "TensorArg",
    "configure_logging",
    "ensure_pto_isa_root",
    "make_chip_tensor_arg",
    "make_tensor_arg",
    "parse_platform",
    "scene_level",
    "scene_test",
    "torch_dtype_to_datatype",
]

LOG_LEVEL_CHOICES = ("debug", "info", "timing", "warn", "error", "null")
DEFAULT_LOG_LEVEL = "warn"


def _project_root() -> Path:
    from . import installed_root

    return installed_root() or Path.cwd()


def ensure_pto_isa_root(verbose: bool = False) -> str:
    """The PTO-ISA checkout tile kernels compile against: ``$PTO_ISA_ROOT``."""
    root = os.environ.get("PTO_ISA_ROOT")
    if not root:
        raise error_from_code(
            ErrorCode.MISSING_DEPENDENCY,
            "PTO_ISA_ROOT is not set; point it at a PTO-ISA checkout (scripts/fetch_pto_isa.sh)",
        )
    return root


def configure_logging(level: str = DEFAULT_LOG_LEVEL) -> None:
    """Sets the level of Python's ``simpler`` loggers (the runtime's own log has its config)."""
    levels = {
        "debug": logging.DEBUG,
        "info": logging.INFO,
        "timing": logging.INFO,
        "warn": logging.WARNING,
        "error": logging.ERROR,
        "null": logging.CRITICAL + 1,
    }
    logging.getLogger("simpler").setLevel(levels.get(str(level).lower(), logging.WARNING))


def parse_platform(platform: str) -> tuple[str, bool]:
    """(chip generation, whether simulated): ``"a2a3sim"`` -> ``("a2a3", True)``."""
    sim = platform.endswith("sim")
    return (platform[:-3] if sim else platform), sim


def __getattr__(name: str) -> Any:
    if name == "PROJECT_ROOT":
        return _project_root()
    if name.startswith("__"):
        raise AttributeError(name)
    from . import stand_in

    return stand_in("the reference's internal Python API", f"simpler_setup.{name}")


class _Package(types.ModuleType):
    """Keeps ``simpler_setup.scene_test`` the decorator: importing the submodule of the same
    name would otherwise rebind the package attribute to the module (the reference's package
    rebinds it back in its own ``__init__``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and callable(self.__dict__.get(name)):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
