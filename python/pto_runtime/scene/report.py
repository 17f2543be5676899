"""python/pto_runtime/scene/report.py — the summary table that ends every scene run, and its JSON.

One row per case: case, platform, result, wall time, tasks run, worst error against the
golden; with ``--timing`` the predicted makespan, with ``--fuzz-schedules`` the seeds run. Then
each failure's message, the missing features counted, and ``passed P / attempted A / total T``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import record
from .record import CaseRecord

__all__ = ["compare_to", "counts_line", "family_of", "format_summary", "load_json", "save_json"]


def family_of(rel: str) -> str:
    """The family (folder) a case's file belongs to, given its path relative to the suite's
    root: examples/a2a3/<runtime>, tests/st/a5/<runtime>, tests/st/worker, ..."""
    parts = Path(rel).parts
    if parts[0] == "examples" and len(parts) > 2 and parts[1] in ("a2a3", "a5"):
        return "/".join(parts[:3])
    if parts[:2] == ("tests", "st") and len(parts) > 3 and parts[2] in ("a2a3", "a5"):
        return "/".join(parts[:4])
    return "/".join(parts[: min(3, len(parts) - 1)])


def _error(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def format_summary(records: Sequence[CaseRecord], total: int | None = None) -> str:
    """The table, the failures and the last line."""
    timing = any(r.predicted_makespan_us is not None for r in records)
    predicted = any(r.predicted for r in records)
    fuzz = any(r.fuzz_seeds for r in records)
    header = ["case", "platform", "result", "wall s", "tasks", "worst error"]
    if predicted:
        header += ["pred. Device us", "pred. Effective us", "pred. Orch us"]
    elif timing:
        header.append("predicted us")
    if fuzz:
        header.append("fuzz seeds")
    rows = []
    for r in records:
        result = r.result + (f" ({r.feature})" if r.feature else "")
        row = [
            r.label,
            r.platform,
            result,
            f"{r.wall_s:.2f}",
            str(r.tasks or "-"),
            _error(r.worst_error),
        ]
        if predicted:
            p = r.predicted or {}
            row += [
                f"{p[k]:.1f}" if p.get(k) else "-" for k in ("device_us", "effective_us", "orch_us")
            ]
        elif timing:
            row.append("-" if r.predicted_makespan_us is None else f"{r.predicted_makespan_us:.1f}")
        if fuzz:
            seeds = str(r.fuzz_seeds or "-")
            if r.divergent_seed is not None:
                seeds += f" (seed {r.divergent_seed} differs)"
            row.append(seeds)
        rows.append(row)
    widths = [
        max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
        for i, h in enumerate(header)
    ]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    if predicted:
        lines.append(
            "pred.: the chip's device time as the sim's timing model predicts it, not a "
            "measurement (its measured error: docs/timing_accuracy.md)"
        )
    failures = [r for r in records if r.result not in (record.PASSED, record.SKIPPED)]
    for r in failures:
        lines.append("")
        lines.append(f"{r.result}: {r.label} on {r.platform} ({r.file})")
        if r.message:
            lines += ["    " + line for line in r.message.splitlines()]
    for r in records:
        if r.swimlane:
            lines.append(f"swimlanes of {r.label} on {r.platform}: {r.swimlane}")
        for note in r.notes:
            lines.append(f"note on {r.label} on {r.platform}: {note}")
    features = Counter(r.feature for r in records if r.result == record.NOT_SUPPORTED)
    if features:
        lines.append("")
        lines.append("not supported, by feature:")
        for feature, n in features.most_common():
            lines.append(f"  {n:4d}  {feature}")
    lines.append("")
    lines.append(counts_line(records, total))
    return "\n".join(lines)


def counts_line(records: Sequence[CaseRecord], total: int | None = None) -> str:
    """``passed P / attempted A / total T`` (attempted: every case not skipped)."""
    passed = sum(r.result == record.PASSED for r in records)
    attempted = sum(r.result != record.SKIPPED for r in records)
    total = len(records) if total is None else total
    return f"passed {passed} / attempted {attempted} / total {total}"


def save_json(
    path: Path | str, records: Sequence[CaseRecord], meta: dict[str, Any], root: Path | None = None
) -> None:
    """``{"meta": ..., "cases": [record, ...]}``; files named relative to ``root`` if given."""
    cases = []
    for r in records:
        d = r.to_json()
        if root is not None:
            d["file"] = _key(r, root)[0]
        cases.append(d)
    Path(path).write_text(json.dumps({"meta": meta, "cases": cases}, indent=1))


def load_json(path: Path | str) -> tuple[dict[str, Any], list[CaseRecord]]:
    data = json.loads(Path(path).read_text())
    return data.get("meta", {}), [CaseRecord.from_json(c) for c in data.get("cases", [])]


def _key(r: CaseRecord, root: Path) -> tuple[str, str, str, str]:
    try:
        rel = str(Path(r.file).relative_to(root))
    except ValueError:
        rel = r.file
    return rel, r.cls, r.case, r.platform


def compare_to(
    now: Sequence[CaseRecord], root: Path, then: Sequence[CaseRecord], then_root: Path
) -> tuple[list[str], list[str]]:
    """(cases whose result differs from ``then``, cases that now pass and did not), each a
    line; a case ``then`` does not have counts as a difference. Files are compared by their
    names relative to each run's root."""
    expected = {_key(r, then_root): r for r in then}
    differ, better = [], []
    for r in now:
        key = _key(r, root)
        label = f"{key[0]}::{r.label} [{r.platform}]"
        old = expected.get(key)
        if old is None:
            differ.append(f"{label}: {r.result}, not in the expected results")
        elif r.result == old.result:
            continue
        elif r.result == record.PASSED:
            better.append(f"{label}: {old.result} -> PASSED")
        else:
            was = old.result + (f" ({old.feature})" if old.feature else "")
            got = r.result + (f" ({r.feature})" if r.feature else "")
            differ.append(f"{label}: {was} -> {got}")
    return differ, better
