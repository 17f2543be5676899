"""python/pto_runtime/comm.py — communication domains of an L3 worker (docs/guide/comm_domains.md).

``Orchestrator.allocate_domain`` gives each chip of a subset a window of the same size that every
chip of the subset can read and write, named buffers carved from it, and a ``CommContext`` its
kernels reach every window through (PTO-ISA's TPUT, TGET, TNOTIFY, TWAIT, ...)::

    with orch.allocate_domain("tp", workers=[0, 1], window_size=4096,
                              buffers=[CommBufferSpec("scratch", "float32", 1024, 4096)]) as d:
        for chip in d.workers:
            ctx = d[chip]
            args = ChipStorageTaskArgs()
            args.add_tensor(ctx.buffers["scratch"].tensor(), "inout")  # the window, in place
            args.add_scalar(ctx.domain_size)
            args.add_scalar(ctx.device_ctx)
            orch.submit_chip(callable_, args, chip=chip)

The names follow the reference implementation's (``CommBufferSpec``, ``ChipDomainContext`` and its
fields). The windows are zeroed before any task sees them and freed once the run has finished;
leaving the ``with`` block (``release()``) only stops new tasks from naming the domain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._native import DType
from .errors import ErrorCode, InvalidArgumentError, error_from_code

__all__ = [
    "ChipDomainContext",
    "CommBuffer",
    "CommBufferSpec",
    "CommDomain",
    "DeviceTensor",
    "NotAMemberError",
]


class NotAMemberError(InvalidArgumentError, KeyError):
    """``domain[chip]`` for a chip that is not one of the domain's workers: an
    InvalidArgumentError, and a KeyError as any mapping's missing key is."""

    def __str__(self) -> str:
        return Exception.__str__(self)


def _invalid(message: str) -> Exception:
    return error_from_code(ErrorCode.INVALID_ARGUMENT, message)


def _dtype(value: Any, where: str) -> tuple[np.dtype, DType]:
    from .task_args import _dtype_of  # noqa: PLC0415 (task_args imports this module)

    if isinstance(value, DType):
        for known, known_code in _DTYPE_CODES().items():
            if known_code == value:
                return known, known_code
    name = getattr(value, "name", value)
    if isinstance(name, str) and name.lower() in ("opaque", "byte", "bytes"):
        return np.dtype(np.uint8), DType.UINT8
    np_dtype: np.dtype | None
    try:
        np_dtype = np.dtype(str(name).lower() if isinstance(name, str) else value)
    except TypeError:
        np_dtype = None
    code = _dtype_of(np_dtype) if np_dtype is not None else None
    if np_dtype is None or code is None:
        raise _invalid(
            f"{where}: dtype {value!r} is not supported; give e.g. 'float32', 'int32' or 'uint8'"
        )
    return np_dtype, code


def _DTYPE_CODES() -> dict[np.dtype, DType]:
    from .task_args import _DTYPES  # noqa: PLC0415

    return _DTYPES


@dataclass(frozen=True)
class CommBufferSpec:
    """A buffer carved from every rank's window, in declaration order: ``nbytes`` bytes holding
    ``count`` elements of ``dtype`` (a NumPy dtype or its name; ``nbytes`` defaults to exactly
    that)."""

    name: str
    dtype: Any = "float32"
    count: int = 0
    nbytes: int = -1

    def _native(self, index: int) -> tuple[str, DType, int, int]:
        where = f"allocate_domain: buffers[{index}] ({self.name!r})"
        np_dtype, code = _dtype(self.dtype, where)
        for field in ("count", "nbytes"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise _invalid(f"{where}: {field} = {v!r} is not an int")
        nbytes = int(self.count) * np_dtype.itemsize if self.nbytes == -1 else int(self.nbytes)
        if self.count < 0 or nbytes < 0:
            raise _invalid(f"{where}: count = {self.count} and nbytes = {nbytes} must be >= 0")
        return str(self.name), code, int(self.count), nbytes


class DeviceTensor:
    """A tensor already in a chip's device memory (a window's buffer): ``add_tensor`` of one makes
    the run use it in place, nothing copied in or out."""

    def __init__(
        self, address: int, shape: Sequence[int], dtype: np.dtype, code: DType, nbytes: int
    ) -> None:
        self.address = address
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.code = code
        self.nbytes = nbytes

    def __repr__(self) -> str:
        return f"DeviceTensor({self.dtype.name}{list(self.shape)} at {self.address:#x})"


class CommBuffer:
    """One chip's copy of a CommBufferSpec, at the same ``offset`` in every rank's window."""

    def __init__(
        self, name: str, dtype: DType, count: int, nbytes: int, offset: int, address: int
    ) -> None:
        self.name = name
        self.count = count
        self.nbytes = nbytes
        self.offset = offset
        self.address = address
        self.dtype, self._code = _dtype(dtype, f"buffer {name!r}")

    @property
    def base(self) -> int:
        """The buffer's address in this chip's window (the reference's ``Buffer.base``)."""
        return self.address

    def tensor(self, shape: int | Sequence[int] | None = None, dtype: Any = None) -> DeviceTensor:
        """This buffer as a chip task's tensor of ``shape`` (default ``(count,)``) and ``dtype``
        (default the spec's); it must fit in ``nbytes``."""
        np_dtype, code = (
            (self.dtype, self._code) if dtype is None else _dtype(dtype, f"buffer {self.name!r}")
        )
        dims = (
            (self.count,)
            if shape is None
            else (shape,)
            if isinstance(shape, (int, np.integer))
            else shape
        )
        dims = tuple(int(d) for d in dims)
        if any(d < 0 for d in dims):
            raise _invalid(f"buffer {self.name!r}.tensor: shape {dims} has a negative extent")
        nbytes = int(np.prod(dims, dtype=np.int64)) * np_dtype.itemsize
        if nbytes > self.nbytes:
            raise _invalid(
                f"buffer {self.name!r}.tensor: shape {dims} of {np_dtype.name} needs {nbytes} "
                f"bytes; the buffer has {self.nbytes}"
            )
        return DeviceTensor(self.address, dims, np_dtype, code, nbytes)

    def __repr__(self) -> str:
        return (
            f"CommBuffer({self.name!r}, {self.dtype.name}[{self.count}], {self.nbytes} bytes "
            f"at +{self.offset})"
        )


class ChipDomainContext:
    """What one chip of a domain gets: ``domain_rank`` (its position in ``workers``),
    ``domain_size``, ``device_ctx`` (its CommContext's address: a kernel scalar),
    ``local_window_base``, ``actual_window_size`` and ``buffers`` by name."""

    def __init__(self, native: tuple[Any, ...]) -> None:
        (self.name, self.chip, self.domain_rank, self.domain_size, self.device_ctx,
         self.local_window_base, self.actual_window_size, buffers) = native  # fmt: skip
        self.buffers: Mapping[str, CommBuffer] = {b[0]: CommBuffer(*b) for b in buffers}

    def __repr__(self) -> str:
        return (
            f"ChipDomainContext({self.name!r}, chip {self.chip}, rank {self.domain_rank} of "
            f"{self.domain_size}, buffers {list(self.buffers)})"
        )


class _Releasable:
    """What every domain handle does with its native half: ``release()`` (no new task may name
    the domain; its windows stay until the run has finished), ``released``, and ``with``."""

    _native: Any

    def release(self) -> None:
        self._native.release()

    @property
    def released(self) -> bool:
        return bool(self._native.released)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class CommDomain(_Releasable):
    """A domain from ``Orchestrator.allocate_domain``; ``domain[chip]`` is that chip's
    ChipDomainContext (NotAMemberError, also a KeyError, for a chip outside the domain). A context
    manager: leaving the block releases it (no new task may name it; the windows stay until the
    run has finished)."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self._contexts: dict[int, ChipDomainContext] = {}

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def workers(self) -> list[int]:
        return list(self._native.workers)

    def __getitem__(self, chip: int) -> ChipDomainContext:
        if self._native.released:
            raise _invalid(
                f"domain {self.name!r} was released: no new task may use it (chip {chip})"
            )
        if isinstance(chip, bool) or not isinstance(chip, (int, np.integer)):
            raise _invalid(f"domain {self.name!r}[{chip!r}]: a chip index is an int")
        if int(chip) not in self._native.workers:
            raise NotAMemberError(
                f"domain {self.name!r}: chip {chip} is not one of its workers {self.workers}"
            )
        found = self._contexts.get(int(chip))
        if found is None:
            found = self._contexts[int(chip)] = ChipDomainContext(self._native.context(int(chip)))
        return found

    def __enter__(self) -> CommDomain:
        return self

    def __repr__(self) -> str:
        state = ", released" if self.released else ""
        return f"CommDomain({self.name!r}, workers={self.workers}{state})"
