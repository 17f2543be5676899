"""bench/comm/l4_roundtrip.py — a TPUT + TNOTIFY round trip between chips of two L4 ranks, vs MPI.

Usage: python bench/comm/l4_roundtrip.py [--kib 1024] [--iters 50] [--reps 11]
       (starts itself under `mpirun -n 2 --oversubscribe`; as root it adds --allow-run-as-root)

On two ranks (each one L4 worker with one chip, thread mode), in one session, --reps times each,
interleaved (median [min-max], us):
  - pto round trip: one L4 run of a kernel pair (bench/comm/kernels/pingpong.cpp) in a domain
    over (rank 0, chip 0) and (rank 1, chip 0): rank 0 TPUTs --kib KiB into rank 1's window and
    TNOTIFYs it, rank 1 waits (TWAIT), TPUTs the same back and TNOTIFYs rank 0. Wall time of a run
    of --iters round trips minus that of a run of none (the run's fixed cost), over --iters;
  - MPI_Put + MPI_Win_flush: one put of the same bytes from rank 0 into rank 1's window (an
    MPI window over a NumPy array, passive target, the same Open MPI), per put, averaged over
    --iters puts;
  - MPI round trip: the same ping-pong in plain MPI (put, flush, MPI_Accumulate on the flag,
    flush; the peer polls its flag), per round trip.
The issue's target is "pto round trip <= 2 x (MPI_Put + flush)"; the last column is that ratio
of the medians. The MPI round trip is the same protocol without the runtime, for reference.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def stats(us: list[float]) -> str:
    return f"{np.median(us):.1f} [{min(us):.1f}-{max(us):.1f}]"


def relaunch(argv: list[str]) -> int:
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("needs Open MPI's mpirun (scripts/install_deps.sh --mpi)", file=sys.stderr)
        return 2
    cmd = [mpirun, "-n", "2", "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [sys.executable, str(Path(__file__).resolve()), *argv]
    return subprocess.run(cmd, check=False).returncode


def mpi_put_flush(win, comm, buf: np.ndarray, iters: int) -> float:
    """Microseconds per MPI_Put + MPI_Win_flush of buf from rank 0 into rank 1's window."""
    from mpi4py import MPI  # noqa: PLC0415

    comm.Barrier()
    dt = 0.0
    if comm.rank == 0:
        t0 = time.perf_counter()
        for _ in range(iters):
            win.Put(buf, 1, target=(0, buf.nbytes, MPI.BYTE))
            win.Flush(1)
        dt = time.perf_counter() - t0
    comm.Barrier()
    return dt / iters * 1e6


def mpi_roundtrip(win, comm, buf: np.ndarray, flag: np.ndarray, iters: int) -> float:
    """Microseconds per round trip of the same ping-pong in plain MPI (the peer polls its flag,
    calling MPI so that its one-sided atomics progress)."""
    from mpi4py import MPI  # noqa: PLC0415

    one = np.ones(1, np.int32)
    peer = 1 - comm.rank
    base = int(flag[0])
    comm.Barrier()
    t0 = time.perf_counter()
    for i in range(1, iters + 1):
        if comm.rank == 1:
            while flag[0] < base + i:
                comm.Iprobe()
        win.Put(buf, peer, target=(0, buf.nbytes, MPI.BYTE))
        win.Flush(peer)
        win.Accumulate([one, MPI.INT32_T], peer, target=(buf.nbytes, 1, MPI.INT32_T), op=MPI.SUM)
        win.Flush(peer)
        if comm.rank == 0:
            while flag[0] < base + i:
                comm.Iprobe()
    dt = time.perf_counter() - t0
    comm.Barrier()
    return dt / iters * 1e6


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--kib", type=int, default=1024)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--reps", type=int, default=11)
    p.add_argument("-p", "--platform", default="a2a3sim")
    opts = p.parse_args(argv)
    if "OMPI_COMM_WORLD_SIZE" not in os.environ:
        return relaunch(argv)

    import pto_runtime as pto  # noqa: PLC0415
    from mpi4py import MPI  # noqa: PLC0415 (initialises MPI with MPI_THREAD_MULTIPLE first)

    comm = MPI.COMM_WORLD
    if comm.size != 2:
        raise SystemExit("run on 2 ranks")
    n = opts.kib * 256
    spec = importlib.util.spec_from_file_location(
        "allreduce_example", REPO / "examples/allreduce/main.py"
    )
    ar = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ar)
    kc = pto.KernelCompiler(opts.platform)
    callable_ = pto.ChipCallable(
        kc.compile_orchestration(ar.RUNTIME, REPO / "examples/allreduce/orchestration.cpp")
    )
    callable_.add_kernel(
        0, pto.CoreType.AIV, kc.compile_incore(HERE / "kernels/pingpong.cpp", pto.CoreType.AIV)
    )

    # The MPI baseline's window: n floats of data, then the int32 flag.
    region = np.zeros(n + 16, np.float32)
    win = MPI.Win.Create(region, disp_unit=1, comm=comm)
    win.Lock_all(MPI.MODE_NOCHECK)
    flag = region[n:].view(np.int32)
    buf = np.full(n, comm.rank + 1, np.float32)

    pto_us, put_us, rt_us = [], [], []
    with pto.Worker(
        level=4, device_ids=[0], num_sub_workers=1, platform=opts.platform, runtime=ar.RUNTIME
    ) as w:
        src = w.alloc(n, np.float32, name="src")
        src[:] = w.rank + 1
        buffers = [pto.CommBufferSpec("data", "float32", n), pto.CommBufferSpec("flag", "int32", 1)]
        config = pto.ChipCallConfig(block_dim=1, aicpu_thread_num=1)

        def timed(iters: int) -> float:
            def orch(o) -> None:
                with o.allocate_domain("pingpong", [(0, 0), (1, 0)], n * 4 + 64, buffers) as d:
                    for r in (0, 1):
                        ctx = d[r, 0]
                        args = pto.ChipStorageTaskArgs()
                        args.add_tensor(src, "in")
                        args.add_tensor(ctx.buffers["data"].tensor(), "inout")
                        args.add_tensor(ctx.buffers["flag"].tensor(), "inout")
                        args.add_scalar(n)
                        args.add_scalar(ctx.device_ctx)
                        args.add_scalar(iters)
                        o.submit_chip(callable_, args, config, rank=r, chip=0, name="pingpong")

            comm.Barrier()
            t0 = time.perf_counter()
            w.run(orch)
            w.run(lambda o: None)  # frees the domain (waits for the run): counted, as in both
            return comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)

        timed(2)  # warm: kernels loaded, windows made once
        mpi_roundtrip(win, comm, buf, flag, 2)
        for _ in range(opts.reps):
            full, empty = timed(opts.iters), timed(0)
            pto_us.append((full - empty) / opts.iters * 1e6)
            put_us.append(comm.allreduce(mpi_put_flush(win, comm, buf, opts.iters), op=MPI.MAX))
            rt_us.append(
                comm.allreduce(mpi_roundtrip(win, comm, buf, flag, opts.iters), op=MPI.MAX)
            )
    win.Unlock_all()
    win.Free()
    if comm.rank == 0:
        put = float(np.median(put_us))
        print(
            f"{opts.kib} KiB, 2 ranks x 1 chip, {opts.iters} round trips per run, "
            f"{opts.reps} runs (us)"
        )
        print("| what | us median [min-max] | x (MPI_Put + flush) |")
        print("|---|---|---|")
        print(
            f"| pto TPUT + TNOTIFY round trip | {stats(pto_us)} | {np.median(pto_us) / put:.2f} |"
        )
        print(
            f"| MPI round trip (put, flush, accumulate, flush) | {stats(rt_us)} | "
            f"{np.median(rt_us) / put:.2f} |"
        )
        print(f"| MPI_Put + MPI_Win_flush | {stats(put_us)} | 1.00 |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
