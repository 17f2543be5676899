"""tests/python/l4_programs/bad_input.py — L4 rejects bad input with typed errors naming it.

mpirun -n 2. Prints one line per check: "<name> <ExceptionClass>: <message>".
"""

from __future__ import annotations

import time

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
check("spin", lambda: pto.Worker(level=4, spin=-1e-3))

with pto.Worker(level=4) as w:
    x = w.alloc(4, np.float32, name="x")
    y = w.alloc(4, np.float32, name="y")
    plain = np.zeros(4, np.float32)

    def use_plain(o):
        o.submit_sub(lambda ctx: None, inputs=[plain], rank=0)

    def bad_rank(o):
        o.submit_sub(lambda ctx: None, inputs=[x], rank=w.size)

    def unknown_after(o):
        o.submit_sub(lambda ctx: None, outputs=[y], rank=1, after=[99])

    for name, orch in (("plain", use_plain), ("rank", bad_rank), ("after", unknown_after)):
        check(name, lambda orch=orch: w.run(orch, timeout=30))

    # after= across ranks orders without data: rank 1's task starts after rank 0's has ended
    # (time.monotonic is CLOCK_MONOTONIC, one clock for every process of the machine).
    stamps = [0.0, 0.0]

    def first(ctx):
        time.sleep(0.3)
        stamps[0] = time.monotonic()

    def second(ctx):
        stamps[1] = time.monotonic()

    def cross_after(o):
        t = o.submit_sub(first, rank=0)
        o.submit_sub(second, rank=1, after=[t])

    w.run(cross_after, timeout=30)
    ended = MPI.COMM_WORLD.allreduce(stamps[0], op=MPI.MAX)
    started = MPI.COMM_WORLD.allreduce(stamps[1], op=MPI.MAX)
    report(RANK, f"after_cross {'ordered' if 0 < ended <= started else 'NOT ordered'}")
    check("alloc_valid", lambda: w.alloc(4, valid=7))
    report(RANK, f"repr {w!r}")
