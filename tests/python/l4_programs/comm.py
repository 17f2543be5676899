"""tests/python/l4_programs/comm.py — Worker(level=4, comm=): the job is the communicator given.

mpirun -n 4. The world splits in two halves by rank parity, each numbered in reverse (its
highest world rank is its rank 0). Each half is an L4 job of its own: its size is 2, and an array
written on its rank 0 moves to its rank 1. A bad comm is an InvalidArgumentError naming it.
"""

from __future__ import annotations

import numpy as np
import pto_runtime as pto
from _report import report
from mpi4py import MPI

WORLD = MPI.COMM_WORLD
RANK, SIZE = WORLD.Get_rank(), WORLD.Get_size()
half = WORLD.Split(RANK % 2, SIZE - RANK)

try:
    pto.Worker(level=4, comm="world")
except pto.Error as e:
    report(RANK, f"bad {type(e).__name__}: {e}")

with pto.Worker(level=4, num_sub_workers=2, comm=half) as w:
    x = w.alloc(4, np.int64, name="x", valid=0)
    y = w.alloc(4, np.int64, name="y")
    y[:] = 0
    if w.rank == 0:
        x[:] = 10 + RANK % 2

    def copy(ctx):
        y[:] = x

    w.run(lambda o: o.submit_sub(copy, inputs=[x], outputs=[y], rank=w.size - 1), timeout=60)
    got = int(y[0]) if w.rank == w.size - 1 else None
    report(RANK, f"world {RANK}: rank {w.rank} of {w.size} got {got}")
half.Free()
