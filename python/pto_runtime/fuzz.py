"""python/pto_runtime/fuzz.py — the schedule fuzzer: run one program under many seeds, compare.

A correct orchestration gives the same buffers under every legal schedule. One that declares a
written view as an input, or forgets a dependency, gives results that depend on which task ran
first — and a parallel run shows that only by luck. Seeded runs (``ChipCallConfig.sim_seed``,
docs/design/sim_execution.md) make the schedule a function of the seed, so::

    report = pto.fuzz_schedules(worker, callable, make_args, seeds=20)
    if report:                      # a seed whose buffers differ from the baseline seed's
        print(report.summary())
        report.save_traces("fuzz")  # fuzz.seed0.trace.json, fuzz.seed7.trace.json

``make_args`` builds fresh arguments (new arrays) for each run; every tensor in them is
compared, inputs included, bit for bit. The divergent seed is run again to show it reproduces.
"""

from __future__ import annotations

import builtins
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import _native
from .errors import Error, InvalidArgumentError
from .task_args import ChipStorageTaskArgs

__all__ = ["ScheduleFuzzReport", "TensorDiff", "fuzz_schedules"]


@dataclass(frozen=True)
class TensorDiff:
    """Tensor ``index`` (make_args' order) differs in ``count`` of its ``size`` elements."""

    index: int
    count: int
    size: int
    first: int  # flat index of the first differing element
    baseline_value: Any
    divergent_value: Any


@dataclass
class ScheduleFuzzReport:
    """What ``fuzz_schedules`` found. True when some seed's buffers differ from the baseline's."""

    baseline_seed: int
    seeds_run: list[int] = field(default_factory=list)
    divergent_seed: int | None = None
    diffs: list[TensorDiff] = field(default_factory=list)
    error: str | None = None  # the divergent seed's run failed (e.g. timed out) instead
    reproduced: bool | None = None  # the divergent seed, run again, gave the same buffers
    baseline_trace: dict[str, Any] | None = None
    divergent_trace: dict[str, Any] | None = None

    def __bool__(self) -> bool:
        return self.divergent_seed is not None

    def summary(self) -> str:
        if self.divergent_seed is None:
            return (
                f"{len(self.seeds_run)} seeds ({self.seeds_run[0]}..{self.seeds_run[-1]}): "
                f"every run gave the buffers of seed {self.baseline_seed}"
            )
        lines = [f"seed {self.divergent_seed} differs from seed {self.baseline_seed}:"]
        if self.error is not None:
            lines.append(f"  its run failed: {self.error}")
        for d in self.diffs:
            lines.append(
                f"  tensor {d.index}: {d.count} of {d.size} elements differ; first at [{d.first}]: "
                f"{d.baseline_value!r} (seed {self.baseline_seed}) vs {d.divergent_value!r}"
            )
        if self.reproduced is not None:
            lines.append(
                f"  run again, seed {self.divergent_seed} "
                + (
                    "gave the same buffers (reproducible)"
                    if self.reproduced
                    else "gave different buffers"
                )
            )
        lines.append(
            "  a result that depends on the schedule: a task writes a view it declares as an "
            "input, or a dependency is missing; compare the two traces (save_traces)"
        )
        return "\n".join(lines)

    def save_traces(self, prefix: str | Path) -> list[Path]:
        """Writes ``<prefix>.seed<N>.trace.json`` for the baseline and the divergent seed."""
        written = []
        for seed, trace in (
            (self.baseline_seed, self.baseline_trace),
            (self.divergent_seed, self.divergent_trace),
        ):
            if seed is None or trace is None:
                continue
            path = Path(f"{prefix}.seed{seed}.trace.json")
            path.write_text(json.dumps(trace))
            written.append(path)
        return written


def _copy_config(config: _native.ChipCallConfig | None) -> _native.ChipCallConfig:
    return _native.ChipCallConfig() if config is None else copy.copy(config)


def _snapshot(args: ChipStorageTaskArgs) -> list[np.ndarray]:
    return [np.array(v, copy=True) for v in args._views]  # NumPy views of torch tensors too


def _diff(index: int, base: np.ndarray, other: np.ndarray) -> TensorDiff | None:
    # Bit for bit: NaNs with equal bits are equal, -0.0 and 0.0 are not.
    b = base.reshape(-1).view(np.uint8).reshape(base.size, -1) if base.size else base.reshape(-1)
    o = (
        other.reshape(-1).view(np.uint8).reshape(other.size, -1)
        if other.size
        else other.reshape(-1)
    )
    if b.shape == o.shape and np.array_equal(b, o):
        return None
    if b.shape != o.shape:  # make_args built different tensors: report it whole
        return TensorDiff(index, base.size, base.size, 0, None, None)
    differ = np.flatnonzero((b != o).any(axis=1))
    first = int(differ[0])
    return TensorDiff(
        index,
        int(differ.size),
        int(base.size),
        first,
        base.reshape(-1)[first].item(),
        other.reshape(-1)[first].item(),
    )


def fuzz_schedules(
    worker: _native.ChipWorker,
    callable: _native.ChipCallable,
    make_args: Callable[[], ChipStorageTaskArgs],
    config: _native.ChipCallConfig | None = None,
    *,
    seeds: int = 20,
    baseline_seed: int = 0,
) -> ScheduleFuzzReport:
    """Runs ``callable`` under seeds ``baseline_seed .. baseline_seed + seeds - 1`` and returns the
    first seed whose tensors differ from the baseline seed's, with both runs' traces.

    ``config`` is copied; ``sim_seed`` and ``enable_profiling`` are set on the copy. Runs on the
    sim's fiber pool only (``PTO_SIM_EXEC=threads`` cannot be seeded: NotSupportedError). A run
    that fails under some seed (a time-out, a failed task) is reported as that seed's divergence;
    if the baseline seed's run fails, its error is raised.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 2:
        raise InvalidArgumentError(
            f"seeds={seeds!r}: must be an int >= 2 (the baseline and at least one more)"
        )
    if isinstance(baseline_seed, bool) or not isinstance(baseline_seed, int) or baseline_seed < 0:
        raise InvalidArgumentError(f"baseline_seed={baseline_seed!r}: must be an int >= 0")
    if not builtins.callable(make_args):
        raise InvalidArgumentError(
            f"make_args={make_args!r}: must be a function returning ChipStorageTaskArgs"
        )
    base_cfg = _copy_config(config)
    base_cfg.enable_profiling = True

    def run(seed: int) -> tuple[list[np.ndarray], dict[str, Any] | None]:
        args = make_args()
        if not isinstance(args, ChipStorageTaskArgs):
            raise InvalidArgumentError(
                f"make_args returned {type(args).__name__}: "
                "must return pto_runtime.ChipStorageTaskArgs"
            )
        cfg = _copy_config(base_cfg)
        cfg.sim_seed = seed
        worker.run(callable, args, cfg)
        return _snapshot(args), worker.last_trace()

    report = ScheduleFuzzReport(baseline_seed=baseline_seed)
    base, report.baseline_trace = run(baseline_seed)
    report.seeds_run.append(baseline_seed)
    for seed in range(baseline_seed + 1, baseline_seed + seeds):
        report.seeds_run.append(seed)
        try:
            got, trace = run(seed)
        except Error as e:
            report.divergent_seed, report.error = seed, f"{type(e).__name__}: {e}"
            return report
        diffs = [
            d
            for i, (b, g) in enumerate(zip(base, got, strict=True))
            if (d := _diff(i, b, g)) is not None
        ]
        if diffs:
            report.divergent_seed, report.diffs, report.divergent_trace = seed, diffs, trace
            again, _ = run(seed)
            report.reproduced = all(
                _diff(i, g, a) is None for i, (g, a) in enumerate(zip(got, again, strict=True))
            )
            return report
    return report
