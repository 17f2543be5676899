"""python/pto_runtime/scene/reference/torch_interop.py — ``simpler_setup.torch_interop``.

The reference converts torch tensors into its own tensor records here; this runtime takes
torch tensors (and NumPy arrays) directly, so the conversions hand the tensor through.
"""

from __future__ import annotations

from typing import Any


def make_tensor_arg(worker: Any, tensor: Any, *args: Any, **kwargs: Any) -> Any:
    """The tensor itself: this runtime's task arguments take tensors as they are."""
    return tensor


def make_chip_tensor_arg(tensor: Any) -> Any:
    """The tensor itself (see make_tensor_arg)."""
    return tensor


def torch_dtype_to_datatype(dtype: Any) -> Any:
    """The pto_runtime.DType of a torch dtype."""
    from .task_interface import DataType

    return DataType.of_torch(dtype)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from . import stand_in

    return stand_in("the reference's internal Python API", f"simpler_setup.torch_interop.{name}")
