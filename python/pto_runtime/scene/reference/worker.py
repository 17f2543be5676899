"""python/pto_runtime/scene/reference/worker.py — ``simpler.worker.Worker`` on this runtime.

``Worker(level=2, platform=, runtime=, device_id=)`` is one simulated chip and
``Worker(level=3, device_ids=, num_sub_workers=, ...)`` one host, with the calls scene tests
make of them (``init``, ``register``, ``run``, ``close``). The reference worker's other
options and methods (remote sessions, SDMA workspaces, prepared slots) are its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import record
from ..workers import ChipSceneWorker, NodeSceneWorker

__all__ = ["Worker"]


def Worker(  # a factory named like the reference's class
    level: int = 2,
    platform: str = "a2a3sim",
    runtime: str = "tensormap_and_ringbuffer",
    device_id: int = 0,
    device_ids: Sequence[int] | None = None,
    num_sub_workers: int = 0,
    **options: Any,
) -> Any:
    """A level-2 or level-3 scene worker; other levels and options raise NOT_SUPPORTED."""
    unknown = sorted(k for k, v in options.items() if v not in (None, False, 0))
    if unknown:
        raise record.not_supported(
            "the reference's internal Python API", f"Worker options {', '.join(unknown)}"
        )
    if level == 2:
        return ChipSceneWorker(platform, runtime, device_id)
    if level == 3:
        ids = list(device_ids) if device_ids is not None else [device_id]
        return NodeSceneWorker(platform, runtime, ids, num_sub_workers)
    raise record.not_supported(
        f"level {level} workers",
        "the reference's Worker(level=4) "
        "(remote L3 sessions) has no counterpart; use pto_runtime.l4",
    )


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from . import stand_in

    return stand_in("the reference's internal Python API", f"simpler.worker.{name}")
