"""tests/python/test_api.py — claims about the public Python API: errors, args, config, factory."""

from __future__ import annotations

import gc
import pickle
import threading
import time
import uuid
import weakref

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable
from pto_runtime import _native

# What each code must raise. Written out here, apart from errors.py, so the test checks the
# mapping rather than restating it.
EXPECTED_CLASS = {
    "OK": pto.Error,
    "INVALID_ARGUMENT": pto.InvalidArgumentError,
    "UNKNOWN_KERNEL": pto.InvalidArgumentError,
    "TOO_MANY_ARGS": pto.InvalidArgumentError,
    "BAD_TENSOR": pto.InvalidArgumentError,
    "DEVICE_OUT_OF_RANGE": pto.InvalidArgumentError,
    "GEOMETRY_EXCEEDED": pto.InvalidArgumentError,
    "KERNEL_COMPILE": pto.KernelCompileError,
    "DEPENDENCY_CYCLE": pto.InvalidArgumentError,
    "RUN_TIMEOUT": pto.RunTimeoutError,
    "CAPACITY_EXCEEDED": pto.InvalidArgumentError,
    "TASK_FAILED": pto.TaskFailedError,
    "LOAD_FAILED": pto.LoadError,
    "NOT_INITIALIZED": pto.DeviceError,
    "OUT_OF_MEMORY": pto.DeviceError,
    "DEVICE_BROKEN": pto.DeviceError,
    "ORCHESTRATION_FAILED": pto.OrchestrationError,
    "NOT_SUPPORTED": pto.NotSupportedError,
    "INTERNAL": pto.Error,
    "RING_CAPACITY": pto.RingCapacityError,
    "ABORTED": pto.Error,  # a cancelled L3 run (Ctrl-C raises KeyboardInterrupt instead)
    "MISSING_DEPENDENCY": pto.MissingDependencyError,
}


# --- errors -------------------------------------------------------------------------------


def test_every_error_code_has_an_expected_class():
    assert {c.name for c in pto.ErrorCode} == set(EXPECTED_CLASS)


@pytest.mark.parametrize("name", sorted(EXPECTED_CLASS))
def test_cpp_error_raises_the_class_of_its_code(name):
    code = pto.ErrorCode[name]
    with pytest.raises(pto.Error) as info:
        _native.throw_error(code, f"message for {name}")
    e = info.value
    assert type(e) is EXPECTED_CLASS[name]
    assert isinstance(e, RuntimeError)
    assert e.code is code and isinstance(e.code, pto.ErrorCode)
    assert e.name == name
    assert str(e) == f"message for {name}"
    assert e.description == _native.status_description(code)
    assert e.hint == _native.status_hint(code)
    if name != "OK":
        assert e.description and e.hint


def test_error_attributes_carry_the_table_entry():
    with pytest.raises(pto.InvalidArgumentError) as info:
        _native.throw_error(pto.ErrorCode.BAD_TENSOR, "argument 2 is strided")
    e = info.value
    assert (e.code, e.name) == (4, "BAD_TENSOR")
    assert "C-contiguous" in e.hint
    assert "dtype" in e.description
    assert str(e) == "argument 2 is strided"


def test_unknown_code_raises_base_error_with_the_code():
    with pytest.raises(pto.Error) as info:
        _native.throw_error(999, "from the future")
    assert type(info.value) is pto.Error
    assert info.value.code == 999 and info.value.name == "UNKNOWN"
    assert not isinstance(info.value.code, pto.ErrorCode)


def test_message_with_invalid_utf8_is_not_lost():
    # Compiler output can carry bytes that are not UTF-8; the error must still arrive.
    with pytest.raises(pto.KernelCompileError, match="bad byte . here"):
        _native.throw_error(pto.ErrorCode.KERNEL_COMPILE, b"bad byte \xff here")


def test_not_supported_is_also_not_implemented():
    assert issubclass(pto.NotSupportedError, NotImplementedError)
    assert issubclass(pto.NotSupportedError, pto.Error)


def test_ring_capacity_error_has_its_own_code():
    assert issubclass(pto.RingCapacityError, pto.Error)
    assert pto.RingCapacityError("ring full").code == pto.ErrorCode.RING_CAPACITY


def test_error_built_in_python_uses_its_class_code():
    e = pto.TaskFailedError("kernel 3 failed")
    assert e.name == "TASK_FAILED" and str(e) == "kernel 3 failed"


def test_error_survives_pickling_with_its_code():
    e = pickle.loads(pickle.dumps(pto.DeviceError("no context", pto.ErrorCode.NOT_INITIALIZED)))
    assert type(e) is pto.DeviceError
    assert (e.code, str(e)) == (pto.ErrorCode.NOT_INITIALIZED, "no context")


# --- ChipStorageTaskArgs --------------------------------------------------------------------


def bad_tensor(match: str):
    return pytest.raises(pto.InvalidArgumentError, match=match)


def test_non_contiguous_array_is_rejected_with_index_strides_and_advice():
    args = pto.ChipStorageTaskArgs()
    args.add_scalar(1)
    x = np.ones((4, 4), np.float32)[:, ::2]
    with bad_tensor("argument 1") as info:
        args.add_tensor(x)
    e = info.value
    assert e.name == "BAD_TENSOR"
    assert str(x.strides) in str(e)
    assert "np.ascontiguousarray(x)" in str(e)
    assert len(args) == 1


def test_unsupported_dtype_is_rejected_with_the_supported_list():
    args = pto.ChipStorageTaskArgs()
    with bad_tensor("complex64") as info:
        args.add_tensor(np.ones(4, np.complex64))
    assert info.value.name == "BAD_TENSOR"
    for name in ("float32", "float16", "float64", "int8", "int64", "uint8", "uint64", "bool"):
        assert name in str(info.value)


def test_byte_swapped_array_is_rejected():
    with bad_tensor("byte order"):
        pto.ChipStorageTaskArgs().add_tensor(np.ones(4, ">f4"))


@pytest.mark.parametrize("direction", [pto.Direction.OUTPUT, pto.Direction.INOUT, "out", "inout"])
def test_read_only_array_is_rejected_as_output(direction):
    x = np.ones(4, np.float32)
    x.flags.writeable = False
    with bad_tensor("read-only") as info:
        pto.ChipStorageTaskArgs().add_tensor(x, direction)
    assert info.value.name == "BAD_TENSOR"


def test_read_only_array_is_accepted_as_input():
    x = np.ones(4, np.float32)
    x.flags.writeable = False
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(x, "in")
    assert len(args) == 1


def test_more_than_eight_dims_is_rejected():
    with bad_tensor("9 dimensions"):
        pto.ChipStorageTaskArgs().add_tensor(np.zeros((1,) * 9, np.float32))


def test_non_array_is_rejected():
    with bad_tensor("numpy.ndarray"):
        pto.ChipStorageTaskArgs().add_tensor([1.0, 2.0])


def test_unknown_direction_is_rejected():
    with pytest.raises(pto.InvalidArgumentError, match="sideways"):
        pto.ChipStorageTaskArgs().add_tensor(np.ones(4, np.float32), "sideways")


@pytest.mark.parametrize(
    "dtype",
    [
        np.float32,
        np.float16,
        np.float64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.bool_,
    ],
)
def test_supported_dtypes_are_accepted(dtype):
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(np.zeros((2, 3), dtype), pto.Direction.INOUT)
    assert len(args) == 1


def test_bfloat16_is_accepted_when_ml_dtypes_is_installed():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(np.zeros(4, ml_dtypes.bfloat16))
    assert "bfloat16" in repr(args)


def test_args_keep_their_arrays_alive_until_clear():
    args = pto.ChipStorageTaskArgs()
    x = np.ones(8, np.float32)
    ref = weakref.ref(x)
    args.add_tensor(x)
    del x
    gc.collect()
    assert ref() is not None
    args.clear()
    gc.collect()
    assert ref() is None and len(args) == 0


def test_scalars_are_typed_by_python_type():
    args = pto.ChipStorageTaskArgs()
    args.add_scalar(42)
    args.add_scalar(1.5)
    args.add_scalar(np.int32(7))
    args.add_scalar_i64(-1)
    args.add_scalar_f32(2.0)
    assert len(args) == 5
    with pytest.raises(pto.InvalidArgumentError):
        args.add_scalar("3")
    with pytest.raises(pto.InvalidArgumentError, match="int64"):
        args.add_scalar(2**63)


# --- ChipCallConfig, ChipCallable -----------------------------------------------------------


def test_call_config_defaults_match_the_cpp_struct():
    c = pto.ChipCallConfig()
    assert (c.block_dim, c.aicpu_thread_num) == (1, 1)
    assert (c.enable_profiling, c.enable_dump_tensor, c.enable_pmu) == (False, False, False)
    assert (c.max_tasks, c.max_args_per_task, c.max_successors) == (65536, 16, 1024)
    assert c.timeout_ms == 60000


def test_call_config_takes_keywords_and_prints_them():
    c = pto.ChipCallConfig(block_dim=24, aicpu_thread_num=4, enable_profiling=True, timeout_ms=5)
    assert c == pto.ChipCallConfig(24, 4, enable_profiling=True, timeout_ms=5)
    r = repr(c)
    assert r.startswith("ChipCallConfig(") and "block_dim=24" in r and "timeout_ms=5" in r
    assert "enable_profiling=True" in r


def test_call_config_flags_accept_seed_style_ints():
    c = pto.ChipCallConfig()
    c.enable_pmu = 1
    assert c.enable_pmu is True
    c.enable_pmu = 0
    assert c.enable_pmu is False
    with pytest.raises(TypeError):
        c.enable_pmu = "yes"


def test_call_config_pickles():
    c = pto.ChipCallConfig(block_dim=3, max_tasks=10)
    assert pickle.loads(pickle.dumps(c)) == c


def test_callable_rejects_a_duplicate_func_id():
    c = pto.ChipCallable("orch.so", kernels=[(0, pto.CoreType.AIV, "k0.so")])
    with pytest.raises(pto.InvalidArgumentError):
        c.add_kernel(0, pto.CoreType.AIC, "other.so")
    assert c.kernels == [(0, pto.CoreType.AIV, "k0.so")]


# --- Worker factory and ChipWorker ----------------------------------------------------------


@pytest.mark.parametrize("level", [5, 6])
def test_worker_level_5_and_up_is_not_supported(level):
    # Level 4 (MPI) is tests/python/test_l4.py, always in a subprocess: it initializes MPI.
    with pytest.raises(pto.NotSupportedError, match="use level=4"):
        pto.Worker(level=level)


@pytest.mark.parametrize("level", [0, 1, "2"])
def test_worker_other_levels_are_invalid(level):
    with pytest.raises(pto.InvalidArgumentError):
        pto.Worker(level=level)


def test_worker_level_2_is_a_ready_chip_worker():
    with pto.Worker(level=2, platform="a5sim", device_id=1) as w:
        assert isinstance(w, pto.ChipWorker)
        assert w.initialized and w.device_id == 1
        assert w.platform_info.platform == "a5sim"
    assert not w.initialized


def test_worker_inits_from_explicit_binaries():
    binaries = pto.RuntimeBuilder("a2a3sim").get_binaries("host_build_graph")
    with pto.ChipWorker() as w:
        w.init(binaries=binaries)
        w.set_device(0)
        assert w.initialized and w.platform_info.platform == "a2a3sim"


def test_run_before_init_raises_device_error():
    with pytest.raises(pto.DeviceError) as info:
        pto.ChipWorker().run(pto.ChipCallable(), pto.ChipStorageTaskArgs())
    assert info.value.name == "NOT_INITIALIZED"


# --- KernelCompiler --------------------------------------------------------------------------


def test_compile_error_raises_kernel_compile_error_with_compiler_output(tmp_path, kernel_compiler):
    source = tmp_path / "broken_kernel.cpp"
    source.write_text(
        '#include "pto/kernel.h"\nPTO_KERNEL(args) { (void)args; this_name_is_not_declared(); }\n'
    )
    with pytest.raises(pto.KernelCompileError) as info:
        kernel_compiler.compile_incore(source, pto.CoreType.AIV)  # a pathlib.Path
    assert info.value.name == "KERNEL_COMPILE"
    assert "this_name_is_not_declared" in str(info.value)


def test_compile_accepts_str_and_path_and_returns_a_str(repo_root, kernel_compiler):
    source = repo_root / "examples" / "basic" / "kernels" / "kernel_add.cpp"
    from_path = kernel_compiler.compile_incore(source, pto.CoreType.AIV)
    from_str = kernel_compiler.compile_incore(str(source), pto.CoreType.AIV)
    assert isinstance(from_path, str) and from_path == from_str


# --- runs through the real runtime ----------------------------------------------------------

ONE_TASK_ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(graph, args) {
  if (args.num_scalars() != 1) { graph.fail("expected one scalar"); return; }
  graph.add_task(FUNC_ID, PTO_CORE_AIV, {pto::TaskArg::of_i64(args.scalar(0))});
}
"""

SLEEP_KERNEL = """
#include <unistd.h>
#include "pto/kernel.h"
PTO_KERNEL_SIGNATURE(pto::scalar_arg());
PTO_KERNEL(args) { usleep(static_cast<useconds_t>(pto::scalar_i64(args, 0)) * 1000); }
"""

FAILING_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL_SIGNATURE(pto::scalar_arg());
PTO_KERNEL(args) { pto::fail(args, 7); }
"""


def one_task(build_callable, kernel: str, func_id: int = 0, orch_func_id: int = 0):
    orch = ONE_TASK_ORCH.replace("FUNC_ID", str(orch_func_id))
    return build_callable(orch, {func_id: kernel})


def scalar_args(value: int) -> pto.ChipStorageTaskArgs:
    args = pto.ChipStorageTaskArgs()
    args.add_scalar(value)
    return args


def test_run_returns_stats(worker, build_callable):
    stats = worker.run(one_task(build_callable, SLEEP_KERNEL), scalar_args(0))
    assert stats.tasks_run == 1 and stats.aiv_tasks == 1
    assert repr(stats).startswith("RunStats(tasks_run=1")


def test_prewarm_takes_a_config_checks_it_as_run_does_and_the_worker_runs_on(
    worker, build_callable
):
    cfg = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=2)
    cfg.heap_bytes = 128 << 20
    worker.prewarm(cfg)
    with pytest.raises(pto.InvalidArgumentError, match="prewarm failed: block_dim 99"):
        worker.prewarm(pto.ChipCallConfig(block_dim=99))
    stats = worker.run(one_task(build_callable, SLEEP_KERNEL), scalar_args(0), cfg)
    assert stats.tasks_run == 1
    with pytest.raises(pto.DeviceError, match="prewarm before init") as info:
        pto.ChipWorker().prewarm(cfg)
    assert info.value.name == "NOT_INITIALIZED"
    with pytest.raises(TypeError):
        worker.prewarm({"block_dim": 2})


def test_failing_kernel_raises_task_failed_and_worker_stays_usable(worker, build_callable):
    with pytest.raises(pto.TaskFailedError):
        worker.run(one_task(build_callable, FAILING_KERNEL), scalar_args(0))
    assert worker.run(one_task(build_callable, SLEEP_KERNEL), scalar_args(0)).tasks_run == 1


def test_orchestration_failure_raises_orchestration_error(worker, build_callable):
    with pytest.raises(pto.OrchestrationError, match="expected one scalar"):
        worker.run(one_task(build_callable, SLEEP_KERNEL), pto.ChipStorageTaskArgs())


def test_unknown_kernel_raises_invalid_argument(worker, build_callable):
    with pytest.raises(pto.InvalidArgumentError) as info:
        worker.run(one_task(build_callable, SLEEP_KERNEL, orch_func_id=5), scalar_args(0))
    assert info.value.name == "UNKNOWN_KERNEL"


def ticks_during(fn) -> int:
    """How often another Python thread ran while fn() was running.

    If fn() held the GIL throughout, the other thread could tick at most once (between the
    flag being set and the native call starting); every test below asks for more than that.
    """
    ticks = 0
    in_call = threading.Event()
    done = threading.Event()

    def ticker():
        nonlocal ticks
        while not done.is_set():
            if in_call.is_set():
                ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        in_call.set()
        fn()
        in_call.clear()
    finally:
        done.set()
        t.join()
    return ticks


def test_run_lets_other_python_threads_proceed(worker, build_callable):
    callable_ = one_task(build_callable, SLEEP_KERNEL)
    assert ticks_during(lambda: worker.run(callable_, scalar_args(200))) >= 10


def test_compile_lets_other_python_threads_proceed(kernel_compiler):
    # A source never seen before, so the compiler really runs (tens of ms at least).
    source = f"// {uuid.uuid4()}\n" + SLEEP_KERNEL

    def compile_fresh():
        kernel_compiler.compile_incore_source(source, "fresh", pto.CoreType.AIV)

    assert ticks_during(compile_fresh) >= 3


# --- asynchronous runs: start / poll ----------------------------------------------------------


def test_start_returns_at_once_and_poll_finishes_the_run(worker, build_callable):
    callable_ = one_task(build_callable, SLEEP_KERNEL)
    t0 = time.monotonic()
    worker.start(callable_, scalar_args(300))
    assert time.monotonic() - t0 < 0.25, "start() waited for the kernel"
    assert worker.busy
    assert worker.poll() is None, "a 300 ms kernel cannot have finished yet"
    deadline = time.monotonic() + 10
    stats = None
    while stats is None and time.monotonic() < deadline:
        stats = worker.poll()
        time.sleep(0.001)
    assert stats is not None and stats.tasks_run == 1
    assert time.monotonic() - t0 >= 0.3
    assert not worker.busy


def test_start_keeps_its_arrays_alive_and_poll_copies_outputs(worker):
    c = basic_callable("host_build_graph")
    args = pto.ChipStorageTaskArgs()
    out = np.zeros(1024, np.float32)
    args.add_tensor(np.full(1024, 2, np.float32), pto.Direction.INPUT)
    args.add_tensor(np.full(1024, 3, np.float32), pto.Direction.INPUT)
    args.add_tensor(out, pto.Direction.OUTPUT)
    worker.start(c, args)
    ref = weakref.ref(args)
    del args
    gc.collect()
    assert ref() is not None, "the worker must keep a started run's args alive"
    while worker.poll() is None:
        time.sleep(0.0005)
    gc.collect()
    assert ref() is None, "the args are released once the run finished"
    assert np.all(out == 42)


def test_poll_raises_a_failed_run_and_start_while_busy_is_an_error(worker, build_callable):
    with pytest.raises(pto.InvalidArgumentError, match="start"):
        worker.poll()
    worker.start(one_task(build_callable, FAILING_KERNEL), scalar_args(0))
    with pytest.raises(pto.InvalidArgumentError, match="in flight"):
        worker.start(one_task(build_callable, SLEEP_KERNEL), scalar_args(0))
    with pytest.raises(pto.TaskFailedError):
        while worker.poll() is None:
            time.sleep(0.0005)
    assert not worker.busy
    assert worker.run(one_task(build_callable, SLEEP_KERNEL), scalar_args(0)).tasks_run == 1
