"""python/pto_runtime/scene/programs.py — program tests: plain test functions that drive a worker.

Beside its scene-test classes, the reference's suite has example programs (``examples/workers``):
a ``main.py`` that compiles its kernels, makes a ``Worker`` and checks its own results, and a
``test_*.py`` whose function calls it, ``def test_x(st_platform, st_device_ids)``, marked with
``pytest.mark.platforms([...])``, ``runtime(...)``, ``device_count(n)`` and ``manual`` (every
platform, or a list of them). Each such function is one case here: its class column is the
function's name, its case ``"program"``. Its level is that of the folder it lives in (``l2``,
``l3``, ...), else 3 when it asks for more than one device and 2 otherwise. It passes when the
function returns; an AssertionError is FAILED, and the rest is classified like a scene case's.
"""

from __future__ import annotations

import inspect
import tempfile
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import record
from .capture import Capture, captures
from .driver import SIM_PLATFORMS, call_with_fixtures
from .record import CaseRecord
from .spec import is_manual_for_platform, match_selectors

__all__ = [
    "CASE",
    "Capture",
    "Program",
    "discover_programs",
    "program_of",
    "run_program",
    "select_programs",
]

CASE = "program"  # the case column of every program test


@dataclass(frozen=True)
class Program:
    """One test function and what its marks say."""

    fn: Callable[..., Any]
    platforms: tuple[str, ...]
    runtime: str
    device_count: int
    manual: Any  # True (every platform), False, or the platforms it is manual on
    level: int

    @property
    def name(self) -> str:
        return str(self.fn.__name__)


def _marks(fn: Any) -> dict[str, Any]:
    """pytest's marks on a function by name: the mark's first argument (True when it has none)."""
    out: dict[str, Any] = {}
    for mark in getattr(fn, "pytestmark", []) or []:
        name = getattr(mark, "name", None)
        if name is None:
            continue
        args = getattr(mark, "args", ())
        out[name] = args[0] if args else True
    return out


def _level_of(path: Path, device_count: int) -> int:
    for part in reversed(path.parent.parts):
        if len(part) == 2 and part[0] == "l" and part[1].isdigit():
            return int(part[1])
    return 3 if device_count > 1 else 2


def program_of(fn: Any, path: Path) -> Program | None:
    """The Program a test function is (it asks for ``st_platform`` and lists platforms), or
    None."""
    if not inspect.isfunction(fn) or "st_platform" not in inspect.signature(fn).parameters:
        return None
    marks = _marks(fn)
    platforms = marks.get("platforms")
    if not isinstance(platforms, (list, tuple)):
        return None
    count = marks.get("device_count", 1)
    count = 1 if isinstance(count, bool) else int(count)
    return Program(
        fn=fn,
        platforms=tuple(platforms),
        runtime=str(marks.get("runtime", "tensormap_and_ringbuffer")),
        device_count=count,
        manual=marks.get("manual", False),
        level=_level_of(path, count),
    )


def discover_programs(module: types.ModuleType) -> list[Program]:
    """The program tests a module defines (not those it imports)."""
    path = Path(getattr(module, "__file__", "") or ".")
    out = []
    for name, fn in vars(module).items():
        if name.startswith("test") and getattr(fn, "__module__", None) == module.__name__:
            prog = program_of(fn, path)
            if prog is not None:
                out.append(prog)
    return out


def select_programs(
    programs: Iterable[Program],
    platform: str | None,
    selectors: Sequence[tuple[str | None, str | None]],
    manual: str,
) -> list[tuple[Program, str, bool]]:
    """(program, platform, manual) for each program to run, as :func:`driver.select` does."""
    out = []
    for prog in programs:
        chosen = [platform] if platform else [p for p in prog.platforms if p in SIM_PLATFORMS]
        for p in chosen:
            if p not in prog.platforms or not match_selectors(prog.name, CASE, selectors):
                continue
            is_manual = is_manual_for_platform(prog.manual, p)
            if (manual == "exclude" and is_manual) or (manual == "only" and not is_manual):
                continue
            out.append((prog, p, is_manual))
    return out


def run_program(
    program: Program, platform: str, manual: bool, options: Mapping[str, Any], file: str
) -> CaseRecord:
    """Calls the function with the fixtures it names (``st_platform``, ``st_device_ids`` as
    ``list(range(device_count))``, ``capsys``, ``capfd``, ``tmp_path``). Never raises for the
    program's own failure."""
    rec = CaseRecord(
        file=file,
        cls=program.name,
        case=CASE,
        platform=platform,
        level=program.level,
        runtime=program.runtime,
        manual=manual,
    )
    with (
        record.case_body(rec),
        tempfile.TemporaryDirectory(prefix="pto-scene-program-") as tmp,
        captures(program.fn) as fixtures,
    ):
        available = {
            "st_platform": platform,
            "st_device_ids": list(range(program.device_count)),
            "tmp_path": Path(tmp),
            **fixtures,
        }
        call_with_fixtures(program.fn, available, program.name)
    return rec
