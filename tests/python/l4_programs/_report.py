"""tests/python/l4_programs/_report.py — each rank's result lines, one file per rank.

mpirun forwards the ranks' stdout in chunks that can interleave mid-line, so the programs
write what the test checks to $L4_TEST_OUT/rank<r>.txt (and echo it to stdout for humans).
"""

from __future__ import annotations

import os


def report(rank: int, line: str) -> None:
    out = os.environ.get("L4_TEST_OUT")
    if out:
        with open(os.path.join(out, f"rank{rank}.txt"), "a", encoding="utf-8") as f:
            f.write(line + "\n")
    print(line, flush=True)
