"""tests/python/test_array_interop.py — add_tensor takes other libraries' CPU arrays, zero-copy.

Other libraries: anything exporting DLPack or the array interface, torch above all. The claims:
a run reads and writes the caller's own memory, whatever library made it; what the run cannot
use (a device array, a strided view, a read-only output, an unknown dtype) is refused with
BAD_TENSOR naming the argument, the value and what is allowed; the args keep the producer alive
and release it (and its DLPack capsule) on clear(); NumPy arrays behave as before; torch is
never needed. The torch tests are skipped when torch is not installed.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from typing import Any

import numpy as np
import pto_runtime as pto
import pytest

try:
    import torch
except ImportError:  # the runtime does not need it; only these tests use it
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None,
    reason="torch is not installed (it is in the [test] extras: pip install '.[test]')",
)

# y = -x for the tensor's dtype: the kernel flips the sign bit of each float element (float32,
# float16, bfloat16) and negates int32, so it depends on the element size and kind reaching it.
# The orchestration first checks that both tensors carry the dtype the test expects.
NEGATE_ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(graph, args) {
  if (args.num_tensors() != 2 || args.num_scalars() != 1) {
    graph.fail("expects tensors x, y and the expected dtype");
    return;
  }
  const pto::Tensor &x = args.tensor(0);
  const pto::Tensor &y = args.tensor(1);
  if (static_cast<int64_t>(x.dtype) != args.scalar(0) || y.dtype != x.dtype ||
      y.nelems != x.nelems) {
    graph.fail("x and y must both hold the expected dtype, with as many elements");
    return;
  }
  graph.add_task(0, PTO_CORE_AIV,
                 {pto::TaskArg::of(x), pto::TaskArg::of(y),
                  pto::TaskArg::of_i64(static_cast<int64_t>(x.nelems)),
                  pto::TaskArg::of_i64(static_cast<int64_t>(x.dtype))});
}
"""

NEGATE_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL_SIGNATURE(pto::tensor_arg(PTO_DTYPE_ANY, 2), pto::tensor_arg(PTO_DTYPE_ANY, 2),
                     pto::scalar_arg(), pto::scalar_arg());
PTO_KERNEL(args) {
  const int64_t n = pto::scalar_i64(args, 2);
  const int64_t dtype = pto::scalar_i64(args, 3);
  if (dtype == PTO_DTYPE_I32) {
    const int32_t *x = pto::tensor<int32_t>(args, 0);
    int32_t *y = pto::tensor<int32_t>(args, 1);
    for (int64_t i = 0; i < n; ++i) y[i] = -x[i];
  } else if (dtype == PTO_DTYPE_F32) {
    const uint32_t *x = pto::tensor<uint32_t>(args, 0);
    uint32_t *y = pto::tensor<uint32_t>(args, 1);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] ^ 0x80000000u;
  } else if (dtype == PTO_DTYPE_F16 || dtype == PTO_DTYPE_BF16) {
    const uint16_t *x = pto::tensor<uint16_t>(args, 0);
    uint16_t *y = pto::tensor<uint16_t>(args, 1);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<uint16_t>(x[i] ^ 0x8000u);
  } else {
    pto::fail(args, 1);
  }
}
"""


@pytest.fixture(scope="module")
def negate(build_callable) -> pto.ChipCallable:
    return build_callable(NEGATE_ORCH, {0: NEGATE_KERNEL})


def negate_args(x: Any, y: Any, dtype: pto.DType) -> pto.ChipStorageTaskArgs:
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x, "in")
    args.add_tensor(y, "out")
    args.add_scalar_i64(dtype.value)
    return args


class OnlyArrayInterface:
    """Exports a NumPy array through ``__array_interface__`` and nothing else."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.__array_interface__ = array.__array_interface__


class OnlyDLPack:
    """Exports a NumPy array through ``__dlpack__``/``__dlpack_device__`` and nothing else."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.array.__dlpack_device__()


class OnCuda:
    """Says it lives on CUDA device 0; exporting it would be a bug of the caller."""

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise AssertionError("a device array must be refused before it is exported")


def bad_tensor(match: str):
    return pytest.raises(pto.InvalidArgumentError, match=match)


# --- NumPy and the plain protocols ----------------------------------------------------------


def test_numpy_arrays_run_and_keep_their_messages(worker, negate):
    x = np.arange(-8, 8, dtype=np.float32)
    y = np.zeros_like(x)
    args = negate_args(x, y, pto.DType.FLOAT32)
    assert args.arrays[0] is x and args.arrays[1] is y
    worker.run(negate, args)
    np.testing.assert_array_equal(y, -x)

    strided = np.ones((4, 4), np.float32)[:, ::2]
    with bad_tensor("argument 0: an INPUT array must be C-contiguous") as info:
        pto.ChipStorageTaskArgs().add_tensor(strided)
    assert str(strided.strides) in str(info.value)
    assert "np.ascontiguousarray(x)" in str(info.value)
    with bad_tensor("argument 0: expected a numpy.ndarray .* got list"):
        pto.ChipStorageTaskArgs().add_tensor([1.0, 2.0])


def test_an_array_interface_object_is_read_and_written_in_place(worker, negate):
    x = np.arange(-8, 8, dtype=np.int32)
    y = np.zeros_like(x)
    args = negate_args(OnlyArrayInterface(x), OnlyArrayInterface(y), pto.DType.INT32)
    worker.run(negate, args)
    np.testing.assert_array_equal(y, -x)  # written into the memory the object exported


def test_a_dlpack_only_object_is_read_and_written_in_place(worker, negate):
    x = np.linspace(-2, 2, 32, dtype=np.float16)
    y = np.zeros_like(x)
    args = negate_args(OnlyDLPack(x), OnlyDLPack(y), pto.DType.FLOAT16)
    worker.run(negate, args)
    np.testing.assert_array_equal(y, -x)


@pytest.mark.parametrize("wrap", [OnlyArrayInterface, OnlyDLPack], ids=["interface", "dlpack"])
def test_a_read_only_export_is_refused_as_an_output_but_taken_as_an_input(wrap):
    x = np.ones(4, np.float32)
    x.flags.writeable = False
    with bad_tensor(f"argument 0: .*{wrap.__name__}.* is read-only but its direction is OUTPUT"):
        pto.ChipStorageTaskArgs().add_tensor(wrap(x), "out")
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(wrap(x), "in")
    assert len(args) == 1


def test_a_device_array_is_refused_naming_its_device():
    args = pto.ChipStorageTaskArgs()
    args.add_scalar(1)
    with bad_tensor("argument 1: .*OnCuda on cuda:0 \\(DLPack\\) is not in host memory") as e:
        args.add_tensor(OnCuda())
    assert e.value.name == "BAD_TENSOR" and "only CPU arrays" in str(e.value)
    with bad_tensor("cuda:0"):
        args._add_footprint(OnCuda(), "in")  # an L3 SUB task's array, too
    assert len(args) == 1


def test_the_args_keep_a_dlpack_producer_alive_and_release_its_capsule_on_clear():
    x = np.ones(16, np.float32)
    producer = OnlyDLPack(x)
    memory, exporter = weakref.ref(x), weakref.ref(producer)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(producer, "inout")
    del x, producer
    gc.collect()
    assert memory() is not None and exporter() is not None
    assert args.arrays[0] is exporter()
    args.clear()
    gc.collect()
    # The capsule held a reference to the NumPy array; had it leaked, the array would live on.
    assert memory() is None and exporter() is None


# --- torch ----------------------------------------------------------------------------------

TORCH_DTYPES = ["float32", "float16", "bfloat16", "int32"]
RUNTIME_DTYPES = {
    "float32": pto.DType.FLOAT32,
    "float16": pto.DType.FLOAT16,
    "bfloat16": pto.DType.BFLOAT16,
    "int32": pto.DType.INT32,
}


def torch_input(name: str) -> Any:
    dtype = getattr(torch, name)
    return torch.arange(-24, 24).reshape(6, 8).to(dtype)


@needs_torch
@pytest.mark.parametrize("name", TORCH_DTYPES)
def test_torch_tensors_are_run_as_input_and_output_in_place(worker, negate, name):
    x = torch_input(name)
    y = torch.zeros_like(x)
    address = y.data_ptr()
    args = negate_args(x, y, RUNTIME_DTYPES[name])
    assert name in repr(args)
    assert args.arrays[0] is x and args.arrays[1] is y
    worker.run(negate, args)
    assert y.data_ptr() == address
    assert torch.equal(y, -x), (y, -x)


@needs_torch
@pytest.mark.parametrize("name", ["bfloat16", "float32"])
def test_an_isolated_worker_copies_torch_tensors_in_and_back(negate, name):
    x = torch_input(name)
    y = torch.zeros_like(x)
    with pto.Worker(level=2, isolate=True, device_id=6) as isolated:
        isolated.run(negate, negate_args(x, y, RUNTIME_DTYPES[name]), timeout=60)
    assert torch.equal(y, -x)


@needs_torch
@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("float64", pto.DType.FLOAT64),
        ("int8", pto.DType.INT8),
        ("int16", pto.DType.INT16),
        ("int64", pto.DType.INT64),
        ("uint8", pto.DType.UINT8),
        ("bool", pto.DType.BOOL),
    ],
)
def test_other_torch_dtypes_reach_the_runtime_as_theirs(name, dtype):
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(torch.zeros(2, 3, dtype=getattr(torch, name)), "inout")
    assert repr(args) == f"ChipStorageTaskArgs([{dtype.name.lower()}[2, 3] inout])"


@needs_torch
def test_a_strided_torch_view_is_refused_naming_its_layout():
    base = torch.ones(4, 4)
    args = pto.ChipStorageTaskArgs()
    with bad_tensor("argument 0: torch.Tensor on cpu \\(DLPack\\) is not C-contiguous") as info:
        args.add_tensor(base[:, ::2])
    message = str(info.value)
    assert "strides (16, 8) in bytes" in message and "x.contiguous()" in message
    with bad_tensor("an OUTPUT tensor must be") as info:
        args.add_tensor(base.t(), "out")
    # An output is never told to pass a copy: the results would land in the copy.
    assert "x.contiguous()" not in str(info.value)
    assert len(args) == 0


@needs_torch
def test_torch_tensors_the_run_cannot_use_are_refused():
    args = pto.ChipStorageTaskArgs()
    with bad_tensor("argument 0: torch.Tensor on cpu \\(DLPack\\) has dtype complex64") as info:
        args.add_tensor(torch.ones(3, dtype=torch.complex64))
    assert "bfloat16" in str(info.value)  # the allowed list
    with bad_tensor("require gradient"):
        args.add_tensor(torch.ones(3, requires_grad=True))
    with bad_tensor("9 dimensions"):
        args.add_tensor(torch.ones((1,) * 9))
    assert len(args) == 0


@needs_torch
def test_a_torch_footprint_takes_any_layout_by_its_byte_range():
    base = torch.zeros(4, 8, dtype=torch.bfloat16)
    args = pto.ChipStorageTaskArgs()
    args._add_footprint(base[:, ::2], "in")  # what L3/L4 submit_sub(inputs=...) does
    # From the first element to the last: 3 rows of 16 bytes, then 3 steps of 4 bytes, + 2.
    assert repr(args) == "ChipStorageTaskArgs([uint8[62] in])"
    assert args.arrays[0].data_ptr() == base.data_ptr()


@needs_torch
def test_the_args_keep_a_torch_tensor_alive_until_clear():
    x = torch.ones(8)
    ref = weakref.ref(x)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x)
    del x
    gc.collect()
    assert ref() is not None
    args.clear()
    gc.collect()
    assert ref() is None


# --- without torch --------------------------------------------------------------------------


def test_pto_runtime_works_without_torch_and_never_imports_it():
    code = """
import sys
sys.modules["torch"] = None  # any `import torch` now raises ImportError
import numpy as np
import pto_runtime as pto

class OnlyDLPack:
    def __init__(self, a): self.a = a
    def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
    def __dlpack_device__(self): return self.a.__dlpack_device__()

args = pto.ChipStorageTaskArgs()
args.add_tensor(OnlyDLPack(np.zeros(4, np.float32)), "out")
args.add_tensor(np.zeros(4, np.int32))
print(repr(args))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ChipStorageTaskArgs([float32[4] out, int32[4] in])"
