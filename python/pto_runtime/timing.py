"""python/pto_runtime/timing.py — programs priced by PTO-ISA's cost model in the sim's timing mode.

Timing mode (``ChipCallConfig(sim_seed=N, sim_timing=True)``) runs a program in virtual time and
predicts its device makespan (docs/design/sim_execution.md, "Timing mode"). A tile kernel whose
cost-model twin the callable carries is charged, per invocation, the cycles PTO-ISA's cost
model predicts for it; :func:`add_cost_models` builds the twins and attaches them, and
:func:`timing_lines` says what a timed run predicted and what priced its kernels.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ._native import ChipCallable, ChipCallConfig, ChipWorker, CoreType, KernelCompiler, RunStats
from .task_args import ChipStorageTaskArgs
from .trace import Trace, write_swimlanes

__all__ = ["add_cost_models", "report_timing", "timed_rerun"]


def add_cost_models(
    compiler: KernelCompiler,
    callable_: ChipCallable,
    kernels: Sequence[tuple[int, CoreType, str | os.PathLike[str]]],
    progress: bool = False,
) -> list[str]:
    """Builds the cost-model twin of each ``(func_id, core_type, source)`` (in parallel, cached)
    and attaches it to ``callable_``, whose kernels these are. A kernel without a twin (a scalar
    kernel, a platform PTO-ISA has no cost model for, an instruction the model lacks) is priced
    by its host time, and the timed run's ``RunStats.price_note`` says why; returns those
    reasons, one per such kernel (``"func_id N: why"``)."""
    builds = compiler.compile_cost_models_many(
        [(source, core_type) for _, core_type, source in kernels], progress=progress
    )
    missing = []
    for (func_id, _, _), twin in zip(kernels, builds):
        callable_.set_cost_model(func_id, twin.path, twin.unavailable)
        if twin.path is None:
            missing.append(f"func_id {func_id}: {twin.unavailable}")
    return missing


def timed_rerun(
    worker: ChipWorker,
    callable_: ChipCallable,
    args: ChipStorageTaskArgs,
    timed: ChipCallConfig,
    reset: Callable[[], None],
) -> tuple[RunStats, Trace, Trace]:
    """Right after a profiled parallel run of ``callable_`` on ``worker``: its trace, then
    ``reset()`` (zero what the program accumulates into), then the same program with ``timed``
    (``sim_seed``, ``sim_timing`` and ``enable_profiling`` set). Returns the timed run's stats,
    the measured trace and the predicted one."""
    measured = Trace.from_dict(worker.last_trace() or {})
    reset()
    stats = worker.run(callable_, args, timed)
    return stats, measured, Trace.from_dict(worker.last_trace() or {})


def report_timing(
    parallel: RunStats,
    timed: RunStats,
    measured: Trace,
    predicted: Trace,
    out_dir: Path | str,
    stem: str,
) -> None:
    """Prints what a timed run predicted, next to the device time of the parallel run of the
    same program on this machine, and what priced its kernels; writes the two swimlanes side
    by side (``<stem>.compare.html`` in ``out_dir``, :func:`trace.write_swimlanes`)."""
    print(
        f"timed run: kernel invocations priced by isa_model {timed.priced_isa_model}, "
        f"table {timed.priced_table}, host_time {timed.priced_host_time}"
    )
    if timed.price_note:
        print(f"  note: {timed.price_note}")
    print(f"parallel run's device time: {parallel.device_us:.1f} us (this machine)")
    print(f"predicted makespan: {timed.predicted_makespan_us:.1f} us")
    page = write_swimlanes(measured, predicted, out_dir, stem)
    print(f"swimlanes: {page} (measured above, predicted below)")
