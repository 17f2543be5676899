"""tests/python/l4_programs/distributed.py — distributed arrays, alloc(distribute=) (test_l4.py).

mpirun -n R, argv[1] the claim:
  results   A ("block", int64) is filled by one task per tile placed with rank="any"; B
            ("block_cyclic", 2-D, 50 rows per tile) gets B[i] = A[n-1-i] * [1, 2, 3] by one task
            per B tile, reading (mostly remote) tiles of A. Each task must run on the owner of
            what it writes; rank 0 gathers B and compares it with NumPy.
  refused   a task writing a tile on a rank that does not own it, or tiles of two owners, is an
            InvalidArgumentError naming the task, the array, the tile, its owner and the rank
            asked; bad alloc arguments too; the worker stays usable.
  evict     landing_bytes holds 2 tiles; every rank sums every tile of A one task at a time, so
            older landed tiles are evicted while the sums stay exact.
  memory    a 32 MiB "block" array: allocating it (and making the numpy view) touches nothing,
            writing a rank's own tile costs about N/R of its memory (RssShmem).
Each rank reports its lines (l4_programs/_report.py).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pto_runtime as pto
from _report import report
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()
WHAT = sys.argv[1]


def rss_shmem() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("RssShmem:"):
                return int(line.split()[1]) * 1024
    return -1


def results() -> None:
    with pto.Worker(level=4, num_sub_workers=2, peer_timeout=30) as w:
        size = w.size
        n = 1000 * size + 13
        a = w.alloc(n, np.int64, name="A", distribute="block")
        b = w.alloc((n, 3), np.float32, name="B", distribute="block_cyclic", tile=50)
        per_rank = (n * 8 + size - 1) // size
        a_rows = (per_rank + 4095) // 4096 * 4096 // 8  # rows per "block" tile (whole pages)
        ran: list[tuple[str, int, int]] = []  # (array, tile, rank it ran on)

        def init(t: int, lo: int, hi: int):
            def body(ctx):
                ran.append(("A", t, w.rank))
                a[lo:hi] = np.arange(lo, hi) * 3 + 1

            return body

        def mirror(t: int, lo: int, hi: int):
            def body(ctx):
                ran.append(("B", t, w.rank))
                b[lo:hi] = a[n - hi : n - lo][::-1, None] * np.array([1, 2, 3], np.float32)

            return body

        def orch(o):
            for t, lo in enumerate(range(0, n, a_rows)):
                hi = min(n, lo + a_rows)
                o.submit_sub(init(t, lo, hi), outputs=[a[lo:hi]], rank="any", name=f"A {t}")
            for t, lo in enumerate(range(0, n, 50)):
                hi = min(n, lo + 50)
                o.submit_sub(
                    mirror(t, lo, hi),
                    inputs=[a[n - hi : n - lo]],
                    outputs=[b[lo:hi]],
                    rank="any",
                    name=f"B {t}",
                )

        w.run(orch, timeout=60)
        wrong = [x for x in ran if x[1] % size != x[2]]
        report(RANK, f"rank {w.rank}: placed {len(ran)} tasks, {len(wrong)} off their owner")
        got = w.gather(b, rank=0)
        if w.rank == 0:
            assert got is not None
            want = (np.arange(n)[::-1] * 3 + 1)[:, None] * np.array([1, 2, 3], np.float32)
            report(RANK, f"RESULT {'match' if np.array_equal(got, want) else 'MISMATCH'}")
        else:
            report(RANK, f"rank {w.rank}: gather gave {got!r}")
        report(RANK, f"rank {w.rank}: valid {w.valid_ranks(b[50 * (size - 1) :])}")


def refused() -> None:
    for name, kwargs in (
        ("bad_landing", {"landing_bytes": 0}),
        ("bad_landing_type", {"landing_bytes": 1.5}),
    ):
        try:
            pto.Worker(level=4, **kwargs).close()
            report(RANK, f"{name} NO ERROR")
        except pto.Error as e:
            report(RANK, f"{name} {type(e).__name__}: {e}")
    with pto.Worker(level=4, num_sub_workers=2, peer_timeout=30) as w:
        c = w.alloc((4, 512), np.int64, name="C", distribute="block_cyclic", tile=1)
        out = w.alloc(1, np.int64, name="out")

        def check(name, fn):
            try:
                fn()
                report(RANK, f"{name} NO ERROR")
            except pto.Error as e:
                report(RANK, f"{name} {type(e).__name__}: {e}")

        check("kind", lambda: w.alloc(8, distribute="cyclic"))
        check("no_tile", lambda: w.alloc(8, distribute="block_cyclic"))
        check("block_tile", lambda: w.alloc(8, distribute="block", tile=2))
        check("valid", lambda: w.alloc(8, distribute="block", valid=0))
        check("heap", lambda: w.alloc(1 << 30, np.int8, name="huge", distribute="block"))

        def noop(ctx):
            pass

        check(
            "misplaced",
            lambda: w.run(lambda o: o.submit_sub(noop, outputs=[c[1]], rank=0, name="misplaced")),
        )
        check(
            "two_owners",
            lambda: w.run(lambda o: o.submit_sub(noop, outputs=[c[0:2]], name="straddles")),
        )

        def put(ctx):
            c[1] = 21

        def read(ctx):
            out[0] = c[1, 0] + c[1, 511]

        def orch(o):
            o.submit_sub(put, outputs=[c[1]], rank="any", name="on its owner")
            o.submit_sub(read, inputs=[c[1]], outputs=[out], rank=0, name="reader")

        w.run(orch, timeout=60)
        got = w.gather(out)
        if w.rank == 0:
            report(RANK, f"later run {int(got[0]) if got is not None else None}")


def evict() -> None:
    tile_rows = 1024  # 8 KiB of int64 per tile
    with pto.Worker(level=4, num_sub_workers=2, landing_bytes=2 * 8192) as w:
        size = w.size
        tiles = 8 * size
        a = w.alloc(
            tiles * tile_rows, np.int64, name="A", distribute="block_cyclic", tile=tile_rows
        )
        sums = [w.alloc(1, np.int64, name=f"sum{r}") for r in range(size)]

        def init(lo):
            def body(ctx):
                a[lo : lo + tile_rows] = np.arange(lo, lo + tile_rows)

            return body

        def zero(r):
            def body(ctx):
                sums[r][0] = 0

            return body

        def add(r, lo):
            def body(ctx):
                time.sleep(0.001)  # an eviction not ordered after this read would zero the tile
                sums[r][0] += int(a[lo : lo + tile_rows].sum())

            return body

        def orch(o):
            for t in range(tiles):
                lo = t * tile_rows
                o.submit_sub(init(lo), outputs=[a[lo : lo + tile_rows]], name="init")
            for r in range(size):
                o.submit_sub(zero(r), outputs=[sums[r]], rank=r, name="zero")
                for k in range(tiles):
                    lo = ((k + 3 * r) % tiles) * tile_rows
                    tile = a[lo : lo + tile_rows]
                    o.submit_sub(add(r, lo), inputs=[tile], inouts=[sums[r]], rank=r, name="add")

        w.run(orch, timeout=120)
        total = tiles * tile_rows
        got = int(sums[w.rank][0])
        ev = w.transfers["evictions"]
        verdict = "exact" if got == total * (total - 1) // 2 else f"WRONG {got}"
        report(RANK, f"rank {w.rank}: sum {verdict}, {ev} evictions")


def memory() -> None:
    with pto.Worker(level=4, num_sub_workers=2, heap_bytes=256 << 20) as w:
        size = w.size
        n = (32 << 20) // 8
        base = rss_shmem()
        a = w.alloc(n, np.int64, name="A", distribute="block")
        a_rows = n // size
        allocated = rss_shmem() - base

        def fill(lo):
            def body(ctx):
                a[lo : lo + a_rows] = 1

            return body

        def orch(o):
            for lo in range(0, n, a_rows):
                o.submit_sub(fill(lo), outputs=[a[lo : lo + a_rows]], name="own tile")

        w.run(orch, timeout=60)
        owned = rss_shmem() - base
        share = n * 8 // size
        ok = allocated < 2 << 20 and share * 0.9 < owned < share * 1.25 + (4 << 20)
        report(
            RANK,
            f"rank {w.rank}: memory {'near N/R' if ok else 'NOT near N/R'} (alloc "
            f"+{allocated >> 20} MiB, own tile +{owned >> 20} MiB, N/R {share >> 20} MiB)",
        )


{"results": results, "refused": refused, "evict": evict, "memory": memory}[WHAT]()
