"""python/pto_runtime/isolated.py — a level-2 worker whose chip runs in a process of its own.

``Worker(level=2, isolate=True)``: a kernel that crashes the simulated chip (a segfault, an
abort) kills only that chip process; ``run()`` raises ``TaskFailedError`` naming the signal, the
chip process is restarted, and the caller's process goes on. It is the L3 process mode with one
chip and no SUB workers: each run copies the input arrays into the host heap the chip process
shares, runs there, and copies the outputs back (only when the run succeeded), so it costs a
copy of every tensor per run and a process hand-off — use it for kernels you do not trust yet.

What a plain ``ChipWorker`` does and this does not: ``start``/``poll``/``wait``/``abort`` (use
``run(..., timeout=)``), ``last_trace`` and ``platform_info`` (profiling and PMU do not cross
the process boundary) raise ``NotSupportedError``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import l3
from ._native import ChipCallable, ChipCallConfig, Direction, WorkerRunStats
from .errors import ErrorCode, error_from_code
from .task_args import ChipStorageTaskArgs

__all__ = ["IsolatedChipWorker"]


class IsolatedChipWorker:
    """One chip in a child process, behind the level-2 ``run()`` (see the module docstring)."""

    level = 2

    def __init__(
        self,
        platform: str = "a2a3sim",
        runtime: str = "host_build_graph",
        device_id: int = 0,
        heap_bytes: int = 256 << 20,
        spawn_timeout: float = 30.0,
    ) -> None:
        self._platform = platform
        self._runtime = runtime
        self._device_id = device_id
        self._l3: l3.Worker | None = l3.Worker(
            device_ids=[device_id],
            num_sub_workers=0,
            platform=platform,
            runtime=runtime,
            mode="process",
            heap_bytes=heap_bytes,
            spawn_timeout=spawn_timeout,
        )

    def _worker(self, call: str) -> l3.Worker:
        if self._l3 is None:
            raise error_from_code(
                ErrorCode.NOT_INITIALIZED,
                f"ChipWorker.{call}: the worker is finalized (finalize() was called); "
                "create a new ChipWorker",
            )
        return self._l3

    def run(
        self,
        callable_: ChipCallable,
        args: ChipStorageTaskArgs,
        config: ChipCallConfig | None = None,
        timeout: float | None = None,
    ) -> WorkerRunStats:
        """Runs the callable's graph in the chip process; blocks until it is done (or
        ``timeout`` seconds passed: ``RunTimeoutError``). Outputs are copied back into the arrays
        of ``args`` when the run succeeded. A crashed chip raises ``TaskFailedError`` and the
        worker stays usable (its chip process is restarted)."""
        worker = self._worker("run")
        entries = getattr(args, "_entries", None)
        if not isinstance(args, ChipStorageTaskArgs) or entries is None:
            raise error_from_code(
                ErrorCode.INVALID_ARGUMENT,
                "ChipWorker.run (isolate=True): args must be a pto_runtime.ChipStorageTaskArgs "
                "filled with add_tensor(array) and add_scalar (raw add_host_tensor addresses "
                "cannot be copied into the chip process)",
            )
        staged = ChipStorageTaskArgs()
        # (a NumPy view of the caller's array, its heap copy); for a torch.Tensor (or another
        # DLPack/array-interface array) the view add_tensor made over the tensor's memory.
        back: list[tuple[np.ndarray, np.ndarray]] = []
        for entry in entries:
            if entry[0] == "tensor":
                _, array, direction = entry
                copy = worker.alloc(array.shape, array.dtype)
                if direction != Direction.OUTPUT:
                    copy[...] = array
                if direction != Direction.INPUT:
                    back.append((array, copy))
                staged.add_tensor(copy, direction)
            elif entry[0] == "i64":
                staged.add_scalar_i64(entry[1])
            else:
                staged.add_scalar_f32(entry[1])

        def orch(o: l3.Orchestrator) -> None:
            o.submit_chip(callable_, staged, config, chip=0, name="run")

        stats = worker.run(orch, timeout)
        for array, copy in back:
            array[...] = copy
        return stats

    def chip_pid(self) -> int:
        """The process id of the chip process now serving runs."""
        return self._worker("chip_pid").chip_pid(0)

    def _not_supported(self, call: str) -> Any:
        raise error_from_code(
            ErrorCode.NOT_SUPPORTED,
            f"ChipWorker.{call} is not supported with isolate=True (the chip runs in another "
            "process); use run(callable, args, config, timeout=seconds), or a ChipWorker "
            "without isolate",
        )

    def start(self, *args: Any, **kwargs: Any) -> None:
        self._not_supported("start")

    def poll(self) -> None:
        self._not_supported("poll")

    def wait(self, timeout: float | None = None) -> None:
        self._not_supported("wait")

    def abort(self) -> None:
        self._not_supported("abort")

    def last_trace(self) -> None:
        self._not_supported("last_trace")

    def prewarm(self, config: Any = None) -> None:
        self._not_supported("prewarm")

    @property
    def platform_info(self) -> None:
        return self._not_supported("platform_info")

    @property
    def busy(self) -> bool:
        return False  # run() is the only way in, and it returns when the run is over

    @property
    def initialized(self) -> bool:
        return self._l3 is not None

    @property
    def device_id(self) -> int:
        return self._device_id if self._l3 is not None else -1

    @property
    def platform(self) -> str:
        return self._platform

    @property
    def runtime(self) -> str:
        return self._runtime

    def finalize(self) -> None:
        """Stops the chip process. Idempotent."""
        if self._l3 is not None:
            self._l3.close()
            self._l3 = None

    def __enter__(self) -> IsolatedChipWorker:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.finalize()

    def __repr__(self) -> str:
        return (
            f"IsolatedChipWorker(platform={self._platform!r}, runtime={self._runtime!r}, "
            f"device_id={self.device_id})"
        )
