"""python/pto_runtime/scene/reference/simpler.py — the reference's ``simpler`` package, as a name.

Only its submodules ``simpler.task_interface`` and ``simpler.worker`` have counterparts here
(the import hook answers them); anything else the package exports is the reference's own.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from . import stand_in

    return stand_in("the reference's internal Python API", f"simpler.{name}")
