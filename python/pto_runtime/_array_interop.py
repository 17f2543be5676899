"""python/pto_runtime/_array_interop.py — other libraries' CPU arrays as zero-copy NumPy views.

``ChipStorageTaskArgs.add_tensor`` checks and addresses every tensor through a NumPy view; this
module makes that view for an array that is not a ``numpy.ndarray`` — a ``torch.Tensor``, or
anything exporting ``__dlpack__``/``__dlpack_device__`` or ``__array_interface__`` — over the
producer's own memory, so a run reads and writes the caller's array directly.

DLPack is read here with ctypes rather than through ``numpy.from_dlpack``, which refuses
bfloat16 (a DLPack ``kDLBfloat`` tensor becomes an ``ml_dtypes.bfloat16`` view). The capsule is
never consumed (not renamed ``used_dltensor``): the view keeps it, and so the memory, valid
until the view itself goes; then the producer's capsule destructor calls the deleter, which the
protocol requires of every producer for a capsule still named ``dltensor``
(data-apis array-api, "Data interchange mechanisms", DLPack implementation notes). Nothing
here imports torch.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ErrorCode, error_from_code

# --- DLPack's C structs (dlpack.h, v1.x) -----------------------------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements; NULL: C-contiguous
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):  # the "dltensor" capsule (DLPack < 1.0)
    _fields_ = [
        ("dl_tensor", _DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):  # the "dltensor_versioned" capsule
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_FLAG_READ_ONLY = 1 << 0  # DLPACK_FLAG_BITMASK_READ_ONLY
_FLAG_IS_COPIED = 1 << 1  # DLPACK_FLAG_BITMASK_IS_COPIED
_DLPACK_MAJOR = 1
_KDL_CPU = 1

# DLDeviceType values, for messages.
_DEVICE_NAMES = {
    1: "cpu",
    2: "cuda",
    3: "cuda_host",
    4: "opencl",
    7: "vulkan",
    8: "metal",
    9: "vpi",
    10: "rocm",
    11: "rocm_host",
    12: "ext_dev",
    13: "cuda_managed",
    14: "oneapi",
    15: "webgpu",
    16: "hexagon",
    17: "maia",
    18: "trn",
}

# DLDataTypeCode values -> names; kDLBfloat (4) is viewed as ml_dtypes.bfloat16.
_KDL_BFLOAT = 4
_CODE_NAMES = {
    0: "int",
    1: "uint",
    2: "float",
    3: "opaque_handle",
    4: "bfloat",
    5: "complex",
    6: "bool",
    7: "float8_e3m4",
    8: "float8_e4m3",
    9: "float8_e4m3b11fnuz",
    10: "float8_e4m3fn",
    11: "float8_e4m3fnuz",
    12: "float8_e5m2",
    13: "float8_e5m2fnuz",
    14: "float8_e8m0fnu",
    15: "float6_e2m3fn",
    16: "float6_e3m2fn",
    17: "float4_e2m1fn",
}
_NUMPY_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}

# Own function objects (PYFUNCTYPE: called with the GIL held), so that the argtypes of
# ctypes.pythonapi's shared ones, which other libraries may set, are left alone.
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi)
)
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


class _Exported:
    """A view's base: ``__array_interface__`` for NumPy, and ``owner``, what keeps the memory
    valid for as long as the view lives — the DLPack capsule (whose manager owns the memory), or
    the producer itself for the array interface (a bare address).

    The base never holds a DLPack producer's Python object (its capsule's manager may): NumPy
    does not show the garbage collector an array's base, so a producer whose class is defined
    in the caller's module would close a cycle (args -> view -> producer -> class -> module
    globals -> args) the collector cannot see. The args keep the producer itself, in a list the
    collector sees. An array-interface producer has to be the base, as with ``np.asarray``."""

    def __init__(self, interface: dict[str, Any], owner: Any) -> None:
        self.__array_interface__ = interface
        self.owner = owner


@dataclass(frozen=True)
class ForeignArray:
    """A zero-copy NumPy ``view`` of a non-NumPy CPU array, and how to name it in messages."""

    view: np.ndarray  # its base keeps the memory valid (see _Exported)
    what: str  # e.g. "torch.Tensor on cpu (DLPack)"
    dtype_name: str  # the producer's dtype: "bfloat16", "float8_e4m3fn (DLPack code 10)", ...
    copied: bool  # the producer exported a copy (DLPack IS_COPIED): writes would not reach it


def type_name(value: Any) -> str:
    """``torch.Tensor``, ``numpy.ndarray``; a builtin by its bare name (``list``)."""
    t = type(value)
    module = t.__module__
    return t.__qualname__ if module == "builtins" else f"{module}.{t.__qualname__}"


def import_array(value: Any, where: str, hint: str) -> ForeignArray:
    """``value`` (DLPack first, else the array interface) as a view over its own memory; raises
    InvalidArgumentError (BAD_TENSOR) naming ``where`` for anything else, a non-CPU array, or an
    export the producer refused. Any dtype and layout: the caller checks what it can use."""
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return _from_dlpack(value, where)
    if hasattr(value, "__array_interface__"):
        return _from_array_interface(value, where)
    raise _bad_tensor(
        f"{where}: expected a numpy.ndarray or a CPU array exporting DLPack (__dlpack__ and "
        f"__dlpack_device__, e.g. a torch.Tensor) or the array interface "
        f"(__array_interface__), got {type_name(value)}; {hint}"
    )


def _from_array_interface(value: Any, where: str) -> ForeignArray:
    what = f"{type_name(value)} (array interface)"
    try:
        # Through a holder, so NumPy uses this interface (not a buffer or __array__ that might
        # copy) and the view's base keeps ``value`` alive.
        view = np.asarray(_Exported(dict(value.__array_interface__), value))
    except Exception as e:  # a malformed interface: NumPy's own words say what is wrong
        raise _bad_tensor(f"{where}: {what} has an unusable __array_interface__: {e}") from e
    return ForeignArray(view, what, view.dtype.name, copied=False)


def _device_name(device: tuple[int, int]) -> str:
    kind = _DEVICE_NAMES.get(device[0], f"device type {device[0]}")
    return kind if device[0] == _KDL_CPU else f"{kind}:{device[1]}"


def _from_dlpack(value: Any, where: str) -> ForeignArray:
    name = type_name(value)
    try:
        kind, index = value.__dlpack_device__()
        device = (int(kind), int(index))
    except Exception as e:
        raise _bad_tensor(f"{where}: {name}.__dlpack_device__() failed: {e}") from e
    what = f"{name} on {_device_name(device)} (DLPack)"
    if device[0] != _KDL_CPU:
        raise _bad_tensor(
            f"{where}: {what} is not in host memory; only CPU arrays can be passed, since the "
            "run reads and writes the array's own memory from the host; copy it to the CPU "
            "first (torch: x.cpu())"
        )
    capsule = _export(value, where, what)
    tensor, flags = _read_capsule(capsule, where, what)
    if tensor.device.device_type != _KDL_CPU:  # a producer whose two answers disagree
        raise _bad_tensor(
            f"{where}: {name} exported a tensor on {_device_name((tensor.device.device_type, 0))}"
            f" although __dlpack_device__ said cpu; only CPU arrays can be passed"
        )
    dt = tensor.dtype
    dtype, dtype_name = _numpy_dtype(dt.code, dt.bits, dt.lanes)
    if dtype is None:
        if dt.bits * dt.lanes % 8:
            raise _bad_tensor(
                f"{where}: {what} has dtype {dtype_name}, which is not supported (its elements "
                "are not whole bytes)"
            )
        dtype = np.dtype(f"V{dt.bits * dt.lanes // 8}")  # opaque bytes: a footprint needs no more
    ndim = tensor.ndim
    shape = tuple(int(tensor.shape[i]) for i in range(ndim))
    strides = (
        tuple(int(tensor.strides[i]) * dtype.itemsize for i in range(ndim))
        if ndim and tensor.strides
        else None
    )
    interface = {
        "version": 3,
        "shape": shape,
        # A bfloat16 view is made as its bits (NumPy has no typestr for it), then relabelled.
        "typestr": np.dtype(np.uint16).str if dtype.name == "bfloat16" else dtype.str,
        "data": ((tensor.data or 0) + tensor.byte_offset, bool(flags & _FLAG_READ_ONLY)),
        "strides": strides,
    }
    view = np.asarray(_Exported(interface, capsule))
    if dtype.name == "bfloat16":
        view = view.view(dtype)
    return ForeignArray(view, what, dtype_name, copied=bool(flags & _FLAG_IS_COPIED))


def _export(value: Any, where: str, what: str) -> Any:
    """The producer's capsule: versioned and without a copy when it knows those keywords
    (array API 2023.12), else the plain ``__dlpack__()`` of older producers."""
    try:
        try:
            return value.__dlpack__(max_version=(_DLPACK_MAJOR, 0), copy=False)
        except TypeError:
            return value.__dlpack__()
    except Exception as e:  # e.g. torch: a tensor that requires grad, a conjugate view
        raise _bad_tensor(
            f"{where}: {what} refused to export itself: {type(e).__name__}: {e}; pass a CPU "
            "array it can export (torch: x.detach(), x.resolve_conj())"
        ) from e


def _read_capsule(capsule: Any, where: str, what: str) -> tuple[_DLTensor, int]:
    if _capsule_is_valid(capsule, b"dltensor_versioned"):
        managed = _DLManagedTensorVersioned.from_address(
            _capsule_pointer(capsule, b"dltensor_versioned")
        )
        if managed.version.major != _DLPACK_MAJOR:
            raise _bad_tensor(
                f"{where}: {what} exported DLPack {managed.version.major}."
                f"{managed.version.minor}; this reader understands DLPack {_DLPACK_MAJOR}.x"
            )
        return managed.dl_tensor, int(managed.flags)
    if _capsule_is_valid(capsule, b"dltensor"):
        # No flags before DLPack 1.0: writeable (NumPy refuses to export read-only arrays so).
        return _DLManagedTensor.from_address(_capsule_pointer(capsule, b"dltensor")).dl_tensor, 0
    raise _bad_tensor(
        f"{where}: {what}.__dlpack__() returned {capsule!r}, not an unused DLPack capsule "
        "(named 'dltensor' or 'dltensor_versioned')"
    )


def _numpy_dtype(code: int, bits: int, lanes: int) -> tuple[np.dtype | None, str]:
    """The NumPy dtype of a DLPack dtype (None when there is none) and the dtype's name."""
    if lanes != 1:
        return None, f"{_CODE_NAMES.get(code, f'code {code}')}{bits}x{lanes} (vector lanes)"
    if code == _KDL_BFLOAT and bits == 16:
        try:
            import ml_dtypes  # a dependency of pto-runtime; imported only when needed
        except ImportError:
            return None, "bfloat16 (install ml_dtypes to pass it)"
        return np.dtype(ml_dtypes.bfloat16), "bfloat16"
    kind = _NUMPY_KINDS.get(code)
    if kind is not None and bits % 8 == 0:
        try:
            dtype = np.dtype(f"{kind}{bits // 8}")
        except TypeError:
            dtype = None
        if dtype is not None:
            return dtype.newbyteorder("="), dtype.name
    if code in _CODE_NAMES and code > 6:  # the float8/6/4 codes name their width
        return None, f"{_CODE_NAMES[code]} (DLPack code {code})"
    return None, f"{_CODE_NAMES.get(code, 'DLPack type code ')}{bits} (DLPack code {code})"


def _bad_tensor(message: str) -> Exception:
    return error_from_code(ErrorCode.BAD_TENSOR, message)
