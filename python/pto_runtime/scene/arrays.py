"""python/pto_runtime/scene/arrays.py — the array operations scene tests need, for NumPy and torch.

Scene tests hand the runtime NumPy arrays or torch tensors (torch is optional: nothing here
imports it; a torch tensor is recognised by its type's module). Comparisons are done in float64
NumPy, so bfloat16 and float16 outputs are compared by value whichever library made them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Mismatch",
    "clone",
    "compare",
    "copy_into",
    "describe",
    "is_torch",
    "numpy_view",
    "to_float64",
]


def is_torch(value: Any) -> bool:
    """Whether ``value`` is a torch tensor (without importing torch)."""
    return type(value).__module__.split(".", 1)[0] == "torch" and hasattr(value, "data_ptr")


def clone(value: Any) -> Any:
    """A copy with the same type, dtype and shape (a contiguous one for arrays)."""
    if is_torch(value):
        return value.clone()
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


def copy_into(dst: Any, src: Any) -> None:
    """Writes ``src``'s values into ``dst`` in place."""
    if is_torch(dst):
        dst.copy_(src)
    else:
        np.copyto(dst, np.asarray(src))


def to_float64(value: Any) -> np.ndarray:
    """``value``'s elements as a float64 NumPy array (a copy; bool and integers included)."""
    if is_torch(value):
        t = value.detach().cpu()
        if t.is_complex():
            return t.numpy().astype(np.complex128)
        return t.double().numpy()
    a = np.asarray(value)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64)


def describe(value: Any) -> str:
    """``"float32[2, 3] (torch)"``: what a tensor is, for messages."""
    if is_torch(value):
        return f"{str(value.dtype).replace('torch.', '')}{list(value.shape)} (torch)"
    if isinstance(value, np.ndarray):
        return f"{value.dtype.name}{list(value.shape)} (numpy)"
    return type(value).__name__


@dataclass(frozen=True)
class Mismatch:
    """How far ``actual`` is from ``expected``: the largest absolute difference, how many
    elements are outside ``atol + rtol * |expected|`` (NaN counts as outside), and the first of
    those (flat index, actual value, expected value)."""

    max_abs: float
    bad: int
    size: int
    first: tuple[int, float, float] | None

    @property
    def ok(self) -> bool:
        return self.bad == 0


def compare(actual: Any, expected: Any, rtol: float, atol: float) -> Mismatch:
    """``allclose`` in float64 with the counts behind it (shapes broadcast as in allclose)."""
    a, e = to_float64(actual), to_float64(expected)
    try:
        a, e = np.broadcast_arrays(a, e)
    except ValueError:
        return Mismatch(float("inf"), max(a.size, e.size), max(a.size, e.size), None)
    if a.size == 0:
        return Mismatch(0.0, 0, 0, None)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
        outside = ~(diff <= atol + rtol * np.abs(e))  # NaN compares False: outside
    finite = diff[np.isfinite(diff)]
    if finite.size == diff.size:
        max_abs = float(finite.max())
    else:
        max_abs = float("inf") if not np.isnan(diff).any() else float("nan")
    bad = int(np.count_nonzero(outside))
    first = None
    if bad:
        i = int(np.flatnonzero(outside.reshape(-1))[0])
        first = (i, float(a.reshape(-1)[i].real), float(e.reshape(-1)[i].real))
    return Mismatch(max_abs, bad, int(a.size), first)


def numpy_view(value: Any) -> np.ndarray:
    """A NumPy array over ``value``'s memory (no copy): a torch tensor's bytes as its own
    dtype, or bfloat16 as int16; a NumPy array as it is."""
    if is_torch(value):
        t = value.detach()
        if str(t.dtype) == "torch.bfloat16":
            import torch

            return t.view(torch.int16).numpy()
        return t.numpy()
    return np.asarray(value)
