"""python/pto_runtime/scene/spec.py — what a scene test declares: arguments, levels, cases.

A scene test's ``generate_args`` returns a :class:`TaskArgsBuilder` of named :class:`TensorArg`
and :class:`Scalar` values, in the orchestration's argument order (every tensor before the first
scalar). ``CASES`` is a list of mappings, each with ``name``, ``platforms`` and optionally
``params``, ``config``, ``manual`` and ``skip_golden``; :func:`validate_cases` checks them when
the class is declared, so a typo in a key fails at import with the key and what is allowed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum
from typing import Any, NamedTuple, TypeVar

from . import arrays

__all__ = [
    "CASE_CONFIG_KEYS",
    "RUNTIME_ENV_KEYS",
    "Scalar",
    "SceneTestLevel",
    "TaskArgsBuilder",
    "TensorArg",
    "is_manual_for_platform",
    "match_selectors",
    "parse_selector",
    "scene_level",
    "validate_cases",
]

#: Keys a case's ``config`` may hold. ``block_dim`` (clusters, default: all of the platform's)
#: is ours; the others mean what they mean in the reference implementation.
CASE_CONFIG_KEYS = frozenset(
    {"aicpu_thread_num", "block_dim", "runtime_env", "device_count", "num_sub_workers"}
)
#: Keys of ``config["runtime_env"]``: the tensormap runtime's ring sizes.
RUNTIME_ENV_KEYS = frozenset({"ring_task_window", "ring_heap", "ring_dep_pool"})


class SceneTestLevel(IntEnum):
    """The level a scene test runs at: one chip, one host, many hosts."""

    CHIP = 2
    NODE = 3
    NETWORK1 = 4


_T = TypeVar("_T")


def scene_level(level: int | SceneTestLevel) -> Any:
    """Decorator recording ``level`` on a class or function (``_st_level``)."""
    try:
        normalized = SceneTestLevel(level)
    except ValueError:
        allowed = ", ".join(str(int(m)) for m in SceneTestLevel)
        raise ValueError(f"scene test level {level!r} is not one of {allowed}") from None

    def decorate(obj: _T) -> _T:
        obj._st_level = normalized  # type: ignore[attr-defined]
        return obj

    return decorate


class TensorArg(NamedTuple):
    """A named tensor argument: a NumPy array, a torch tensor, or any CPU array with DLPack."""

    name: str
    value: Any


class Scalar(NamedTuple):
    """A named scalar argument: an int, a float (passed as float32), a NumPy scalar or a ctypes
    scalar (``ctypes.c_int64``, ``ctypes.c_float``, ``ctypes.c_double``, ...)."""

    name: str
    value: Any


class TaskArgsBuilder:
    """The arguments of one run, in order, readable by name (``args.a``).

    ``compute_golden`` receives a clone and writes the expected outputs into it
    (``args.f[:] = args.a + args.b``). Tensors come before scalars, as the orchestration
    receives them; names are unique and may not shadow this class's own members.
    """

    def __init__(self, *specs: TensorArg | Scalar) -> None:
        self._specs: list[TensorArg | Scalar] = []
        self._data: dict[str, Any] = {}
        self._has_scalar = False
        for spec in specs:
            if isinstance(spec, TensorArg):
                self._add(spec, tensor=True)
            elif isinstance(spec, Scalar):
                self._add(spec, tensor=False)
            else:
                raise TypeError(
                    f"TaskArgsBuilder: argument {len(self._specs)} is a {type(spec).__name__}; "
                    "give TensorArg(name, array) or Scalar(name, value)"
                )

    def add_tensor(self, name: str, value: Any) -> None:
        """Appends a tensor (before any scalar)."""
        self._add(TensorArg(name, value), tensor=True)

    def add_scalar(self, name: str, value: Any) -> None:
        """Appends a scalar (after every tensor)."""
        self._add(Scalar(name, value), tensor=False)

    def _add(self, spec: TensorArg | Scalar, tensor: bool) -> None:
        name = spec.name
        if not isinstance(name, str) or not name:
            raise ValueError(f"TaskArgsBuilder: argument name {name!r} is not a non-empty string")
        if name in self._data:
            raise ValueError(f"TaskArgsBuilder: duplicate argument name {name!r}")
        if hasattr(type(self), name):
            raise ValueError(
                f"TaskArgsBuilder: argument name {name!r} would shadow a member of the builder"
            )
        if tensor and self._has_scalar:
            raise ValueError(
                f"TaskArgsBuilder: tensor {name!r} after a scalar; every tensor comes first, as "
                "the orchestration receives them"
            )
        self._has_scalar = self._has_scalar or not tensor
        self._specs.append(spec)
        self._data[name] = spec.value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._data[name]
        except KeyError:
            known = ", ".join(self._data) or "none"
            raise AttributeError(
                f"TaskArgsBuilder has no argument {name!r} (has {known})"
            ) from None

    def clone(self) -> TaskArgsBuilder:
        """A deep copy: every tensor copied (same type and dtype), every scalar copied."""
        new = TaskArgsBuilder()
        for spec in self._specs:
            if isinstance(spec, TensorArg):
                new._add(TensorArg(spec.name, arrays.clone(spec.value)), tensor=True)
            else:
                new._add(Scalar(spec.name, copy.copy(spec.value)), tensor=False)
        return new

    @property
    def specs(self) -> list[TensorArg | Scalar]:
        """Every argument in order."""
        return self._specs

    def tensor_names(self) -> list[str]:
        """The names of the tensors, in order."""
        return [s.name for s in self._specs if isinstance(s, TensorArg)]

    def __repr__(self) -> str:
        return f"TaskArgsBuilder({', '.join(s.name for s in self._specs)})"


def validate_cases(cls: type) -> None:
    """Checks ``cls.CASES`` when the class is declared: TypeError/ValueError naming the case and
    the key, and listing what is allowed."""
    cases = getattr(cls, "CASES", ())
    if not isinstance(cases, Sequence) or isinstance(cases, (str, bytes)):
        raise TypeError(f"{cls.__name__}.CASES must be a list of mappings, got {cases!r}")
    seen: set[str] = set()
    for index, case in enumerate(cases):
        where = f"{cls.__name__}.CASES[{index}]"
        if not isinstance(case, Mapping):
            raise TypeError(f"{where} must be a mapping, got {type(case).__name__}")
        name = case.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where} needs a 'name' (a non-empty string), got {name!r}")
        where = f"{where} ({name!r})"
        if name in seen:
            raise ValueError(f"{where}: another case has this name")
        seen.add(name)
        platforms = case.get("platforms")
        if not isinstance(platforms, Sequence) or isinstance(platforms, str) or not platforms:
            raise ValueError(f"{where}: 'platforms' must be a non-empty list, got {platforms!r}")
        config = case.get("config", {})
        if not isinstance(config, Mapping):
            raise TypeError(f"{where}: config must be a mapping, got {type(config).__name__}")
        unknown = sorted(set(config) - CASE_CONFIG_KEYS)
        if unknown:
            raise ValueError(
                f"{where}: config has unknown keys {', '.join(unknown)}; allowed: "
                f"{', '.join(sorted(CASE_CONFIG_KEYS))}"
            )
        env = config.get("runtime_env", {})
        if not isinstance(env, Mapping):
            raise TypeError(f"{where}: config.runtime_env must be a mapping, got {env!r}")
        unknown = sorted(set(env) - RUNTIME_ENV_KEYS)
        if unknown:
            raise ValueError(
                f"{where}: config.runtime_env has unknown keys {', '.join(unknown)}; allowed: "
                f"{', '.join(sorted(RUNTIME_ENV_KEYS))}"
            )


def is_manual_for_platform(manual: Any, platform: str | None) -> bool:
    """Whether a case's ``manual`` value applies on ``platform``: True for every platform, a
    platform name or a list of names for those only."""
    if isinstance(manual, str):
        return manual == platform
    if isinstance(manual, (list, tuple, set, frozenset)):
        return platform in manual
    return bool(manual)


def parse_selector(value: str) -> tuple[str | None, str | None]:
    """``--case`` forms: ``Name`` (of any class), ``Class::Name``, ``Class::``, ``::Name``."""
    if "::" in value:
        cls_part, case_part = value.split("::", 1)
        return cls_part or None, case_part or None
    return None, value


def match_selectors(
    cls_name: str, case_name: str, selectors: Iterable[tuple[str | None, str | None]]
) -> bool:
    """Whether (class, case) is selected; no selectors select everything."""
    selectors = list(selectors)
    if not selectors:
        return True
    return any((c is None or c == cls_name) and (n is None or n == case_name) for c, n in selectors)
