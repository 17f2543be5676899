"""python/pto_runtime/scene/cli.py — ``python test_x.py``: one module's scene tests and a table.

``SceneTestCase.run_module(__name__)`` parses the options below, runs every selected case in
this process (one chip per platform and runtime, reused; an L3 class gets its own host), prints
each case's result as it ends and a summary table at the end, and exits 1 if any case did not
pass. The options are the ones the pytest plugin and ``python -m pto_runtime.scene`` take.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from . import record
from .driver import discover, make_worker, run_case, select
from .record import CaseRecord
from .report import format_summary
from .spec import parse_selector

__all__ = ["add_case_options", "run", "run_module"]

_MANUAL = ("exclude", "include", "only")


def add_case_options(add: Callable[..., Any], platform_flags: tuple[str, ...]) -> None:
    """Adds the options every front end shares through ``add`` (argparse's add_argument or
    pytest's addoption); ``platform_flags`` names the platform option (pytest owns ``-p``)."""
    add(
        *platform_flags,
        dest="platform",
        default=None,
        help="a2a3sim or a5sim (default: every sim platform each case lists); a2a3 or a5: the "
        "cases that list that chip, run on its sim twin in timing mode to predict its device time",
    )
    add(
        "--case",
        action="append",
        default=None,
        help="select cases (repeatable): NAME, CLASS::NAME, CLASS:: or ::NAME",
    )
    add(
        "--manual",
        choices=_MANUAL,
        default="exclude",
        help="cases marked manual: exclude (default), include, or only",
    )
    add("--rounds", type=int, default=1, help="run each case N times (default 1)")
    add("--skip-golden", action="store_true", default=False, help="do not compare outputs")
    add(
        "--timing",
        action="store_true",
        default=False,
        help="also rerun each case in timing mode (kernels priced by PTO-ISA's cost model): "
        "adds the predicted makespan and writes the measured and predicted swimlanes",
    )
    add("--timing-dir", default="outputs", help="where --timing writes the swimlanes (outputs)")
    add(
        "--fuzz-schedules",
        type=int,
        default=0,
        metavar="N",
        help="also rerun each case under N seeded random schedules; a seed whose tensors "
        "differ from seed 0's fails the case, naming the seed",
    )
    add(
        "--sim-seed",
        type=int,
        default=None,
        metavar="SEED",
        help="run seeded (a schedule --fuzz-schedules reported is replayed by its seed)",
    )
    add(
        "--enable-chip-swimlane",
        type=int,
        nargs="?",
        const=4,
        default=0,
        help="keep a trace of each run (this runtime's trace, not the reference's records)",
    )
    add(
        "--run-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="each chip run's time limit (0: none); default the runtime's 60 s, under "
        "python -m pto_runtime.scene its --timeout",
    )
    add("--enable-pmu", type=int, nargs="?", const=2, default=0, help="collect PMU counters")
    add("--dump-args", type=int, nargs="?", const=1, default=0, help="dump task tensors")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Run this file's scene tests on the simulated chip.")
    add_case_options(p.add_argument, ("-p", "--platform"))
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument(
        "-d",
        "--device",
        default="0",
        help="accepted for compatibility; the sim gives every run its own chip",
    )
    p.add_argument(
        "--l3-mode",
        choices=("thread", "process"),
        default="thread",
        help="how L3 scene tests run their chips (default thread)",
    )
    return p


def run_module(module_name: str, argv: list[str] | None = None) -> None:
    """Runs ``module_name``'s scene tests with the command line's options; exits 0 only if
    every selected case passed."""
    parser = _parser()
    args = parser.parse_args(argv)
    module = sys.modules[module_name]
    classes = discover(module)
    selectors = [parse_selector(s) for s in args.case or []]
    for cls_name, case_name in selectors:
        if cls_name and cls_name not in {c.__name__ for c in classes}:
            parser.error(
                f"--case: no class {cls_name!r}; classes: "
                + ", ".join(sorted(c.__name__ for c in classes))
            )
        if case_name and not any(case["name"] == case_name for c in classes for case in c.CASES):
            parser.error(f"--case: no case {case_name!r} in {cls_name or 'any class'}")
    chosen = select(classes, args.platform, selectors, args.manual)
    if not chosen:
        hint = " (they are manual: add --manual include)" if args.manual == "exclude" else ""
        print(f"no case selected on {args.platform or 'any sim platform'}{hint}", file=sys.stderr)
        sys.exit(2)
    sys.exit(0 if all(r.result == record.PASSED for r in run_all(chosen, vars(args))) else 1)


def run(
    *classes: type,
    platform: str | None = None,
    case: str | list[str] | None = None,
    manual: str = "exclude",
    **options: Any,
) -> list[CaseRecord]:
    """Runs scene-test classes from a program (what ``python test_x.py`` does, without
    exiting): the cases selected as by ``-p``, ``--case`` and ``--manual``; ``options`` are
    the other command-line options by their Python names (``timing=True``,
    ``timing_dir="out"``, ``fuzz_schedules=20``, ``sim_seed=3``, ``rounds=2``,
    ``exitfirst=True``). Prints each case and the table; returns the records."""
    cases = [case] if isinstance(case, str) else list(case or [])
    chosen = select(classes, platform, [parse_selector(c) for c in cases], manual)
    if not chosen:
        raise ValueError(
            f"no case of {', '.join(c.__name__ for c in classes)} selected on "
            f"{platform or 'any sim platform'} (case={cases or 'any'}, manual={manual})"
        )
    return run_all(chosen, {"platform": platform, "case": cases, "manual": manual, **options})


def run_all(chosen: list[Any], options: dict[str, Any]) -> list[CaseRecord]:
    """Runs the selected cases in order, sharing a worker per (platform, runtime) at L2 and per
    class at L3; prints each result and the summary."""
    records: list[CaseRecord] = []
    workers: dict[tuple[Any, ...], Any] = {}
    try:
        for sel in chosen:
            cls = sel.cls
            key: tuple[Any, ...] = (sel.platform, cls._st_runtime, int(cls._st_level))
            if int(cls._st_level) == 3:
                key += (cls,)
            if key not in workers:
                cases = [s.case for s in chosen if s.cls is cls and s.platform == sel.platform]
                workers[key] = make_worker(
                    cls, sel.platform, cases, options.get("l3_mode", "thread")
                )
            print(f"  {cls.__name__}::{sel.case['name']} [{sel.platform}] ...", flush=True)
            rec = run_case(sel, workers[key], options)
            records.append(rec)
            tail = f": {rec.feature or rec.message.splitlines()[0] if rec.message else ''}"
            print(
                f"  {rec.label} [{rec.platform}] {rec.result} in {rec.wall_s:.2f} s"
                + (tail if rec.result != record.PASSED else ""),
                flush=True,
            )
            if options.get("exitfirst") and rec.result != record.PASSED:
                break
    finally:
        for worker in workers.values():
            worker.close()
    print()
    print(format_summary(records))
    return records
