"""tests/python/test_l3_input.py — bad input to Worker(level=3) gets a typed, named error.

Contract under test (issue 12, point 6 at L3, and point 3's close()): each rejected option
raises InvalidArgumentError naming the keyword argument, its value and what is allowed; a
ctx.defer() from a thread other than the body's is refused; close(timeout) is bounded and says
which deferred event of which task it gave up on; every call on a closed L3 worker or a
finalized L2 ChipWorker raises DeviceError (NOT_INITIALIZED) with one message shape; strided
views are accepted as SUB task dependencies and never answered with "pass a copy" when they
are outputs. After each, a worker still runs the basic example.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pto_runtime as pto
import pytest
from basic_graph import basic_callable

MODES = ["thread", "process"]


@pytest.fixture(scope="module")
def basic() -> pto.ChipCallable:
    return basic_callable("host_build_graph")


def run_basic_l3(w: pto.l3.Worker, basic: pto.ChipCallable) -> None:
    """The basic example, f = (a + b + 1)(a + b + 2), as a chip task, and a SUB task reading f."""
    a, b, f = (w.alloc(1024, np.float32) for _ in range(3))
    a[:], b[:], f[:] = 2, 3, 0
    seen: list[float] = []

    def orch(o: pto.Orchestrator) -> None:
        args = pto.ChipStorageTaskArgs()
        args.add_tensor(a, "in")
        args.add_tensor(b, "in")
        args.add_tensor(f, "out")
        o.submit_chip(basic, args, chip=0, name="basic")
        o.submit_sub(lambda ctx: seen.append(float(f.min())), inputs=[f], name="reads f")

    w.run(orch, timeout=60)
    assert (f == 42).all() and seen == [42.0]


BAD_OPTIONS = [
    (
        {"device_ids": []},
        ["device_ids = [] is empty", "non-empty list of distinct device ids >= 0"],
    ),
    ({"device_ids": [0, -1]}, ["device_ids = [0, -1]", "negative id -1", ">= 0"]),
    ({"device_ids": [1, 0, 1]}, ["device_ids = [1, 0, 1]", "device 1 twice"]),
    ({"device_ids": 3}, ["device_ids = 3 is not a list"]),
    ({"device_ids": [0, 2**40]}, [f"device_ids = [0, {2**40}]", "device ids are ints >= 0"]),
    ({"num_sub_workers": -1}, ["num_sub_workers = -1 is out of range", "allowed 0..256"]),
    ({"heap_bytes": -5}, ["heap_bytes = -5 is out of range", "allowed 4096..1099511627776 bytes"]),
    ({"heap_bytes": 2**70}, [f"heap_bytes = {2**70} is out of range", "allowed 4096.."]),
    ({"heap_bytes": 5}, ["heap_bytes = 5 is out of range", "allowed 4096.."]),
    ({"spawn_timeout": -1}, ["spawn_timeout = -1 is out of range", "seconds"]),
    ({"heap_wait": float("nan")}, ["heap_wait = nan is out of range", "seconds"]),
    ({"close_timeout": 2**40}, [f"close_timeout = {2**40} is out of range", "seconds"]),
    ({"mode": "fibers"}, ["mode='fibers' is not one of 'thread', 'process'"]),
]


@pytest.mark.parametrize(("options", "says"), BAD_OPTIONS, ids=[str(o) for o, _ in BAD_OPTIONS])
def test_bad_options_name_the_argument_its_value_and_what_is_allowed(basic, options, says):
    with pytest.raises(pto.InvalidArgumentError) as info:
        pto.Worker(level=3, **options)
    message = str(info.value)
    for part in says:
        assert part in message
    assert "WorkerOptions" not in message and "_ms" not in message
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1) as w:
        run_basic_l3(w, basic)


def test_heap_exhaustion_names_the_heap_bytes_argument(basic):
    with pto.Worker(level=3, device_ids=[0], heap_bytes=1 << 20, heap_wait=0) as w:
        with pytest.raises(
            pto.DeviceError, match=r"raise heap_bytes = 1048576 \(a Worker option\)"
        ) as info:
            w.alloc(2 << 20, np.uint8)
        assert info.value.code == pto.ErrorCode.OUT_OF_MEMORY
        assert "WorkerOptions" not in str(info.value)
        run_basic_l3(w, basic)


@pytest.mark.parametrize("mode", MODES)
def test_defer_from_another_thread_is_refused(basic, mode):
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1, mode=mode) as w:
        caught: list[BaseException] = []

        def body(ctx):
            def elsewhere():
                try:
                    ctx.defer()
                except BaseException as e:  # noqa: BLE001 - asserted below
                    caught.append(e)

            helper = threading.Thread(target=elsewhere)
            helper.start()
            helper.join()

        w.run(lambda o: o.submit_sub(body, name="defers elsewhere"), timeout=10)
        assert len(caught) == 1, "ctx.defer() from another thread was accepted"
        assert isinstance(caught[0], pto.InvalidArgumentError)
        message = str(caught[0])
        assert "another thread than the one running the body of task" in message
        assert "'defers elsewhere'" in message
        run_basic_l3(w, basic)


def _submit_unfulfilled(w: pto.l3.Worker, events: list[pto.Event]) -> pto.RunHandle:
    """A run whose SUB task defers two events (appended to ``events``, which must start empty)
    and fulfills only the first (index 0)."""

    def body(ctx):
        events.append(ctx.defer())
        events.append(ctx.defer())
        events[0].fulfill()

    handle = w.submit(lambda o: o.submit_sub(body, name="never fulfilled"))
    deadline = time.monotonic() + 10
    while "body returned" not in handle.pending_report():
        assert time.monotonic() < deadline, handle.pending_report()
        time.sleep(0.005)
    return handle


@pytest.mark.parametrize("mode", MODES)
def test_close_names_the_unfulfilled_event_and_honours_its_timeout(basic, mode):
    w = pto.Worker(level=3, device_ids=[0], num_sub_workers=1, mode=mode)
    events: list[pto.Event] = []
    handle = _submit_unfulfilled(w, events)
    assert [e.index for e in events] == [0, 1]
    t0 = time.monotonic()
    with pytest.raises(pto.RunTimeoutError) as info:
        w.close(timeout=0.1)
    assert time.monotonic() - t0 < 5, "close() ignored its timeout (the default is 10 s)"
    message = str(info.value)
    assert "Worker.close: waited 0.100 s for 1 unfinished task(s)" in message
    assert "'never fulfilled' (SUB): body returned; waits for 1 external event(s)" in message
    assert "event 1 of the 2 its body deferred" in message
    assert w.closed
    with pytest.raises(pto.RunTimeoutError, match="did not finish before the worker was closed"):
        handle.wait(0)
    w.close()  # idempotent, nothing more to say
    events[1].fulfill()  # late: harmless
    with pto.Worker(level=3, device_ids=[0], mode=mode) as fresh:
        run_basic_l3(fresh, basic)


def test_leaving_a_with_block_with_an_unfulfilled_event_says_so(basic):
    with pytest.raises(pto.RunTimeoutError, match="event 1 of the 2"):
        with pto.Worker(level=3, device_ids=[0], close_timeout=0.1) as w:
            _submit_unfulfilled(w, [])
    with pytest.warns(RuntimeWarning, match="event 1 of the 2"):  # the body's error goes on
        with pytest.raises(KeyError):
            with pto.Worker(level=3, device_ids=[0], close_timeout=0.1) as w:
                _submit_unfulfilled(w, [])
                raise KeyError("the body's own error")
    with pytest.raises(
        pto.InvalidArgumentError, match=r"Worker.close: timeout = -1 is out of range"
    ):
        w.close(timeout=-1)
    with pto.Worker(level=3, device_ids=[0]) as fresh:
        run_basic_l3(fresh, basic)


def test_every_call_on_a_closed_l3_worker_says_it_is_closed(basic):
    w = pto.Worker(level=3, device_ids=[0], num_sub_workers=1)
    w.close()
    calls = {
        "Worker.submit": lambda: w.submit(lambda o: None),
        "Worker.submit ": lambda: w.run(lambda o: None),
        "Worker.alloc": lambda: w.alloc(4),
        "Worker.num_chips": lambda: w.num_chips,
        "Worker.num_sub_workers": lambda: w.num_sub_workers,
        "Worker.heap_bytes_in_use": lambda: w.heap_bytes_in_use,
        "Worker.chip_pid": lambda: w.chip_pid(0),
    }
    for call, do in calls.items():
        with pytest.raises(pto.DeviceError) as info:
            do()
        assert info.value.code == pto.ErrorCode.NOT_INITIALIZED
        expected = f"{call.strip()}: the worker is closed (close() was called); create a new Worker"
        assert str(info.value) == expected
    assert w.closed and "closed" in repr(w)
    with pto.Worker(level=3, device_ids=[0]) as fresh:
        run_basic_l3(fresh, basic)


def test_every_call_on_a_finalized_chip_worker_says_it_is_finalized(basic):
    w = pto.Worker(level=2)
    w.finalize()
    w.finalize()
    args = pto.ChipStorageTaskArgs()
    calls = {
        "run": lambda: w.run(basic, args),
        "start": lambda: w.start(basic, args),
        "poll": lambda: w.poll(),
        "init": lambda: w.init(),
        "set_device": lambda: w.set_device(0),
        "platform_info": lambda: w.platform_info,
        "last_trace": lambda: w.last_trace(),
    }
    for call, do in calls.items():
        with pytest.raises(pto.DeviceError) as info:
            do()
        assert info.value.code == pto.ErrorCode.NOT_INITIALIZED
        expected = f"ChipWorker.{call}: the worker is finalized (finalize() was called); "
        assert str(info.value) == expected + "create a new ChipWorker"
    with pto.Worker(level=2) as fresh:
        f = np.zeros(1024, np.float32)
        args.add_tensor(np.full(1024, 2, np.float32))
        args.add_tensor(np.full(1024, 3, np.float32))
        args.add_tensor(f, "out")
        fresh.run(basic, args)
        assert (f == 42).all()


@pytest.mark.parametrize("mode", MODES)
def test_strided_views_are_sub_dependencies_by_their_byte_footprint(basic, mode):
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=2, mode=mode) as w:
        x = w.alloc((8, 8), np.int64)
        x[:] = 0
        column, reversed_column = x[:, 1], x[::-1, 1]
        seen: list[list[int]] = []

        def write_column(ctx):
            time.sleep(0.2)  # a reader that does not wait for it would see zeros
            column[:] = 7

        def bump_column(ctx):
            reversed_column[:] += 1

        def orch(o):
            o.submit_sub(write_column, outputs=[column], name="writes a column")
            o.submit_sub(bump_column, inouts=[reversed_column], name="bumps it, reversed")
            o.submit_sub(lambda ctx: seen.append(x[2:6, 1].tolist()), inputs=[x[2:6, 1]])

        w.run(orch, timeout=30)
        assert seen == [[8] * 4]
        assert (x[:, 1] == 8).all() and (x[:, 0] == 0).all()
        run_basic_l3(w, basic)


@pytest.mark.parametrize("direction", ["out", "inout"])
def test_a_strided_output_for_a_chip_is_refused_without_suggesting_a_copy(direction):
    view = np.zeros((8, 8), np.float32)[:, 1]
    args = pto.ChipStorageTaskArgs()
    with pytest.raises(pto.InvalidArgumentError) as info:
        args.add_tensor(view, direction)
    message = str(info.value)
    assert "array must be C-contiguous" in message and "writes its results" in message
    assert "ascontiguousarray" not in message and "copy" not in message
    with pytest.raises(pto.InvalidArgumentError, match=r"np.ascontiguousarray\(x\)"):
        args.add_tensor(view, "in")  # an input may be copied
    assert len(args) == 0
