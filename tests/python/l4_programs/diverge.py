"""tests/python/l4_programs/diverge.py — ranks whose programs diverge fail with a clear error.

mpirun -n 2, argv[1] = "bigger" or "smaller": rank 1 allocates x bigger or smaller than rank 0
does (a program that is not replicated). Rank 1's receive of x must fail naming the divergence,
not hang and not read garbage.
"""

from __future__ import annotations

import sys

import numpy as np
import pto_runtime as pto
from _report import report
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()

with pto.Worker(level=4, peer_timeout=10) as w:
    n = 4 if w.rank == 0 else (4096 if sys.argv[1] == "bigger" else 1)
    x = w.alloc(n, np.float32, name="x", valid=0)
    y = w.alloc(1, np.float32, name="y")

    def orch(o):
        o.submit_sub(lambda ctx: None, inputs=[x], outputs=[y], rank=1, name="reader")

    try:
        w.run(orch, timeout=30)
        report(RANK, f"rank {w.rank}: OK")
    except pto.Error as e:
        report(RANK, f"rank {w.rank}: FAILED: {e}")
