"""python/pto_runtime/scene/runner.py — ``python -m pto_runtime.scene``: one process per case.

The runner imports every test file once to list its cases, then runs each case in a process
of its own, so a crash or a hang costs that case only: a case past ``--timeout`` is killed
(TIMEOUT), one that dies by a signal is CRASHED, each with the tail of its output. Case
processes are forked from a server that imported torch (when installed), NumPy and this
package once, so a case does not pay torch's import. Files written for the reference
implementation run unchanged: the import hook of :mod:`pto_runtime.scene.reference` answers
``simpler_setup`` and ``simpler.*``, and goldens and tools come from the reference checkout the
file lives in (or ``--reference DIR``). The last line is ``passed P / attempted A / total T``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import record
from .record import CaseRecord

__all__ = ["main"]

_CASE_OPTIONS = (
    "platform",
    "case",
    "manual",
    "rounds",
    "skip_golden",
    "timing",
    "timing_dir",
    "fuzz_schedules",
    "sim_seed",
    "enable_chip_swimlane",
    "enable_pmu",
    "dump_args",
    "l3_mode",
    "run_timeout",
)


def _parser() -> argparse.ArgumentParser:
    from .cli import add_case_options

    p = argparse.ArgumentParser(
        prog="python -m pto_runtime.scene",
        description="Run scene tests (test_*.py files or folders of them), each case in a "
        "process of its own, and print a table of the results.",
    )
    p.add_argument("paths", nargs="+", help="test files, or folders searched for test_*.py")
    add_case_options(p.add_argument, ("-p", "--platform"))
    p.add_argument("--json", metavar="OUT", help="also write every case's record to OUT")
    p.add_argument(
        "--expect",
        metavar="FILE",
        help="a --json file of an earlier run: exit 1 if a case's result differs from it "
        "(a case that now passes is reported, not counted against the run)",
    )
    p.add_argument(
        "--reference",
        metavar="DIR",
        help="the reference checkout whose "
        "simpler_setup/goldens and tools reference files use (default: the checkout "
        "each file lives in)",
    )
    p.add_argument("-j", "--jobs", type=int, default=1, help="cases run at once (default 1)")
    p.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds a case may take, compiling included (default 900)",
    )
    p.add_argument(
        "--l3-mode",
        choices=("thread", "process"),
        default="thread",
        help="how level-3 cases run their chips (default thread)",
    )
    p.add_argument("--list", action="store_true", help="only list the selected cases")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop after the first failure")
    return p


# ----- finding and importing test files -----


def expand(paths: Sequence[str]) -> list[Path]:
    """The test files: each file given, and every test_*.py under each folder, sorted."""
    files: list[Path] = []
    for raw in paths:
        p = Path(raw).resolve()
        if p.is_dir():
            files += sorted(f for f in p.rglob("test_*.py") if "__pycache__" not in f.parts)
        elif p.is_file():
            files.append(p)
        else:
            raise SystemExit(f"python -m pto_runtime.scene: no such file or folder: {raw}")
    seen: set[Path] = set()
    return [f for f in files if not (f in seen or seen.add(f))]  # type: ignore[func-returns-value]


def import_file(path: Path, reference: str | None) -> Any:
    """Imports a test file as pytest would (a dotted name under the first folder above it
    without ``__init__.py``), with the reference's names answered by our hook."""
    from . import reference as ref

    root = Path(reference).resolve() if reference else ref.find_reference_root(path.parent)
    ref.set_root(root)
    if root is not None and root in path.parents:
        # Under a reference checkout: named from its root, as its own pytest configuration
        # does (its tests import tests.* and examples.*, and relative to their folders).
        base = root
        parts = list(path.relative_to(root).with_suffix("").parts)
    else:  # as pytest's default: from the first folder up without __init__.py
        base = path.parent
        parts = [path.stem]
        while (base / "__init__.py").is_file():
            parts.insert(0, base.name)
            base = base.parent
    name = ".".join(parts)
    for key in [k for k in sys.modules if k == parts[0] or k.startswith(parts[0] + ".")]:
        del sys.modules[key]  # another file of the same name was imported before
    sys.path.insert(0, str(base))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(base))


@dataclass
class Item:
    """One case to run (or a file that could not be imported: cls and case empty)."""

    file: str
    cls: str
    case: str
    platform: str
    level: int
    runtime: str
    manual: bool
    error: tuple[str, str, str] | None = None  # the file's import failure, classified

    def record(self) -> CaseRecord:
        return CaseRecord(
            self.file,
            self.cls or "<import>",
            self.case or "<file>",
            self.platform,
            self.level,
            self.runtime,
            self.manual,
        )


def _collect(files: list[str], options: dict[str, Any], reference: str | None) -> list[Item]:
    from .driver import discover, select
    from .programs import CASE, discover_programs, select_programs
    from .spec import parse_selector

    selectors = [parse_selector(s) for s in options.get("case") or []]
    items: list[Item] = []
    for f in files:
        try:
            module = import_file(Path(f), reference)
        except BaseException as e:  # noqa: BLE001 - a file that does not import is a result
            items.append(
                Item(f, "", "", options.get("platform") or "-", 0, "", False, record.classify(e))
            )
            continue
        for sel in select(
            discover(module), options.get("platform"), selectors, options.get("manual") or "exclude"
        ):
            items.append(
                Item(
                    f,
                    sel.cls.__name__,
                    sel.case["name"],
                    sel.platform,
                    int(sel.cls._st_level),
                    sel.cls._st_runtime,
                    sel.manual,
                )
            )
        for prog, platform, manual in select_programs(
            discover_programs(module),
            options.get("platform"),
            selectors,
            options.get("manual") or "exclude",
        ):
            items.append(Item(f, prog.name, CASE, platform, prog.level, prog.runtime, manual))
    return items


# ----- child processes -----


def _child_collect(
    conn: Any, files: list[str], options: dict[str, Any], reference: str | None, log: str
) -> None:
    _redirect(log)
    try:
        items = _collect(files, options, reference)
        conn.send([vars(i) for i in items])
    except BaseException:  # noqa: BLE001 - reported through the log
        traceback.print_exc()
        raise


def _child_case(
    conn: Any, item: dict[str, Any], options: dict[str, Any], reference: str | None, log: str
) -> None:
    os.setpgrp()  # the runner kills the case's whole process group on a timeout
    _redirect(log)
    from .driver import Selected, make_worker, run_case
    from .programs import discover_programs, run_program

    it = Item(**item)
    rec = it.record()
    try:
        module = import_file(Path(it.file), reference)
        cls = getattr(module, it.cls)
        if not isinstance(cls, type):  # a program test: a function
            prog = next(p for p in discover_programs(module) if p.name == it.cls)
            rec = run_program(prog, it.platform, it.manual, options, it.file)
        else:
            cases: Any = getattr(cls, "CASES")  # noqa: B009 - a scene class's, checked at import
            case = next(c for c in cases if c["name"] == it.case)
            worker = make_worker(cls, it.platform, [case], options.get("l3_mode") or "thread")
            try:
                rec = run_case(
                    Selected(cls, case, it.platform, it.manual), worker, options, it.file
                )
            finally:
                worker.close()
    except BaseException as e:  # noqa: BLE001 - the case's own failure is its result
        traceback.print_exc()
        rec.result, rec.feature, rec.message = record.classify(e)
    if rec.result not in (record.PASSED, record.SKIPPED):
        traceback_text = rec.message
        print(f"{rec.result}: {traceback_text}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    conn.send(rec.to_json())


def _redirect(log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _context() -> Any:
    """Processes forked from a server that imported the heavy modules once."""
    ctx = multiprocessing.get_context("forkserver")
    preload = [
        "numpy",
        "pto_runtime",
        "pto_runtime.scene",
        "pto_runtime.scene.driver",
        "pto_runtime.scene.reference",
    ]
    if importlib.util.find_spec("torch") is not None:
        preload.insert(0, "torch")
    ctx.set_forkserver_preload(preload)
    return ctx


def _echo_strace(log: str) -> None:
    """A predicted case's [STRACE] markers (timing.strace_lines) from its log to this process's
    stdout, in one write, so the reference's strace_timing tool reads the runner's output."""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return
    lines = [line for line in text.splitlines() if line.startswith("[STRACE] ")]
    if lines:
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()


def _tail(log: str, lines: int = 30) -> str:
    try:
        text = Path(log).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def _run_child(
    ctx: Any, target: Any, args: tuple[Any, ...], timeout: float, log: str
) -> tuple[Any, str]:
    """Runs ``target(conn, *args, log)``; (what it sent or None, why not)."""
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(child, *args, log), daemon=True)
    proc.start()
    child.close()
    got, why = None, ""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            why = f"{record.TIMEOUT}: still running after {timeout:.0f} s; killed"
            _kill(proc)
            break
        if parent.poll(min(left, 1.0)):
            try:
                got = parent.recv()
            except EOFError:
                pass
            break
        if not proc.is_alive():
            break
    proc.join(10)
    if proc.is_alive():
        _kill(proc)
    if got is None and not why:
        code = proc.exitcode
        if code is not None and code < 0:
            why = f"{record.CRASHED}: the case's process died of {signal.Signals(-code).name}"
        else:
            why = f"{record.ERROR}: the case's process exited with {code} before reporting"
    return got, why


def _kill(proc: Any) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.join(10)


# ----- the run -----


def _iter_results(
    ctx: Any,
    items: list[Item],
    options: dict[str, Any],
    reference: str | None,
    jobs: int,
    timeout: float,
    logs: Path,
) -> Iterator[CaseRecord]:
    from concurrent.futures import ThreadPoolExecutor

    from .driver import HARDWARE_TWINS

    predict = options.get("platform") in HARDWARE_TWINS  # -p a2a3: pass the [STRACE] lines on

    def one(index_item: tuple[int, Item]) -> CaseRecord:
        index, item = index_item
        rec = item.record()
        if item.error is not None:
            rec.result, rec.feature, rec.message = item.error
            return rec
        log = str(logs / f"case{index:04d}.log")
        start = time.monotonic()
        got, why = _run_child(ctx, _child_case, (vars(item), options, reference), timeout, log)
        if predict:
            _echo_strace(log)
        if got is not None:
            rec = CaseRecord.from_json(got)
            rec.process_s = time.monotonic() - start
            return rec
        rec.result, _, rec.message = why.partition(": ")
        rec.message += "\n" + _tail(log)
        rec.wall_s = timeout if rec.result == record.TIMEOUT else 0.0
        return rec

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        yield from pool.map(one, enumerate(items))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    files = [str(f) for f in expand(args.paths)]
    options = {k: getattr(args, k) for k in _CASE_OPTIONS}
    if options["run_timeout"] is None:  # the case's own limit governs, as the reference has none
        options["run_timeout"] = args.timeout
    ctx = _context()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pto-scene-") as tmp:
        logs = Path(tmp)
        got, why = _run_child(
            ctx,
            _child_collect,
            (files, options, args.reference),
            args.timeout,
            str(logs / "collect.log"),
        )
        if got is None:
            print(
                f"collecting the cases failed: {why}\n{_tail(str(logs / 'collect.log'))}",
                file=sys.stderr,
            )
            return 2
        items = [Item(**d) for d in got]
        if args.list:
            for it in items:
                print(
                    f"{it.file}::{it.cls}::{it.case} [{it.platform}]"
                    + (" (manual)" if it.manual else "")
                    + (f" {it.error[0]}: {it.error[1] or it.error[2]}" if it.error else "")
                )
            print(f"{len(items)} cases")
            return 0
        print(f"{len(items)} cases from {len(files)} files", flush=True)
        records: list[CaseRecord] = []
        for rec in _iter_results(
            ctx, items, options, args.reference, args.jobs, args.timeout, logs
        ):
            records.append(rec)
            detail = f": {rec.feature}" if rec.feature else ""
            print(
                f"[{len(records)}/{len(items)}] {rec.result}{detail}  {rec.label} "
                f"[{rec.platform}] {rec.wall_s:.1f} s  {_short(rec.file)}",
                flush=True,
            )
            if args.exitfirst and rec.result not in (record.PASSED, record.SKIPPED):
                break
    from .report import compare_to, format_summary, load_json, save_json

    root = _root_of(args.paths)
    if args.json:
        save_json(
            args.json,
            records,
            {
                "argv": sys.argv[1:] if argv is None else list(argv),
                "root": str(root),
                "files": len(files),
                "wall_s": round(time.monotonic() - start, 2),
                "date": time.strftime("%Y-%m-%d %H:%M"),
                "cpus": os.cpu_count(),
            },
            root,
        )
    print()
    if args.expect:
        then_meta, then = load_json(args.expect)
        differ, better = compare_to(records, root, then, Path(then_meta.get("root", root)))
        for line in better:
            print(f"now passes (update {args.expect}): {line}")
        for line in differ:
            print(f"differs from {args.expect}: {line}")
        print(format_summary(records, total=len(items)))
        return 1 if differ else 0
    print(format_summary(records, total=len(items)))
    return 0 if all(r.result in (record.PASSED, record.SKIPPED) for r in records) else 1


def _root_of(paths: Sequence[str]) -> Path:
    """The folder the files' names are reported relative to: the one folder given, else the
    common parent of everything given."""
    resolved = [Path(p).resolve() for p in paths]
    if len(resolved) == 1:
        return resolved[0] if resolved[0].is_dir() else resolved[0].parent
    return Path(os.path.commonpath([str(p) for p in resolved]))


def _short(path: str) -> str:
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
