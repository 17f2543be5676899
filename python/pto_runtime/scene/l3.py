"""python/pto_runtime/scene/l3.py — level-3 scene tests: a Python orchestration over chips and SUBs.

An L3 scene test's ``CALLABLE`` holds ``"orchestration"``, a Python function
``orch_fn(orch, callables, task_args, config)``, and ``"callables"``: chip entries (compiled
like an L2 CALLABLE) and SUB entries ``{"name": ..., "callable": fn}``. ``callables`` reaches
each by name (``callables.vector_kernel``, its signature as ``callables.vector_kernel_sig``).
``orch`` takes the reference's L3 calls (``submit_next_level``, ``submit_sub``, ``scope``,
``alloc``, ``allocate_domain``) and turns each into one of ``pto_runtime.l3.Orchestrator``'s.
The chips run in this process (thread mode) unless the runner asks for process mode; then the
case's tensors move into the worker's host heap for the run (``_rehost``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .._native import ChipCallConfig, Direction
from ..errors import Error
from ..task_args import ChipStorageTaskArgs
from . import arrays, record
from .build import CompiledCallable
from .execute import compare_and_record, iter_args, scalar_i64
from .spec import TaskArgsBuilder

__all__ = [
    "CallableNamespace",
    "ReferenceOrchestrator",
    "build_l3_task_args",
    "chip_args",
    "run_case_l3",
]


class CallableNamespace:
    """The compiled chip callables and SUB handles of an L3 test, by name; ``keep(obj)`` holds
    objects alive until the run is over."""

    def __init__(self, entries: Mapping[str, Any]) -> None:
        self._entries = dict(entries)
        self._keepalive: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._entries[name]
        except KeyError:
            raise AttributeError(
                f"no callable {name!r} (have {', '.join(self._entries)})"
            ) from None

    def keep(self, *objs: Any) -> Any:
        self._keepalive.extend(objs)
        return objs[0] if len(objs) == 1 else objs


def build_l3_task_args(
    test_args: TaskArgsBuilder, signature: Sequence[Any]
) -> tuple[Any, list[str]]:
    """The reference's ``TaskArgs`` of a chip task from the builder: each tensor tagged by
    its signature direction; the names of those written."""
    from .reference.task_interface import TaskArgs, TensorArgType

    tags = {
        Direction.INPUT: TensorArgType.INPUT,
        Direction.OUTPUT: TensorArgType.OUTPUT_EXISTING,
        Direction.INOUT: TensorArgType.INOUT,
    }
    args = TaskArgs()
    outputs: list[str] = []
    for spec, d in iter_args(test_args, signature):
        if d is None:
            args.add_scalar(spec.value)
            continue
        args.add_tensor(spec.value, tags[d])
        if d in (Direction.OUTPUT, Direction.INOUT):
            outputs.append(spec.name)
    return args, outputs


def chip_args(args: Any) -> Any:
    """A reference TaskArgs as the chip task's arguments (a ChipStorageTaskArgs as it is)."""
    if isinstance(args, ChipStorageTaskArgs) or not hasattr(args, "scalars"):
        return args
    out = ChipStorageTaskArgs()
    for tensor, tag in args.tensors:
        out.add_tensor(tensor, tag.direction())
    for value in args.scalars:
        out.add_scalar_i64(scalar_i64(value))
    return out


def _footprints(args: Any) -> ChipStorageTaskArgs:
    """A SUB task's arguments, for its dependencies only."""
    out = ChipStorageTaskArgs()
    if args is not None:
        for tensor, tag in args.tensors:
            out._add_footprint(arrays.numpy_view(tensor), tag.direction())
    return out


class ReferenceOrchestrator:
    """The reference's L3 orchestrator calls on ``pto_runtime.l3.Orchestrator``."""

    def __init__(self, native: Any, worker: Any) -> None:
        self._o = native
        self._worker = worker

    def _config(self, config: Any) -> ChipCallConfig | None:
        if config is None or isinstance(config, ChipCallConfig):
            return config
        return config.to_native(self._worker.platform)

    def submit_next_level(
        self, callable_handle: Any, args: Any, config: Any = None, *, worker: int | None = None
    ) -> int:
        """A chip task on chip ``worker`` (any idle chip when None)."""
        native = (
            callable_handle.callable
            if isinstance(callable_handle, CompiledCallable)
            else callable_handle
        )
        return self._o.submit_chip(native, chip_args(args), self._config(config), chip=worker)

    def submit_next_level_group(
        self,
        callable_handle: Any,
        args_list: Sequence[Any],
        config: Any = None,
        *,
        workers: Sequence[int] | None = None,
    ) -> int:
        """One task on several chips together (``args_list[i]`` on ``workers[i]``)."""
        native = (
            callable_handle.callable
            if isinstance(callable_handle, CompiledCallable)
            else callable_handle
        )
        return self._o.submit_chip_group(
            native, [chip_args(a) for a in args_list], self._config(config), chips=workers
        )

    def submit_sub(self, callable_handle: Any, args: Any = None) -> int:
        """A SUB task: the registered callable, called with ``args``."""
        fn = getattr(callable_handle, "fn", callable_handle)
        name = getattr(fn, "__name__", "sub")
        return self._o.submit_sub(lambda _ctx: fn(args), _footprints(args), name=name)

    def submit_sub_group(self, callable_handle: Any, args_list: Sequence[Any]) -> list[int]:
        return [self.submit_sub(callable_handle, a) for a in args_list]

    def alloc(self, shape: Sequence[int], dtype: Any) -> np.ndarray:
        from .reference.task_interface import DataType

        np_dtype = {
            DataType.FLOAT32: np.float32,
            DataType.FLOAT16: np.float16,
            DataType.INT32: np.int32,
            DataType.INT64: np.int64,
            DataType.UINT8: np.uint8,
            DataType.INT8: np.int8,
        }.get(dtype, dtype)
        return self._o.alloc(tuple(shape), np_dtype)

    def allocate_domain(
        self,
        *,
        name: str,
        workers: Sequence[int],
        window_size: int,
        buffers: Sequence[Any] = (),
    ) -> Any:
        """A communication domain (pto_runtime.comm.CommDomain: ``handle[chip]`` is the chip's
        ChipDomainContext)."""
        return self._o.allocate_domain(name, workers, window_size, buffers)

    def release_domain(self, handle: Any) -> None:
        handle.release()

    def alloc_child_tensor(self, worker_id: int, shapes: Sequence[int], dtype: Any) -> Any:
        """Memory of chip ``worker_id`` that outlives the run's tasks (scene/buffers.py)."""
        return self._worker.alloc_child_tensor(worker_id, shapes, dtype)

    def copy_to(self, dst: Any, src: Any) -> None:
        self._worker.copy_to(dst, src)

    def copy_from(self, dst: Any, src: Any) -> None:
        self._worker.copy_from(dst, src)

    def free(self, handle: Any) -> None:
        self._worker.free(handle)

    def scope_begin(self) -> None:
        self._o._native.scope_begin()

    def scope_end(self) -> None:
        self._o._native.scope_end()

    @contextlib.contextmanager
    def scope(self) -> Iterator[ReferenceOrchestrator]:
        with self._o.scope():
            yield self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        feature = (
            "the reference's global communication domains (its L4 of remote L3 workers)"
            if "global" in name
            else "the reference's internal Python API"
        )
        raise record.not_supported(feature, f"Orchestrator.{name}")


def _rehost(worker: Any, test_args: TaskArgsBuilder, names: Sequence[str]) -> dict[str, Any]:
    """Process mode: chip processes see only the worker's host heap, so each tensor of the case
    moves into a heap copy (the reference re-hosts its tensors into shared memory the same way);
    ``test_args`` names the copies until :func:`_restore`. The originals, by name."""
    originals: dict[str, Any] = {}
    for n in names:
        orig = getattr(test_args, n)
        view = arrays.numpy_view(orig)
        raw = worker.l3.alloc(max(view.nbytes, 1), np.uint8)[: view.nbytes]
        if arrays.is_torch(orig):
            import torch  # noqa: PLC0415 (a torch tensor exists, so torch does)

            heap = (
                torch.frombuffer(raw, dtype=orig.dtype).reshape(orig.shape)
                if view.nbytes
                else orig.new_empty(orig.shape)
            )
        else:
            heap = raw.view(view.dtype).reshape(view.shape)
        arrays.copy_into(heap, orig)
        test_args._data[n] = heap
        originals[n] = orig
    return originals


def _restore(test_args: TaskArgsBuilder, originals: Mapping[str, Any]) -> None:
    """The heap copies' values back into the case's own tensors, which ``test_args`` names again."""
    for n, orig in originals.items():
        arrays.copy_into(orig, getattr(test_args, n))
        test_args._data[n] = orig


def run_case_l3(
    test: Any,
    worker: Any,
    compiled: Mapping[str, Any],
    sub_handles: Mapping[str, Any],
    case: Mapping[str, Any],
    rounds: int,
    skip_golden: bool,
) -> None:
    """Runs one L3 case: the test's Python orchestration on the host worker, ``rounds`` times
    (every tensor reset between rounds), every tensor compared with the golden."""
    params = case.get("params", {})
    config_dict = case.get("config", {})
    test_args = test.generate_args(params)
    golden = None
    if not skip_golden:
        golden = test_args.clone()
        test.compute_golden(golden, params)
    names = test_args.tensor_names()
    initial = {n: arrays.clone(getattr(test_args, n)) for n in names} if rounds > 1 else {}
    ns = CallableNamespace({**compiled, **sub_handles})
    orch_fn = test.CALLABLE["orchestration"]
    for round_index in range(rounds):
        if round_index:
            for n, v in initial.items():
                arrays.copy_into(getattr(test_args, n), v)
        config = test._build_config(config_dict)

        def task_orch(orch: Any, _args: Any, _cfg: Any, _config: Any = config) -> None:
            orch_fn(orch, ns, test_args, _config)

        originals = _rehost(worker, test_args, names) if worker.mode == "process" else {}
        try:
            worker.run(task_orch)
            stats = worker.last_stats
        except Error as e:
            # The reference's worker raises what its orchestration function raised (a test may
            # expect that very ValueError); ours wraps it and chains the original.
            cause = e.__cause__
            if cause is not None and not isinstance(cause, Error):
                raise cause from None
            raise
        finally:
            _restore(test_args, originals)
        rec = record.current()
        if rec is not None and not rec.tasks and stats is not None:
            rec.add_tasks(stats.chip_tasks + stats.sub_tasks)  # the host's tasks
        if golden is not None:
            compare_and_record(test, test_args, golden, names, params)
