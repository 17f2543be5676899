"""bench/driver/plan.py — what bench/run.py runs: the runtimes compared and the experiments.

An experiment is one binary invocation per runtime: a workload at fixed sizes over grains (and
block_dims for ours). full_plan() is the published sweep, smoke_plan() the CI run at tiny sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RUNTIMES = [
    "serial", "omp_gomp", "omp_llvm", "tbb", "starpu",
    "pto_hbg", "pto_tmr", "pto_hbg_threads", "pto_tmr_threads",
]  # fmt: skip
# The *_threads variants run the same binary with the sim's thread-per-core execution path
# (PTO_SIM_EXEC=threads, docs/design/sim_execution.md) instead of fibers, for comparison in one
# run.
PTO_VARIANTS = {
    "pto_hbg": ("pto_hbg", {}),
    "pto_tmr": ("pto_tmr", {}),
    "pto_hbg_threads": ("pto_hbg", {"PTO_SIM_EXEC": "threads"}),
    "pto_tmr_threads": ("pto_tmr", {"PTO_SIM_EXEC": "threads"}),
    "pto_hbg_seeded": ("pto_hbg", {"PTO_SIM_SEED": "1"}),
    "pto_tmr_seeded": ("pto_tmr", {"PTO_SIM_SEED": "1"}),
    "pto_hbg_timed": ("pto_hbg", {"PTO_SIM_SEED": "1", "PTO_SIM_TIMING": "1"}),
    "pto_tmr_timed": ("pto_tmr", {"PTO_SIM_SEED": "1", "PTO_SIM_TIMING": "1"}),
}
# The *_seeded variants: seeded runs (PTO_SIM_SEED, one OS thread per chip in a reproducible
# order), a debugging mode; only in the empty-task experiments, where their cost per task shows.
SEEDED = ["pto_hbg_seeded", "pto_tmr_seeded"]
# The *_timed variants: timing mode (PTO_SIM_TIMING, a seeded run in virtual time); the run also
# reports the device makespan the timing model predicts for the full chip. Only in the 'timing'
# experiments and the tiled GEMM, beside the parallel mode's wall time.
TIMED = ["pto_hbg_timed", "pto_tmr_timed"]
ALL_RUNTIMES = RUNTIMES + SEEDED + TIMED
PTO_RUNTIMES = set(PTO_VARIANTS)
ALWAYS_BUILT = {"serial"} | PTO_RUNTIMES  # the others depend on installed libraries
# The spmd workload's peers: no StarPU version.
SPMD_RUNTIMES = [r for r in RUNTIMES if r != "starpu"]
METG_GRAINS = [2**k for k in range(4, 19)]  # busy rounds: about 30 ns .. 450 us per task here


@dataclass
class Experiment:
    """One binary invocation per runtime: a workload at fixed sizes over grains (and block_dims)."""

    kind: str  # empty | metg | fixed | blockdim | matmul | timing
    workload: str
    config: str  # column label in the tables
    args: list[str]
    grains: list[int]
    block_dims: list[int] = field(default_factory=lambda: [24, 1])
    runtimes: list[str] = field(default_factory=lambda: list(RUNTIMES))
    reps: int | None = None  # None: the run's --reps


def full_plan() -> list[Experiment]:
    e: list[Experiment] = []
    # ns per task with empty kernels (grain 0), ~20k tasks each.
    for wl, cfg, args in [
        ("chain", "chain", ["--steps", "20000"]),
        ("independent", "independent", ["--width", "4", "--steps", "5000"]),
        ("fanout_fanin", "fanout_fanin w8", ["--width", "8", "--steps", "2000"]),
        ("stencil_1d", "stencil_1d w4", ["--width", "4", "--steps", "5000"]),
        ("nearest", "nearest w4 r5", ["--width", "4", "--steps", "5000", "--radix", "5"]),
    ]:
        e.append(Experiment("empty", wl, cfg, args, [0], runtimes=RUNTIMES + SEEDED))
    # SPMD: 1,000 tasks of 24 blocks (and 500 sync-start tasks of 48) in a chain, ns per block,
    # beside the chain's ns per single-block task; the peers run each step as a parallel loop.
    for cfg, args in [
        ("spmd 24 blocks", ["--width", "24", "--steps", "1000"]),
        ("spmd 48 sync-start", ["--width", "48", "--steps", "500", "--sync-start"]),
    ]:
        e.append(
            Experiment("empty", "spmd", cfg, args, [0], block_dims=[24], runtimes=SPMD_RUNTIMES)
        )
    # METG(50%): grain sweeps, Task Bench style (fixed steps, grain varied).
    for wl, cfg, args in [
        ("independent", "trivial w4", ["--width", "4", "--steps", "100"]),
        ("stencil_1d", "stencil_1d w2", ["--width", "2", "--steps", "100"]),
        ("stencil_1d", "stencil_1d w4", ["--width", "4", "--steps", "100"]),
        ("nearest", "nearest w4 r5", ["--width", "4", "--steps", "100", "--radix", "5"]),
    ]:
        e.append(Experiment("metg", wl, cfg, args, METG_GRAINS))
    # Timing mode's predicted device makespan beside the parallel mode's wall time (stencil).
    e.append(
        Experiment(
            "timing",
            "stencil_1d",
            "stencil_1d w4",
            ["--width", "4", "--steps", "100"],
            [1024, 16384],
            block_dims=[24],
            runtimes=["pto_hbg", "pto_tmr", *TIMED],
        )
    )
    # Fixed cost of one run of a 5-task graph (fan-out 3: 1 + 3 + 1 tasks).
    e.append(
        Experiment(
            "fixed", "fanout_fanin", "5 tasks", ["--width", "3", "--steps", "1"], [0], reps=21
        )
    )
    # Throughput of our runtimes as block_dim grows (independent tasks, empty and ~2 us).
    e.append(
        Experiment(
            "blockdim",
            "independent",
            "independent 10k",
            ["--width", "4", "--steps", "2500"],
            [0, 1024],
            block_dims=[1, 2, 4, 8, 12, 16, 24],
            runtimes=sorted(PTO_RUNTIMES - set(SEEDED) - set(TIMED)),
        )
    )
    # Tiled GEMM, n = 512, three tile sizes.
    for nt, t in [(16, 32), (8, 64), (4, 128)]:
        e.append(
            Experiment(
                "matmul",
                "matmul",
                f"n512 t{t}",
                ["--width", str(nt)],
                [t],
                runtimes=RUNTIMES + TIMED,
            )
        )
    return e


def smoke_plan() -> list[Experiment]:
    e = [
        Experiment(
            "empty", "chain", "chain", ["--steps", "50"], [0, 64], runtimes=RUNTIMES + SEEDED
        ),
        Experiment(
            "empty", "independent", "independent", ["--width", "3", "--steps", "10"], [0, 64]
        ),
        Experiment(
            "empty", "fanout_fanin", "fanout_fanin w3", ["--width", "3", "--steps", "5"], [0, 64]
        ),
        Experiment(
            "metg", "stencil_1d", "stencil_1d w3", ["--width", "3", "--steps", "10"], [16, 256]
        ),
        Experiment(
            "metg",
            "nearest",
            "nearest w4 r5",
            ["--width", "4", "--steps", "10", "--radix", "5"],
            [16, 256],
        ),
        Experiment("fixed", "fanout_fanin", "5 tasks", ["--width", "3", "--steps", "1"], [0]),
        Experiment(
            "empty",
            "spmd",
            "spmd 4 blocks",
            ["--width", "4", "--steps", "10"],
            [0, 64],
            runtimes=SPMD_RUNTIMES,
        ),
        Experiment(
            "empty",
            "spmd",
            "spmd 4 sync-start",
            ["--width", "4", "--steps", "10", "--sync-start"],
            [0, 64],
            block_dims=[2],
            runtimes=SPMD_RUNTIMES,
        ),
        Experiment(
            "blockdim",
            "independent",
            "independent 12",
            ["--width", "3", "--steps", "4"],
            [0],
            block_dims=[1, 2],
            runtimes=sorted(PTO_RUNTIMES - set(SEEDED) - set(TIMED)),
        ),
        Experiment(
            "matmul", "matmul", "n64 t16", ["--width", "4"], [16], runtimes=RUNTIMES + TIMED
        ),
    ]
    return e
