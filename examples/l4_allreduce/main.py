"""examples/l4_allreduce/main.py — a ring all-reduce whose ring spans hosts (an L4 domain).

Usage: mpirun -n 2 --oversubscribe python examples/l4_allreduce/main.py [--chips 2] [-n 65536]
       [-p a2a3sim|a5sim]   (as root add --allow-run-as-root)

Every rank owns ``--chips`` chips; the domain's members are every chip of every rank, rank by
rank, so the ring crosses from one host to the next. The kernel is examples/allreduce's ring
kernel, unchanged: it writes to its right neighbour with TPUT and signals it with TNOTIFY, and a
neighbour on another rank is reached through MPI one-sided operations instead of memory
(docs/design/comm_domains.md, "Across hosts"). Two all-reduces run in one domain (epochs 1 and
2). Each rank checks its own chips' results against NumPy, bit for bit, prints one line and
exits non-zero on a mismatch (so mpirun does).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pto_runtime as pto

HERE = Path(__file__).resolve().parent
ALLREDUCE = HERE.parent / "allreduce" / "main.py"


def _allreduce_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("allreduce_example", ALLREDUCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(platform: str, chips: int, n: int, epochs: int = 2) -> tuple[int, int, float]:
    """Runs ``epochs`` ring all-reduces of ``n`` floats over every chip of every rank; returns
    (this rank, the ranks, the largest difference from NumPy on this rank's chips: 0.0 is bit
    for bit)."""
    ar = _allreduce_example()
    callable_ = ar.build_callables(platform)["ring"]
    with pto.Worker(level=4, device_ids=list(range(chips)), num_sub_workers=1, platform=platform,
                    runtime=ar.RUNTIME) as w:  # fmt: skip
        members = [(r, c) for r in range(w.size) for c in range(chips)]
        ranks = len(members)
        if n % ranks:
            raise SystemExit(f"-n {n} must be a multiple of the {ranks} members")
        rng = np.random.default_rng(ranks * 7 + n)  # every rank draws the same inputs
        inputs = [w.alloc(n, np.float32, name=f"in{m}") for m in range(ranks)]
        for x in inputs:
            x[:] = rng.standard_normal(n, dtype=np.float32)
        outs = [  # rank r's result of epoch e, written on r
            [
                w.alloc(n, np.float32, name=f"out{e}_{m}", valid=r)
                for m, (r, _) in enumerate(members)
            ]
            for e in range(epochs)
        ]
        size, buffers = ar.window_layout("ring", ranks, n)
        config = pto.ChipCallConfig(block_dim=1, aicpu_thread_num=1)

        def orch(o: pto.l4.Orchestrator) -> None:
            with o.allocate_domain("ring", members, size, buffers) as domain:
                for epoch in range(1, epochs + 1):
                    for m, (rank, chip) in enumerate(members):
                        ctx = domain[rank, chip]  # a stand-in on the other ranks
                        args = pto.ChipStorageTaskArgs()
                        args.add_tensor(inputs[m], "in")
                        args.add_tensor(outs[epoch - 1][m], "out")
                        args.add_tensor(ctx.buffers["data"].tensor(), "inout")
                        args.add_tensor(ctx.buffers["flags"].tensor(), "inout")
                        args.add_scalar(n)
                        args.add_scalar(ctx.device_ctx)
                        args.add_scalar(epoch)
                        o.submit_chip(callable_, args, config, rank=rank, chip=chip,
                                      name=f"ring{epoch} member {m}")  # fmt: skip

        w.run(orch)
        want = ar.expected("ring", inputs)
        mine = [m for m, (r, _) in enumerate(members) if r == w.rank]
        diff = max(float(np.max(np.abs(outs[e][m] - want))) for e in range(epochs) for m in mine)
        return w.rank, w.size, diff


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--chips", type=int, default=2, help="chips per rank")
    p.add_argument("-n", type=int, default=1 << 16, help="float32 elements per chip")
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    opts = p.parse_args(argv)
    rank, size, diff = run(opts.platform, opts.chips, opts.n)
    ok = diff == 0.0
    print(f"rank {rank} of {size}: ring all-reduce, {opts.chips} chips x {opts.n} float32: "
          f"{'OK' if ok else 'MISMATCH'} (max |diff| {diff:g})", flush=True)  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
