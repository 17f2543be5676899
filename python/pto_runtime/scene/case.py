"""python/pto_runtime/scene/case.py — SceneTestCase and @scene_test: a test declared, not written.

A scene test class declares what to compile (``CALLABLE``), how to run it (``CASES``: per
case its platforms, params and config) and how to check it (``generate_args``,
``compute_golden``, ``RTOL``/``ATOL`` or ``compare_outputs``); the framework compiles, runs and
compares. ``@scene_test(level=2, runtime="tensormap_and_ringbuffer")`` marks the class. Run a
file with ``python test_x.py`` (``SceneTestCase.run_module(__name__)``), with pytest (the
``pto_runtime.scene.pytest_plugin``), or many files with ``python -m pto_runtime.scene``.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, TypeVar

from .._native import ChipCallConfig
from . import execute
from .build import CompiledCallable, compile_spec, resolve_spec_paths
from .execute import RunOptions, default_compare
from .spec import (
    SceneTestLevel,
    TaskArgsBuilder,
    is_manual_for_platform,
    match_selectors,
    parse_selector,
    scene_level,
    validate_cases,
)

__all__ = ["SceneTestCase", "scene_test"]

_C = TypeVar("_C", bound=type)

# Compiled callables of this process, by (module, class, entry name, platform, runtime).
_compiled: dict[tuple[str, ...], Any] = {}


def scene_test(level: int | SceneTestLevel, runtime: str) -> Callable[[_C], _C]:
    """Marks a SceneTestCase subclass: its level (2: one chip, 3: one host) and runtime
    (``"tensormap_and_ringbuffer"`` or ``"host_build_graph"``). Checks ``CASES`` and makes
    the ``CALLABLE``'s source paths absolute against the test file's folder."""
    mark = scene_level(level)

    def decorate(cls: _C) -> _C:
        validate_cases(cls)
        mark(cls)
        cls._st_runtime = runtime  # type: ignore[attr-defined]
        base = Path(inspect.getfile(cls)).resolve().parent
        cls._st_dir = base  # type: ignore[attr-defined]
        spec = getattr(cls, "CALLABLE", None)
        if isinstance(spec, Mapping) and spec:
            if "callables" in spec:  # L3: resolve every chip entry
                resolved = dict(spec)
                resolved["callables"] = [
                    resolve_spec_paths(e, base) if "orchestration" in e else e
                    for e in spec["callables"]
                ]
                cls.CALLABLE = resolved  # type: ignore[attr-defined]
            else:
                cls.CALLABLE = resolve_spec_paths(spec, base)  # type: ignore[attr-defined]
        return cls

    return decorate


@contextmanager
def _temporary_env(updates: Mapping[str, str]) -> Any:
    old = {k: os.environ.get(k) for k in updates}
    os.environ.update(updates)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class SceneTestCase:
    """Base class of scene tests; subclasses declare CALLABLE, CASES, generate_args and
    compute_golden (see the module docstring and docs/guide/scene_tests.md)."""

    CALLABLE: dict[str, Any] = {}
    CASES: list[dict[str, Any]] = []
    RTOL: float = 1e-5
    ATOL: float = 1e-5
    #: True: the case passes by running clean; compute_golden is never called.
    SKIP_GOLDEN: bool = False
    #: Environment variables set while the case runs (``*_DIR``/``*_PATH`` values relative to
    #: the test file).
    RUNTIME_ENV: dict[str, Any] = {}

    _st_level: SceneTestLevel
    _st_runtime: str
    _st_dir: Path
    #: Set by the driver for the case being run.
    _st_options: RunOptions = RunOptions()
    _st_platform: str = ""
    _st_platform_info: Any = None

    # ----- what a test declares -----

    def generate_args(self, params: Any) -> TaskArgsBuilder:
        """The run's arguments (a TaskArgsBuilder), in the orchestration's order."""
        raise NotImplementedError(f"{type(self).__name__} must define generate_args(params)")

    def compute_golden(self, args: TaskArgsBuilder, params: Any) -> None:
        """Writes the expected outputs into ``args`` (a clone of generate_args' result)."""
        raise NotImplementedError(f"{type(self).__name__} must define compute_golden(args, params)")

    def compare_outputs(
        self,
        test_args: TaskArgsBuilder,
        golden_args: TaskArgsBuilder,
        output_names: list[str],
        params: Any,
    ) -> None:
        """Raises AssertionError unless every output is within RTOL/ATOL of the golden."""
        default_compare(test_args, golden_args, output_names, self.RTOL, self.ATOL)

    # ----- compiling -----

    @classmethod
    def compile_chip_callable(cls, platform: str, *, progress: bool = True) -> CompiledCallable:
        """The L2 CALLABLE compiled for ``platform`` (cached in this process)."""
        key = (cls.__module__, cls.__qualname__, "", platform, cls._st_runtime)
        if key not in _compiled:
            _compiled[key] = compile_spec(
                cls.CALLABLE, platform, cls._st_runtime, progress=progress
            )
        return _compiled[key]

    @classmethod
    def _compile_l3_callables(cls, platform: str, *, progress: bool = True) -> dict[str, Any]:
        """Every chip entry of an L3 CALLABLE: ``{name: callable, name + "_sig": signature}``."""
        out: dict[str, Any] = {}
        for entry in cls.CALLABLE.get("callables", []):
            if "orchestration" not in entry:
                continue
            name = entry["name"]
            key = (cls.__module__, cls.__qualname__, name, platform, cls._st_runtime)
            if key not in _compiled:
                _compiled[key] = compile_spec(entry, platform, cls._st_runtime, progress=progress)
            out[name] = _compiled[key]
            out[f"{name}_sig"] = entry["orchestration"].get("signature", [])
        return out

    def build_callable(self, platform: str) -> Any:
        """L2: the CompiledCallable; L3: the dict of compiled chip callables."""
        if self._st_level == SceneTestLevel.CHIP:
            return self.compile_chip_callable(platform)
        if self._st_level == SceneTestLevel.NODE:
            return self._compile_l3_callables(platform)
        raise ValueError(f"scene test level {int(self._st_level)} is not run here (2 and 3 are)")

    # ----- running -----

    def _build_config(
        self,
        config_dict: Mapping[str, Any],
        enable_chip_swimlane: int = 0,
        enable_dump_args: int = 0,
        enable_pmu: int = 0,
        enable_dep_gen: bool = False,
        enable_scope_stats: bool = False,
        *,
        output_prefix: str = "",
    ) -> ChipCallConfig:
        """The ChipCallConfig of one run of a case (``config_dict`` is the case's config)."""
        options = self._st_options
        if enable_chip_swimlane or enable_pmu or enable_dump_args:
            options = RunOptions(**vars(options))
            options.profiling = options.profiling or bool(enable_chip_swimlane)
            options.pmu = options.pmu or bool(enable_pmu)
            options.dump_tensors = options.dump_tensors or bool(enable_dump_args)
        return execute.build_config(self._st_platform, self._st_platform_info, config_dict, options)

    def _resolve_env(self) -> dict[str, str]:
        out = {}
        for k, v in self.RUNTIME_ENV.items():
            s = str(v)
            if (k.endswith("_DIR") or k.endswith("_PATH")) and not Path(s).is_absolute():
                s = str((self._st_dir / s).resolve())
            out[k] = s
        return out

    def _run_and_validate(
        self,
        worker: Any,
        callable_obj: Any,
        case: Mapping[str, Any],
        sub_handles: Any = None,
        rounds: int = 1,
        skip_golden: bool = False,
        **_diagnostics: Any,
    ) -> None:
        """Runs one case on ``worker`` and checks it (AssertionError on a wrong result)."""
        if self._st_level == SceneTestLevel.NODE:
            self._run_and_validate_l3(
                worker,
                callable_obj,
                sub_handles or {},
                case,
                rounds=rounds,
                skip_golden=skip_golden,
            )
        else:
            self._run_and_validate_l2(
                worker, callable_obj, case, rounds=rounds, skip_golden=skip_golden
            )

    def _run_and_validate_l2(
        self,
        worker: Any,
        callable_obj: Any,
        case: Mapping[str, Any],
        rounds: int = 1,
        skip_golden: bool = False,
        **_diagnostics: Any,
    ) -> None:
        self._st_platform = worker.platform
        self._st_platform_info = worker.platform_info
        options = self._st_options
        if rounds != options.rounds:
            options = RunOptions(**{**vars(options), "rounds": rounds})
        skip = skip_golden or options.skip_golden or bool(case.get("skip_golden", self.SKIP_GOLDEN))
        handle = worker.register(callable_obj)
        with _temporary_env(self._resolve_env()):
            execute.run_case_l2(self, worker, handle, case, options, skip)

    def _run_and_validate_l3(
        self,
        worker: Any,
        compiled: Mapping[str, Any],
        sub_handles: Mapping[str, Any],
        case: Mapping[str, Any],
        rounds: int = 1,
        skip_golden: bool = False,
        **_diagnostics: Any,
    ) -> None:
        from .l3 import run_case_l3

        self._st_platform = worker.platform
        skip = (
            skip_golden
            or self._st_options.skip_golden
            or bool(case.get("skip_golden", self.SKIP_GOLDEN))
        )
        with _temporary_env(self._resolve_env()):
            run_case_l3(self, worker, compiled, sub_handles, case, max(1, rounds), skip)

    # ----- pytest -----

    @staticmethod
    def _effective_enable_dep_gen(request: Any) -> bool:
        """Whether the run captures the reference's dep_gen records: never here (this runtime's
        dependency graph is in its trace, ``--enable-chip-swimlane``)."""
        return False

    def _matching_cases(self, st_platform: str, request: Any) -> list[Mapping[str, Any]]:
        """The cases the platform, ``--case`` and ``--manual`` options select."""
        selectors = [parse_selector(v) for v in request.config.getoption("--case", None) or []]
        manual = request.config.getoption("--manual", "exclude")
        name = type(self).__name__
        # Under the pytest plugin each test is one case, which its st_platform fixture names.
        only = getattr(getattr(request, "node", None), "_pto_scene_case", None)
        from .driver import HARDWARE_TWINS

        # -p a2a3: the cases that list the chip, on its sim twin (st_platform).
        chip = request.config.getoption("--platform", None)
        listed = chip if HARDWARE_TWINS.get(chip) == st_platform else st_platform
        out: list[Mapping[str, Any]] = []
        for case in self.CASES:
            if only is not None and case["name"] != only:
                continue
            if listed not in case["platforms"]:
                continue
            if not match_selectors(name, case["name"], selectors):
                continue
            is_manual = is_manual_for_platform(case.get("manual"), listed)
            if (manual == "exclude" and is_manual) or (manual == "only" and not is_manual):
                continue
            out.append(case)
        return out

    def test_run(self, st_platform: str, st_worker: Any, request: Any) -> None:
        """Runs the cases the options select on ``st_platform`` (pytest calls this; a test may
        override it and call ``super().test_run(...)``)."""
        from .driver import run_selected_cases

        cases = self._matching_cases(st_platform, request)
        if not cases:
            import pytest

            manual = request.config.getoption("--manual", "exclude")
            pytest.skip(
                f"no case of {type(self).__name__} selected on {st_platform} (manual={manual})"
            )
        run_selected_cases(self, st_worker, cases, request)

    # ----- python test_x.py -----

    @staticmethod
    def run_module(module_name: str) -> None:
        """``if __name__ == "__main__": SceneTestCase.run_module(__name__)``: runs the module's
        scene tests (``-h`` lists the options) and exits non-zero if a case failed."""
        from .cli import run_module

        run_module(module_name)
