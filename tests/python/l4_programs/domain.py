"""tests/python/l4_programs/domain.py — L4 communication domains from Python: errors and handles.

mpirun -n 2. Every refusal is an InvalidArgumentError (a ValueError) raised before any rank
enters a collective call, so a good domain right after still works on every rank; a member's
context is the real one on its rank and a stand-in (device_ctx 0, same buffers) elsewhere; in
process mode the call is NotSupportedError. Prints "rank R: domain checks OK" or the failures.
"""

from __future__ import annotations

import pto_runtime as pto
from _report import report

failures: list[str] = []


def expect_error(kind: type, text: str, fn) -> None:
    try:
        fn()
    except kind as e:
        if text not in str(e):
            failures.append(f"{text!r} not in {e}")
    else:
        failures.append(f"no {kind.__name__} for {text!r}")


spec = [pto.CommBufferSpec("x", "float32", 16)]
with pto.Worker(level=4, device_ids=[0, 1], num_sub_workers=1) as w:
    rank = w.rank

    def orch(o) -> None:
        expect_error(ValueError, "members[0] = 3 is not a (rank, chip) pair",
                     lambda: o.allocate_domain("d", [3], 64, spec))  # fmt: skip
        expect_error(pto.InvalidArgumentError, "rank is not one of the job's (0..1)",
                     lambda: o.allocate_domain("d", [(2, 0)], 64, spec))  # fmt: skip
        expect_error(pto.InvalidArgumentError, "chip is not a chip index of a rank (0..1)",
                     lambda: o.allocate_domain("d", [(0, 5)], 64, spec))  # fmt: skip
        expect_error(pto.InvalidArgumentError, "window_size = 8 is too small",
                     lambda: o.allocate_domain("d", [(0, 0), (1, 0)], 8, spec))  # fmt: skip
        with o.allocate_domain("good", [(0, 1), (1, 0)], 64, spec) as d:
            if d.members != [(0, 1), (1, 0)]:
                failures.append(f"members {d.members}")
            mine, theirs = ((0, 1), (1, 0)) if rank == 0 else ((1, 0), (0, 1))
            if not d.is_local(*mine) or d.is_local(*theirs):
                failures.append("is_local should tell this rank's member from the other's")
            if d[mine].device_ctx == 0 or d[theirs].device_ctx != 0:
                failures.append("device_ctx: real on the member's rank, 0 on the other")
            if d[theirs].buffers["x"].nbytes != 64 or d[mine].domain_size != 2:
                failures.append("a stand-in context should name the same buffers")
            expect_error(KeyError, "is not one of its members", lambda: d[0, 0])
        expect_error(pto.InvalidArgumentError, "was released", lambda: d[mine])

    w.run(orch)

with pto.Worker(level=4, device_ids=[0], num_sub_workers=1, mode="process") as w:
    w.run(lambda o: expect_error(pto.NotSupportedError, "need chips in thread mode",
                                 lambda: o.allocate_domain("p", [(0, 0)], 64)))  # fmt: skip

report(
    rank, f"rank {rank}: domain checks OK" if not failures else f"rank {rank}: FAILED {failures}"
)
