"""examples/l4_gemm/main.py — many hosts (L4): C = A x B on tile-major distributed arrays.

Usage: mpirun -n 4 --oversubscribe python examples/l4_gemm/main.py [--tiles 4] [--ts 32]
       (as root add --allow-run-as-root; `python examples/l4_gemm/main.py` alone is one rank)

A, B and C are T x T grids of ts x ts tiles, each stored tile-major: tile (i, j) is element
i*T + j of the first axis of an array of shape (T*T, ts, ts), allocated with
distribute="block_cyclic", tile=1 (one ts x ts tile per tile of the distribution), so rank
(i*T + j) % R owns tile (i, j) and each rank holds only its share of every matrix. Init tasks
write A, B and C on the owners (rank="any" places a task that writes a tile on its owner);
then T**3 tasks C(i,j) += A(i,k) @ B(k,j), also rank="any": each runs on the owner of C(i,j)
(owner computes), and the runtime moves the remote A and B tiles it reads. Rank 0 gathers C
(the whole matrix on one rank: fine for checking, not scalable), compares it with NumPy and
prints the SUCCESS line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

import numpy as np
import pto_runtime as pto


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--tiles", type=int, default=4, help="T: tiles per side")
    p.add_argument("--ts", type=int, default=32, help="rows and columns of a tile")
    return p.parse_args(argv)


def init_tile(which: int, ti: int, tj: int, ts: int) -> np.ndarray:
    """The value of tile (ti, tj) of A (which=0) or B (which=1), a function of the global index."""
    i = np.arange(ts)[:, None] + ti * ts
    j = np.arange(ts)[None, :] + tj * ts
    return (((i * 7 + j * 3) % 11) / 11.0 - 0.5 + which * 0.25).astype(np.float32)


def untile(tiles: np.ndarray, t: int, ts: int) -> np.ndarray:
    """A (T*T, ts, ts) tile-major array as the (T*ts, T*ts) matrix."""
    return tiles.reshape(t, t, ts, ts).transpose(0, 2, 1, 3).reshape(t * ts, t * ts)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    t, ts = opts.tiles, opts.ts
    with pto.Worker(level=4, num_sub_workers=2, peer_timeout=60) as w:
        if w.rank == 0:
            print(f"=== l4_gemm: {w.size} rank(s), {t} x {t} tiles of {ts} x {ts} ===")
        # Every rank allocates the same arrays; each rank's memory holds its tiles only.
        a, b, c = (
            w.alloc((t * t, ts, ts), np.float32, name=n, distribute="block_cyclic", tile=1)
            for n in "ABC"
        )

        def fill(dst: np.ndarray, which: int, ti: int, tj: int) -> Callable[[pto.SubContext], None]:
            def body(ctx: pto.SubContext) -> None:
                dst[ti * t + tj] = 0 if which < 0 else init_tile(which, ti, tj, ts)

            return body

        def gemm(i: int, j: int, k: int) -> Callable[[pto.SubContext], None]:
            def body(ctx: pto.SubContext) -> None:
                c[i * t + j] += a[i * t + k] @ b[k * t + j]

            return body

        def orchestration(o: pto.l4.Orchestrator) -> None:
            for i in range(t):
                for j in range(t):
                    tile = i * t + j
                    for arr, which in ((a, 0), (b, 1), (c, -1)):
                        o.submit_sub(fill(arr, which, i, j), outputs=[arr[tile]], name="init")
            for i in range(t):
                for j in range(t):
                    for k in range(t):
                        o.submit_sub(
                            gemm(i, j, k),
                            inputs=[a[i * t + k], b[k * t + j]],
                            inouts=[c[i * t + j]],
                            name=f"C({i},{j}) += A({i},{k}) B({k},{j})",
                        )

        w.run(orchestration, timeout=600)
        counts = w.transfers
        whole = w.gather(c, rank=0)  # a run of its own: every rank calls it
        if whole is None:
            return 0  # only rank 0 prints: mpirun may interleave the ranks' lines
        print(
            f"rank 0 ran {counts['tasks']} tasks and received {counts['recvs']} tiles "
            f"({counts['evictions']} evicted) before the gather"
        )
        full_a = untile(
            np.stack([init_tile(0, i, j, ts) for i in range(t) for j in range(t)]), t, ts
        )
        full_b = untile(
            np.stack([init_tile(1, i, j, ts) for i in range(t) for j in range(t)]), t, ts
        )
        want = full_a.astype(np.float64) @ full_b.astype(np.float64)
        got = untile(whole, t, ts)
        err = float(np.max(np.abs(got - want)))
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            print(f"✗ FAILED: C differs from NumPy by up to {err}")
            return 1
        print(
            f"✓ SUCCESS: C = A x B ({t * ts} x {t * ts}, {t}x{t} tiles) on {w.size} rank(s) "
            f"matches NumPy (max abs error {err:.2e})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
