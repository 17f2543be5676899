"""python/pto_runtime/scene/driver.py — selecting cases and running them, shared by every front end.

``python test_x.py`` (cli), the pytest plugin and the many-file runner all come here: find a
module's scene-test classes, select (class, case, platform) triples by platform, ``--case`` and
``--manual``, make the worker a case needs, and run one case into a :class:`CaseRecord`. A case
runs through its class's ``test_run`` (with a request object that answers ``getoption`` like
pytest's), so a test that overrides ``test_run`` runs its own checks here too.
"""

from __future__ import annotations

import inspect
import sys
import tempfile
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import record
from .capture import captures
from .case import SceneTestCase
from .execute import RunOptions
from .record import CaseRecord
from .spec import SceneTestLevel, is_manual_for_platform, match_selectors
from .workers import ChipSceneWorker, NodeSceneWorker

__all__ = [
    "CaseRequest",
    "Selected",
    "SIM_PLATFORMS",
    "discover",
    "make_worker",
    "options_from",
    "run_case",
    "run_selected_cases",
    "select",
]

SIM_PLATFORMS = ("a2a3sim", "a5sim")
# A chip's own name selects the cases that list it and runs them on the chip's sim twin in timing
# mode: every round predicts the chip's device time (docs/guide/timing.md, "Predicting a chip").
HARDWARE_TWINS = {"a2a3": "a2a3sim", "a5": "a5sim"}


class _Config:
    def __init__(self, options: Mapping[str, Any]) -> None:
        self._options = dict(options)

    def getoption(self, name: str, default: Any = None) -> Any:
        key = name.lstrip("-").replace("-", "_")
        value = self._options.get(key)
        return default if value is None else value


class CaseRequest:
    """Stands in for pytest's ``request`` in ``test_run(st_platform, st_worker, request)``:
    ``request.config.getoption("--case")`` and the rest answer from ``options``."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.config = _Config(options)


def options_from(request: Any) -> RunOptions:
    """The run options a request's ``getoption`` holds."""
    get = request.config.getoption
    seed = get("--sim-seed", None)
    return RunOptions(
        rounds=int(get("--rounds", 1) or 1),
        skip_golden=bool(get("--skip-golden", False)),
        timing=bool(get("--timing", False)),
        timing_dir=Path(get("--timing-dir", "outputs") or "outputs"),
        fuzz_schedules=int(get("--fuzz-schedules", 0) or 0),
        sim_seed=None if seed is None else int(seed),
        profiling=bool(get("--enable-chip-swimlane", 0)),
        pmu=bool(get("--enable-pmu", 0)),
        dump_tensors=bool(get("--dump-args", 0)),
        run_timeout=None if get("--run-timeout", None) is None else float(get("--run-timeout")),
        predict=get("--platform", None) in HARDWARE_TWINS,
    )


def discover(module: types.ModuleType) -> list[type[SceneTestCase]]:
    """The scene-test classes a module defines (not those it imports)."""
    return [
        v
        for v in vars(module).values()
        if isinstance(v, type)
        and issubclass(v, SceneTestCase)
        and v is not SceneTestCase
        and v.__module__ == module.__name__
        and hasattr(v, "_st_level")
    ]


@dataclass(frozen=True)
class Selected:
    cls: type[SceneTestCase]
    case: Mapping[str, Any]
    platform: str
    manual: bool


def select(
    classes: Iterable[type[SceneTestCase]],
    platform: str | None,
    selectors: Sequence[tuple[str | None, str | None]],
    manual: str,
) -> list[Selected]:
    """The (class, case, platform) triples to run: on ``platform``, or on every sim platform a
    case lists when None; filtered by selectors and the manual mode (exclude/include/only).
    A chip's name (``a2a3``, ``a5``: HARDWARE_TWINS) selects the cases that list the chip, to
    run on its sim twin."""
    twin = HARDWARE_TWINS.get(platform or "")
    out = []
    for cls in classes:
        for case in cls.CASES:
            platforms = (
                [platform] if platform else [p for p in case["platforms"] if p in SIM_PLATFORMS]
            )
            for p in platforms:
                if p not in case["platforms"]:
                    continue
                if not match_selectors(cls.__name__, case["name"], selectors):
                    continue
                is_manual = is_manual_for_platform(case.get("manual"), p)
                if (manual == "exclude" and is_manual) or (manual == "only" and not is_manual):
                    continue
                out.append(Selected(cls, case, twin or p, is_manual))
    return out


def make_worker(
    cls: type[SceneTestCase],
    platform: str,
    cases: Iterable[Mapping[str, Any]],
    l3_mode: str = "thread",
) -> Any:
    """The worker ``cases`` of ``cls`` run on: one chip (L2), or one host with as many chips
    and SUB workers as the most demanding case asks for (L3)."""
    if cls._st_level == SceneTestLevel.CHIP:
        return ChipSceneWorker(platform, cls._st_runtime)
    if cls._st_level != SceneTestLevel.NODE:
        raise record.not_supported(
            f"level {int(cls._st_level)} scene tests", "only levels 2 and 3 run here"
        )
    configs = [c.get("config", {}) for c in cases]
    devices = max((int(c.get("device_count", 1)) for c in configs), default=1)
    subs = max((int(c.get("num_sub_workers", 0)) for c in configs), default=0)
    worker = NodeSceneWorker(platform, cls._st_runtime, list(range(devices)), subs, l3_mode)
    return worker


def run_selected_cases(
    test: SceneTestCase, worker: Any, cases: Sequence[Mapping[str, Any]], request: Any
) -> None:
    """Compiles the test's callables for the worker's platform and runs ``cases`` in order;
    the first failure propagates (AssertionError for a wrong result)."""
    options = options_from(request)
    test._st_options = options
    test._st_platform = worker.platform
    callable_obj = test.build_callable(worker.platform)
    sub_handles: dict[str, Any] = {}
    if test._st_level == SceneTestLevel.NODE:
        sub_handles = prepare_l3(type(test), worker)
    elif options.timing or options.predict:
        callable_obj.add_cost_models()
    for case in cases:
        test._run_and_validate(
            worker, callable_obj, case, sub_handles=sub_handles, rounds=options.rounds
        )


def prepare_l3(cls: type[SceneTestCase], worker: Any) -> dict[str, Any]:
    """Compiles an L3 class's chip callables and registers its SUB callables on the worker
    (once per worker); leaves both on the class as the reference's driver does
    (``_st_chip_handles``, ``_st_sub_handles``) for tests that run their own DAG. Returns the
    SUB handles by name."""
    if worker.sub_handles is None:
        worker.sub_handles = {
            entry["name"]: worker.register(entry["callable"])
            for entry in cls.CALLABLE.get("callables", [])
            if "callable" in entry
        }
    cls._st_chip_handles = cls._compile_l3_callables(worker.platform)  # type: ignore[attr-defined]
    cls._st_sub_handles = worker.sub_handles  # type: ignore[attr-defined]
    return worker.sub_handles


def run_case(
    selected: Selected, worker: Any, options: Mapping[str, Any], file: str = ""
) -> CaseRecord:
    """Runs one case through its class's ``test_run`` into a record (never raises for the
    case's own failure; KeyboardInterrupt still stops the run)."""
    cls, case = selected.cls, selected.case
    rec = CaseRecord(
        file=file or _file_of(cls),
        cls=cls.__name__,
        case=case["name"],
        platform=selected.platform,
        level=int(cls._st_level),
        runtime=cls._st_runtime,
        manual=selected.manual,
    )
    request = CaseRequest(
        {**options, "case": [f"{cls.__name__}::{case['name']}"], "manual": "include"}
    )
    with record.case_body(rec), tempfile.TemporaryDirectory(prefix="pto-scene-case-") as tmp:
        if cls._st_level == SceneTestLevel.NODE:
            prepare_l3(cls, worker)
        test = cls()
        call_test_run(test, selected.platform, worker, request, Path(tmp))
    return rec


def call_test_run(
    test: SceneTestCase, platform: str, worker: Any, request: Any, tmp_path: Path
) -> None:
    """Calls ``test.test_run`` with the pytest fixtures its signature names, as pytest would:
    ``st_platform``, ``st_worker``, ``request``, ``st_device_ids``, ``tmp_path``, ``capfd``,
    ``capsys`` (scene/capture.py). Any other fixture is NOT_SUPPORTED, named."""
    with captures(test.test_run) as fixtures:
        available = {
            "st_platform": platform,
            "st_worker": worker,
            "request": request,
            "st_device_ids": (
                list(worker.device_ids)
                if isinstance(worker, NodeSceneWorker)
                else [worker.device_id]
            ),
            "tmp_path": tmp_path,
            **fixtures,
        }
        call_with_fixtures(test.test_run, available, f"{type(test).__name__}.test_run")


def call_with_fixtures(fn: Any, available: Mapping[str, Any], who: str) -> None:
    """Calls ``fn`` with the fixtures its signature names, from ``available``; a fixture it
    needs that is not there is NOT_SUPPORTED, named."""
    kwargs = {}
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in available:
            kwargs[name] = available[name]
        elif param.default is param.empty:
            raise record.not_supported("pytest fixtures", f"{who} needs the fixture {name!r}")
    fn(**kwargs)


def _file_of(cls: type) -> str:
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    return str(Path(path).resolve()) if path else cls.__module__
