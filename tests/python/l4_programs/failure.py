"""tests/python/l4_programs/failure.py — a task failing on rank 2 poisons its dependents on rank 0.

mpirun -n 3. Rank 2's task 'bad producer' raises; 'consumer' on rank 0 reads its output, so it
must not run and rank 0's run must fail naming the failed task and rank 2. 'independent' on
rank 0 and everything on rank 1 still run.
"""

from __future__ import annotations

import numpy as np
import pto_runtime as pto
from _report import report
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()

with pto.Worker(level=4, num_sub_workers=2, peer_timeout=30) as w:
    p, c, i = (w.alloc(2, np.float32, name=n) for n in ("p", "c", "i"))
    ran = []

    def bad(ctx):
        raise ValueError("boom from the producer")

    def consumer(ctx):
        ran.append("consumer")
        c[:] = p

    def independent(ctx):
        ran.append("independent")
        i[:] = 7

    def orch(o):
        o.submit_sub(bad, outputs=[p], rank=2, name="bad producer")
        o.submit_sub(consumer, inputs=[p], outputs=[c], rank=0, name="consumer")
        o.submit_sub(independent, outputs=[i], rank=0, name="independent")
        o.submit_sub(independent, outputs=[i], rank=1, name="independent")

    try:
        w.run(orch, timeout=60)
        report(RANK, f"rank {w.rank}: OK ran={ran}")
    except pto.TaskFailedError as err:
        report(RANK, f"rank {w.rank}: FAILED ran={ran} error={err}")
