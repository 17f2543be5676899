"""examples/timing/main.py — a predicted swimlane next to the measured one (sim timing mode).

Usage: python examples/timing/main.py [-p a2a3sim|a5sim] [--block-dim N] [--aicpu-threads N]
                                      [--seed S] [--kernel-time-pct P] [--kernel-costs TABLE]
                                      [-o DIR]

Runs the softmax example's program (examples/softmax: three AIV stages per block of rows,
stage order inferred by the tensormap runtime) twice on the same worker:

- measured: the default parallel mode; the trace's times are this machine's wall clock, where
  a handful of CPUs take turns at being the chip's cores;
- predicted: timing mode (``sim_seed``, ``sim_timing``), a seeded run in virtual time: each
  kernel costs its measured host time x --kernel-time-pct / 100, or its entry in
  --kernel-costs ("func_id=ns,..."), and every scheduler hand-off the platform profile's
  latency (docs/design/sim_execution.md, "Timing mode"). Its trace is the schedule the timing model
  predicts for the whole chip.

Both results are checked against NumPy; the two swimlane pages go to DIR (default: the current
directory) as softmax.measured.html and softmax.predicted.html, with softmax.compare.html
showing them one above the other.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pto_runtime as pto
from pto_runtime.trace import Trace, write_swimlanes


def _load_softmax_example() -> ModuleType:
    """examples/softmax/main.py as a module: its program, sizes and NumPy reference, not a copy."""
    path = Path(__file__).resolve().parent.parent / "softmax" / "main.py"
    spec = importlib.util.spec_from_file_location("softmax_example", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SOFTMAX = _load_softmax_example()
RUNTIME = SOFTMAX.RUNTIME
ROWS, COLS, BLOCK_ROWS = SOFTMAX.ROWS, SOFTMAX.COLS, SOFTMAX.BLOCK_ROWS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("--block-dim", type=int, default=8, help="clusters used (default 8)")
    p.add_argument("--aicpu-threads", type=int, default=3, help="AICPU threads (default 3)")
    p.add_argument("--seed", type=int, default=1, help="the timed run's seed (default 1)")
    p.add_argument(
        "--kernel-time-pct",
        type=int,
        default=100,
        help="an uncosted kernel takes its host time x this / 100 (default 100)",
    )
    p.add_argument(
        "--kernel-costs",
        default="",
        help='fixed virtual ns per kernel, "func_id=ns,..." (sets PTO_SIM_KERNEL_COSTS)',
    )
    p.add_argument("-o", "--out", type=Path, default=Path("."), help="where the pages go")
    return p.parse_args(argv)


def run(
    worker: pto.ChipWorker, callable_: pto.ChipCallable, x: np.ndarray, config: pto.ChipCallConfig
) -> tuple[pto.RunStats, np.ndarray, Trace]:
    out = np.zeros_like(x)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x, pto.Direction.INPUT)
    args.add_tensor(out, pto.Direction.OUTPUT)
    args.add_scalar_i64(BLOCK_ROWS)
    stats = worker.run(callable_, args, config)
    trace = worker.last_trace()
    assert trace is not None, "a profiled run leaves a trace"
    return stats, out, Trace.from_dict(trace)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    if opts.kernel_costs:
        os.environ["PTO_SIM_KERNEL_COSTS"] = opts.kernel_costs  # read at each run
    print(f"=== softmax {ROWS}x{COLS}, measured vs predicted, {opts.platform} ===")
    print(f"block_dim {opts.block_dim}, aicpu_threads {opts.aicpu_threads}, seed {opts.seed}")
    callable_ = SOFTMAX.build_callable(opts.platform)
    x = 4.0 * np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)
    base = dict(
        block_dim=opts.block_dim, aicpu_thread_num=opts.aicpu_threads, enable_profiling=True
    )
    with pto.Worker(level=2, platform=opts.platform, runtime=RUNTIME) as worker:
        m_stats, m_out, m_trace = run(worker, callable_, x, pto.ChipCallConfig(**base))
        timed = pto.ChipCallConfig(
            **base,
            sim_seed=opts.seed,
            sim_timing=True,
            sim_kernel_time_pct=opts.kernel_time_pct,
        )
        p_stats, p_out, p_trace = run(worker, callable_, x, timed)

    expected = SOFTMAX.softmax(x.astype(np.float64))
    for name, out in (("measured", m_out), ("predicted", p_out)):
        if SOFTMAX.first_mismatch(out, expected) is not None:
            print(f"✗ FAILED: the {name} run's result differs from NumPy softmax")
            return 1

    print(f"{'':24}{'measured':>14}{'predicted':>14}")
    print(
        f"{'makespan (trace), us':24}{m_trace.makespan / 1e3:14.1f}{p_trace.makespan / 1e3:14.1f}"
    )
    print(f"{'device time, us':24}{m_stats.device_us:14.1f}{p_stats.predicted_makespan_us:14.1f}")
    m_busy, p_busy = m_trace.summary().busy_by_type, p_trace.summary().busy_by_type
    for kind in sorted(k for k in set(m_busy) | set(p_busy) if m_busy.get(k) or p_busy.get(k)):
        print(f"{kind + ' busy':24}{m_busy.get(kind, 0):14.0%}{p_busy.get(kind, 0):14.0%}")
    print("(measured: this machine's CPUs take turns at being the chip's cores; predicted: the")
    print(" timing model's schedule for the chip, docs/design/sim_execution.md 'Timing mode')")

    page = write_swimlanes(m_trace, p_trace, opts.out, "softmax")
    print(f"swimlanes: {page} (measured above, predicted below)")
    predicted = p_stats.predicted_makespan_us
    print(f"✓ SUCCESS: both runs match NumPy softmax; predicted makespan {predicted:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
