"""python/pto_runtime/scene/execute.py — one scene case run on one chip: arguments, config, golden.

The L2 path of a case: ``generate_args`` builds the arguments; the orchestration's signature
gives each tensor its direction; ``compute_golden`` fills a clone; the program runs ``rounds``
times (outputs reset between rounds) and each result is compared. Two extra passes are ours:
``timing`` reruns the case in the sim's timing mode (kernels priced by PTO-ISA's cost model)
and writes the measured and predicted swimlanes; ``fuzz_schedules`` reruns it under seeded
random schedules and fails naming the first seed whose tensors differ from seed 0's.
"""

from __future__ import annotations

import ctypes
import dataclasses
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._native import ChipCallConfig, Direction, PlatformInfo
from ..fuzz import fuzz_schedules
from ..task_args import ChipStorageTaskArgs
from ..timing import Prediction
from ..trace import Trace, write_swimlanes
from . import arrays, record
from .spec import Scalar, TaskArgsBuilder, TensorArg

__all__ = [
    "RunOptions",
    "build_chip_args",
    "build_config",
    "iter_args",
    "scalar_bits",
    "scalar_i64",
]

_MASK64 = (1 << 64) - 1
# The AICPU threads a run uses when the case does not say (the reference's defaults).
_DEFAULT_AICPU_THREADS = {"a2a3": 4, "a5": 5}
# The arguments a task may have on the reference: its descriptor's 32 tensors and 16 scalars
# (PTO_ABI_MAX_TENSOR_ARGS + PTO_ABI_MAX_SCALAR_ARGS, include/pto_abi/intrinsic.h). Our own
# default (max_args_per_task, 16) keeps task records small; a case is run with the reference's.
_REFERENCE_MAX_ARGS_PER_TASK = 32 + 16


@dataclass
class RunOptions:
    """How the driver runs every case (command-line options)."""

    rounds: int = 1
    skip_golden: bool = False
    timing: bool = False  # rerun in timing mode, add the predicted makespan and swimlanes
    timing_dir: Path = Path("outputs")
    fuzz_schedules: int = 0  # rerun under this many seeded schedules
    sim_seed: int | None = None  # run seeded (replays a seed the fuzzer reported)
    profiling: bool = False  # --enable-chip-swimlane: keep our trace of each run
    pmu: bool = False
    dump_tensors: bool = False
    run_timeout: float | None = None  # a chip run's time limit in s (0: none); None: the default
    # -p a2a3 / -p a5: every round runs in timing mode on the sim twin and predicts the chip's
    # device time (the worker prints each run's [STRACE] markers, workers.ChipSceneWorker.run)
    predict: bool = False


def scalar_bits(value: Any) -> int:
    """A scalar argument as the 64 bits the kernel reads: a Python float (and np.float32) as
    float32 bits, ctypes.c_float/c_double as their bits, an integer two's complement."""
    if isinstance(value, ctypes._SimpleCData):
        if isinstance(value, ctypes.c_float):
            return ctypes.c_uint32.from_buffer_copy(value).value
        if isinstance(value, ctypes.c_double):
            return ctypes.c_uint64.from_buffer_copy(value).value
        return int(value.value) & _MASK64
    if isinstance(value, (float, np.floating)):
        return int(struct.unpack("<I", struct.pack("<f", float(value)))[0])
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return int(value) & _MASK64
    raise TypeError(
        f"scalar {value!r} of type {type(value).__name__} is not an int, a float, a NumPy scalar "
        "or a ctypes scalar"
    )


def _direction(entry: Any, where: str) -> Direction:
    if isinstance(entry, Direction):
        return entry
    raise ValueError(
        f"{where}: signature entry {entry!r} is not a pto_runtime.Direction (INPUT, OUTPUT, INOUT)"
    )


def iter_args(
    test_args: TaskArgsBuilder, signature: Sequence[Any]
) -> Iterator[tuple[TensorArg | Scalar, Direction | None]]:
    """Every argument in order with its direction: a tensor's from the orchestration's
    signature (ValueError if the signature has no entry for it), None for a scalar."""
    index = 0
    for spec in test_args.specs:
        if isinstance(spec, Scalar):
            yield spec, None
            continue
        if index >= len(signature):
            raise ValueError(
                f"tensor {spec.name!r} (tensor {index}) has no entry in the orchestration's "
                f"signature, which has {len(signature)}; make CALLABLE['orchestration']"
                "['signature'] list every tensor generate_args() returns"
            )
        yield spec, _direction(signature[index], f"signature[{index}] ({spec.name!r})")
        index += 1


def scalar_i64(value: Any) -> int:
    """A scalar's bits as the signed int64 ChipStorageTaskArgs.add_scalar_i64 takes."""
    bits = scalar_bits(value)
    return bits - (1 << 64) if bits >> 63 else bits


def build_chip_args(
    test_args: TaskArgsBuilder, signature: Sequence[Any]
) -> tuple[ChipStorageTaskArgs, list[str]]:
    """The run's arguments from the builder, each tensor with its signature direction; and the
    names of the tensors the run writes (OUTPUT, INOUT)."""
    args = ChipStorageTaskArgs()
    outputs: list[str] = []
    for spec, d in iter_args(test_args, signature):
        if d is None:
            args.add_scalar_i64(scalar_i64(spec.value))
            continue
        args.add_tensor(spec.value, d)
        if d in (Direction.OUTPUT, Direction.INOUT):
            outputs.append(spec.name)
    return args, outputs


def build_config(
    platform: str,
    info: PlatformInfo | None,
    config: Mapping[str, Any],
    options: RunOptions,
) -> ChipCallConfig:
    """A case's ``config`` as a ChipCallConfig: every cluster unless ``block_dim`` says, the
    reference's AICPU thread count unless ``aicpu_thread_num`` says, the reference's arguments
    per task, the ring sizes of ``runtime_env``."""
    clusters = info.num_clusters if info is not None else 0
    max_threads = info.max_aicpu_threads if info is not None else 0
    block_dim = int(config.get("block_dim") or clusters or 1)
    threads = int(config.get("aicpu_thread_num") or 0)
    if threads == 0:
        threads = _DEFAULT_AICPU_THREADS.get(platform.removesuffix("sim"), 4)
        if max_threads:
            threads = min(threads, max_threads)
    cfg = ChipCallConfig(
        block_dim=block_dim,
        aicpu_thread_num=threads,
        max_args_per_task=_REFERENCE_MAX_ARGS_PER_TASK,
    )
    env = config.get("runtime_env", {})
    for key, attr in (
        ("ring_task_window", "task_window"),
        ("ring_heap", "heap_bytes"),
        ("ring_dep_pool", "dep_pool_entries"),
    ):
        value = env.get(key, 0)
        if isinstance(value, (list, tuple)):  # one size per ring: this runtime has one ring
            value = max(value) if value else 0
        if value:
            setattr(cfg, attr, int(value))
    if options.profiling or options.timing:
        cfg.enable_profiling = True
    if options.pmu:
        cfg.enable_pmu = True
    if options.dump_tensors:
        cfg.enable_dump_tensor = True
    if options.sim_seed is not None:
        cfg.sim_seed = int(options.sim_seed)
    if options.run_timeout is not None:
        cfg.timeout_ms = min(int(round(options.run_timeout * 1000)), 0xFFFFFFFF)
    return cfg


def compare_and_record(
    test: Any, test_args: TaskArgsBuilder, golden: TaskArgsBuilder, outputs: list[str], params: Any
) -> None:
    """Adds the worst error of the outputs to the current record, then runs the test's
    ``compare_outputs`` (which raises AssertionError on a mismatch)."""
    rec = record.current()
    if rec is not None:
        for name in outputs:
            try:
                got = arrays.compare(getattr(test_args, name), getattr(golden, name), 0.0, 0.0)
            except Exception:  # noqa: BLE001 - a test's own output shapes; compare_outputs judges
                continue
            rec.add_error(got.max_abs)
    test.compare_outputs(test_args, golden, outputs, params)


def default_compare(
    test_args: TaskArgsBuilder,
    golden: TaskArgsBuilder,
    outputs: list[str],
    rtol: float,
    atol: float,
) -> None:
    """Every output within ``atol + rtol * |golden|``; AssertionError naming the first that is
    not, with its worst difference, how many elements are off and the first of them."""
    rec = record.current()
    for name in outputs:
        got = arrays.compare(getattr(test_args, name), getattr(golden, name), rtol, atol)
        if rec is not None:
            rec.add_error(got.max_abs)
        if not got.ok:
            first = ""
            if got.first is not None:
                i, a, e = got.first
                first = f"; first at flat index {i}: {a!r}, expected {e!r}"
            raise AssertionError(
                f"golden mismatch on {name!r}: {got.bad} of {got.size} elements outside "
                f"rtol={rtol}, atol={atol}; max |diff| = {got.max_abs:.6g}{first}"
            )


class _Reset:
    """Every tensor of a builder put back to the values it had when this was made."""

    def __init__(self, test_args: TaskArgsBuilder) -> None:
        self._args = test_args
        self._initial = {n: arrays.clone(getattr(test_args, n)) for n in test_args.tensor_names()}

    def __call__(self) -> None:
        for name, value in self._initial.items():
            arrays.copy_into(getattr(self._args, name), value)


def run_case_l2(
    test: Any,
    worker: Any,
    handle: Any,
    case: Mapping[str, Any],
    options: RunOptions,
    skip_golden: bool,
) -> None:
    """Runs one L2 case: rounds, then the timing and fuzzing passes if asked for."""
    params = case.get("params", {})
    config_dict = case.get("config", {})
    signature = getattr(handle, "signature", None)
    if signature is None:
        signature = test.CALLABLE.get("orchestration", {}).get("signature", [])
    test_args = test.generate_args(params)
    args, outputs = build_chip_args(test_args, signature)
    golden = None
    if not skip_golden:
        golden = test_args.clone()
        test.compute_golden(golden, params)
    extra = options.rounds > 1 or options.timing or options.fuzz_schedules
    reset = _Reset(test_args) if extra else None
    rec = record.current()
    for round_index in range(max(1, options.rounds)):
        if round_index and reset is not None:
            reset()
        config = test._build_config(config_dict)
        if options.predict:
            config.sim_timing = True
            config.sim_seed = options.sim_seed or 0
        worker.run(handle, args, config=config)
        if golden is not None:
            compare_and_record(test, test_args, golden, outputs, params)
        if options.predict:
            stats = worker.last_stats
            prediction = Prediction.of(stats, type(test)._st_runtime)
            if rec is not None:
                rec.predicted = dataclasses.asdict(prediction)
                rec.predicted_makespan_us = prediction.effective_us

    if options.timing and reset is not None:
        chip = worker.chip
        measured = Trace.from_dict(chip.last_trace() or {})
        reset()
        config = test._build_config(config_dict)
        config.sim_timing = True
        config.enable_profiling = True
        config.sim_seed = options.sim_seed or 0
        worker.run(handle, args, config=config)
        stats = worker.last_stats
        if golden is not None:
            compare_and_record(test, test_args, golden, outputs, params)
        predicted = Trace.from_dict(chip.last_trace() or {})
        stem = _file_stem(f"{type(test).__name__}_{case['name']}_{worker.platform}")
        page = write_swimlanes(measured, predicted, options.timing_dir, stem)
        if rec is not None:
            rec.predicted_makespan_us = float(stats.predicted_makespan_us)
            rec.swimlane = str(Path(page).resolve())
            if stats.price_note:
                rec.notes.append(f"timing: {stats.price_note}")

    if options.fuzz_schedules and reset is not None:
        names = test_args.tensor_names()

        def make_args() -> ChipStorageTaskArgs:
            reset()
            return args

        config = test._build_config(config_dict)
        report = fuzz_schedules(
            worker.chip, _native_callable(handle), make_args, config, seeds=options.fuzz_schedules
        )
        if rec is not None:
            rec.fuzz_seeds = len(report.seeds_run)
            rec.divergent_seed = report.divergent_seed
        if report:
            named = report.summary()
            for d in report.diffs:
                named = named.replace(f"tensor {d.index}:", f"tensor {names[d.index]!r}:")
            raise AssertionError(
                f"schedule fuzzing: {named}\nreplay it with --sim-seed {report.divergent_seed}"
            )


def _native_callable(handle: Any) -> Any:
    return getattr(handle, "callable", handle)


def _file_stem(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)
