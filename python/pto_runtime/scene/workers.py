"""python/pto_runtime/scene/workers.py — the worker a scene test runs on (pytest's ``st_worker``).

:class:`ChipSceneWorker` is one simulated chip (L2): ``register(callable)`` gives the handle
``run(handle, args, config=...)`` takes, as in the reference implementation's ``Worker``. The
chip is made on first use and made again after a run that failed in the runtime, so one failed
case never leaves the next with a worker in an unknown state. :class:`NodeSceneWorker` is one
host (L3) with its chips and SUB workers. Anything else a reference test asks of its worker is
the reference's own internals, and says so (NOT_SUPPORTED).

Every chip run prints the reference's ``[STRACE]`` markers to stderr, as the reference's host
does at its default log level (``timing.print_strace``: ``chip.run``, its device wall, the
task timing slots; predicted in timing mode, measured otherwise).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._native import ChipWorker, PlatformInfo, RunStats
from ..errors import Error, InvalidArgumentError
from ..l3 import Worker as L3Worker
from ..timing import Prediction, print_strace
from . import record
from .buffers import BufferOwner
from .build import CompiledCallable

__all__ = ["ChipSceneWorker", "NodeSceneWorker"]

# The scene workers of this process that hold chips, by device id. A simulated device takes one
# worker at a time, and one file may hold classes of both runtimes (or an L3 class beside L2
# ones): a worker that needs a device closes the one that holds it, which reopens on its next
# run. Cases run one after another, so nothing is closed under a running case.
_holders: dict[int, Any] = {}


def _claim(devices: Sequence[int], worker: Any) -> None:
    for d in devices:
        holder = _holders.get(d)
        if holder is not None and holder is not worker:
            holder.close()
    for d in devices:
        _holders[d] = worker


def _release(worker: Any) -> None:
    for d in [d for d, w in _holders.items() if w is worker]:
        del _holders[d]


class ChipSceneWorker(BufferOwner):
    """One chip of ``platform`` running ``runtime``."""

    level = 2

    def __init__(self, platform: str, runtime: str, device_id: int = 0) -> None:
        self.platform = platform
        self.runtime = runtime
        self.device_id = device_id
        self._chip: ChipWorker | None = None
        self._slots: CallableSlots | None = None
        self.last_stats: RunStats | None = None

    @property
    def chip(self) -> ChipWorker:
        """The ChipWorker, initialised on first use."""
        if self._chip is None:
            _claim([self.device_id], self)
            chip = ChipWorker()
            chip.init(self.platform, self.runtime)
            try:
                chip.set_device(self.device_id)
            except BaseException:
                chip.finalize()
                raise
            self._chip = chip
        return self._chip

    @property
    def platform_info(self) -> PlatformInfo:
        return self.chip.platform_info

    def init(self, prewarm_config: Any = None, **options: Any) -> None:
        """Makes the chip now (it is otherwise made by the first run). ``prewarm_config`` (the
        reference's CallConfig, or a ChipCallConfig) also warms it with one run of that
        configuration (``ChipWorker.prewarm``). Other init options are the reference's own:
        NOT_SUPPORTED, named."""
        if options:
            raise record.not_supported(
                "the reference's internal Python API",
                f"Worker.init({', '.join(sorted(options))}=...)",
            )
        chip = self.chip
        if prewarm_config is not None:
            chip.prewarm(self._native_config(prewarm_config))

    def _native_config(self, config: Any) -> Any:
        """``config`` as this runtime's ChipCallConfig: the reference's CallConfig converted,
        a ChipCallConfig as it is."""
        return config.to_native(self.platform) if hasattr(config, "to_native") else config

    def register(self, callable_: Any) -> Any:
        """The handle ``run`` takes for ``callable_`` (the callable itself)."""
        return callable_

    def _alloc_bytes(self, nbytes: int) -> np.ndarray:
        # 64-byte aligned, as a chip's allocations are.
        raw = np.zeros(nbytes + 64, np.uint8)
        skip = -raw.ctypes.data % 64
        return raw[skip : skip + nbytes]

    def _chip_count(self) -> int:
        return 1

    def run(self, handle: Any, args: Any, config: Any = None) -> None:
        """Runs a registered callable with ``args``; adds the tasks it ran to the case's record.
        ``args`` may be the reference's TaskArgs and ``config`` its CallConfig. Returns None, as
        the reference's does; the run's RunStats are ``last_stats``."""
        from .l3 import chip_args  # the reference's TaskArgs as a chip task's arguments

        native = handle.callable if isinstance(handle, CompiledCallable) else handle
        args = chip_args(args)
        if config is not None:
            config = self._native_config(config)
        chip = self.chip
        t0 = time.monotonic_ns()
        try:
            stats = chip.run(native, args, config) if config is not None else chip.run(native, args)
        except Error:
            self._drop_chip()  # the next run starts on a fresh chip; buffer handles stay valid
            raise
        host_ns = time.monotonic_ns() - t0
        self.last_stats = stats
        print_strace(Prediction.of_run(stats, self.runtime), t0, host_ns, id(native))
        rec = record.current()
        if rec is not None and not rec.tasks:
            rec.add_tasks(stats.tasks_run)

    @property
    def _chip_worker(self) -> CallableSlots:
        """The reference's private prepared-callable slots (``_register_callable_at_slot``,
        ``_run_slot``, ``_unregister_slot``) on this chip."""
        if self._slots is None:
            self._slots = CallableSlots(self)
        return self._slots

    def _drop_chip(self) -> None:
        _release(self)
        if self._chip is not None:
            chip, self._chip = self._chip, None
            if chip.initialized:
                chip.finalize()

    def close(self) -> None:
        self._release_buffers()
        self._drop_chip()

    def __getattr__(self, name: str) -> Any:
        raise record.reference_internal(
            name, f"Worker.{name} (a method of the reference's worker this runtime does not have)"
        )


class CallableSlots:
    """Callables registered at numbered slots of one chip and run by slot, as the reference's
    private prepared-callable calls do. Registering a taken slot, or running or unregistering
    an empty one, is an InvalidArgumentError naming the slot."""

    def __init__(self, worker: ChipSceneWorker) -> None:
        self._worker = worker
        self._slots: dict[int, Any] = {}

    def _register_callable_at_slot(self, slot: int, callable_: Any) -> None:
        if slot in self._slots:
            raise InvalidArgumentError(f"slot {slot} already holds a callable; unregister it first")
        self._slots[slot] = callable_

    def _run_slot(self, slot: int, args: Any, config: Any = None) -> None:
        self._worker.run(self._at(slot), args, config=config)

    def _unregister_slot(self, slot: int) -> None:
        self._at(slot)
        del self._slots[slot]

    def _at(self, slot: int) -> Any:
        if slot not in self._slots:
            taken = ", ".join(map(str, sorted(self._slots))) or "none"
            raise InvalidArgumentError(f"slot {slot} holds no callable (taken: {taken})")
        return self._slots[slot]

    def __getattr__(self, name: str) -> Any:
        raise record.reference_internal(name, f"ChipWorker.{name} (prepared-callable ABI)")


class NodeSceneWorker(BufferOwner):
    """One host (L3): ``device_count`` chips and ``num_sub_workers`` SUB workers, thread mode
    by default. SUB callables are registered before the run and called by handle."""

    level = 3

    def __init__(
        self,
        platform: str,
        runtime: str,
        device_ids: Sequence[int],
        num_sub_workers: int,
        mode: str = "thread",
    ) -> None:
        self.platform = platform
        self.runtime = runtime
        self.device_ids = list(device_ids)
        self.num_sub_workers = num_sub_workers
        self.mode = mode
        self._subs: list[Callable[..., Any]] = []
        self._worker: L3Worker | None = None
        self.last_stats: Any = None
        self.sub_handles: dict[str, Any] | None = None  # by name, once the driver registered them

    def register(self, callable_: Any) -> Any:
        """A SUB callable's handle (an index), or a chip callable itself."""
        if callable(callable_) and not isinstance(callable_, CompiledCallable):
            self._subs.append(callable_)
            return SubHandle(len(self._subs) - 1, callable_)
        return callable_

    def init(self, **options: Any) -> None:
        if options:
            raise record.not_supported(
                "the reference's internal Python API",
                f"Worker.init({', '.join(sorted(options))}=...)",
            )
        if self._worker is None:
            _claim(self.device_ids, self)
            self._worker = L3Worker(
                device_ids=self.device_ids,
                num_sub_workers=max(1, self.num_sub_workers),
                platform=self.platform,
                runtime=self.runtime,
                mode=self.mode,
            )

    @property
    def l3(self) -> L3Worker:
        self.init()
        assert self._worker is not None
        return self._worker

    def _alloc_bytes(self, nbytes: int) -> np.ndarray:
        raw = self.l3.alloc(nbytes, np.uint8)
        raw[:] = 0
        return raw

    def _chip_count(self) -> int:
        return len(self.device_ids)

    def run(self, orch: Callable[..., Any], args: Any = None, config: Any = None) -> None:
        """Runs ``orch(orchestrator, args, config)`` (the reference's L3 orchestration shape)
        on the L3 worker and waits for it. Returns None, as the reference's does; the run's
        statistics are ``last_stats``."""
        from .l3 import ReferenceOrchestrator  # the adapter of the reference's L3 calls

        def body(o: Any) -> None:
            orch(ReferenceOrchestrator(o, self), args, config)

        try:
            self.last_stats = self.l3.run(body)
        except Error:
            # The next run starts on a fresh worker, unless buffer handles live in this one's
            # heap (the L3 worker itself goes on after a failed run).
            if not self.__dict__.get("_buffers"):
                self.close()
            raise

    def close(self) -> None:
        _release(self)
        self._release_buffers()
        if self._worker is not None:
            worker, self._worker = self._worker, None
            worker.close()

    def __getattr__(self, name: str) -> Any:
        raise record.reference_internal(
            name,
            f"Worker.{name} (a method of the reference's L3 worker this runtime does not have)",
        )


class SubHandle:
    """A registered SUB callable."""

    def __init__(self, index: int, fn: Callable[..., Any]) -> None:
        self.index = index
        self.fn = fn

    def __repr__(self) -> str:
        return f"SubHandle({self.index}, {getattr(self.fn, '__name__', self.fn)!r})"
