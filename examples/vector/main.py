"""examples/vector/main.py — y = relu(a*x + b) over a long vector, tiled into chunks (TMR runtime).

Usage: python examples/vector/main.py [-p a2a3sim|a5sim] [--block-dim N] [--aicpu-threads N]

Runs test_vector.py's scene test (its kernels, data and NumPy golden) once, on the geometry the
flags give (default: one cluster, one AICPU thread), and ends with the scene table: the last line
is ``passed 1 / attempted 1 / total 1`` when y matches NumPy. The device orchestration splits x
into chunks; per chunk, one AIV task writes t = a*x + b into a scoped heap temp and a second
writes relu(t) into y's chunk; the runtime infers the edges from the tensors.
"""

from __future__ import annotations

import argparse
import sys

from pto_runtime import scene
from test_vector import PARAMS, TestVector


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim"])
    p.add_argument("--block-dim", type=int, default=1, help="clusters used (default 1)")
    p.add_argument("--aicpu-threads", type=int, default=1, help="AICPU threads (default 1)")
    opts = p.parse_args(argv)
    case = {
        "name": "command_line",
        "platforms": [opts.platform],
        "params": PARAMS,
        "config": {"block_dim": opts.block_dim, "aicpu_thread_num": opts.aicpu_threads},
    }
    records = scene.run(type("TestVector", (TestVector,), {"CASES": [case]}))
    return 0 if all(rec.result == "PASSED" for rec in records) else 1


if __name__ == "__main__":
    sys.exit(main())
