"""tests/python/l4_programs/ordering.py — cross-rank RAW, WAR and WAW on one array (test_l4.py).

Every rank runs this under mpirun -n 3. x starts as 0 on every rank. The tasks, in order:
  A rank 0: x = 1 (slow)          B rank 1: b = x, slowly  (RAW across ranks: x moves 0 -> 1)
  C rank 0: x = 2                 (WAR on rank 0: after the send of A's x is done)
  D rank 2: d = x                 (RAW: x moves 0 -> 2 after C, so d == 2)
  E rank 1: e = x                 (x moves 0 -> 1 again: the receive must wait for B, a
                                    local WAR on rank 1, or b would read 2)
  F rank 2: x = 3                 (WAW across ranks: rank 2's copy becomes the only valid one)
  G rank 0: g = x                 (RAW: 3)
Rank 0 fetches b, d, e and prints the values it got.
"""

from __future__ import annotations

import time

import numpy as np
import pto_runtime as pto
from _report import report
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()

with pto.Worker(level=4, num_sub_workers=2, peer_timeout=30) as w:
    x = w.alloc(4, np.int64, name="x")
    b, d, e, g = (w.alloc(4, np.int64, name=n) for n in "bdeg")
    for a in (x, b, d, e, g):
        a[:] = 0

    def put(dst, value, delay=0.0):
        def body(ctx):
            time.sleep(delay)
            dst[:] = value

        return body

    def copy(dst, src, delay=0.0):
        def body(ctx):
            time.sleep(delay)
            dst[:] = src

        return body

    def orch(o):
        o.submit_sub(put(x, 1, 0.3), outputs=[x], rank=0, name="A x=1")
        o.submit_sub(copy(b, x, 0.5), inputs=[x], outputs=[b], rank=1, name="B b=x")
        o.submit_sub(put(x, 2), outputs=[x], rank=0, name="C x=2")
        o.submit_sub(copy(d, x), inputs=[x], outputs=[d], rank=2, name="D d=x")
        o.submit_sub(copy(e, x), inputs=[x], outputs=[e], rank=1, name="E e=x")
        o.submit_sub(put(x, 3), outputs=[x], rank=2, name="F x=3")
        o.submit_sub(copy(g, x), inputs=[x], outputs=[g], rank=0, name="G g=x")
        for a in (b, d, e):
            o.fetch(a, rank=0)

    w.run(orch, timeout=60)
    assert w.valid_ranks(x) == [0, 2], w.valid_ranks(x)
    # rank="any": the ranks holding x (0 and 2) tie on bytes; rank 2 has run fewer tasks (2
    # against 3), so every rank places the task there without asking.
    h = w.alloc(4, np.int64, name="h")

    def anywhere(o):
        o.submit_sub(copy(h, x), inputs=[x], outputs=[h], rank="any", name="H h=x")
        o.fetch(h, rank=0)

    w.run(anywhere, timeout=60)
    assert w.valid_ranks(h) == [0, 2], w.valid_ranks(h)
    if w.rank == 0:
        assert h[0] == 3, h
    if w.rank == 0:
        report(RANK, f"RESULT b={b[0]} d={d[0]} e={e[0]} g={g[0]}")

# A broadcast: fetch to every rank forms a tree (rank 1 forwards what it received), and every
# rank ends with the current value.
with pto.Worker(level=4, num_sub_workers=2, peer_timeout=30) as w:
    y = w.alloc(8, np.int64, name="y", valid=0)
    if w.rank == 0:
        y[:] = np.arange(8)
    w.run(lambda o: o.fetch(y, rank="all"), timeout=60)
    assert w.valid_ranks(y) == list(range(w.size)), w.valid_ranks(y)
    report(RANK, f"BROADCAST rank {w.rank} {y.tolist()}")
