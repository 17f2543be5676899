"""tests/python/l4_programs/killed.py — a rank that dies makes the others fail within peer_timeout.

mpirun -n 3 --enable-recovery (so that mpirun leaves the survivors running). Rank 1 kills
itself (SIGKILL) inside a task; rank 0 needs data rank 1 would have produced, and rank 2 a tile
of a distributed array that rank 1 owns (written by the same task): each survivor's error must
name the transfer, the array (and the tile) and its task. Each survivor prints how long its run
took to fail.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np
import pto_runtime as pto
from _report import report
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()

PEER_TIMEOUT = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0

with pto.Worker(level=4, num_sub_workers=2, peer_timeout=PEER_TIMEOUT) as w:
    p, c = (w.alloc(2, np.float32, name=n) for n in ("p", "c"))
    t = w.alloc(1024 * w.size, np.float32, name="T", distribute="block")  # tile r: rank r's

    def die(ctx):
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)

    def consume(ctx):
        c[:] = p

    def orch(o):
        o.submit_sub(die, outputs=[p, t[1024:2048]], rank=1, name="dies")
        o.submit_sub(consume, inputs=[p], outputs=[c], rank=0, name="consumer")
        o.submit_sub(lambda ctx: None, inputs=[t[1024:2048]], rank=2, name="tile reader")

    t0 = time.monotonic()
    try:
        w.run(orch, timeout=60)
        report(RANK, f"rank {w.rank}: OK after {time.monotonic() - t0:.2f} s")
    except pto.Error as err:
        report(RANK, f"rank {w.rank}: FAILED after {time.monotonic() - t0:.2f} s: {err}")

# The job is broken (a rank is gone): MPI_Finalize (mpi4py's, at exit) waits for every rank of
# the job, the dead one too, and may never return; the verdicts are written, so leave without it
# (as test_l4_mpi.cpp's killed scenario does).
sys.stdout.flush()
os._exit(0)
