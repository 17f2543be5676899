"""tests/python/l4_programs/killed.py — a rank that dies makes the others fail within peer_timeout.

mpirun -n 3 --enable-recovery (so that mpirun leaves the survivors running). Rank 1 kills
itself (SIGKILL) inside a task; rank 0 needs data rank 1 would have produced, rank 2 needs
data from rank 0's consumer chain. Each survivor prints how long its run took to fail.
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

    def die(ctx):
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)

    def consume(ctx):
        c[:] = p

    def orch(o):
        o.submit_sub(die, outputs=[p], rank=1, name="dies")
        o.submit_sub(consume, inputs=[p], outputs=[c], rank=0, name="consumer")

    t0 = time.monotonic()
    try:
        w.run(orch, timeout=60)
        report(RANK, f"rank {w.rank}: OK after {time.monotonic() - t0:.2f} s")
    except pto.Error as err:
        report(RANK, f"rank {w.rank}: FAILED after {time.monotonic() - t0:.2f} s: {err}")
