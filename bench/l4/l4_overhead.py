"""bench/l4/l4_overhead.py — per-task cost of cross-rank dependencies at L4 (run under mpirun).

Usage: mpirun -n R [--oversubscribe] python bench/l4/l4_overhead.py [--tasks N] [--reps K]

Two workloads of no-op SUB tasks on 8-byte arrays, each run K times after one warm-up:

* ``chain_cross``: a chain of N tasks, task i on rank i % R reading what task i-1 wrote, so every
  edge crosses ranks (a send task, two MPI messages, a receive task per edge). Wall time / N
  is the latency one cross-rank dependency adds.
* ``chain_local``: the same chain on rank 0 only (no transfers): the L3 baseline.
* ``ring``: N/R rounds; in each round every rank's task reads what the previous rank's task
  wrote in the round before, so R cross-rank edges are in flight at once (throughput).
* ``mpi_pingpong_one_way``: raw mpi4py blocking Send/Recv between ranks 0 and 1, the floor.

Rank 0 prints one JSON object per workload: median, min and max of the per-task wall time over
the K runs (µs), and the transfers per task. Each run ends with a barrier so runs do not overlap.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import pto_runtime as pto
from mpi4py import MPI


def noop_copy(dst, src):
    def body(ctx):
        dst[0] = src[0] + 1

    return body


def pingpong(comm, reps: int, rounds: int = 200) -> None:
    """Raw mpi4py one-way latency between ranks 0 and 1 (blocking Send/Recv, 8 bytes): the
    floor under a cross-rank edge on this machine."""
    if comm.Get_size() < 2:
        return
    buf = np.zeros(1, np.int64)
    samples = []
    for _ in range(reps + 1):
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(rounds):
            if comm.rank == 0:
                comm.Send(buf, dest=1)
                comm.Recv(buf, source=1)
            elif comm.rank == 1:
                comm.Recv(buf, source=0)
                comm.Send(buf, dest=0)
        samples.append((time.perf_counter() - t0) / (2 * rounds) * 1e6)
    if comm.rank == 0:
        s = samples[1:]
        print(
            json.dumps(
                {
                    "bench": "mpi_pingpong_one_way",
                    "ranks": comm.Get_size(),
                    "reps": reps,
                    "us_median": round(statistics.median(s), 1),
                    "us_min": round(min(s), 1),
                    "us_max": round(max(s), 1),
                }
            ),
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--poll-max", type=float, default=1e-3, help="Worker poll_max, seconds")
    opts = ap.parse_args()
    comm = MPI.COMM_WORLD
    pingpong(comm, opts.reps)
    with pto.Worker(level=4, num_sub_workers=2, peer_timeout=120, poll_max=opts.poll_max) as w:
        size = w.size
        n = opts.tasks
        a = [w.alloc(1, np.int64, name=f"a{i}") for i in range(n + 1)]
        ring = [w.alloc(1, np.int64, name=f"r{r}") for r in range(size)]
        for x in a + ring:
            x[0] = 0

        def chain(on_rank):
            def orch(o):
                for i in range(n):
                    o.submit_sub(
                        noop_copy(a[i + 1], a[i]),
                        inputs=[a[i]],
                        outputs=[a[i + 1]],
                        rank=on_rank(i),
                        name=f"t{i}",
                    )

            return orch

        def ring_orch(o):
            for k in range(max(1, n // size)):
                for r in range(size):
                    src = ring[(r - 1) % size]
                    o.submit_sub(
                        noop_copy(ring[r], src),
                        inputs=[src],
                        inouts=[ring[r]],
                        rank=r,
                        name=f"ring{k}.{r}",
                    )

        workloads = [
            ("chain_cross", chain(lambda i: i % size), n),
            ("chain_local", chain(lambda i: 0), n),
            ("ring", ring_orch, max(1, n // size) * size),
        ]
        for name, orch, tasks in workloads:
            samples = []
            before = w.transfers["sends"]
            for rep in range(opts.reps + 1):
                comm.Barrier()
                t0 = time.perf_counter()
                w.run(orch, timeout=600)
                comm.Barrier()  # the run is over when every rank's part is
                dt = time.perf_counter() - t0
                if rep > 0:
                    samples.append(dt / tasks * 1e6)
            sends = comm.allreduce(w.transfers["sends"] - before)
            if w.rank == 0:
                print(
                    json.dumps(
                        {
                            "bench": name,
                            "ranks": size,
                            "tasks": tasks,
                            "reps": opts.reps,
                            "us_per_task_median": round(statistics.median(samples), 1),
                            "us_per_task_min": round(min(samples), 1),
                            "us_per_task_max": round(max(samples), 1),
                            "transfers_per_task": round(sends / (opts.reps + 1) / tasks, 2),
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
