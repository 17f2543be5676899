"""bench/comm/allreduce.py — all-reduce across simulated chips against the copy floor and MPI.

Usage: python bench/comm/allreduce.py [--chips 4] [--mib 4] [--reps 15] [--no-mpi]

In one session, each measured --reps times (median [min-max], ms):
  - pto mesh / ring / twophase: one L3 run holding one all-reduce of --mib MiB float32 per chip
    (examples/allreduce: a domain, one chip group; thread mode), wall time of Worker.run;
    "heap": inputs and outputs from Worker.alloc, which the chips use in place; "staged": NumPy
    arrays outside the heap, copied into each chip and back (how heap arrays went before
    f0df499);
  - the same with 8 all-reduces chained in one run (one domain, 8 epochs), per all-reduce;
  - MPI_Allreduce (Open MPI through mpi4py) of the same data across --chips local ranks
    (mpirun --oversubscribe), the slowest rank's time per call;
  - the copy floor: the bytes any all-reduce must move (2 (N - 1) / N of the vector into each
    of N ranks: 2 (N - 1) x the vector) over this machine's memcpy bandwidth (NumPy copyto of
    the vector, on every CPU at once).
Ratios are against the floor and against MPI, from the medians of this one session.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pto_runtime as pto

REPO = Path(__file__).resolve().parents[2]

MPI_PROGRAM = r"""
import sys, time
import numpy as np
from mpi4py import MPI
n, reps = int(sys.argv[1]), int(sys.argv[2])
comm = MPI.COMM_WORLD
x = np.full(n, comm.rank + 1, np.float32)
y = np.empty_like(x)
comm.Allreduce(x, y)  # warm
times = []
for _ in range(reps):
    comm.Barrier()
    t0 = time.perf_counter()
    comm.Allreduce(x, y)
    dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    times.append(dt)
assert y[0] == comm.size * (comm.size + 1) / 2
if comm.rank == 0:
    print(" ".join(f"{t * 1e3:.4f}" for t in times))
"""


def example():
    spec = importlib.util.spec_from_file_location(
        "allreduce_example", REPO / "examples/allreduce/main.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def stats(ms: list[float]) -> str:
    return f"{np.median(ms):.3f} [{min(ms):.3f}-{max(ms):.3f}]"


def memcpy_gbps(nbytes: int, reps: int) -> float:
    """Bytes per second of NumPy copyto of nbytes, on every CPU at once (median over reps)."""
    cpus = len(os.sched_getaffinity(0))
    src = [np.ones(nbytes // 4, np.float32) for _ in range(cpus)]
    dst = [np.empty_like(s) for s in src]
    rates = []

    def copy(i: int, barrier: threading.Barrier) -> None:
        barrier.wait()
        for _ in range(4):
            np.copyto(dst[i], src[i])

    for _ in range(reps):
        barrier = threading.Barrier(cpus + 1)
        threads = [threading.Thread(target=copy, args=(i, barrier)) for i in range(cpus)]
        for t in threads:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        rates.append(4 * cpus * nbytes / (time.perf_counter() - t0))
    return float(np.median(rates))


def pto_allreduce(
    ex, callables, algorithm: str, chips: int, n: int, reps: int, epochs: int, heap: bool
) -> list[float]:
    """ms per all-reduce: ``reps`` runs of ``epochs`` chained all-reduces each, thread mode.
    ``heap``: inputs and outputs in the worker's host heap, which the chips use in place; else
    NumPy arrays outside it, which every chip run stages in and out."""
    out = []
    with pto.Worker(
        level=3, device_ids=list(range(chips)), num_sub_workers=0, runtime=ex.RUNTIME
    ) as w:
        new = (lambda: w.alloc(n)) if heap else (lambda: np.zeros(n, np.float32))
        inputs = [new() for _ in range(chips)]
        for r, x in enumerate(inputs):
            x[:] = r + 1
        outputs = [[new() for _ in range(chips)] for _ in range(epochs)]
        config = pto.ChipCallConfig(block_dim=1, aicpu_thread_num=1)
        orch = ex.allreduce_orch(
            callables[algorithm], algorithm, inputs, outputs, list(range(chips)), config
        )
        w.run(orch)  # warm: programs loaded, pages touched
        for _ in range(reps):
            t0 = time.perf_counter()
            w.run(orch)
            out.append((time.perf_counter() - t0) * 1e3 / epochs)
        want = chips * (chips + 1) / 2
        assert all(float(o[0]) == want and float(o[-1]) == want for outs in outputs for o in outs)
    return out


def mpi_allreduce(chips: int, n: int, reps: int) -> list[float] | str:
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        return "no mpirun"
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(MPI_PROGRAM)
    try:
        env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
        p = subprocess.run(
            [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(chips),
             sys.executable, f.name, str(n), str(reps)],
            capture_output=True, text=True, timeout=600, env=env,
        )  # fmt: skip
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        return f"mpirun failed: {p.stderr.strip()[-300:]}"
    return [float(t) for t in p.stdout.split()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chips", type=int, default=4)
    ap.add_argument("--mib", type=float, default=4.0)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--no-mpi", action="store_true")
    opts = ap.parse_args()
    n = int(opts.mib * (1 << 20)) // 4
    n -= n % opts.chips
    nbytes = n * 4
    ex = example()
    callables = ex.build_callables("a2a3sim")
    bw = memcpy_gbps(nbytes, opts.reps)
    moved = 2 * (opts.chips - 1) * nbytes
    floor_ms = moved / bw * 1e3
    cpus = len(os.sched_getaffinity(0))
    print(f"all-reduce of {nbytes / (1 << 20):.2f} MiB float32 on {opts.chips} chips (thread "
          f"mode), {cpus} CPUs; {opts.reps} reps each, ms per all-reduce")  # fmt: skip
    print(f"memcpy {bw / 1e9:.2f} GB/s on every CPU; copy floor {moved / (1 << 20):.0f} MiB "
          f"-> {floor_ms:.3f} ms")  # fmt: skip
    rows = []
    for algorithm in ("mesh", "ring", "twophase"):
        for heap in (True, False):
            for epochs in (1, 8):
                ms = pto_allreduce(ex, callables, algorithm, opts.chips, n, opts.reps, epochs, heap)
                where = "heap" if heap else "staged"
                rows.append((f"pto {algorithm}, {where}, {epochs}/run", ms))
    mpi = None if opts.no_mpi else mpi_allreduce(opts.chips, n, opts.reps)
    if isinstance(mpi, list):
        rows.append((f"MPI_Allreduce, {opts.chips} ranks", mpi))
    print(f"\n| {'what':32s} | {'ms median [min-max]':26s} | x floor | x MPI |")
    print(f"|{'-' * 34}|{'-' * 28}|---------|-------|")
    for name, ms in rows:
        med = float(np.median(ms))
        vs_mpi = f"{med / float(np.median(mpi)):.2f}" if isinstance(mpi, list) else "-"
        print(f"| {name:32s} | {stats(ms):26s} | {med / floor_ms:7.2f} | {vs_mpi:>5s} |")
    if isinstance(mpi, str):
        print(f"MPI: {mpi}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
