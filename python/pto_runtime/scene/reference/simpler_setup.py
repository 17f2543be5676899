"""python/pto_runtime/scene/reference/simpler_setup.py — the reference's ``simpler_setup`` package.

Its scene-test API is this runtime's (``SceneTestCase``, ``scene_test``, ``TaskArgsBuilder``,
``TensorArg``, ``Scalar``, ``CallableNamespace``); the import hook also answers
``simpler_setup.pto_isa``, ``.log_config``, ``.environment`` and ``simpler._log`` with this
module. The log level (``configure_logging``, ``get_current_config``) is this runtime's device
log threshold (``ChipCallConfig.log_level``) for the runs of the reference's ``CallConfig``;
at ``info`` or ``debug`` the device log is echoed to stderr (``PTO_LOG_STDERR=1``), where the
reference's sim prints it. Its kernel
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
    "device_log_level",
    "ensure_pto_isa_root",
    "get_current_config",
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


# Each reference level as Python's logging level and this runtime's device log threshold
# (LogLevel: 0 debug, 1 info, 2 warn, 3 error, 4 off); the device has no TIMING level, and
# TIMING sits between INFO and WARN, so it keeps WARN's threshold.
_LEVELS = {
    "debug": (logging.DEBUG, 0),
    "info": (logging.INFO, 1),
    "timing": (logging.INFO, 2),
    "warn": (logging.WARNING, 2),
    "error": (logging.ERROR, 3),
    "null": (logging.CRITICAL + 1, 4),
}
_current = DEFAULT_LOG_LEVEL
_echo_set = False  # PTO_LOG_STDERR was set by configure_logging (and is unset by it)


def configure_logging(level: str = DEFAULT_LOG_LEVEL) -> None:
    """Sets the level of Python's ``simpler`` loggers and the device log threshold of later
    runs (:func:`device_log_level`); ``info`` and ``debug`` also echo the device log to stderr.
    A level outside LOG_LEVEL_CHOICES raises InvalidArgumentError naming them."""
    global _current, _echo_set
    name = str(level).lower()
    if name not in _LEVELS:
        raise error_from_code(
            ErrorCode.INVALID_ARGUMENT,
            f"configure_logging: level {level!r}; one of {', '.join(LOG_LEVEL_CHOICES)}",
        )
    _current = name
    logging.getLogger("simpler").setLevel(_LEVELS[name][0])
    if _LEVELS[name][1] < _LEVELS["warn"][1]:
        if os.environ.get("PTO_LOG_STDERR") != "1":
            os.environ["PTO_LOG_STDERR"] = "1"
            _echo_set = True
    elif _echo_set:
        os.environ.pop("PTO_LOG_STDERR", None)
        _echo_set = False


def get_current_config() -> str:
    """The level :func:`configure_logging` last set (what it takes back)."""
    return _current


def device_log_level() -> int:
    """The device log threshold (LogLevel) of the current level."""
    return _LEVELS[_current][1]


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
