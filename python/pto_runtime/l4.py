"""python/pto_runtime/l4.py — many hosts (L4) on MPI: Python's face of the C++ ``pto::l4::Worker``.

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
        big = w.alloc((1 << 20, 64), np.float32, distribute="block_cyclic", tile=4096)
        def init(o):                        # each tile written on its owner (rank="any")
            for lo in range(0, big.shape[0], 4096):
                o.submit_sub(fill_rows(big, lo), outputs=[big[lo:lo + 4096]])
        w.run(init)
        whole = w.gather(big)               # rank 0: all of it (not scalable); others: None

Everything L4 does — the replicated unrolling, placement, the valid-copy table, transfers as L3
SUB tasks, the MPI progress thread — is the C++ ``pto::l4::Worker`` (include/pto/l4.h,
src/l4/), bound by the module ``_l4native``, which is built only when CMake finds MPI. This
file turns Python arguments into its arguments (numpy arrays into byte ranges, "any"/"all" into
ranks, seconds into ms/µs) and keeps a run's Python objects alive until it is done. Design,
failures, scale: docs/guide/l4.md ("Distributed arrays" for ``alloc(..., distribute=)``).
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Callable, Union

import numpy as np

from . import _native, l3
from ._native import (
    ChipCallable,
    ChipCallConfig,
    ChipMode,
    Direction,
    SubContext,
    WorkerRunStats,
)
from .comm import ChipDomainContext, CommBufferSpec, NotAMemberError, _Releasable
from .errors import Error, ErrorCode, error_from_code
from .task_args import ChipStorageTaskArgs

if TYPE_CHECKING:
    from . import _l4native

__all__ = ["GlobalCommDomain", "Orchestrator", "RunHandle", "Worker", "mpi_available"]

RankLike = Union[int, str]

_ENABLE = (
    "install Open MPI (scripts/install_deps.sh --mpi installs the Debian packages "
    "libopenmpi-dev and openmpi-bin), rebuild and reinstall pto_runtime so that its module "
    "_l4native is built (scripts/install_package.sh, or `pip install .`), then launch the "
    "program with `mpirun -n N python your_program.py`"
)


def _invalid(message: str) -> Error:
    return error_from_code(ErrorCode.INVALID_ARGUMENT, message)


def _import_native() -> Any:
    """The module _l4native; NotSupportedError saying how to get it otherwise."""
    try:
        from . import _l4native
    except ImportError as e:  # built without MPI, or libmpi not loadable
        raise error_from_code(
            ErrorCode.NOT_SUPPORTED,
            f"Worker(level=4) needs MPI, and this pto_runtime has no L4 module ({e}): {_ENABLE}",
        ) from e
    return _l4native


def mpi_available() -> bool:
    """True when this pto_runtime was built with MPI (its L4 module imports)."""
    try:
        from . import _l4native  # noqa: F401
    except ImportError:
        return False
    return True


def _address(array: Any, where: str) -> int:
    """The first byte ``array`` touches (its footprint's start), for the native lookups."""
    if not isinstance(array, np.ndarray):
        raise _invalid(f"{where}: expected a numpy array from Worker.alloc, got {array!r}")
    lo = int(array.__array_interface__["data"][0])
    for n, s in zip(array.shape, array.strides):
        if s < 0 and n > 0:
            lo += (n - 1) * s
    return lo


class Orchestrator:
    """Submits the tasks of one L4 run; every rank's orchestration function gets one.

    Every rank must make the same calls in the same order (the orchestration function is
    replicated); a task runs on the rank it names, the others only record what it reads and
    writes."""

    def __init__(self, worker: Worker, native: Any, keep: list[Any]) -> None:
        self._w = worker
        self._native = native
        self._keep = keep  # every object a task borrows, alive until the run is done

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
        """A chip task on ``rank`` (an int, or "any": chosen deterministically, see
        docs/guide/l4.md) and chip index ``chip`` of that rank (None = any idle chip). Its tensors
        must lie in arrays of ``Worker.alloc``. Returns the L4 task id."""
        if not isinstance(args, ChipStorageTaskArgs):
            raise _invalid(
                "submit_chip (L4): args must be a pto_runtime.ChipStorageTaskArgs whose tensors "
                f"lie in arrays of Worker.alloc, got {type(args).__name__}"
            )
        target = self._w._rank_arg(rank, "submit_chip", any_ok=True)
        self._keep.append(args)
        chip_ = _native.ANY_CHIP if chip is None else int(chip)
        return self._native.submit_chip(callable_, args, config, target, chip_, name, list(after))

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
        movement between ranks. A task writing tiles of a distributed array runs on their owner:
        rank="any" places it there, another rank (or tiles of two owners) raises
        InvalidArgumentError. Returns the L4 task id."""
        if not callable(fn):
            raise _invalid(f"submit_sub: fn must be callable as fn(ctx), got {type(fn).__name__}")
        target = self._w._rank_arg(rank, "submit_sub", any_ok=True)
        # As at L3: each array by the bytes from its first to its last element.
        args = ChipStorageTaskArgs()
        for arrays, direction in (
            (inputs, Direction.INPUT),
            (outputs, Direction.OUTPUT),
            (inouts, Direction.INOUT),
        ):
            for a in arrays:
                args._add_footprint(a, direction)
        self._keep.append((fn, args))
        return self._native.submit_sub(fn, args, target, name, list(after))

    def fetch(self, array: np.ndarray, rank: RankLike = 0) -> None:
        """Makes ``rank``'s copy of ``array`` (an int, or "all") valid once the run is done:
        the data moves there if it is elsewhere. Use it to read results after ``run``. For a
        distributed array every tile lands on that rank and stays until its owner writes it
        again: the whole array's memory there (to check results, not scalable)."""
        target = self._w._rank_arg(rank, "fetch", all_ok=True)
        self._native.fetch(_address(array, "fetch"), target)

    def allocate_domain(
        self,
        name: str,
        members: Iterable[tuple[int, int]],
        window_size: int,
        buffers: Iterable[CommBufferSpec] = (),
    ) -> GlobalCommDomain:
        """A communication domain over ``members``, (rank, chip) pairs of any ranks (their order
        gives the domain ranks): a zeroed window of ``window_size`` bytes per member with
        ``buffers`` carved from it, as at L3. Every rank makes the same call (collective). A
        member's kernels reach peers on their own rank through memory and peers on other ranks
        through MPI one-sided operations, with PTO-ISA's TPUT, TGET, TNOTIFY, TWAIT and TTEST
        (docs/design/comm_domains.md, "Across hosts"). The windows live until the run has
        finished; the next ``submit``/``run`` (or ``close``) waits for it and frees them.
        InvalidArgumentError (a ValueError) before anything is allocated for a bad member, size
        or buffer; NotSupportedError in process mode."""
        where = f"allocate_domain({name!r})"
        pairs: list[tuple[int, int]] = []
        for i, m in enumerate(members):
            if (
                not isinstance(m, (tuple, list))
                or len(m) != 2
                or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in m)
            ):
                raise _invalid(f"{where}: members[{i}] = {m!r} is not a (rank, chip) pair of ints")
            pairs.append((int(m[0]), int(m[1])))
        if isinstance(window_size, bool) or not isinstance(window_size, (int, np.integer)):
            raise _invalid(f"{where}: window_size = {window_size!r} is not an int")
        if window_size < 0:
            raise _invalid(f"{where}: window_size = {window_size}; allowed 1.. bytes")
        specs = [b._native(i) for i, b in enumerate(buffers)]
        return GlobalCommDomain(self._native.allocate_domain(name, pairs, int(window_size), specs))


class GlobalCommDomain(_Releasable):
    """A domain from the L4 ``Orchestrator.allocate_domain``. ``domain[rank, chip]`` is that
    member's ChipDomainContext: the real one on its own rank; on any other rank a stand-in with
    the same buffers and ``device_ctx`` 0, since every rank builds every task's arguments and
    only the task's rank runs it (``is_local`` tells them apart). NotAMemberError (also a
    KeyError) for a pair outside the domain. A context manager: leaving the block releases it."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self._contexts: dict[tuple[int, int], ChipDomainContext] = {}

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def members(self) -> list[tuple[int, int]]:
        return [(int(r), int(c)) for r, c in self._native.members]

    def is_local(self, rank: int, chip: int) -> bool:
        return bool(self._native.is_local(int(rank), int(chip)))

    def __getitem__(self, member: tuple[int, int]) -> ChipDomainContext:
        if self._native.released:
            raise _invalid(f"domain {self.name!r} was released: no new task may use it {member}")
        if (
            not isinstance(member, tuple)
            or len(member) != 2
            or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in member)
        ):
            raise _invalid(f"domain {self.name!r}[{member!r}]: a member is a (rank, chip) pair")
        key = (int(member[0]), int(member[1]))
        if key not in self.members:
            raise NotAMemberError(
                f"domain {self.name!r}: {key} is not one of its members {self.members}"
            )
        found = self._contexts.get(key)
        if found is None:
            found = self._contexts[key] = ChipDomainContext(self._native.context(*key))
        return found

    def __enter__(self) -> GlobalCommDomain:
        return self

    def __repr__(self) -> str:
        state = ", released" if self.released else ""
        return f"GlobalCommDomain({self.name!r}, members={self.members}{state})"


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
        """Cancels this rank's part only (docs/guide/l4.md: peers then time out on it)."""
        self._inner.cancel()

    @property
    def stats(self) -> WorkerRunStats:
        return self._inner.stats

    def pending_report(self) -> str:
        return self._inner.pending_report()


_OPEN: weakref.WeakSet[Worker] = weakref.WeakSet()


@atexit.register
def _close_open_workers() -> None:
    # Before mpi4py finalizes MPI (its hook runs after atexit's): a worker the program never
    # closed must not have its progress thread inside MPI while MPI_Finalize runs.
    for w in list(_OPEN):
        try:
            w._native.close(200)
        except Error:
            pass


def _seconds(name: str, value: Any, lo: float, hi: float, scale: float, note: str = "") -> int:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not lo <= float(value) <= hi:
        raise _invalid(
            f"Worker(level=4): {name} = {value!r} is out of range; allowed {lo:g}..{hi:g} "
            f"seconds{note}"
        )
    return round(float(value) * scale)


class Worker(l3._WorkerBase):
    """L4: one rank of an MPI job; every rank runs the same program and owns an L3 worker.

    Construction and close() are collective over ``comm`` (an mpi4py communicator, default
    MPI_COMM_WORLD; the runtime duplicates it): every rank builds its worker at the same point
    of the program. ``peer_timeout`` (seconds) bounds how long a receive waits on a silent rank
    before failing. While transfers are pending the progress thread tests MPI continuously for
    ``spin`` seconds after the last transfer event (yielding its CPU between tests), then pauses
    between tests up to ``poll_max`` seconds (latency against CPU; docs/guide/l4.md, "Progress").
    ``num_sub_workers`` >= 1 because transfers are SUB tasks (they only post to the progress
    thread and return). ``landing_bytes`` bounds the bytes of remote tiles of distributed arrays
    a rank holds at once (older landed tiles are evicted to make room; default 256 MiB).
    """

    level = 4

    def __init__(
        self,
        device_ids: Sequence[int] = (0,),
        num_sub_workers: int = 2,
        platform: str = "a2a3sim",
        runtime: str = "host_build_graph",
        mode: ChipMode | str | int = ChipMode.THREAD,
        heap_bytes: int = 256 << 20,
        spawn_timeout: float = 30.0,
        heap_wait: float = 10.0,
        close_timeout: float = 10.0,
        peer_timeout: float = 30.0,
        poll_max: float = 1e-3,
        spin: float = 1e-4,
        comm: Any = None,
        landing_bytes: int = 256 << 20,
    ) -> None:
        native = _import_native()
        if isinstance(num_sub_workers, int) and not isinstance(num_sub_workers, bool):
            if num_sub_workers < 1:
                raise _invalid(
                    f"Worker(level=4): num_sub_workers = {num_sub_workers}; L4 needs at least 1 "
                    "(transfers run as SUB tasks), 2 or more if your SUB tasks run long"
                )
        options = l3._native_options(
            "Worker(level=4)",
            device_ids,
            num_sub_workers,
            platform,
            runtime,
            mode,
            heap_bytes,
            spawn_timeout,
            heap_wait,
            close_timeout,
        )
        peer_ms = _seconds(
            "peer_timeout",
            peer_timeout,
            native.MIN_PEER_TIMEOUT_MS / 1000,
            native.MAX_PEER_TIMEOUT_MS / 1000,
            1000,
        )
        poll_us = _seconds(
            "poll_max",
            poll_max,
            native.MIN_POLL_MAX_US / 1e6,
            native.MAX_POLL_MAX_US / 1e6,
            1e6,
            " (the longest pause of the progress thread while transfers are pending)",
        )
        spin_us = _seconds(
            "spin",
            spin,
            0,
            native.MAX_SPIN_US / 1e6,
            1e6,
            " (how long the progress thread tests MPI continuously after a transfer event)",
        )
        landing = l3._int_option(
            "landing_bytes",
            landing_bytes,
            native.MIN_LANDING_BYTES,
            native.MAX_LANDING_BYTES,
            " bytes (remote tiles of distributed arrays a rank may hold at once; default 256 MiB)",
            "Worker(level=4)",
        )
        self._native: _l4native.L4Worker = native.L4Worker(
            *options, peer_ms, poll_us, spin_us, landing, _comm_address(comm)
        )
        self.mode: ChipMode = options[4]
        self.rank: int = self._native.rank
        self.size: int = self._native.size
        self.mpi_thread_level: int = self._native.mpi_thread_level
        self._lock = threading.Lock()
        self._in_flight: list[l3.RunHandle] = []
        _OPEN.add(self)

    # --- arrays -------------------------------------------------------------------------------

    def alloc(
        self,
        shape: int | Sequence[int],
        dtype: Any = np.float32,
        *,
        name: str | None = None,
        valid: RankLike = "all",
        distribute: str | None = None,
        tile: int | None = None,
    ) -> np.ndarray:
        """An array every rank allocates alike (same calls, same order, on every rank).

        ``distribute=None`` (replicated): every rank gets its own copy (in its L3 host heap);
        the runtime tracks which copies hold the current value. ``valid`` says which do at
        first: "all" (every rank sets the same initial values, as a replicated program does) or
        one rank.

        ``distribute="block"`` or ``"block_cyclic"``: a distributed array, cut along the first
        axis into tiles; tile k is owned by rank k % size and only its owner may write it.
        "block": one tile per rank (ceil(nbytes / size) rounded up to 4096 bytes, so rows may
        straddle tiles); "block_cyclic": ``tile`` rows of the first axis per tile (required),
        dealt round-robin. Every rank reserves the whole address range in its heap (heap_bytes
        must hold it), but only the pages it writes take memory: its own tiles and the remote
        tiles it receives to read (at most ``landing_bytes`` of them at once). The returned
        array views this rank's address range, zeroed at first: the parts of tiles this rank
        neither owns nor has received read as zeros (or as a stale landed copy), so read a
        result after ``gather`` or ``Orchestrator.fetch``. Each tile is valid on its owner at
        first (the owner may set its tiles directly before a run); ``valid`` must stay "all".
        """
        nbytes = l3._nbytes(shape, dtype)
        label = "" if name is None else str(name)
        if distribute is None:
            if tile is not None:
                raise _invalid(
                    f"alloc: tile = {tile!r} without distribute; tile is the rows per tile of "
                    "distribute='block_cyclic'"
                )
            home = self._rank_arg(valid, "alloc", all_ok=True)
            raw = self._native.alloc_bytes(nbytes, label, home)
            return l3._array_view(raw, shape, dtype)
        if distribute not in ("block", "block_cyclic"):
            raise _invalid(
                f"alloc: distribute = {distribute!r}; give None (replicated), 'block' or "
                "'block_cyclic'"
            )
        if not (isinstance(valid, str) and valid == "all"):
            raise _invalid(
                f"alloc: valid = {valid!r} with distribute={distribute!r}; a distributed array's "
                "tiles are valid on their owners, leave valid='all'"
            )
        dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        tile_bytes = 0
        if distribute == "block":
            if tile is not None:
                raise _invalid(
                    f"alloc: tile = {tile!r} with distribute='block', which makes one tile per "
                    "rank; leave tile=None, or use distribute='block_cyclic'"
                )
        else:
            if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) or tile <= 0:
                raise _invalid(
                    f"alloc: distribute='block_cyclic' needs tile = rows of the first axis per "
                    f"tile (an int > 0), got {tile!r}"
                )
            if not dims:
                raise _invalid("alloc: distribute needs an array of one dimension or more")
            row = int(np.prod(dims[1:], dtype=np.int64)) * np.dtype(dtype).itemsize
            tile_bytes = int(tile) * row
            if tile_bytes == 0:
                raise _invalid(f"alloc: shape {shape!r} has rows of 0 bytes; tiles would be empty")
        raw = self._native.alloc_distributed_bytes(nbytes, label, distribute, tile_bytes)
        return l3._array_view(raw, shape, dtype)

    def gather(self, array: np.ndarray, rank: int = 0) -> np.ndarray | None:
        """A copy of the whole of ``array`` on ``rank``, None on the other ranks.

        A run of its own (every rank must call it, like ``run``) that fetches ``array`` to
        ``rank``: for a distributed array every tile moves there and stays (the whole array's
        memory on that rank: meant for checking results, not scalable)."""
        target = self._rank_arg(rank, "gather")
        self.run(lambda o: o.fetch(array, rank=target))
        return np.array(array, copy=True) if self.rank == target else None

    def valid_ranks(self, array: np.ndarray) -> list[int]:
        """The ranks whose copy of ``array`` holds its current value once submitted work is
        done (the same answer on every rank). For a distributed array: of the tile holding the
        first element of ``array`` (pass a view to ask about another tile)."""
        return list(self._native.valid_ranks(_address(array, "valid_ranks")))

    def _rank_arg(
        self, rank: Any, where: str, *, any_ok: bool = False, all_ok: bool = False
    ) -> int:
        """``rank`` as the native rank: an int 0..size-1, "any" or "all" where allowed."""
        if any_ok and rank == "any":
            return int(_native_module().ANY_RANK)
        if all_ok and rank == "all":
            return int(_native_module().ALL_RANKS)
        words = " or ".join(w for w, ok in (("'any'", any_ok), ("'all'", all_ok)) if ok)
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)):
            raise _invalid(
                f"{where}: rank = {rank!r}; give a rank 0..{self.size - 1}"
                + (f" or {words}" if words else "")
            )
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
        return RunHandle(self._start(orch, lambda native, keep: Orchestrator(self, native, keep)))

    def run(
        self, orch: Callable[[Orchestrator], Any], timeout: float | None = None
    ) -> WorkerRunStats:
        """``submit(orch).wait(timeout)``."""
        return self.submit(orch).wait(timeout)

    @property
    def transfers(self) -> dict[str, int]:
        """Counts of this rank: tasks it ran, transfers it sent and received (posted so far),
        the transfers whose MPI requests completed, and the landed tiles it evicted."""
        return dict(self._native.transfers())

    def close(self, timeout: float | None = None) -> None:
        """Closes this rank's L3 worker (waiting up to ``timeout`` seconds, None: close_timeout,
        for its runs), then stops the progress thread and says goodbye to the peers. Not a
        barrier: a rank that closes while another still needs data from it makes that one fail
        (divergence), never hang. Idempotent."""
        try:
            self._close_native(timeout)
        finally:
            _OPEN.discard(self)

    def __enter__(self) -> Worker:
        return self

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.num_chips} chips"
        return f"Worker(level=4, rank={self.rank} of {self.size}, {state})"


def _native_module() -> Any:
    from . import _l4native

    return _l4native


def _comm_address(comm: Any) -> int:
    """The address of ``comm``'s MPI_Comm handle (0 for None: MPI_COMM_WORLD)."""
    if comm is None:
        return 0
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise error_from_code(
            ErrorCode.NOT_SUPPORTED,
            f"Worker(level=4): comm= takes an mpi4py communicator, and mpi4py is missing ({e}); "
            "`pip install 'pto-runtime[mpi]'` adds it",
        ) from e
    if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
        raise _invalid(
            f"Worker(level=4): comm = {comm!r}; give an mpi4py intra-communicator (e.g. "
            "MPI.COMM_WORLD or one made by comm.Split), or None for COMM_WORLD"
        )
    return int(MPI._addressof(comm))
