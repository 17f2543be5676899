"""python/pto_runtime/worker.py — Worker(level=N): the factory that routes by level (seed 001).

Level 2 is one chip and returns a ready ``ChipWorker`` (``isolate=True``: an
``IsolatedChipWorker`` running the chip in a child process). Level 3 (one host, many chips and
host SUB workers) returns the prefix-less ``pto_runtime.l3.Worker``; level 4 (many hosts on MPI,
each rank an L3 worker) a ``pto_runtime.l4.Worker``. Level 5 and up is not implemented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

from . import l3, l4
from ._native import ChipMode, ChipWorker
from .errors import ErrorCode, error_from_code
from .isolated import IsolatedChipWorker

__all__ = ["Worker"]


# Overloads, so that a type checker knows what each level returns: Worker(level=2) (or no
# level) is a ChipWorker, Worker(level=3, ...) an l3.Worker with its options checked by name.
@overload
def Worker(
    level: Literal[2] = 2,
    platform: str = "a2a3sim",
    runtime: str = "host_build_graph",
    device_id: int = 0,
    *,
    isolate: Literal[False] = False,
) -> ChipWorker: ...


@overload
def Worker(
    level: Literal[2] = 2,
    platform: str = "a2a3sim",
    runtime: str = "host_build_graph",
    device_id: int = 0,
    *,
    isolate: Literal[True],
) -> IsolatedChipWorker: ...


@overload
def Worker(
    level: Literal[3],
    platform: str = "a2a3sim",
    runtime: str = "host_build_graph",
    device_id: int = 0,
    *,
    device_ids: Sequence[int] = ...,
    num_sub_workers: int = ...,
    mode: ChipMode | str | int = ...,
    heap_bytes: int = ...,
    spawn_timeout: float = ...,
    heap_wait: float = ...,
    close_timeout: float = ...,
) -> l3.Worker: ...


@overload
def Worker(
    level: Literal[4],
    platform: str = "a2a3sim",
    runtime: str = "host_build_graph",
    device_id: int = 0,
    *,
    device_ids: Sequence[int] = ...,
    num_sub_workers: int = ...,
    mode: ChipMode | str | int = ...,
    heap_bytes: int = ...,
    spawn_timeout: float = ...,
    heap_wait: float = ...,
    close_timeout: float = ...,
    peer_timeout: float = ...,
    poll_max: float = ...,
    spin: float = ...,
    comm: Any = ...,
    landing_bytes: int = ...,
) -> l4.Worker: ...


@overload
def Worker(
    level: int,
    platform: str = "a2a3sim",
    runtime: str = "host_build_graph",
    device_id: int = 0,
    *,
    isolate: bool = False,
    **l3_options: Any,
) -> ChipWorker | IsolatedChipWorker | l3.Worker | l4.Worker: ...


def Worker(  # a factory named like the L3+ class it will stand for
    level: int = 2,
    platform: str = "a2a3sim",
    runtime: str = "host_build_graph",
    device_id: int = 0,
    *,
    isolate: bool = False,
    **l3_options: Any,
) -> ChipWorker | IsolatedChipWorker | l3.Worker | l4.Worker:
    """A worker for ``level``: 2 gives a ``ChipWorker`` already init()-ed and set_device()-d
    (``isolate=True``: an ``IsolatedChipWorker``, whose chip runs in a child process, so a
    crashing kernel raises ``TaskFailedError`` instead of killing this one); 3 gives an
    ``l3.Worker`` (``l3_options``: device_ids, num_sub_workers, mode, heap_bytes,
    spawn_timeout, heap_wait, close_timeout; device_ids defaults to ``[device_id]``).

    4 gives an ``l4.Worker`` (the L3 options plus peer_timeout, poll_max, spin, comm and
    landing_bytes; binds the C++ ``pto::l4::Worker``, so needs a pto_runtime built with MPI,
    NotSupportedError saying how to get it otherwise; launch with mpirun for more than one
    rank).

    Raises NotSupportedError for level 5 and above and InvalidArgumentError for any other level
    or an L3 option given at level 2.
    """
    if isinstance(level, bool) or not isinstance(level, int):
        raise error_from_code(
            ErrorCode.INVALID_ARGUMENT, f"Worker: level must be an int, got {level!r}"
        )
    if isolate and level != 2:
        raise error_from_code(
            ErrorCode.INVALID_ARGUMENT,
            f"Worker(level={level}, isolate=True): isolate is an option of level 2; at level 3 "
            "use mode='process'",
        )
    if level == 3:
        l3_options.setdefault("device_ids", [device_id])
        return l3.Worker(platform=platform, runtime=runtime, **l3_options)
    if level == 4:
        l3_options.setdefault("device_ids", [device_id])
        return l4.Worker(platform=platform, runtime=runtime, **l3_options)
    if level >= 5:
        raise error_from_code(
            ErrorCode.NOT_SUPPORTED,
            f"Worker(level={level}): levels above 4 (clusters of clusters) are not implemented; "
            "use level=4 (many hosts on MPI) for a flat cluster",
        )
    if l3_options:
        raise error_from_code(
            ErrorCode.INVALID_ARGUMENT,
            f"Worker(level={level}): {', '.join(sorted(l3_options))} are options of level 3; "
            "use Worker(level=3, ...)",
        )
    if level != 2:
        raise error_from_code(
            ErrorCode.INVALID_ARGUMENT,
            f"Worker(level={level}): levels start at 2 (one chip); use level=2",
        )
    if isolate:
        return IsolatedChipWorker(platform, runtime, device_id)
    worker = ChipWorker()
    try:
        worker.init(platform, runtime)
        worker.set_device(device_id)
    except BaseException:
        if worker.initialized:
            worker.finalize()
        raise
    return worker
