"""python/pto_runtime/scene/buffers.py — the reference's buffer handles, on this runtime.

The reference's example programs name memory through handles:

- ``worker.create_buffer(nbytes)``: host memory every chip reaches. Fill it through
  ``handle.shm.buf`` (a writable memoryview), name it in a task with
  ``handle.tensor(shapes, dtype)``. Here it is a block of the L3 worker's host heap, which has
  the same address in the worker and in every chip process, so it works in both chip modes
  with nothing copied per run.
- ``orch.alloc_child_tensor(worker_id, shapes, dtype)``: memory of one chip that outlives its
  tasks, loaded with ``orch.copy_to(handle, host_buffer)``. Its ``tensor()`` is a
  :class:`pto_runtime.comm.DeviceTensor`, used in place by the run (no staging in or out). On
  the sim a chip's memory is host memory, so this too is a host-heap block.
- ``worker.make_tensor_arg(tensor, shapes, dtype)``: an existing host tensor as a task argument
  (thread mode: any tensor; process mode: the chips reach only the host heap).

A handle lives until ``close()``/``worker.free(handle)`` or the worker closes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._native import DType
from ..comm import DeviceTensor
from ..comm import _dtype as comm_dtype
from ..errors import ErrorCode, error_from_code
from . import arrays, record

__all__ = ["Buffer", "BufferOwner", "HeapMemory", "host_bytes", "tensor_view"]


def _invalid(message: str) -> Exception:
    return error_from_code(ErrorCode.INVALID_ARGUMENT, message)


# The reference's DataType values (a program may give ``dtype`` as that int).
_REFERENCE_DTYPES = (
    "float32", "float16", "int32", "int16", "int8", "uint8",
    "bfloat16", "int64", "uint64", "uint16", "uint32", "bool",
)  # fmt: skip


def _dtype(value: Any, where: str) -> tuple[np.dtype, DType]:
    """comm's dtype check, also taking the reference's DataType int values."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, DType)):
        if not 0 <= int(value) < len(_REFERENCE_DTYPES):
            raise _invalid(
                f"{where}: dtype {value!r} is not a DataType value "
                f"(0..{len(_REFERENCE_DTYPES) - 1})"
            )
        value = _REFERENCE_DTYPES[int(value)]
    return comm_dtype(value, where)


def _dims(shapes: Any, where: str) -> tuple[int, ...]:
    dims = (shapes,) if isinstance(shapes, (int, np.integer)) else tuple(shapes)
    if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0 for d in dims):
        raise _invalid(f"{where}: shapes = {shapes!r} must be non-negative ints")
    return tuple(int(d) for d in dims)


def tensor_view(
    raw: np.ndarray,
    shapes: Any,
    dtype: Any,
    where: str,
    strides: Sequence[int] | None = None,
    byte_offset: int = 0,
) -> np.ndarray:
    """A typed view of ``shapes`` (element ``strides``, row-major when None) starting
    ``byte_offset`` bytes into the byte array ``raw``; InvalidArgumentError when it does not
    fit."""
    np_dtype, _ = _dtype(dtype, where)
    dims = _dims(shapes, where)
    if strides is None:
        steps = [np_dtype.itemsize] * len(dims)
        for i in range(len(dims) - 2, -1, -1):
            steps[i] = steps[i + 1] * dims[i + 1]
    else:
        if len(strides) != len(dims) or any(int(x) < 0 for x in strides):
            raise _invalid(
                f"{where}: strides {tuple(strides)} must be one non-negative int per dim of {dims}"
            )
        steps = [int(s) * np_dtype.itemsize for s in strides]
    # The last byte the view touches, + 1 (an empty view touches none).
    span = 0 if 0 in dims else sum((d - 1) * st for d, st in zip(dims, steps)) + np_dtype.itemsize
    if byte_offset < 0 or byte_offset + span > raw.nbytes:
        raise _invalid(
            f"{where}: {np_dtype.name}{list(dims)} at byte {byte_offset} needs "
            f"{byte_offset + span} bytes; the memory has {raw.nbytes}"
        )
    return np.ndarray(dims, dtype=np_dtype, buffer=raw.data, offset=byte_offset, strides=steps)


class HeapMemory:
    """``handle.shm``: the buffer's bytes (``buf``, a writable memoryview) and ``size``."""

    def __init__(self, raw: np.ndarray) -> None:
        self.buf: memoryview | None = raw.data
        self.size = raw.nbytes

    def close(self) -> None:
        if self.buf is not None:
            try:
                self.buf.release()
            except BufferError:  # a view over it (torch.frombuffer) still lives; it keeps it
                pass
            self.buf = None


class Buffer:
    """A host buffer (``create_buffer``) or one chip's memory (``alloc_child_tensor``):
    ``nbytes``, ``base`` (its address), ``tensor(shapes, dtype)``; host buffers also ``shm``."""

    def __init__(self, raw: np.ndarray, *, owner_worker_id: int | None = None) -> None:
        self._raw: np.ndarray | None = raw
        self.nbytes = int(raw.nbytes)
        self.base = int(raw.ctypes.data)
        self.owner_worker_id = owner_worker_id  # None: host memory
        self.shm = HeapMemory(raw) if owner_worker_id is None else None

    @property
    def is_device(self) -> bool:
        return self.owner_worker_id is not None

    def raw(self, where: str) -> np.ndarray:
        if self._raw is None:
            raise _invalid(f"{where}: the buffer at {self.base:#x} was closed")
        return self._raw

    def tensor(
        self,
        shapes: Any = None,
        dtype: Any = None,
        *,
        strides: Sequence[int] | None = None,
        byte_offset: int = 0,
    ) -> Any:
        """The buffer as a task argument: a NumPy view (host memory) or a DeviceTensor (a
        chip's), of ``shapes`` and ``dtype`` (default: all of it as bytes)."""
        where = f"Buffer({self.base:#x}, {self.nbytes} bytes).tensor"
        raw = self.raw(where)
        if dtype is None:
            dtype = "uint8"
        if shapes is None:
            shapes = (self.nbytes // _dtype(dtype, where)[0].itemsize,)
        view = tensor_view(raw, shapes, dtype, where, strides, byte_offset)
        if not self.is_device:
            return view
        np_dtype, code = _dtype(dtype, where)
        if strides is not None and not view.flags.c_contiguous:
            raise _invalid(f"{where}: a chip's memory is named by contiguous tensors only")
        return DeviceTensor(self.base + byte_offset, view.shape, np_dtype, code, view.nbytes)

    def __getattr__(self, name: str) -> Any:
        raise record.reference_internal(
            name, f"Buffer.{name} (the reference's buffer identity and backing internals)"
        )

    def close(self) -> None:
        """Drops this handle's hold on the memory (freed once no task and no view uses it)."""
        if self.shm is not None:
            self.shm.close()
        self._raw = None

    def __repr__(self) -> str:
        where = "host" if self.owner_worker_id is None else f"chip {self.owner_worker_id}"
        return f"Buffer({where}, {self.nbytes} bytes at {self.base:#x})"


def host_bytes(src: Any, where: str) -> np.ndarray:
    """The bytes of a host Buffer, tensor or buffer-protocol object (a flat uint8 view)."""
    if isinstance(src, Buffer):
        if src.is_device:
            raise _invalid(f"{where}: the source is chip {src.owner_worker_id}'s memory, not host")
        return src.raw(where)
    try:
        view = arrays.numpy_view(src)
    except Exception:  # noqa: BLE001 - anything with the buffer protocol
        view = np.frombuffer(src, dtype=np.uint8)
    return np.ascontiguousarray(view).reshape(-1).view(np.uint8)


class BufferOwner:
    """The reference worker's memory calls, for a scene worker that provides ``_alloc_bytes``
    (zeroed bytes every chip reaches) and ``_chip_count``. Handles live until freed, closed or
    the worker closes (:meth:`_release_buffers`)."""

    level = 2
    _buffers: list[Buffer]

    def _alloc_bytes(self, nbytes: int) -> np.ndarray:
        raise NotImplementedError

    def _chip_count(self) -> int:
        raise NotImplementedError

    def _new(self, nbytes: Any, where: str, owner: int | None) -> Buffer:
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes <= 0:
            raise _invalid(f"{where}: nbytes = {nbytes!r} must be an int > 0")
        buf = Buffer(self._alloc_bytes(int(nbytes)), owner_worker_id=owner)
        self.__dict__.setdefault("_buffers", []).append(buf)
        return buf

    def create_buffer(self, nbytes: int) -> Buffer:
        """Host memory every chip of the worker reaches (``handle.shm.buf``), zeroed."""
        return self._new(nbytes, "create_buffer", None)

    def _chip_buffer(self, worker_id: Any, nbytes: int, where: str) -> Buffer:
        count = self._chip_count()
        if isinstance(worker_id, bool) or not isinstance(worker_id, (int, np.integer)):
            raise _invalid(f"{where}: worker_id = {worker_id!r} is not a chip index")
        if not 0 <= int(worker_id) < count:
            raise IndexError(f"{where}: worker_id {worker_id} out of range (have {count} chips)")
        return self._new(nbytes, where, int(worker_id))

    def malloc(self, size: int) -> Buffer:
        """L2: ``size`` bytes of the chip's memory (name it with ``handle.tensor``)."""
        if self.level != 2:
            raise TypeError(
                "worker.malloc is L2-only; at L3 use alloc_child_tensor(worker_id, ...)"
            )
        return self._chip_buffer(0, size, "malloc")

    def alloc_child_tensor(self, worker_id: int, shapes: Any, dtype: Any) -> Buffer:
        """Memory of chip ``worker_id`` sized for ``shapes`` x ``dtype``; outlives the tasks."""
        np_dtype, _ = _dtype(dtype, "alloc_child_tensor")
        dims = _dims(shapes, "alloc_child_tensor")
        nbytes = int(np.prod(dims, dtype=np.int64)) * np_dtype.itemsize
        return self._chip_buffer(worker_id, nbytes, "alloc_child_tensor")

    def _device_side(self, handle: Any, nbytes: int, where: str) -> np.ndarray:
        if not isinstance(handle, Buffer) or not handle.is_device:
            raise _invalid(
                f"{where}: expected a chip's memory (malloc/alloc_child_tensor), got {handle!r}"
            )
        raw = handle.raw(where)
        if nbytes > raw.nbytes:
            raise _invalid(f"{where}: {nbytes} bytes exceed the {raw.nbytes}-byte chip memory")
        return raw

    def copy_to(self, dst: Buffer, src: Any) -> None:
        """Host ``src`` (a create_buffer handle, a tensor or bytes) into chip memory ``dst``,
        now (a task submitted before that reads ``dst`` may see either contents)."""
        data = host_bytes(src, "copy_to")
        self._device_side(dst, data.nbytes, "copy_to")[: data.nbytes] = data

    def copy_from(self, dst: Any, src: Buffer) -> None:
        """Chip memory ``src`` into host ``dst`` (a create_buffer handle or a writable tensor)."""
        out = dst.raw("copy_from") if isinstance(dst, Buffer) else arrays.numpy_view(dst)
        flat = out.reshape(-1).view(np.uint8)
        flat[:] = self._device_side(src, flat.nbytes, "copy_from")[: flat.nbytes]

    def free(self, handle: Buffer) -> None:
        if not isinstance(handle, Buffer):
            raise _invalid(f"free: {handle!r} is not a buffer handle of this worker")
        handle.close()
        owned = self.__dict__.get("_buffers", [])
        if handle in owned:
            owned.remove(handle)

    def make_tensor_arg(
        self,
        tensor: Any,
        shapes: Any = None,
        dtype: Any = None,
        *,
        strides: Sequence[int] | None = None,
    ) -> Any:
        """A host tensor as a task argument of ``shapes`` and ``dtype`` over the same memory."""
        view = arrays.numpy_view(tensor)
        if shapes is None and dtype is None and strides is None:
            return tensor
        raw = view.reshape(-1).view(np.uint8) if view.flags.c_contiguous else None
        if raw is None:
            raise _invalid("make_tensor_arg: the tensor is not contiguous")
        return tensor_view(
            raw,
            view.shape if shapes is None else shapes,
            view.dtype if dtype is None else dtype,
            "make_tensor_arg",
            strides,
        )

    def _release_buffers(self) -> None:
        for buf in self.__dict__.pop("_buffers", []):
            buf.close()
