"""python/pto_runtime/timing.py — programs priced by PTO-ISA's cost model in the sim's timing mode.

Timing mode (``ChipCallConfig(sim_seed=N, sim_timing=True)``) runs a program in virtual time and
predicts its device makespan (docs/design/sim_execution.md, "Timing mode"). A tile kernel whose
cost-model twin the callable carries is charged, per invocation, the cycles PTO-ISA's cost
model predicts for it; :func:`add_cost_models` builds the twins and attaches them, and
:func:`timing_lines` says what a timed run predicted and what priced its kernels.
:class:`Prediction` is a timed run's predicted Device, Effective, Orch and Sched times, the
figures the reference implementation measures on a chip (or, ``Prediction.of_run``, a measured
run's device time), with the run's task timing slots; :func:`strace_lines` writes them as its
``[STRACE]`` markers (docs/design/timing_model.md, "What a prediction reports") and
:func:`print_strace` prints them to stderr, which our own API does only when asked
(docs/guide/profiling.md, "Task timing slots and [STRACE] markers").
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._native import ChipCallable, ChipCallConfig, ChipWorker, CoreType, KernelCompiler, RunStats
from .task_args import ChipStorageTaskArgs
from .trace import Trace, write_swimlanes

__all__ = [
    "Prediction",
    "add_cost_models",
    "print_strace",
    "report_timing",
    "strace_lines",
    "timed_rerun",
]


@dataclass(frozen=True)
class Prediction:
    """A timed run's predicted device times in µs, as the reference implementation names what it
    measures on a chip (its docs/dfx/l2-timing.md): ``device_us`` the whole AICPU run (the
    makespan plus the platform profile's preamble and teardown), ``effective_us`` the
    orchestration and scheduling windows merged (the makespan: every thread of a timed run
    starts at 0), ``orch_us`` the device orchestrator's window (tensormap_and_ringbuffer; 0 for
    host_build_graph, whose graph the host builds), ``sched_us`` the schedulers' window.
    ``slots``: the run's task timing slots, ``(slot, dispatch_ns, finish_ns)`` since the launch
    (``RunStats.task_timing_slots``). ``source``: ``"predicted"`` (timing mode) or
    ``"measured"`` (:meth:`of_run` of an ordinary run: ``device_us`` is its launch to
    completion, the other windows 0, not predicted)."""

    device_us: float
    effective_us: float
    orch_us: float
    sched_us: float
    runtime: str
    slots: tuple[tuple[int, int, int], ...] = ()
    source: str = "predicted"

    @staticmethod
    def of(stats: RunStats, runtime: str) -> Prediction:
        """The prediction of a run in timing mode (``stats``: its ``RunStats``)."""
        if stats.predicted_makespan_us <= 0:
            raise ValueError("Prediction.of: the run was not in timing mode (sim_timing=True)")
        makespan = float(stats.predicted_makespan_us)
        device_orch = runtime == "tensormap_and_ringbuffer"
        return Prediction(
            device_us=float(stats.predicted_device_us),
            effective_us=makespan,
            orch_us=float(stats.orchestration_us) if device_orch else 0.0,
            sched_us=makespan,
            runtime=runtime,
            slots=tuple(stats.task_timing_slots),
        )

    @staticmethod
    def of_run(stats: RunStats, runtime: str) -> Prediction:
        """A run's device times, whatever its mode: :meth:`of` for a timed run; for any other
        the measured device time (launch to completion) and task timing slots."""
        if stats.predicted_makespan_us > 0:
            return Prediction.of(stats, runtime)
        return Prediction(
            device_us=float(stats.device_us),
            effective_us=0.0,
            orch_us=0.0,
            sched_us=0.0,
            runtime=runtime,
            slots=tuple(stats.task_timing_slots),
            source="measured",
        )


_strace_invocations = 0
_strace_lock = threading.Lock()


def strace_lines(p: Prediction, host_ts_ns: int, host_dur_ns: int, callable_id: int) -> list[str]:
    """One run's ``[STRACE]`` markers as the reference implementation's host prints them for a
    run on a chip (``chip.run`` and its device spans; its docs/dfx/host-trace.md), with the
    device spans predicted, so its ``simpler_setup/tools/strace_timing.py --rounds-table``
    tabulates a sim run as it does one on a die. ``host_ts_ns``/``host_dur_ns``: the host's
    own wall time of the run (monotonic); ``callable_id``: a number the callable keeps across
    rounds (the tool groups rounds by it). Every device span says ``sim=predicted``
    (``sim=measured`` for a measured run); a task timing slot is ``device_wall.task_slot_<N>``
    from its earliest dispatch to its latest finish, on the device wall's origin (the launch),
    so a consumer's span starts after its producer's ends."""
    global _strace_invocations
    with _strace_lock:
        _strace_invocations += 1
        inv = _strace_invocations
    hid = callable_id & (2**64 - 1)
    head = f"[STRACE] v=1 pid={os.getpid()} tid={threading.get_native_id()} inv={inv} hid={hid:x}"
    wall = "chip.run.runner_run.device_wall"
    # A device phase's ts counts from the earliest phase emitted: orch and sched start together.
    preamble_ns = 0
    dev = f"clk=dev sim={p.source}"
    lines = [f"{head} depth=2 name={wall} ts=0 dur={round(p.device_us * 1e3)} {dev}"]
    if p.orch_us > 0:
        lines.append(
            f"{head} depth=3 name={wall}.orch ts={preamble_ns} dur={round(p.orch_us * 1e3)} {dev}"
        )
        lines.append(
            f"{head} depth=3 name={wall}.sched ts={preamble_ns} dur={round(p.sched_us * 1e3)} {dev}"
        )
    for slot, dispatch_ns, finish_ns in p.slots:
        lines.append(
            f"{head} depth=3 name={wall}.task_slot_{slot} ts={dispatch_ns} "
            f"dur={finish_ns - dispatch_ns} {dev}"
        )
    lines.append(f"{head} depth=0 name=chip.run ts={host_ts_ns} dur={host_dur_ns}")
    return lines


def print_strace(p: Prediction, host_ts_ns: int, host_dur_ns: int, callable_id: int) -> None:
    """Writes one run's :func:`strace_lines` to stderr (fd 2, one write, so a marker line is
    whole even when processes share the stream), where the reference prints them."""
    sys.stderr.flush()
    text = "".join(line + "\n" for line in strace_lines(p, host_ts_ns, host_dur_ns, callable_id))
    os.write(2, text.encode())


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
