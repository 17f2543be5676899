"""python/pto_runtime/scene/pytest_plugin.py — scene tests under pytest, one test per case.

Enable it with ``pytest -p pto_runtime.scene.pytest_plugin`` (or ``pytest_plugins = [...]`` in a
conftest). Every scene-test class's ``test_run`` becomes one test per (case, platform):
``test_run[default-a2a3sim]``; a program test (programs.py) one per sim platform its marks list,
with ``st_device_ids`` from its ``device_count`` mark. A case that is not run is still listed,
skipped with the reason (another platform was asked for, it is manual, ``--case`` did not
select it). The options are those of ``python test_x.py`` (``--platform`` for ``-p``, which
pytest owns). Files written for the reference implementation are collected too: the
reference's import names are answered by :mod:`pto_runtime.scene.reference` unless a real
``simpler_setup`` is installed. The session ends with the scene summary table.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import record
from .case import SceneTestCase
from .cli import add_case_options
from .driver import SIM_PLATFORMS, make_worker
from .programs import CASE, program_of
from .record import CaseRecord
from .report import format_summary
from .spec import is_manual_for_platform, match_selectors, parse_selector

_records: list[CaseRecord] = []
_workers: dict[tuple[Any, ...], Any] = {}


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("pto_scene", "PTO Runtime scene tests")
    add_case_options(group.addoption, ("--platform",))
    group.addoption(
        "--l3-mode",
        choices=("thread", "process"),
        default="thread",
        help="how level-3 scene tests run their chips (default thread)",
    )
    group.addoption(
        "--reference",
        default=None,
        metavar="DIR",
        help="reference checkout for simpler_setup.goldens/tools (default: the "
        "checkout each test file lives in)",
    )


def pytest_configure(config: Any) -> None:
    if importlib.util.find_spec("simpler_setup") is None:
        from . import reference

        reference.install(config.getoption("--reference"))


def pytest_collect_file(file_path: Path, parent: Any) -> None:
    """Points the reference hook at the checkout a test file lives in, before it is imported."""
    from . import reference

    if reference.installed_root() is None or parent.config.getoption("--reference") is None:
        root = reference.find_reference_root(file_path.parent)
        if root is not None:
            reference.set_root(root)


def _skip_reason(
    cls_name: str, case_name: str, manual_value: Any, platform: str, config: Any
) -> str | None:
    wanted = config.getoption("--platform")
    if wanted and platform != wanted:
        return f"runs on {platform}; --platform {wanted} was asked for"
    selectors = [parse_selector(s) for s in config.getoption("--case") or []]
    if not match_selectors(cls_name, case_name, selectors):
        return "not selected by --case"
    manual = config.getoption("--manual")
    is_manual = is_manual_for_platform(manual_value, platform)
    if manual == "exclude" and is_manual:
        return f"manual on {platform}: --manual include (or only) runs it"
    if manual == "only" and not is_manual:
        return "not manual: --manual only runs manual cases alone"
    return None


def _parametrize_program(metafunc: Any) -> None:
    """A program test (programs.py): one test per sim platform its marks list."""
    prog = program_of(metafunc.function, Path(str(metafunc.definition.path)))
    if prog is None:
        return
    params = []
    for p in [p for p in prog.platforms if p in SIM_PLATFORMS]:
        reason = _skip_reason(prog.name, CASE, prog.manual, p, metafunc.config)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param((CASE, p), id=p, marks=marks))
    if not params:
        reason = f"lists no sim platform ({', '.join(prog.platforms)})"
        params.append(pytest.param(None, id="no-sim", marks=pytest.mark.skip(reason=reason)))
    metafunc.parametrize("st_platform", params, indirect=True)


def pytest_generate_tests(metafunc: Any) -> None:
    cls = metafunc.cls
    if cls is None and "st_platform" in metafunc.fixturenames:
        _parametrize_program(metafunc)
        return
    if cls is None or not issubclass(cls, SceneTestCase) or not hasattr(cls, "_st_level"):
        return
    if metafunc.function.__name__ != "test_run" or "st_platform" not in metafunc.fixturenames:
        return
    params = []
    for case in cls.CASES:
        platforms = [p for p in case["platforms"] if p in SIM_PLATFORMS]
        if not platforms:
            params.append(
                pytest.param(
                    (case["name"], case["platforms"][0]),
                    id=f"{case['name']}-{case['platforms'][0]}",
                    marks=pytest.mark.skip(
                        reason=f"lists no sim platform ({', '.join(case['platforms'])})"
                    ),
                )
            )
        for p in platforms:
            reason = _skip_reason(
                cls.__name__, case["name"], case.get("manual"), p, metafunc.config
            )
            marks = [pytest.mark.skip(reason=reason)] if reason else []
            params.append(pytest.param((case["name"], p), id=f"{case['name']}-{p}", marks=marks))
    if not params:
        params.append(pytest.param(None, id="no-cases", marks=pytest.mark.skip(reason="no CASES")))
    metafunc.parametrize("st_platform", params, indirect=True)


@pytest.fixture
def st_platform(request: Any) -> str:
    """The platform of the case this test runs (the case is remembered on the test item)."""
    param = getattr(request, "param", None)
    if param is None:
        platform = request.config.getoption("--platform")
        if not platform:
            pytest.skip("needs --platform (this test is not one scene case)")
        return str(platform)
    case_name, platform = param
    request.node._pto_scene_case = case_name
    return str(platform)


@pytest.fixture
def st_device_ids(request: Any) -> list[int]:
    """A program test's devices: ``range(n)`` for its ``device_count(n)`` mark."""
    prog = program_of(request.function, Path(str(request.node.path)))
    return list(range(prog.device_count if prog is not None else 1))


@pytest.fixture
def st_worker(request: Any, st_platform: str) -> Iterator[Any]:
    """The worker of the case: one chip per (platform, runtime) for the session at L2; a host
    of its own for each L3 test."""
    cls = request.cls
    if cls is None or not hasattr(cls, "_st_level"):
        pytest.skip("st_worker is for scene-test classes")
    case_name = getattr(request.node, "_pto_scene_case", None)
    cases = [c for c in cls.CASES if case_name is None or c["name"] == case_name]
    l3_mode = request.config.getoption("--l3-mode")
    if int(cls._st_level) == 2:
        key = (st_platform, cls._st_runtime)
        if key not in _workers:
            _workers[key] = make_worker(cls, st_platform, cases, l3_mode)
        yield _workers[key]
        return
    worker = make_worker(cls, st_platform, cases, l3_mode)
    try:
        yield worker
    finally:
        worker.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    """Records every scene case the item runs (for the summary table)."""
    cls = getattr(item, "cls", None)
    case = getattr(item, "_pto_scene_case", None)
    prog = program_of(getattr(item, "function", None), Path(str(item.path)))
    if case is None or (prog is None and (cls is None or not issubclass(cls, SceneTestCase))):
        yield
        return
    platform = item.callspec.params["st_platform"][1]
    if prog is not None:
        rec = CaseRecord(str(item.path), prog.name, case, platform, prog.level, prog.runtime)
    else:
        assert cls is not None
        rec = CaseRecord(
            str(item.path), cls.__name__, case, platform, int(cls._st_level), cls._st_runtime
        )
    start = time.perf_counter()
    record._current.append(rec)
    try:
        outcome: Any = yield
    finally:
        record._current.pop()
        rec.wall_s = time.perf_counter() - start
    excinfo = outcome.excinfo
    if excinfo is None:
        rec.result = record.PASSED
    elif excinfo[0].__name__ == "Skipped":
        rec.result, rec.message = record.SKIPPED, str(excinfo[1])
    else:
        rec.result, rec.feature, rec.message = record.classify(excinfo[1])
    _records.append(rec)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _records:
        terminalreporter.section("scene tests")
        terminalreporter.write_line(format_summary(_records))


def pytest_sessionfinish(session: Any) -> None:
    for worker in _workers.values():
        worker.close()
    _workers.clear()
