"""python/pto_runtime/l3.py — one host, many chips (L3): Worker, Orchestrator, RunHandle.

``pto_runtime.Worker(level=3, ...)`` returns the ``Worker`` defined here::

    with pto.Worker(level=3, device_ids=[0, 1, 2, 3], num_sub_workers=1, mode="process") as w:
        x = w.alloc((4, n), np.float32)          # host heap: every chip process sees it
        def orch(o):
            for i in range(4):
                args = pto.ChipStorageTaskArgs()
                args.add_tensor(x[i], "inout")
                o.submit_chip(callable_, args, chip=i, name=f"shard{i}")
            o.submit_sub(lambda ctx: reduce(x), inputs=[x], name="reduce")
        stats = w.run(orch)

The orchestration function runs on the calling thread; tasks start as soon as they are
submitted. Dependencies are inferred from the tensors each task reads and writes (by byte
range): read-after-write, write-after-write and write-after-read. Design: docs/guide/l3.md.
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Callable

import numpy as np

from . import _native
from ._native import (
    ChipCallable,
    ChipCallConfig,
    ChipMode,
    Direction,
    Event,
    SubContext,
    WorkerRunStats,
)
from .comm import CommBufferSpec, CommDomain
from .errors import Error, ErrorCode, error_from_code
from .task_args import ChipStorageTaskArgs

__all__ = [
    "Event",
    "Orchestrator",
    "RunHandle",
    "SubContext",
    "Worker",
    "WorkerRunStats",
]


def _invalid(message: str) -> Error:
    return error_from_code(ErrorCode.INVALID_ARGUMENT, message)


# Python checks what cannot reach the native layer as is (any int, seconds); the native layer
# checks the rest with messages that name each option by its keyword argument here.
_MAX_MS = 2**32 - 1  # the native time limits are uint32 milliseconds


def _int_option(
    name: str, value: Any, lo: int, hi: int, unit: str = "", where: str = "Worker(level=3)"
) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _invalid(f"{where}: {name} = {value!r} is not an int; allowed {lo}..{hi}{unit}")
    if not lo <= int(value) <= hi:
        raise _invalid(f"{where}: {name} = {value} is out of range; allowed {lo}..{hi}{unit}")
    return int(value)


def _seconds_ms(where: str, name: str, value: Any) -> int:
    """``value`` seconds as the native milliseconds, or InvalidArgumentError naming ``name``."""
    limit = _MAX_MS / 1000
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not math.isfinite(value)
        or not 0 <= value <= limit
    ):
        raise _invalid(f"{where}: {name} = {value!r} is out of range; allowed 0..{limit} seconds")
    return round(float(value) * 1000)


def _native_options(
    where: str,
    device_ids: Sequence[int],
    num_sub_workers: Any,
    platform: str,
    runtime: str,
    mode: ChipMode | str | int,
    heap_bytes: Any,
    spawn_timeout: Any,
    heap_wait: Any,
    close_timeout: Any,
) -> tuple[Any, ...]:
    """The L3 options checked (InvalidArgumentError naming each by its keyword, ``where``
    first) and converted to the native constructor's positional arguments (also the first ones
    of the L4 worker's); the mode as its ``ChipMode`` member."""
    chip_mode = _native.enum_value(ChipMode, mode, f"{where}: mode")
    if isinstance(device_ids, (int, np.integer, str, bytes)) or not isinstance(
        device_ids, Iterable
    ):
        raise _invalid(
            f"{where}: device_ids = {device_ids!r} is not a list; give a non-empty "
            "list of distinct device ids >= 0, e.g. [0] or [0, 1, 2, 3]"
        )
    ids = list(device_ids)
    for d in ids:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or abs(d) >= 2**31:
            raise _invalid(
                f"{where}: device_ids = {ids!r} holds {d!r}; device ids are ints "
                ">= 0, e.g. [0] or [0, 1, 2, 3]"
            )
    subs = _int_option("num_sub_workers", num_sub_workers, 0, _native.L3_MAX_SUB_WORKERS, "", where)
    heap = _int_option(
        "heap_bytes",
        heap_bytes,
        _native.L3_MIN_HEAP_BYTES,
        _native.L3_MAX_HEAP_BYTES,
        " bytes (default 256 MiB)",
        where,
    )
    times = [
        _seconds_ms(where, name, value)
        for name, value in (
            ("spawn_timeout", spawn_timeout),
            ("heap_wait", heap_wait),
            ("close_timeout", close_timeout),
        )
    ]
    return ([int(d) for d in ids], subs, platform, runtime, chip_mode, heap, *times)


def _array_view(raw: np.ndarray, shape: int | Sequence[int], dtype: Any) -> np.ndarray:
    dt = np.dtype(dtype)
    return raw.view(dt).reshape(shape)


def _nbytes(shape: int | Sequence[int], dtype: Any) -> int:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(int(d) < 0 for d in dims):
        raise _invalid(f"alloc: shape {shape!r} has a negative dimension")
    return int(np.prod(dims, dtype=np.int64)) * np.dtype(dtype).itemsize


class Orchestrator:
    """Submits the tasks of one run; given to the orchestration function, valid only during it."""

    def __init__(self, native: Any, keep: list[Any]) -> None:
        self._native = native
        self._keep = keep  # every object a task borrows, alive until the run is done

    def submit_chip(
        self,
        callable_: ChipCallable,
        args: ChipStorageTaskArgs,
        config: ChipCallConfig | None = None,
        chip: int | None = None,
        name: str = "",
        after: Iterable[int] = (),
    ) -> int:
        """A chip task: ``callable_`` with ``args`` on chip index ``chip`` (None = any idle chip).
        Returns the task id; ``after`` lists extra task ids of this run to wait for."""
        self._keep.append(args)
        target = _native.ANY_CHIP if chip is None else int(chip)
        return self._native.submit_chip(callable_, args, config, target, name, list(after))

    def submit_chip_group(
        self,
        callable_: ChipCallable,
        args: Sequence[ChipStorageTaskArgs],
        config: ChipCallConfig | None = None,
        chips: Sequence[int] | None = None,
        name: str = "",
        after: Iterable[int] = (),
    ) -> int:
        """One task run on several chips together: ``args[i]`` on ``chips[i]`` (None = any
        distinct idle chips). Done when every part is done; fails if any part fails."""
        self._keep.append(list(args))
        return self._native.submit_chip_group(
            callable_, list(args), config, None if chips is None else list(chips), name, list(after)
        )

    def submit_sub(
        self,
        fn: Callable[[SubContext], Any],
        args: ChipStorageTaskArgs | None = None,
        *,
        inputs: Iterable[np.ndarray] = (),
        outputs: Iterable[np.ndarray] = (),
        inouts: Iterable[np.ndarray] = (),
        name: str = "",
        after: Iterable[int] = (),
        always_run: bool = False,
    ) -> int:
        """A SUB task: ``fn(ctx)`` on a host SUB worker thread. The arrays it reads and writes
        (``inputs``, ``outputs``, ``inouts``, or an explicit ``args``) drive its dependencies.
        ``ctx.defer()`` returns an Event: dependents then also wait for ``event.fulfill()`` (or
        fail if it is settled with ``event.fail(why)``). ``always_run``: runs even if a task it
        depends on failed or was not run, like a ``finally`` block (``ctx.upstream_error`` says
        why); a cancelled run still skips it."""
        if not callable(fn):
            raise _invalid(f"submit_sub: fn must be callable as fn(ctx), got {type(fn).__name__}")
        if args is None:
            # Only for the dependencies (the body uses the arrays itself): a strided view counts
            # by the bytes from its first to its last element, as on the device.
            args = ChipStorageTaskArgs()
            for arrays, direction in (
                (inputs, Direction.INPUT),
                (outputs, Direction.OUTPUT),
                (inouts, Direction.INOUT),
            ):
                for a in arrays:
                    args._add_footprint(a, direction)
        elif inputs or outputs or inouts:
            raise _invalid("submit_sub: give either args or inputs/outputs/inouts, not both")
        self._keep.append((fn, args))
        return self._native.submit_sub(fn, args, name, list(after), bool(always_run))

    def alloc(self, shape: int | Sequence[int], dtype: Any = np.float32) -> np.ndarray:
        """A host-heap array owned by the innermost scope: freed once the scope ended and every
        task using it finished. Do not use it after its scope ended."""
        raw = self._native.alloc_bytes(_nbytes(shape, dtype))
        return _array_view(raw, shape, dtype)

    def allocate_domain(
        self,
        name: str = "default",
        workers: Sequence[int] | None = None,
        window_size: int = 0,
        buffers: Sequence[CommBufferSpec] = (),
    ) -> CommDomain:
        """A communication domain over chips ``workers`` (default: all; their order gives the
        ranks): a zeroed ``window_size``-byte window per chip that every chip of the domain can
        read and write, ``buffers`` carved from each in order, and per chip a CommContext naming
        every window (``domain[chip].device_ctx``). InvalidArgumentError (a ValueError), before
        anything is allocated, if the buffers do not fit in ``window_size``. The windows live until
        the run has finished; ``with`` releases the handle at the block's end. Design:
        docs/design/comm_domains.md."""
        chips = list(range(self.num_chips)) if workers is None else workers
        if isinstance(chips, (int, np.integer, str, bytes)) or not isinstance(chips, Iterable):
            raise _invalid(f"allocate_domain: workers = {workers!r} is not a list of chip indices")
        ids = []
        for w in chips:
            if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
                raise _invalid(
                    f"allocate_domain: workers = {list(chips)!r} holds {w!r}; chip indices are ints"
                )
            ids.append(int(w))
        size = _int_option("window_size", window_size, 1, 2**63 - 1, " bytes", "allocate_domain")
        specs = []
        for i, b in enumerate(buffers):
            if not isinstance(b, CommBufferSpec):
                b = CommBufferSpec(*b) if isinstance(b, (tuple, list)) else b
            if not isinstance(b, CommBufferSpec):
                raise _invalid(f"allocate_domain: buffers[{i}] = {b!r} is not a CommBufferSpec")
            specs.append(b._native(i))
        return CommDomain(self._native.allocate_domain(str(name), ids, size, specs))

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """``with o.scope():`` bounds the lifetime of the buffers alloc()ed inside it."""
        self._native.scope_begin()
        try:
            yield
        finally:
            self._native.scope_end()

    @property
    def num_chips(self) -> int:
        return self._native.num_chips

    @property
    def num_sub_workers(self) -> int:
        return self._native.num_sub_workers


class RunHandle:
    """A submitted run: ``done()``, ``wait(timeout)``, ``stats``, ``pending_report()``."""

    def __init__(self, native: Any, keep: list[Any], failure: dict[str, BaseException]) -> None:
        self._native = native
        self._keep = keep
        self._failure = failure

    def done(self) -> bool:
        """True once every task of the run finished (successfully or not)."""
        finished = self._native.done()
        if finished:
            self._keep.clear()
        return finished

    def wait(self, timeout: float | None = None) -> WorkerRunStats:
        """Waits for the run; ``timeout`` in seconds (None = no limit). Raises RunTimeoutError
        naming the pending tasks and what each waits for, TaskFailedError naming the failed task,
        or the orchestration function's error (chained to the original exception).

        Ctrl-C (KeyboardInterrupt) cancels the run (see ``cancel``), waits up to 10 s for it to
        stop and propagates; the worker stays usable."""
        ms = -1 if timeout is None else max(0, int(timeout * 1000))
        try:
            stats = self._native.wait(ms)
        except KeyboardInterrupt:
            if self._native.done():
                self._keep.clear()
            raise
        except Error as e:
            if e.code != ErrorCode.RUN_TIMEOUT:
                self._keep.clear()
            original = self._failure.get("exception")
            if original is not None and e.code != ErrorCode.RUN_TIMEOUT:
                raise e from original
            raise
        self._keep.clear()
        return stats

    def cancel(self) -> None:
        """Stops the run: queued tasks are skipped, running chip tasks aborted; a SUB body
        already running finishes first. ``wait()`` then raises an Error with code ABORTED."""
        self._native.cancel()

    @property
    def stats(self) -> WorkerRunStats:
        """Statistics so far (final once done())."""
        return self._native.stats()

    def pending_report(self) -> str:
        """The tasks not yet finished and what each waits for."""
        return self._native.pending_report()

    def __repr__(self) -> str:
        return f"RunHandle(done={self._native.done()})"


class _WorkerBase:
    """What the L3 and L4 Workers share: starting a run from a Python orchestration, keeping
    its objects alive while it is in flight, the native worker's counts, ``with``."""

    _native: Any
    _lock: threading.Lock
    _in_flight: list[RunHandle]

    def _start(
        self, orch: Callable[[Any], Any], orchestrator: Callable[[Any, list[Any]], Any]
    ) -> RunHandle:
        """Runs ``orch(orchestrator(native_orch, keep))`` on this thread through the native
        worker and returns the run's handle; an exception ``orch`` raises is the run's."""
        if not callable(orch):
            raise _invalid(f"submit: orch must be callable as orch(orchestrator), got {orch!r}")
        keep: list[Any] = [orch]
        failure: dict[str, BaseException] = {}

        def runner(native_orch: Any) -> None:
            try:
                orch(orchestrator(native_orch, keep))
            except BaseException as e:
                failure["exception"] = e
                raise

        handle = RunHandle(self._native.submit(runner), keep, failure)
        with self._lock:  # keep the run's objects alive even if the caller drops the handle
            self._in_flight = [h for h in self._in_flight if not h.done()]
            self._in_flight.append(handle)
        return handle

    def _close_native(self, timeout: float | None) -> None:
        ms = -1 if timeout is None else _seconds_ms("Worker.close", "timeout", timeout)
        try:
            self._native.close(ms)
        finally:
            with self._lock:
                self._in_flight.clear()

    def close(self, timeout: float | None = None) -> None:
        raise NotImplementedError

    @property
    def num_chips(self) -> int:
        return self._native.num_chips

    @property
    def num_sub_workers(self) -> int:
        return self._native.num_sub_workers

    @property
    def closed(self) -> bool:
        return self._native.closed

    def __enter__(self) -> Any:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc is None:
            self.close()
            return
        try:  # the body's exception goes on; what close() gave up on is still said
            self.close()
        except Error as e:
            warnings.warn(str(e), RuntimeWarning, stacklevel=2)


class Worker(_WorkerBase):
    """L3: one host, many chips (``device_ids``) and ``num_sub_workers`` host SUB workers.

    ``mode=ChipMode.THREAD`` (or ``"thread"``) runs one ChipWorker per chip in this process;
    ``ChipMode.PROCESS`` (``"process"``) forks one process per chip (build process-mode workers
    before starting threads of your own). ``mode`` reads back as the ``ChipMode`` member.
    In process mode chip tasks may only use host-heap arrays (``alloc``).
    """

    level = 3

    def __init__(
        self,
        device_ids: Sequence[int] = (0,),
        num_sub_workers: int = 1,
        platform: str = "a2a3sim",
        runtime: str = "host_build_graph",
        mode: ChipMode | str | int = ChipMode.THREAD,
        heap_bytes: int = 256 << 20,
        spawn_timeout: float = 30.0,
        heap_wait: float = 10.0,
        close_timeout: float = 10.0,
    ) -> None:
        options = _native_options(
            "Worker(level=3)",
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
        self.mode: ChipMode = options[4]
        self._lock = threading.Lock()
        self._in_flight: list[RunHandle] = []
        self._native = _native.L3Worker(*options)

    def submit(self, orch: Callable[[Orchestrator], Any]) -> RunHandle:
        """Runs ``orch(orchestrator)`` on this thread (tasks start as it submits them) and
        returns once it returned; the returned handle waits for the tasks."""
        return self._start(orch, Orchestrator)

    def run(
        self, orch: Callable[[Orchestrator], Any], timeout: float | None = None
    ) -> WorkerRunStats:
        """``submit(orch).wait(timeout)``."""
        return self.submit(orch).wait(timeout)

    def alloc(self, shape: int | Sequence[int], dtype: Any = np.float32) -> np.ndarray:
        """A host-heap array (visible to every chip process), freed once garbage-collected and
        no task uses it any more."""
        raw = self._native.alloc_bytes(_nbytes(shape, dtype))
        return _array_view(raw, shape, dtype)

    def chip_pid(self, chip: int) -> int:
        """Process mode: the pid of chip ``chip``'s current process; -1 in thread mode. While the
        process is being (re)started, waits for it (at most ``spawn_timeout``), so the result is
        never 0 (``os.kill(0, ...)`` would signal the caller's own process group)."""
        return self._native.chip_pid(chip)

    @property
    def heap_bytes_in_use(self) -> int:
        return self._native.heap_bytes_in_use

    def close(self, timeout: float | None = None) -> None:
        """Waits up to ``timeout`` seconds (None: the worker's ``close_timeout``) for the runs in
        flight, then fails what is left and stops the threads and chip processes. If it had to
        fail tasks, raises RunTimeoutError naming each and what it waited for (e.g. which
        deferred events), after closing. Every later call but close() and ``closed`` raises
        DeviceError (NOT_INITIALIZED). Idempotent."""
        self._close_native(timeout)

    def __enter__(self) -> Worker:
        return self

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.num_chips} chips"
        return f"Worker(level=3, mode={self.mode!r}, {state})"
