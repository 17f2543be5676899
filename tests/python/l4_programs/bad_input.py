"""tests/python/l4_programs/bad_input.py — L4 rejects bad input with typed errors naming it.

mpirun -n 2. Prints one line per check: "<name> <ExceptionClass>: <message>".
"""

from __future__ import annotations

import numpy as np
import pto_runtime as pto
from _report import report
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()


def check(name, fn):
    try:
        fn()
        report(RANK, f"{name} NO ERROR")
    except pto.Error as e:
        report(RANK, f"{name} {type(e).__name__}: {e}")


check("subs", lambda: pto.Worker(level=4, num_sub_workers=0))
check("timeout", lambda: pto.Worker(level=4, peer_timeout=0))
check("poll", lambda: pto.Worker(level=4, poll_max=1.0))

with pto.Worker(level=4) as w:
    x = w.alloc(4, np.float32, name="x")
    y = w.alloc(4, np.float32, name="y")
    plain = np.zeros(4, np.float32)

    def use_plain(o):
        o.submit_sub(lambda ctx: None, inputs=[plain], rank=0)

    def bad_rank(o):
        o.submit_sub(lambda ctx: None, inputs=[x], rank=w.size)

    def cross_after(o):
        t = o.submit_sub(lambda ctx: None, outputs=[x], rank=0)
        o.submit_sub(lambda ctx: None, outputs=[y], rank=1, after=[t])

    for name, orch in (("plain", use_plain), ("rank", bad_rank), ("after", cross_after)):
        check(name, lambda orch=orch: w.run(orch, timeout=30))
    check("alloc_valid", lambda: w.alloc(4, valid=7))
    report(RANK, f"repr {w!r}")
