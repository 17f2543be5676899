"""python/pto_runtime/scene/record.py — what one scene case did, and how a failure is named.

Every case run produces a :class:`CaseRecord`: its result, wall time, tasks run, worst error
against the golden, and for a case that could not run, the missing feature by name
(:func:`classify`). The runs of a case add to the record that :func:`recording` made current,
so the drivers (``run_module``, the pytest plugin, the many-file runner) and the code that runs
the case need not pass it around.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import Error, ErrorCode, NotSupportedError

__all__ = [
    "CaseRecord",
    "PASSED",
    "RESULTS",
    "classify",
    "current",
    "not_supported",
    "recording",
]

PASSED = "PASSED"
FAILED = "FAILED"  # ran, and a result or an assertion of the test was wrong
NOT_SUPPORTED = "NOT_SUPPORTED"  # needs a feature this runtime does not have (named)
ERROR = "ERROR"  # stopped with an unexpected error
TIMEOUT = "TIMEOUT"  # the runner's per-case limit passed
CRASHED = "CRASHED"  # the case's process died (a signal)
SKIPPED = "SKIPPED"
RESULTS = (PASSED, FAILED, NOT_SUPPORTED, ERROR, TIMEOUT, CRASHED, SKIPPED)


@dataclass
class CaseRecord:
    """One case on one platform."""

    file: str
    cls: str
    case: str
    platform: str
    level: int = 2
    runtime: str = ""
    manual: bool = False
    result: str = ""
    feature: str = ""  # NOT_SUPPORTED: what is missing
    message: str = ""  # the failure, one paragraph
    wall_s: float = 0.0  # the case itself: compile, arguments, runs, comparison
    process_s: float = 0.0  # the runner: the case's whole child process, start and imports too
    tasks: int = 0
    worst_error: float | None = None  # largest |actual - golden| over the outputs
    predicted_makespan_us: float | None = None  # --timing
    # -p a2a3 / a5: the last round's timing.Prediction as a dict (device_us, effective_us, ...)
    predicted: dict[str, Any] | None = None
    swimlane: str = ""  # --timing: the page
    fuzz_seeds: int = 0  # --fuzz-schedules: seeds run
    divergent_seed: int | None = None  # --fuzz-schedules: a seed whose result differs
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.cls}::{self.case}"

    def add_tasks(self, n: int) -> None:
        self.tasks += int(n)

    def add_error(self, max_abs: float) -> None:
        if self.worst_error is None or not (max_abs <= self.worst_error):
            self.worst_error = max_abs

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if d["worst_error"] is not None and not math.isfinite(d["worst_error"]):
            d["worst_error"] = str(d["worst_error"])
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CaseRecord:
        d = dict(d)
        if isinstance(d.get("worst_error"), str):
            d["worst_error"] = float(d["worst_error"])
        return cls(**d)


_current: list[CaseRecord] = []


def current() -> CaseRecord | None:
    """The record the running case adds to, if a driver made one."""
    return _current[-1] if _current else None


@contextlib.contextmanager
def recording(record: CaseRecord) -> Iterator[CaseRecord]:
    """Makes ``record`` current while the case runs; sets its wall time, and its result from
    what the body raised (re-raised) or PASSED."""
    start = time.perf_counter()
    _current.append(record)
    try:
        yield record
    except BaseException as e:
        if not record.result:
            record.result, record.feature, record.message = classify(e)
        raise
    else:
        if not record.result:
            record.result = PASSED
    finally:
        _current.pop()
        record.wall_s = time.perf_counter() - start


@contextlib.contextmanager
def case_body(record: CaseRecord) -> Iterator[CaseRecord]:
    """:func:`recording`, for a driver: the body's own failure (an assertion, an error,
    ``pytest.skip``: SKIPPED) is the record's result and is not raised; KeyboardInterrupt is."""
    try:
        with recording(record):
            yield record
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - recorded by recording()
        if type(e).__name__ == "Skipped":
            record.result, record.message = SKIPPED, str(e)


def not_supported(feature: str, detail: str) -> NotSupportedError:
    """The error for a feature this runtime lacks: ``"<feature>: <detail>"``."""
    return NotSupportedError(f"{feature}: {detail}", ErrorCode.NOT_SUPPORTED)


def reference_internal(name: str, detail: str) -> Exception:
    """What a stand-in's ``__getattr__`` raises for ``name``, an attribute the reference's object
    has and ours lacks: AttributeError for a dunder (Python's own probes), else NOT_SUPPORTED as
    the reference's internal Python API, naming ``detail``."""
    if name.startswith("__"):
        return AttributeError(name)
    return not_supported("the reference's internal Python API", detail)


# A NOT_SUPPORTED message, or a compiler's error for an API we do not provide, and the feature
# it means. First match wins. The names are the ones the conformance page counts by.
_FEATURES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.I), name)
    for p, name in [
        (r"set_block_num|set_core_num|set_require_sync_start|SPMD", "SPMD launch"),
        (r"rt_submit_dummy_task|dependency-only", "dependency-only tasks"),
        (r"CoreTaskPredicate|set_predicate|predicate", "dispatch predicates"),
        (r"TPUSH|TPOP|TFREE", "TPUSH/TPOP cross-core pipes"),
        (r"\bdump\b\(|member named .dump.|args dump|dump_args", "args dump"),
        (r"SDMA|URMA|sdma|urma|async completion", "asynchronous completions (SDMA/URMA)"),
        (
            r"global domain|GlobalCommDomain|allocate_global_domain|across hosts",
            "the reference's global communication domains (its L4 of remote L3 workers)",
        ),
        (
            r"comm(unication)? domain|CommDomain|allocate_domain|pto/comm|platform_comm",
            "communication domains",
        ),
        (r"GraphTaskArgs|graph record|rt_graph_|rt_submit_graph", "graph record/replay"),
        (
            r"worker_chip_message_queue|worker_chip_orch_endpoint|worker_chip_orch_comm",
            "worker-chip message queues",
        ),
        (r"reference module|reference-internal API", "the reference's internal Python API"),
    ]
]
_MISSING_HEADER = re.compile(
    r"fatal error: ['\"]?([\w./-]+)['\"]? file not found|"
    r"fatal error: ([\w./-]+): No such file"
)


def feature_of(message: str) -> str:
    """The feature a NOT_SUPPORTED (or compile) message names, or ''."""
    for pattern, name in _FEATURES:
        if pattern.search(message):
            return name
    return ""


def classify(e: BaseException) -> tuple[str, str, str]:
    """(result, missing feature, message) for what a case raised."""
    text = str(e).strip() or type(e).__name__
    if isinstance(e, AssertionError):
        return FAILED, "", text
    if isinstance(e, Error) and e.code == ErrorCode.KERNEL_COMPILE:
        header = _MISSING_HEADER.search(text)
        if header:
            name = header.group(1) or header.group(2)
            feature = feature_of(name) or f"reference-internal header {name}"
            return NOT_SUPPORTED, feature, _first_lines(text)
        feature = feature_of(_compiler_errors(text))
        if feature:
            return NOT_SUPPORTED, feature, _first_lines(text)
        return ERROR, "", _first_lines(text)
    if isinstance(e, NotSupportedError) or (
        isinstance(e, Error) and e.code == ErrorCode.NOT_SUPPORTED
    ):
        return NOT_SUPPORTED, feature_of(text) or text.split(":", 1)[0][:80], _first_lines(text)
    if isinstance(e, Error) and e.code == ErrorCode.ORCHESTRATION_FAILED:
        feature = feature_of(text)
        if feature and "not supported" in text.lower():
            return NOT_SUPPORTED, feature, _first_lines(text)
    if isinstance(e, (Error, Exception)):
        return ERROR, "", f"{type(e).__name__}: {_first_lines(text)}"
    return ERROR, "", f"{type(e).__name__}: {text}"


def _compiler_errors(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if "error" in line)


def _first_lines(text: str, n: int = 12) -> str:
    lines = text.splitlines()
    return "\n".join(lines[:n]) + (f"\n... ({len(lines) - n} more lines)" if len(lines) > n else "")
