"""python/pto_runtime/_l4_progress.py — the one MPI progress thread of an L4 rank (TAMPI-style).

With ``MPI_THREAD_SERIALIZED`` every MPI call the L4 runtime makes after construction happens
on this thread (docs/l4.md, "Progress"); SUB bodies of transfer tasks hand a send or a receive
to :meth:`Progress.post_send` / :meth:`Progress.post_recv` together with a deferred ``Event``
and return at once. With ``MPI_THREAD_MULTIPLE`` (mpi4py's default) a send body also issues its
``Isend`` itself before handing it over, which saves the thread's wake-up on the critical path
of a cross-rank edge. The thread posts the other ``Isend``/``Irecv`` calls, tests the
outstanding requests, and settles each transfer's Event when its requests complete
(``fulfill``, or ``fail`` with the sender's error, which releases or poisons the dependents in
the L3 graph). Nothing ever blocks in ``MPI_Wait``.

It also keeps the peers honest: every ``heartbeat`` seconds it sends a tiny message to every
other rank, and a receive from a rank that has been silent for ``peer_timeout`` seconds fails
naming that rank (a dead rank never hangs the others). A rank that closes its worker says
goodbye; a receive still waiting for it afterwards fails as a divergence.

Waiting: with requests outstanding the thread tests them, then waits on a condition variable
for 50 µs doubling to ``poll_max`` (default 1 ms; reset by progress); with none it sleeps until
the next heartbeat or until a post wakes it. ``poll_max`` trades latency for CPU: a message
that arrives while the thread sleeps is noticed up to ``poll_max`` later (docs/l4.md).
"""

from __future__ import annotations

import struct
import threading
import time
from collections import deque
from typing import Any

import numpy as np

# Tags on the runtime's own (duplicated) communicator. Transfer k uses DATA_TAG0 + 2*(k mod n)
# for its header and the next tag for its payload.
HEARTBEAT_TAG = 1
GOODBYE_TAG = 2
DATA_TAG0 = 16

# Header of every transfer: status (0 ok, 1 the sender's data is invalid), transfer number,
# array index, payload bytes, then up to HEADER_TEXT bytes of UTF-8 error text.
_HEADER = struct.Struct("<iiqqq")
HEADER_BYTES = 1024
HEADER_TEXT = HEADER_BYTES - _HEADER.size

_POLL_MIN_S = 50e-6


def pack_header(status: int, seq: int, data_index: int, nbytes: int, text: str) -> bytearray:
    raw = text.encode("utf-8", "replace")[:HEADER_TEXT]
    buf = bytearray(HEADER_BYTES)
    _HEADER.pack_into(buf, 0, status, len(raw), seq, data_index, nbytes)
    buf[_HEADER.size : _HEADER.size + len(raw)] = raw
    return buf


def unpack_header(buf: bytearray) -> tuple[int, int, int, int, str]:
    status, n, seq, data_index, nbytes = _HEADER.unpack_from(buf, 0)
    text = bytes(buf[_HEADER.size : _HEADER.size + n]).decode("utf-8", "replace")
    return status, seq, data_index, nbytes, text


class _Op:
    """One posted transfer half (this rank's send or receive) and its deferred Event."""

    __slots__ = (
        "kind",
        "peer",
        "seq",
        "tag",
        "payload",
        "header",
        "event",
        "what",
        "upstream",
        "data_index",
        "reqs",
        "posted",
        "settled",
    )

    def __init__(
        self,
        kind: str,
        peer: int,
        seq: int,
        tag: int,
        payload: np.ndarray,
        header: bytearray,
        event: Any,
        what: str,
        upstream: str,
        data_index: int,
    ) -> None:
        self.kind = kind  # "send" or "recv"
        self.peer = peer
        self.seq = seq
        self.tag = tag
        self.payload = payload  # a 1-D uint8 view of the whole local buffer
        self.header = header
        self.event = event
        self.what = what  # e.g. "transfer 7 of 'x' (for L4 task 9 'sum') from rank 2"
        self.upstream = upstream  # receive: why a local predecessor failed ("" if none)
        self.data_index = data_index
        self.reqs: list[Any] = []
        self.posted = 0.0
        self.settled = False


class Progress:
    """The progress thread of one rank. Public methods are called from any thread."""

    def __init__(
        self,
        mpi: Any,
        comm: Any,
        peer_timeout: float,
        heartbeat: float,
        poll_max: float,
        direct_send: bool,
    ) -> None:
        self._MPI = mpi
        self._comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.peer_timeout = peer_timeout
        self.heartbeat = heartbeat
        self.poll_max = max(poll_max, _POLL_MIN_S)
        self.direct_send = direct_send  # MPI_THREAD_MULTIPLE: send bodies call Isend themselves
        self._tag_span = max(2, ((int(comm.Get_attr(mpi.TAG_UB)) - DATA_TAG0) // 2) * 2)
        self._cv = threading.Condition()
        self._posts: deque[_Op] = deque()  # guarded by _cv
        self._stop = False  # guarded by _cv
        # Below: only the progress thread touches these while it runs.
        self._ops: list[_Op] = []
        now = time.monotonic()
        self._last_heard = [now] * self.size
        self._dead: dict[int, str] = {}  # peer -> why it is considered gone
        self._goodbye: dict[int, float] = {}  # peer -> when it said goodbye
        self._hb_send: dict[int, Any] = {}
        self._hb_buf = bytearray(1)
        self._bye_buf = bytearray(1)
        self._hb_req: Any = None
        self._bye_req: Any = None
        self._thread = threading.Thread(target=self._main, name="pto-l4-progress", daemon=True)
        self.transfers_sent = 0  # counters (read by reports; monotonic ints, GIL-atomic)
        self.transfers_received = 0
        self._thread.start()

    def tag_of(self, seq: int) -> int:
        return DATA_TAG0 + 2 * (seq % (self._tag_span // 2))

    # --- posting (SUB worker threads) -------------------------------------------------------

    def post_send(
        self,
        peer: int,
        seq: int,
        data_index: int,
        payload: np.ndarray,
        status_text: str,
        event: Any,
        what: str,
    ) -> None:
        header = pack_header(1 if status_text else 0, seq, data_index, payload.nbytes, status_text)
        op = _Op("send", peer, seq, self.tag_of(seq), payload, header, event, what, "", data_index)
        if self.direct_send:
            self._issue(op)
        self._post(op)

    def post_recv(
        self,
        peer: int,
        seq: int,
        data_index: int,
        payload: np.ndarray,
        upstream: str,
        event: Any,
        what: str,
    ) -> None:
        self._post(
            _Op(
                "recv",
                peer,
                seq,
                self.tag_of(seq),
                payload,
                bytearray(HEADER_BYTES),
                event,
                what,
                upstream,
                data_index,
            )
        )

    def _post(self, op: _Op) -> None:
        with self._cv:
            if self._stop:
                raise RuntimeError("the L4 progress thread is stopped (the worker is closed)")
            self._posts.append(op)
            self._cv.notify()

    def close(self, goodbye_timeout: float = 1.0) -> None:
        """Says goodbye to the peers, stops the thread. Outstanding transfers are failed."""
        with self._cv:
            if self._stop:
                return
            self._stop = True
            self._cv.notify()
        self._thread.join()
        self._say_goodbye(goodbye_timeout)

    # --- the thread -------------------------------------------------------------------------

    def _main(self) -> None:
        while True:
            try:
                self._loop()
                return
            except Exception as e:  # never let the thread die silently: every waiter would hang
                self._fail_all(f"the L4 progress thread hit {type(e).__name__}: {e}")

    def _loop(self) -> None:
        MPI = self._MPI
        if self.size > 1 and self._hb_req is None:
            self._hb_req = self._comm.Irecv(self._hb_buf, source=MPI.ANY_SOURCE, tag=HEARTBEAT_TAG)
            self._bye_req = self._comm.Irecv(self._bye_buf, source=MPI.ANY_SOURCE, tag=GOODBYE_TAG)
        next_beat = time.monotonic()
        pause = _POLL_MIN_S
        while True:
            with self._cv:
                posts = list(self._posts)
                self._posts.clear()
                stop = self._stop
            if stop:
                self._fail_all("the worker was closed before the transfer finished")
                return
            progress = bool(posts)
            for op in posts:
                self._start(op)
            progress |= self._test_control()
            progress |= self._test_ops()
            now = time.monotonic()
            if self.size > 1 and now >= next_beat:
                self._beat()
                next_beat = now + self.heartbeat
            self._check_peers(now)
            if progress:
                pause = _POLL_MIN_S
                continue
            wait: float | None
            if self._ops:
                wait = pause
                pause = min(pause * 2, self.poll_max)
            else:
                wait = max(0.0, next_beat - now) if self.size > 1 else None
            with self._cv:
                if not self._posts and not self._stop:
                    self._cv.wait(wait)

    def _start(self, op: _Op) -> None:
        if op.peer in self._dead:
            self._settle(op, f"{op.what}: rank {op.peer} is gone ({self._dead[op.peer]})")
            return
        if not op.reqs:
            try:
                self._issue(op)
            except self._MPI.Exception as e:
                self._settle(op, f"{op.what}: MPI reported an error: {e.Get_error_string()}")
                return
        self._ops.append(op)

    def _issue(self, op: _Op) -> None:
        """Isend/Irecv for ``op``: on this thread, or (direct_send) on the send body's."""
        op.posted = time.monotonic()
        c = self._comm
        if op.kind == "send":
            op.reqs = [c.Isend(op.header, dest=op.peer, tag=op.tag)]
            if op.payload.nbytes:
                op.reqs.append(c.Isend(op.payload, dest=op.peer, tag=op.tag + 1))
        else:
            op.reqs = [c.Irecv(op.header, source=op.peer, tag=op.tag)]
            if op.payload.nbytes:
                op.reqs.append(c.Irecv(op.payload, source=op.peer, tag=op.tag + 1))

    def _test_ops(self) -> bool:
        if not self._ops:
            return False
        MPI = self._MPI
        progress = False
        keep: list[_Op] = []
        for op in self._ops:
            if op.settled:
                continue
            try:
                complete = MPI.Request.Testall(op.reqs)
            except MPI.Exception as e:  # e.g. MPI_ERR_TRUNCATE: the sizes differ (divergence)
                progress = True
                hint = (
                    " (a receive fails so when the sender's array is larger: the ranks' "
                    "orchestration functions diverged)"
                    if op.kind == "recv"
                    else ""
                )
                self._settle(op, f"{op.what}: MPI reported {e.Get_error_string()}{hint}")
                continue
            if complete:
                progress = True
                self._finish(op)
            else:
                keep.append(op)
        self._ops = keep
        return progress

    def _finish(self, op: _Op) -> None:
        if op.kind == "send":
            self.transfers_sent += 1
            self._settle(op, None)
            return
        self.transfers_received += 1
        self._last_heard[op.peer] = time.monotonic()
        status, seq, data_index, nbytes, text = unpack_header(op.header)
        if seq != op.seq or data_index != op.data_index or nbytes != op.payload.nbytes:
            self._settle(
                op,
                f"{op.what}: rank {op.peer} sent transfer {seq} of array {data_index} "
                f"({nbytes} bytes) instead: the ranks' orchestration functions diverged (every "
                "rank must submit the same tasks and allocations in the same order)",
            )
        elif status != 0:
            self._settle(op, f"{op.what}: the data is not valid on rank {op.peer}: {text}")
        elif op.upstream:
            self._settle(op, op.upstream)
        else:
            self._settle(op, None)

    def _settle(self, op: _Op, failure: str | None) -> None:
        if op.settled:
            return
        op.settled = True
        try:
            if failure is None:
                op.event.fulfill()
            else:
                op.event.fail(failure)
        except Exception:  # the worker was closed under us: nothing left to tell
            pass

    def _test_control(self) -> bool:
        if self.size == 1:
            return False
        MPI = self._MPI
        progress = False
        status = MPI.Status()
        while self._hb_req.Test(status):
            self._last_heard[status.Get_source()] = time.monotonic()
            self._hb_req = self._comm.Irecv(self._hb_buf, source=MPI.ANY_SOURCE, tag=HEARTBEAT_TAG)
            progress = True
        while self._bye_req.Test(status):
            self._goodbye[status.Get_source()] = time.monotonic()
            self._bye_req = self._comm.Irecv(self._bye_buf, source=MPI.ANY_SOURCE, tag=GOODBYE_TAG)
            progress = True
        for peer, req in list(self._hb_send.items()):
            if req.Test():
                del self._hb_send[peer]
        return progress

    def _beat(self) -> None:
        for peer in range(self.size):
            if peer == self.rank or peer in self._dead or peer in self._hb_send:
                continue  # at most one heartbeat in flight per peer
            self._hb_send[peer] = self._comm.Isend(self._hb_buf, dest=peer, tag=HEARTBEAT_TAG)

    def _check_peers(self, now: float) -> None:
        for op in self._ops:
            if op.kind != "recv" or op.settled:
                continue
            peer = op.peer
            bye = self._goodbye.get(peer)
            if bye is not None and now - max(bye, op.posted) > min(1.0, self.peer_timeout):
                self._give_up(
                    op,
                    f"rank {peer} closed its Worker while this rank still waits for it: the ranks' "
                    "orchestration functions diverged (every rank must submit the same tasks in "
                    "the same order)",
                    mark_dead=False,
                )
            elif now - max(self._last_heard[peer], op.posted) > self.peer_timeout:
                self._give_up(
                    op,
                    f"no message from rank {peer} for {self.peer_timeout:g} s (peer_timeout): "
                    f"rank {peer} died or hangs",
                    mark_dead=True,
                )
        if any(op.settled for op in self._ops):
            self._ops = [op for op in self._ops if not op.settled]

    def _give_up(self, op: _Op, why: str, mark_dead: bool) -> None:
        if mark_dead:
            self._dead[op.peer] = why
        for other in self._ops:
            if other.peer == op.peer and not other.settled and (mark_dead or other is op):
                self._cancel(other)
                self._settle(other, f"{other.what}: {why}")

    def _cancel(self, op: _Op) -> None:
        # Receives: cancel so a late message cannot land in a buffer that is reused. A send to a
        # dead rank cannot be cancelled (Open MPI); it is left behind, the job is broken anyway.
        if op.kind != "recv":
            return
        for req in op.reqs:
            try:
                req.Cancel()
                for _ in range(100):
                    if req.Test():
                        break
            except Exception:
                pass

    def _fail_all(self, why: str) -> None:
        for op in self._ops:
            self._cancel(op)
            self._settle(op, f"{op.what}: {why}")
        self._ops = []
        with self._cv:
            posts = list(self._posts)
            self._posts.clear()
        for op in posts:
            self._settle(op, f"{op.what}: {why}")

    def _say_goodbye(self, timeout: float) -> None:
        """After the thread stopped (this thread is now the only MPI caller of the runtime)."""
        if self.size == 1:
            return
        MPI = self._MPI
        reqs = [
            self._comm.Isend(self._bye_buf, dest=peer, tag=GOODBYE_TAG)
            for peer in range(self.size)
            if peer != self.rank and peer not in self._dead
        ]
        deadline = time.monotonic() + timeout
        while reqs and not MPI.Request.Testall(reqs) and time.monotonic() < deadline:
            time.sleep(1e-3)
        for req in (self._hb_req, self._bye_req):  # no receive left pending at MPI_Finalize
            try:
                req.Cancel()
                req.Test()
            except Exception:
                pass

    @property
    def dead_peers(self) -> dict[int, str]:
        return dict(self._dead)
