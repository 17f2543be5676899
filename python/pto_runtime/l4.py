"""python/pto_runtime/l4.py — many hosts (L4) on MPI: one program on every rank, each an L3 worker.

``pto_runtime.Worker(level=4, ...)`` returns the ``Worker`` defined here. Launch the program
with ``mpirun -n N python prog.py``; every rank runs the same code::

    with pto.Worker(level=4, device_ids=[0, 1], num_sub_workers=2) as w:   # collective
        parts = [w.alloc(n, np.float32, name=f"part{r}") for r in range(w.size)]
        total = w.alloc(n, np.float32, name="total")
        def orch(o):                        # unrolled identically on every rank
            for r in range(w.size):
                o.submit_sub(fill(parts[r], r), outputs=[parts[r]], rank=r)
            o.submit_sub(add_all, inputs=parts, outputs=[total], rank=0)  # parts move to rank 0
        w.run(orch)

Each rank unrolls the whole task sequence (sequential task flow, as StarPU-MPI does), so every
rank computes the same graph and the same "which rank holds a valid copy of which array" table
without talking. A rank executes only its own tasks, on its L3 worker; when a task on rank r
reads an array whose valid copy is on rank w, rank w adds a send task (after the producer) and
rank r a receive task (before the consumer), both SUB tasks whose completion is a deferred
Event settled by the rank's one MPI progress thread. Design, failures, scale: docs/l4.md.
"""

from __future__ import annotations

import atexit
import bisect
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any, Callable, Union

import numpy as np

from . import l3
from ._native import ChipCallable, ChipCallConfig, Direction, SubContext, WorkerRunStats
from .errors import Error, ErrorCode, error_from_code
from .task_args import ChipStorageTaskArgs

__all__ = ["Orchestrator", "RunHandle", "Worker", "mpi_available"]

RankLike = Union[int, str]

_ENABLE = (
    "install Open MPI and mpi4py (scripts/install_deps.sh --mpi installs the Debian packages "
    "libopenmpi-dev and openmpi-bin, and `pip install 'pto-runtime[mpi]'` adds mpi4py), then "
    "launch the program with `mpirun -n N python your_program.py`"
)


def _invalid(message: str) -> Error:
    return error_from_code(ErrorCode.INVALID_ARGUMENT, message)


def _import_mpi() -> Any:
    """mpi4py's MPI module, initialized; NotSupportedError saying how to get it otherwise."""
    try:
        from mpi4py import MPI
    except ImportError as e:  # no mpi4py, or mpi4py without a loadable libmpi
        raise error_from_code(
            ErrorCode.NOT_SUPPORTED, f"Worker(level=4) needs MPI ({e}): {_ENABLE}"
        ) from e
    except RuntimeError as e:  # MPI_Init failed
        raise error_from_code(
            ErrorCode.NOT_SUPPORTED, f"Worker(level=4): MPI could not be initialized ({e})"
        ) from e
    return MPI


def mpi_available() -> bool:
    """True when mpi4py imports (without initializing MPI)."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


class _Data:
    """One distributed array: the same on every rank (replicated bookkeeping)."""

    __slots__ = ("index", "name", "local", "start", "nbytes", "valid", "ready", "writer")

    def __init__(self, index: int, name: str, local: np.ndarray, valid: set[int]) -> None:
        self.index = index
        self.name = name
        self.local = local  # this rank's copy, as allocated (any shape)
        self.start = int(local.__array_interface__["data"][0])
        self.nbytes = int(local.nbytes)
        self.valid = valid  # ranks whose copy holds the current value
        # Per valid rank, when (in transfer steps) its copy can serve the next reader: arrival
        # plus the sends it already has. A new reader takes the value from the copy ready first,
        # so many readers of one value form a binomial tree, not a star or a chain.
        self.ready: dict[int, int] = dict.fromkeys(valid, 0)
        self.writer = "its initial value"  # what wrote the current value (for messages)

    def bytes_view(self) -> np.ndarray:
        return self.local.reshape(-1).view(np.uint8)


class _Access:
    __slots__ = ("data", "reads", "writes", "whole")

    def __init__(self, data: _Data, reads: bool, writes: bool, whole: bool) -> None:
        self.data = data
        self.reads = reads
        self.writes = writes
        self.whole = whole


def _footprint(a: np.ndarray) -> tuple[int, int]:
    """[first byte, last byte + 1) an array view touches (strided: first to last element)."""
    base = int(a.__array_interface__["data"][0])
    if a.size == 0:
        return base, base
    lo = hi = base
    for n, s in zip(a.shape, a.strides):
        if s >= 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + a.itemsize


class Orchestrator:
    """Submits the tasks of one L4 run; every rank's orchestration function gets one.

    Every rank must make the same calls in the same order (the orchestration function is
    replicated); a task runs on the rank it names, the others only record what it reads and
    writes."""

    def __init__(self, worker: Worker, o3: l3.Orchestrator) -> None:
        self._w = worker
        self._o3 = o3
        self._l3_ids: dict[int, int] = {}  # L4 task id -> L3 task id, for this rank's tasks
        self._rank_of: dict[int, int] = {}  # L4 task id -> rank, for every task of this run

    @property
    def rank(self) -> int:
        return self._w.rank

    @property
    def size(self) -> int:
        return self._w.size

    def submit_chip(
        self,
        callable_: ChipCallable,
        args: ChipStorageTaskArgs,
        config: ChipCallConfig | None = None,
        *,
        rank: RankLike = "any",
        chip: int | None = None,
        name: str = "",
        after: Iterable[int] = (),
    ) -> int:
        """A chip task on ``rank`` (an int, or "any": chosen deterministically, see docs/l4.md)
        and chip index ``chip`` of that rank (None = any idle chip). Returns the L4 task id."""
        entries = getattr(args, "_entries", None)
        if not isinstance(args, ChipStorageTaskArgs) or entries is None:
            raise _invalid(
                "submit_chip (L4): args must be a pto_runtime.ChipStorageTaskArgs built with "
                "add_tensor/add_scalar (raw add_host_tensor addresses cannot be tracked across "
                "ranks)"
            )
        arrays = [(e[1], e[2]) for e in entries if e[0] == "tensor"]

        def local(o3: l3.Orchestrator, label: str, after3: list[int]) -> int:
            return o3.submit_chip(callable_, args, config, chip=chip, name=label, after=after3)

        return self._submit("chip", rank, arrays, local, name, after)

    def submit_sub(
        self,
        fn: Callable[[SubContext], Any],
        *,
        inputs: Iterable[np.ndarray] = (),
        outputs: Iterable[np.ndarray] = (),
        inouts: Iterable[np.ndarray] = (),
        rank: RankLike = "any",
        name: str = "",
        after: Iterable[int] = (),
    ) -> int:
        """A SUB task ``fn(ctx)`` on a SUB worker of ``rank``. ``inputs``/``outputs``/``inouts``
        (arrays of ``Worker.alloc``, or views of them) drive the dependencies and the data
        movement between ranks. Returns the L4 task id."""
        if not callable(fn):
            raise _invalid(f"submit_sub: fn must be callable as fn(ctx), got {type(fn).__name__}")
        ins, outs, inouts_ = list(inputs), list(outputs), list(inouts)
        arrays = (
            [(a, Direction.INPUT) for a in ins]
            + [(a, Direction.OUTPUT) for a in outs]
            + [(a, Direction.INOUT) for a in inouts_]
        )

        def local(o3: l3.Orchestrator, label: str, after3: list[int]) -> int:
            return o3.submit_sub(
                fn, inputs=ins, outputs=outs, inouts=inouts_, name=label, after=after3
            )

        return self._submit("SUB", rank, arrays, local, name, after)

    def fetch(self, array: np.ndarray, rank: RankLike = 0) -> None:
        """Makes ``rank``'s copy of ``array`` (an int, or "all") valid once the run is done:
        the data moves there if it is elsewhere. Use it to read results after ``run``."""
        data = self._w._data_of(array, "fetch")
        targets = range(self.size) if rank == "all" else [self._w._check_rank(rank, "fetch")]
        for r in targets:
            if r not in data.valid:
                self._transfer(data, r, f"fetch by rank {r}")

    # --- the replicated unrolling -----------------------------------------------------------

    def _submit(
        self,
        kind: str,
        rank: RankLike,
        arrays: Sequence[tuple[np.ndarray, Direction]],
        local: Callable[[l3.Orchestrator, str, list[int]], int],
        name: str,
        after: Iterable[int],
    ) -> int:
        w = self._w
        accesses = w._accesses(arrays, f"submit_{kind.lower()}")
        target = self._place(rank, accesses, kind)
        gid = w._next_task
        w._next_task += 1
        label = f"{name or kind.lower()} [L4 task {gid}, rank {target}]"
        after3: list[int] = []
        for a in after:
            if a not in self._rank_of:
                raise _invalid(f"after: {a!r} is not an L4 task id of this run")
            if self._rank_of[a] != target:
                raise error_from_code(
                    ErrorCode.NOT_SUPPORTED,
                    f"after: L4 task {a} runs on rank {self._rank_of[a]}, task {gid} on rank "
                    f"{target}; an explicit edge across ranks is not supported yet: order them "
                    "through an array one writes and the other reads",
                )
            if target == w.rank:
                after3.append(self._l3_ids[a])
        # Reads (and partial writes, which keep the rest of the array) need a valid copy here.
        for acc in accesses:
            if acc.reads and target not in acc.data.valid:
                self._transfer(acc.data, target, f"L4 task {gid} '{name or kind.lower()}'")
        if target == w.rank:
            self._l3_ids[gid] = local(self._o3, label, after3)
            w._tasks_here += 1
        self._rank_of[gid] = target
        w._load[target] += 1
        for acc in accesses:
            if acc.writes:
                acc.data.valid = {target}
                acc.data.ready = {target: 0}
                acc.data.writer = label
        return gid

    def _place(self, rank: RankLike, accesses: list[_Access], kind: str) -> int:
        w = self._w
        if rank != "any":
            return w._check_rank(rank, f"submit_{kind.lower()}")
        # Owner computes: the rank already holding the most bytes the task reads; ties go to
        # the rank with the fewest tasks so far, then the lowest rank. Replicated state only,
        # so every rank picks the same.
        held = [0] * w.size
        for acc in accesses:
            if acc.reads:
                for r in acc.data.valid:
                    held[r] += acc.data.nbytes
        return min(range(w.size), key=lambda r: (-held[r], w._load[r], r))

    def _transfer(self, data: _Data, dst: int, purpose: str) -> None:
        w = self._w
        src = min(data.valid, key=lambda r: (data.ready[r], r))
        data.ready[dst] = data.ready[src] + 1
        data.ready[src] += 1
        seq = w._next_transfer
        w._next_transfer += 1
        what = f"transfer {seq} of '{data.name}' (for {purpose}) from rank {src} to rank {dst}"
        if w.rank == src:
            w._sends_here += 1
            self._o3.submit_sub(
                _send_body(w, dst, seq, data, what),
                inputs=[data.local],
                name=f"send '{data.name}' to rank {dst} [L4 transfer {seq}]",
                always_run=True,
            )
        elif w.rank == dst:
            w._recvs_here += 1
            self._o3.submit_sub(
                _recv_body(w, src, seq, data, what),
                outputs=[data.local],
                name=f"recv '{data.name}' from rank {src} [L4 transfer {seq}]",
                always_run=True,
            )
        data.valid.add(dst)


def _send_body(w: Worker, dst: int, seq: int, data: _Data, what: str) -> Callable[[Any], None]:
    def body(ctx: Any) -> None:
        event = ctx.defer()
        # A failed producer still sends: the header carries its error to the receiver.
        w._progress.post_send(
            dst, seq, data.index, data.bytes_view(), ctx.upstream_error, event, what
        )

    return body


def _recv_body(w: Worker, src: int, seq: int, data: _Data, what: str) -> Callable[[Any], None]:
    def body(ctx: Any) -> None:
        event = ctx.defer()
        # Receives even after a local failure (the sender must not wait forever), then fails.
        w._progress.post_recv(
            src, seq, data.index, data.bytes_view(), ctx.upstream_error, event, what
        )

    return body


class RunHandle:
    """This rank's part of a submitted L4 run: its own tasks and its transfers."""

    def __init__(self, inner: l3.RunHandle) -> None:
        self._inner = inner

    def done(self) -> bool:
        return self._inner.done()

    def wait(self, timeout: float | None = None) -> WorkerRunStats:
        """Waits for this rank's tasks and transfers. Raises TaskFailedError naming the failed
        task and its rank (also when it failed on another rank and its data was needed here),
        or RunTimeoutError. Other ranks may still be running."""
        return self._inner.wait(timeout)

    def cancel(self) -> None:
        """Cancels this rank's part only (docs/l4.md: peers then time out on it)."""
        self._inner.cancel()

    @property
    def stats(self) -> WorkerRunStats:
        return self._inner.stats

    def pending_report(self) -> str:
        return self._inner.pending_report()


_OPEN: weakref.WeakSet[Worker] = weakref.WeakSet()


@atexit.register
def _stop_progress_threads() -> None:
    # Before mpi4py finalizes MPI (its hook runs after atexit's): a worker the program never
    # closed must not have its progress thread inside MPI while MPI_Finalize runs.
    for w in list(_OPEN):
        w._progress.close(goodbye_timeout=0.2)


class Worker:
    """L4: one rank of an MPI job; every rank runs the same program and owns an L3 worker.

    Construction and close() are collective over ``comm`` (default MPI.COMM_WORLD): every rank
    builds its worker at the same point of the program. ``peer_timeout`` (seconds) bounds how
    long a receive waits on a silent rank before failing; ``poll_max`` (seconds) is the longest
    pause of the progress thread while transfers are pending (latency against CPU);
    ``num_sub_workers`` >= 1 because transfers are SUB tasks (they only post to the progress
    thread and return).
    """

    level = 4

    def __init__(
        self,
        device_ids: Sequence[int] = (0,),
        num_sub_workers: int = 2,
        platform: str = "a2a3sim",
        runtime: str = "host_build_graph",
        mode: str = "thread",
        heap_bytes: int = 256 << 20,
        spawn_timeout: float = 30.0,
        heap_wait: float = 10.0,
        close_timeout: float = 10.0,
        peer_timeout: float = 30.0,
        poll_max: float = 1e-3,
        comm: Any = None,
    ) -> None:
        MPI = _import_mpi()
        if isinstance(num_sub_workers, int) and not isinstance(num_sub_workers, bool):
            if num_sub_workers < 1:
                raise _invalid(
                    f"Worker(level=4): num_sub_workers = {num_sub_workers}; L4 needs at least 1 "
                    "(transfers run as SUB tasks), 2 or more if your SUB tasks run long"
                )
        timeout_ok = isinstance(peer_timeout, (int, float)) and not isinstance(peer_timeout, bool)
        if not timeout_ok or not 0.05 <= float(peer_timeout) <= 86400:
            raise _invalid(
                f"Worker(level=4): peer_timeout = {peer_timeout!r} is out of range; allowed "
                "0.05..86400 seconds"
            )
        poll_ok = isinstance(poll_max, (int, float)) and not isinstance(poll_max, bool)
        if not poll_ok or not 50e-6 <= float(poll_max) <= 0.1:
            raise _invalid(
                f"Worker(level=4): poll_max = {poll_max!r} is out of range; allowed 50e-6..0.1 "
                "seconds (the longest pause of the progress thread while transfers are pending)"
            )
        provided = MPI.Query_thread()
        if provided < MPI.THREAD_SERIALIZED:
            raise error_from_code(
                ErrorCode.NOT_SUPPORTED,
                f"Worker(level=4): MPI was initialized with thread level {provided}; the L4 "
                "progress thread needs MPI_THREAD_SERIALIZED or more (mpi4py asks for "
                "MPI_THREAD_MULTIPLE unless mpi4py.rc.thread_level was changed)",
            )
        from . import _l4_progress

        base = MPI.COMM_WORLD if comm is None else comm
        self._comm = base.Dup()  # collective: the runtime's messages never meet the program's
        self.rank: int = self._comm.Get_rank()
        self.size: int = self._comm.Get_size()
        self.mpi_thread_level: int = provided
        self._l3 = l3.Worker(
            device_ids=device_ids,
            num_sub_workers=num_sub_workers,
            platform=platform,
            runtime=runtime,
            mode=mode,
            heap_bytes=heap_bytes,
            spawn_timeout=spawn_timeout,
            heap_wait=heap_wait,
            close_timeout=close_timeout,
        )
        self._progress = _l4_progress.Progress(
            MPI,
            self._comm,
            float(peer_timeout),
            min(5.0, max(0.05, float(peer_timeout) / 4)),
            float(poll_max),
            direct_send=provided >= MPI.THREAD_MULTIPLE,
        )
        self._lock = threading.Lock()
        self._data: list[_Data] = []
        self._starts: list[int] = []  # sorted start addresses of the arrays, for lookups
        self._by_start: list[_Data] = []
        self._next_task = 0
        self._next_transfer = 0
        self._load = [0] * self.size
        self._tasks_here = 0
        self._sends_here = 0
        self._recvs_here = 0
        self._closed = False
        _OPEN.add(self)

    # --- arrays -------------------------------------------------------------------------------

    def alloc(
        self,
        shape: int | Sequence[int],
        dtype: Any = np.float32,
        *,
        name: str = "",
        valid: RankLike = "all",
    ) -> np.ndarray:
        """A distributed array: every rank gets its own copy (in its L3 host heap); the runtime
        tracks which copies hold the current value. ``valid`` says which do at first: "all"
        (every rank sets the same initial values, as a replicated program does) or one rank.
        Every rank must allocate the same arrays in the same order."""
        index = len(self._data)
        home = set(range(self.size)) if valid == "all" else {self._check_rank(valid, "alloc")}
        local = self._l3.alloc(shape, dtype)
        data = _Data(index, name or f"array {index}", local, home)
        self._data.append(data)
        pos = bisect.bisect_left(self._starts, data.start)
        self._starts.insert(pos, data.start)
        self._by_start.insert(pos, data)
        return local

    def valid_ranks(self, array: np.ndarray) -> list[int]:
        """The ranks whose copy of ``array`` holds its current value once submitted work is
        done (the same answer on every rank)."""
        return sorted(self._data_of(array, "valid_ranks").valid)

    def _data_of(self, array: np.ndarray, where: str) -> _Data:
        if not isinstance(array, np.ndarray):
            raise _invalid(f"{where}: expected a numpy array from Worker.alloc, got {array!r}")
        lo, hi = _footprint(array)
        pos = bisect.bisect_right(self._starts, lo) - 1
        if pos >= 0:
            d = self._by_start[pos]
            if lo >= d.start and hi <= d.start + d.nbytes:
                return d
        raise _invalid(
            f"{where}: an array (shape {array.shape}, {array.dtype}) is not (a view of) an array "
            "of this L4 worker's alloc(); tasks at L4 may only use distributed arrays, so that "
            "every rank knows where its valid copy is"
        )

    def _accesses(
        self, arrays: Sequence[tuple[np.ndarray, Direction]], where: str
    ) -> list[_Access]:
        merged: dict[int, _Access] = {}
        for a, d in arrays:
            data = self._data_of(a, where)
            lo, hi = _footprint(a)
            whole = lo == data.start and hi == data.start + data.nbytes
            reads = d in (Direction.INPUT, Direction.INOUT)
            writes = d in (Direction.OUTPUT, Direction.INOUT)
            acc = merged.setdefault(data.index, _Access(data, False, False, True))
            acc.reads |= reads
            acc.writes |= writes
            if writes and not whole:
                acc.whole = False
        for acc in merged.values():
            if acc.writes and not acc.whole:
                acc.reads = True  # a partial write keeps the rest: the copy must be current
        return list(merged.values())

    def _check_rank(self, rank: Any, where: str) -> int:
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)):
            raise _invalid(f"{where}: rank = {rank!r}; give a rank 0..{self.size - 1} or 'any'")
        if not 0 <= int(rank) < self.size:
            raise _invalid(
                f"{where}: rank = {rank} is out of range; this job has {self.size} rank(s), "
                f"0..{self.size - 1}"
            )
        return int(rank)

    # --- runs ---------------------------------------------------------------------------------

    def submit(self, orch: Callable[[Orchestrator], Any]) -> RunHandle:
        """Runs ``orch(orchestrator)`` here (every rank runs it); this rank's tasks start as
        they are submitted. The handle waits for this rank's part."""
        if not callable(orch):
            raise _invalid(f"submit: orch must be callable as orch(orchestrator), got {orch!r}")

        def runner(o3: l3.Orchestrator) -> None:
            orch(Orchestrator(self, o3))

        with self._lock:
            return RunHandle(self._l3.submit(runner))

    def run(
        self, orch: Callable[[Orchestrator], Any], timeout: float | None = None
    ) -> WorkerRunStats:
        """``submit(orch).wait(timeout)``."""
        return self.submit(orch).wait(timeout)

    @property
    def transfers(self) -> dict[str, int]:
        """Counts of this rank: tasks it ran, transfers it sent and received (posted so far)."""
        return {
            "tasks": self._tasks_here,
            "sends": self._sends_here,
            "recvs": self._recvs_here,
            "sent_done": self._progress.transfers_sent,
            "received_done": self._progress.transfers_received,
        }

    @property
    def l3(self) -> l3.Worker:
        """This rank's L3 worker (its chips and SUB workers)."""
        return self._l3

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, timeout: float | None = None) -> None:
        """Closes this rank's L3 worker (waiting for its runs), then stops the progress thread
        and says goodbye to the peers. Not a barrier: a rank that closes while another still
        needs data from it makes that one fail (divergence), never hang."""
        if self._closed:
            return
        self._closed = True
        try:
            self._l3.close(timeout)
        finally:
            self._progress.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._closed_by_exit(exc)

    def _closed_by_exit(self, exc: object) -> None:
        if exc is None:
            self.close()
            return
        try:
            self.close()
        except Error as e:
            import warnings

            warnings.warn(str(e), RuntimeWarning, stacklevel=3)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self._l3.num_chips} chips"
        return f"Worker(level=4, rank={self.rank} of {self.size}, {state})"
