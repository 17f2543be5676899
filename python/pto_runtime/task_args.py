"""python/pto_runtime/task_args.py — ChipStorageTaskArgs: checked arrays as tensors, typed scalars.

The native ``ChipStorageTaskArgs`` takes raw host addresses. This subclass takes NumPy arrays
and, without a copy, any CPU array exporting DLPack or the array interface (a ``torch.Tensor``,
bfloat16 included; see ``_array_interop``), rejects what the device cannot use as is (a
non-CPU array, a non-C-contiguous layout, an unsupported dtype, a read-only array the run would
write, too many dimensions) with ``InvalidArgumentError`` (code ``BAD_TENSOR``), and keeps every
array alive until ``clear()`` or the object's end, so the addresses handed to C++ stay valid
for the run. A strided OUTPUT/INOUT view is refused
without suggesting a copy (the run would write into the copy); L3 SUB tasks, which only need
the arrays for their dependencies, take any view (``submit_sub(inputs=, outputs=, inouts=)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

import numpy as np

from . import _native
from ._array_interop import ForeignArray, import_array
from ._native import Direction, DType
from .comm import DeviceTensor
from .errors import ErrorCode, error_from_code

__all__ = ["ChipStorageTaskArgs", "DirectionLike", "SUPPORTED_DTYPES"]

MAX_DIMS = 8  # PTO_MAX_DIMS in include/pto/c_api.h

_DTYPES: dict[np.dtype, DType] = {
    np.dtype(np.float32): DType.FLOAT32,
    np.dtype(np.float16): DType.FLOAT16,
    np.dtype(np.float64): DType.FLOAT64,
    np.dtype(np.int8): DType.INT8,
    np.dtype(np.int16): DType.INT16,
    np.dtype(np.int32): DType.INT32,
    np.dtype(np.int64): DType.INT64,
    np.dtype(np.uint8): DType.UINT8,
    np.dtype(np.uint16): DType.UINT16,
    np.dtype(np.uint32): DType.UINT32,
    np.dtype(np.uint64): DType.UINT64,
    np.dtype(np.bool_): DType.BOOL,
}

#: Names of the accepted dtypes, in native byte order; bfloat16 too when ml_dtypes provides it.
SUPPORTED_DTYPES = tuple(d.name for d in _DTYPES) + ("bfloat16 (ml_dtypes)",)

DirectionLike = Union[Direction, str]

_DIRECTION_NAMES: dict[str, Direction] = {
    "in": Direction.INPUT,
    "input": Direction.INPUT,
    "out": Direction.OUTPUT,
    "output": Direction.OUTPUT,
    "inout": Direction.INOUT,
}

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _dtype_of(dtype: np.dtype) -> DType | None:
    found = _DTYPES.get(dtype)
    if found is None and dtype.name == "bfloat16" and dtype.isnative:
        # ml_dtypes.bfloat16; recognised by name so that ml_dtypes stays optional.
        found = DType.BFLOAT16
    return found


def _direction_of(direction: DirectionLike) -> Direction:
    if isinstance(direction, Direction):
        return direction
    if isinstance(direction, str) and direction.lower() in _DIRECTION_NAMES:
        return _DIRECTION_NAMES[direction.lower()]
    raise error_from_code(
        ErrorCode.INVALID_ARGUMENT,
        f"direction {direction!r} is not a Direction or one of 'in', 'out', 'inout'",
    )


class ChipStorageTaskArgs(_native.ChipStorageTaskArgs):
    """The arguments of one run, in order: arrays (NumPy, torch, ...: tensors) and scalars.

    >>> args = ChipStorageTaskArgs()
    >>> args.add_tensor(a)                      # Direction.INPUT
    >>> args.add_tensor(f, Direction.OUTPUT)    # or "out"
    >>> args.add_scalar(16384)                  # int -> int64; float -> float32

    Do not change the arguments while a run that uses them is in progress.
    """

    def __init__(self) -> None:
        super().__init__()
        self._arrays: list[Any] = []  # each tensor as given (a NumPy array, a torch.Tensor, ...)
        # Each tensor as a NumPy view of the same memory (the array itself for NumPy); a view of
        # another library's array keeps it, and its DLPack capsule, alive: the host memory
        # handed to C++ stays valid until clear().
        self._views: list[np.ndarray] = []
        # Every argument in order: ("tensor", view, direction), ("i64", value) or ("f32", value);
        # None once a raw add_host_tensor made the list incomplete. What an isolated worker
        # copies into the chip process's heap and back into the view (pto_runtime.isolated).
        self._entries: list[tuple[Any, ...]] | None = []

    def add_tensor(self, array: Any, direction: DirectionLike = Direction.INPUT) -> None:
        """Adds ``array``: INPUT is copied to the device, OUTPUT back into ``array``, INOUT both.
        A ``DeviceTensor`` (``CommBuffer.tensor()``, a communication window) is used in place.

        ``array`` is a NumPy array or any CPU array exporting DLPack (``__dlpack__``,
        ``__dlpack_device__``: a ``torch.Tensor``) or ``__array_interface__``. No host copy is
        made: the run reads and writes that memory itself."""
        index = len(self)
        where = f"argument {index}"
        d = _direction_of(direction)
        if isinstance(array, DeviceTensor):  # a communication window's buffer, used in place
            super().add_device_tensor(array.address, array.nbytes, array.code, list(array.shape), d)
            self._arrays.append(array)
            self._entries = None  # only a chip of its domain can be given it
            return
        if isinstance(array, np.ndarray):
            view, dtype = array, _checked_numpy(array, where, d)
        else:
            foreign = import_array(array, where, "pass np.asarray(x, dtype=...)")
            view, dtype = foreign.view, _checked_foreign(foreign, where, d)
        address = view.__array_interface__["data"][0]
        super().add_host_tensor(address, view.nbytes, dtype, list(view.shape), d)
        self._arrays.append(array)
        self._views.append(view)
        if self._entries is not None:
            self._entries.append(("tensor", view, d))

    def add_host_tensor(
        self, host_ptr: int, nbytes: int, dtype: DType, shape: Sequence[int], direction: Direction
    ) -> None:
        """Adds a tensor by raw host address (the caller keeps the memory alive)."""
        super().add_host_tensor(host_ptr, nbytes, dtype, list(shape), direction)
        self._entries = None

    def _add_footprint(self, array: Any, direction: DirectionLike) -> None:
        """Adds ``array`` for dependency tracking only (an L3 SUB task, whose body uses the
        array itself): any layout or dtype, as the bytes from its first to its last element
        (what the device orchestrator's TensorMap compares a strided view by, at worst)."""
        d = _direction_of(direction)
        where = f"argument {len(self)}"
        if isinstance(array, np.ndarray):
            view, what = array, "array"
        else:  # a torch.Tensor, ...: any CPU array add_tensor takes, in any layout or dtype
            foreign = import_array(array, where, "pass the array the task reads or writes")
            view, what = foreign.view, foreign.what
        if d != Direction.INPUT and not view.flags.writeable:
            raise _bad_tensor(
                f"{where}: {what} is read-only but its direction is {d.name}; pass the writeable "
                "array the task writes"
            )
        address = view.__array_interface__["data"][0]
        lo = hi = address
        if view.size:
            for n, stride in zip(view.shape, view.strides):
                reach = (n - 1) * stride
                lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
            hi += view.itemsize
        super().add_host_tensor(lo, hi - lo, DType.UINT8, [hi - lo], d)
        self._arrays.append(array)
        self._views.append(view)
        self._entries = None  # a footprint is not an argument a chip could be given

    def add_scalar(self, value: Any) -> None:
        """Adds a scalar: an int (or NumPy integer, or bool) as int64, a float as float32."""
        if isinstance(value, (int, np.integer, np.bool_)):
            self.add_scalar_i64(int(value))
        elif isinstance(value, (float, np.floating)):
            self.add_scalar_f32(float(value))
        else:
            raise error_from_code(
                ErrorCode.INVALID_ARGUMENT,
                f"argument {len(self)}: scalar {value!r} of type {type(value).__name__} is "
                "neither an int nor a float; use add_scalar_i64 or add_scalar_f32",
            )

    def add_scalar_i64(self, value: int) -> None:
        """Adds a 64-bit signed integer scalar."""
        v = int(value)
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise error_from_code(
                ErrorCode.INVALID_ARGUMENT,
                f"argument {len(self)}: scalar {v} does not fit in int64",
            )
        super().add_scalar_i64(v)
        if self._entries is not None:
            self._entries.append(("i64", v))

    def add_scalar_f32(self, value: float) -> None:
        """Adds a float32 scalar (rounded from ``value``)."""
        super().add_scalar_f32(float(value))
        if self._entries is not None:
            self._entries.append(("f32", float(value)))

    def clear(self) -> None:
        """Removes every argument and releases the arrays."""
        super().clear()
        self._arrays.clear()
        self._views.clear()
        self._entries = []

    @property
    def arrays(self) -> list[Any]:
        """The arrays added, in order (the objects themselves, not copies: a torch.Tensor
        added is returned as that tensor)."""
        return list(self._arrays)


def _checked_numpy(array: np.ndarray, where: str, d: Direction) -> DType:
    """The DType of a NumPy array the run can use as is, else BAD_TENSOR saying why."""
    if array.ndim > MAX_DIMS:
        raise _bad_tensor(
            f"{where}: array has {array.ndim} dimensions (shape {array.shape}); "
            f"at most {MAX_DIMS} are supported; reshape it"
        )
    dtype = _dtype_of(array.dtype)
    if dtype is None:
        order = "" if array.dtype.isnative else " in non-native byte order"
        raise _bad_tensor(
            f"{where}: dtype {array.dtype.name}{order} ({array.dtype.str}) is not supported; "
            f"use one of {', '.join(SUPPORTED_DTYPES)}, in native byte order"
        )
    if not array.flags.c_contiguous:
        layout = f"shape {array.shape}, strides {array.strides}"
        if d == Direction.INPUT:
            raise _bad_tensor(
                f"{where}: an INPUT array must be C-contiguous ({layout}): the run copies "
                "nbytes contiguous bytes from its address; pass a contiguous copy, "
                "np.ascontiguousarray(x), made once x holds the values to read"
            )
        # Never suggest a copy here: the run would write its results into the copy.
        raise _bad_tensor(
            f"{where}: an {d.name} array must be C-contiguous ({layout}): the run writes "
            "its results as nbytes contiguous bytes at the array's address, so it cannot "
            "write into a strided view; pass a C-contiguous array (e.g. np.empty(shape)) "
            "and assign it into the view after the run"
        )
    if d != Direction.INPUT and not array.flags.writeable:
        raise _bad_tensor(
            f"{where}: array is read-only but its direction is {d.name}, so the run would "
            "write to it; pass a writeable array (e.g. x.copy())"
        )
    return dtype


def _checked_foreign(foreign: ForeignArray, where: str, d: Direction) -> DType:
    """As ``_checked_numpy``, for another library's array, named as that library's (its type,
    device and protocol; strides in bytes), with advice in torch's terms as well as NumPy's."""
    view, what = foreign.view, foreign.what
    if view.ndim > MAX_DIMS:
        raise _bad_tensor(
            f"{where}: {what} has {view.ndim} dimensions (shape {view.shape}); "
            f"at most {MAX_DIMS} are supported; reshape it"
        )
    dtype = _dtype_of(view.dtype)
    if dtype is None:
        order = "" if view.dtype.isnative else " in non-native byte order"
        raise _bad_tensor(
            f"{where}: {what} has dtype {foreign.dtype_name}{order}, which is not supported; "
            f"use one of {', '.join(_FOREIGN_DTYPES)}, in native byte order"
        )
    if not view.flags.c_contiguous:
        layout = f"shape {view.shape}, strides {view.strides} in bytes"
        if d == Direction.INPUT:
            raise _bad_tensor(
                f"{where}: {what} is not C-contiguous ({layout}); an INPUT tensor must be: the "
                "run copies nbytes contiguous bytes from its address; pass a contiguous copy "
                "(torch: x.contiguous()) made once x holds the values to read"
            )
        # Never suggest a copy here: the run would write its results into the copy.
        raise _bad_tensor(
            f"{where}: {what} is not C-contiguous ({layout}); an {d.name} tensor must be: the "
            "run writes its results as nbytes contiguous bytes at its address, so it cannot "
            "write into a strided view; pass a C-contiguous tensor (e.g. torch.empty(shape)) "
            "and copy it into the view after the run"
        )
    if d != Direction.INPUT and not view.flags.writeable:
        raise _bad_tensor(
            f"{where}: {what} is read-only but its direction is {d.name}, so the run would "
            "write to it; pass a writeable array (torch: x.clone())"
        )
    if d != Direction.INPUT and foreign.copied:
        raise _bad_tensor(
            f"{where}: {what} exported a copy of itself (DLPack IS_COPIED) but its direction "
            f"is {d.name}, so the results would not reach it; pass an array whose memory it "
            "can export as is"
        )
    return dtype


#: What other libraries' arrays may hold: SUPPORTED_DTYPES, bfloat16 by its own name.
_FOREIGN_DTYPES = tuple(d.name for d in _DTYPES) + ("bfloat16",)


def _bad_tensor(message: str) -> Exception:
    return error_from_code(ErrorCode.BAD_TENSOR, message)
