"""tests/python/test_l3.py — claims about Worker(level=3): inferred dependencies, events, faults.

Contract under test: the tasks of a run behave as if run one by one in submission order
(read-after-write, write-after-write and write-after-read between chip and SUB tasks); a SUB
task that deferred events releases its dependents only once every event was fulfilled (from
any thread); wait(timeout) names what is pending; a failed task (kernel pto::fail, a crashing
kernel, a killed chip process) fails the run with an error naming the task and chip, skips its
dependents, and leaves the worker serving the next run. Both modes unless stated.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pto_runtime as pto
import pytest

MODES = ["thread", "process"]

ONE_TASK_ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(g, args) {
  pto::TaskArg a[16];
  uint32_t n = 0;
  for (uint32_t i = 0; i < args.num_tensors(); ++i) a[n++] = pto::TaskArg::of(args.tensor(i));
  for (uint32_t i = 0; i < args.num_scalars(); ++i) a[n++] = pto::TaskArg::of_i64(args.scalar(i));
  g.add_task(0, PTO_CORE_AIV, a, n);
}
"""

# sleeps args[3] ms, then out[i] = in[i] + 1 for i < args[2]   (int64 tensors in, out)
SLOW_ADD_KERNEL = """
#include <time.h>
#include "pto/kernel.h"
PTO_KERNEL(args) {
  struct timespec ts = {args[3] / 1000, (args[3] % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
  const int64_t *in = pto::tensor<int64_t>(args, 0);
  int64_t *out = pto::tensor<int64_t>(args, 1);
  for (int64_t i = 0; i < args[2]; ++i) out[i] = in[i] + 1;
}
"""

FAIL_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL(args) { pto::fail(args, 7); }
"""

# out[0] = the address of tensor 0, out[1] = what out[2] held when the kernel began; writes
# nothing else (int64 tensors in, out)
WHERE_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL(args) {
  int64_t *out = pto::tensor<int64_t>(args, 1);
  out[1] = out[2];
  out[0] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(pto::tensor<int64_t>(args, 0)));
}
"""

SEGV_KERNEL = """
#include "pto/kernel.h"
PTO_KERNEL(args) {
  volatile int64_t *p = reinterpret_cast<volatile int64_t *>(args[0] * 0);
  *p = 1;
}
"""


@pytest.fixture(scope="module")
def slow_add(build_callable):
    return build_callable(ONE_TASK_ORCH, {0: SLOW_ADD_KERNEL})


def io_args(src: np.ndarray, dst: np.ndarray, sleep_ms: int = 0) -> pto.ChipStorageTaskArgs:
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(src, "in")
    args.add_tensor(dst, "out")
    args.add_scalar_i64(src.size)
    args.add_scalar_i64(sleep_ms)
    return args


@pytest.mark.parametrize("mode", MODES)
def test_chip_sub_chip_chain_sees_each_result(slow_add, mode):
    with pto.Worker(level=3, device_ids=[0, 1], num_sub_workers=1, mode=mode) as w:
        a = w.alloc(256, np.int64)
        b, c, d = (w.alloc(256, np.int64) for _ in range(3))
        a[:] = np.arange(256)

        def double(ctx):
            c[:] = b * 2

        def orch(o):
            o.submit_chip(slow_add, io_args(a, b), chip=0, name="b=a+1")
            o.submit_sub(double, inputs=[b], outputs=[c], name="c=2b")
            o.submit_chip(slow_add, io_args(c, d), chip=1, name="d=c+1")

        stats = w.run(orch, timeout=60)
        np.testing.assert_array_equal(d, (np.arange(256) + 1) * 2 + 1)
        assert (stats.chip_tasks, stats.sub_tasks, list(stats.tasks_per_chip)) == (2, 1, [1, 1])


@pytest.mark.parametrize("mode", MODES)
def test_heap_tensors_reach_the_chip_in_place_and_outputs_still_start_zeroed(build_callable, mode):
    # Host-heap arrays are shared with the chips, not staged through their memory and back;
    # an OUTPUT is zeroed first all the same, as a staged one starts. Thread mode stages the
    # arrays outside the heap as before.
    where = build_callable(ONE_TASK_ORCH, {0: WHERE_KERNEL})
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=0, mode=mode) as w:
        x, out = w.alloc(8, np.int64), w.alloc(8, np.int64)
        out[:] = 7  # stale: the kernel must see zeros, and what it does not write stays zero
        args = pto.ChipStorageTaskArgs()
        args.add_tensor(x, "in")
        args.add_tensor(out, "out")
        w.run(lambda o: o.submit_chip(where, args, chip=0), timeout=60)
        assert out[0] == x.ctypes.data
        np.testing.assert_array_equal(out[1:], np.zeros(7, np.int64))
        if mode == "thread":
            y, out2 = np.zeros(8, np.int64), np.full(8, 7, np.int64)
            args = pto.ChipStorageTaskArgs()
            args.add_tensor(y, "in")
            args.add_tensor(out2, "out")
            w.run(lambda o: o.submit_chip(where, args, chip=0), timeout=60)
            assert out2[0] != y.ctypes.data  # staged: the chip read a copy
            np.testing.assert_array_equal(out2[1:], np.zeros(7, np.int64))


@pytest.mark.parametrize("mode", MODES)
def test_group_runs_one_part_per_chip_and_counts_once(slow_add, mode):
    with pto.Worker(level=3, device_ids=[0, 1], num_sub_workers=0, mode=mode) as w:
        a, b = w.alloc((2, 64), np.int64), w.alloc((2, 64), np.int64)
        a[:] = [[1], [2]]
        parts = [io_args(a[0], b[0]), io_args(a[1], b[1])]
        stats = w.run(lambda o: o.submit_chip_group(slow_add, parts, chips=[1, 0]), timeout=60)
        assert (b[0] == 2).all() and (b[1] == 3).all()
        assert stats.chip_tasks == 1 and list(stats.tasks_per_chip) == [1, 1]


@pytest.mark.parametrize("mode", MODES)
def test_sub_overwriting_a_chip_input_waits_for_the_chip_task(slow_add, mode):
    # The SUB peeks at the chip task's (undeclared) output: without the write-after-read edge it
    # would run while the chip task sleeps and find the output not written yet.
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1, mode=mode) as w:
        a, b = w.alloc(64, np.int64), w.alloc(64, np.int64)
        a[:] = 10
        b[:] = -1
        seen = {}

        def overwrite(ctx):
            seen["chip output ready"] = bool((b == 11).all())
            a[:] = -7

        def orch(o):
            o.submit_chip(slow_add, io_args(a, b, sleep_ms=300), chip=0, name="reads a")
            o.submit_sub(overwrite, outputs=[a], name="overwrites a")

        w.run(orch, timeout=60)
        assert seen["chip output ready"], "the SUB ran before the chip task reading its buffer"
        assert (b == 11).all() and (a == -7).all()


@pytest.mark.parametrize("mode", MODES)
def test_dependents_of_a_deferred_sub_wait_for_its_event(mode):
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=2, mode=mode) as w:
        x = w.alloc(1, np.int64)
        x[0] = 0
        seen = []
        helpers = []

        def producer(ctx):
            event = ctx.defer()

            def later():
                time.sleep(0.2)
                x[0] = 42
                event.fulfill()

            helpers.append(threading.Thread(target=later))
            helpers[-1].start()

        def orch(o):
            o.submit_sub(producer, outputs=[x], name="async producer")
            o.submit_sub(lambda ctx: seen.append(int(x[0])), inputs=[x], name="consumer")

        handle = w.submit(orch)
        time.sleep(0.05)
        assert not handle.done()
        assert "external event" in handle.pending_report()
        handle.wait(10)
        helpers[0].join()
        assert seen == [42]


def test_wait_timeout_names_pending_tasks_and_what_each_waits_for():
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1) as w:
        x = w.alloc(1, np.int64)
        events = []

        def orch(o):
            o.submit_sub(lambda ctx: events.append(ctx.defer()), outputs=[x], name="deferred")
            o.submit_sub(lambda ctx: None, inputs=[x], name="reader")

        handle = w.submit(orch)
        with pytest.raises(pto.RunTimeoutError) as info:
            handle.wait(0.15)
        message = str(info.value)
        assert "'deferred' (SUB): body returned; waits for 1 external event" in message
        assert "'reader' (SUB): waits for 1 earlier task(s):" in message
        events[0].fulfill()
        with pytest.raises(pto.InvalidArgumentError, match="already fulfilled"):
            events[0].fulfill()
        assert handle.wait(10).sub_tasks == 2


@pytest.mark.parametrize("mode", MODES)
def test_failing_kernel_fails_its_task_skips_dependents_and_the_next_run_works(
    build_callable, slow_add, mode
):
    fail = build_callable(ONE_TASK_ORCH, {0: FAIL_KERNEL})
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1, mode=mode) as w:
        a, b = w.alloc(8, np.int64), w.alloc(8, np.int64)
        a[:] = 1
        ran = []

        def orch(o):
            o.submit_chip(fail, io_args(a, b), chip=0, name="bad kernel")
            o.submit_sub(lambda ctx: ran.append("consumer"), inputs=[b], name="consumer")

        with pytest.raises(pto.TaskFailedError) as info:
            w.run(orch, timeout=60)
        assert "'bad kernel' failed on chip 0" in str(info.value)
        assert "'consumer'" in str(info.value)
        assert ran == []
        w.run(lambda o: o.submit_chip(slow_add, io_args(a, b), chip=0), timeout=60)
        assert (b == 2).all()


def test_python_errors_in_orchestration_and_sub_bodies_are_reported():
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1) as w:

        def bad_orch(o):
            raise ValueError("no shards given")

        with pytest.raises(pto.OrchestrationError, match="ValueError: no shards given") as info:
            w.run(bad_orch)
        assert isinstance(info.value.__cause__, ValueError)

        def bad_body(ctx):
            raise KeyError("missing")

        with pytest.raises(pto.TaskFailedError, match="KeyError"):
            w.run(lambda o: o.submit_sub(bad_body, name="raises"))
        with pytest.raises(pto.InvalidArgumentError, match="out of range"):
            w.run(lambda o: o.submit_chip(pto.ChipCallable(), pto.ChipStorageTaskArgs(), chip=5))


def test_orchestrator_and_context_kept_after_their_call_refuse_use():
    kept = []
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1) as w:
        w.run(lambda o: (kept.append(o), o.submit_sub(lambda ctx: kept.append(ctx))))
        with pytest.raises(pto.DeviceError, match="only valid inside the orchestration"):
            kept[0].submit_sub(lambda ctx: None)
        with pytest.raises(pto.DeviceError, match="only valid while the SUB body runs"):
            kept[1].defer()


def test_unclosed_worker_is_closed_when_garbage_collected():
    w = pto.Worker(level=3, device_ids=[0], num_sub_workers=1)
    w.run(lambda o: o.submit_sub(lambda ctx: None))
    del w  # must not hang: the SUB thread never needs the GIL here, but close releases it


def test_scoped_buffers_return_once_the_scope_ended_and_users_finished():
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1) as w:
        before = w.heap_bytes_in_use

        def orch(o):
            with o.scope():
                t = o.alloc((1024,), np.float32)
                o.submit_sub(lambda ctx: time.sleep(0.05), outputs=[t])

        w.run(orch, timeout=10)
        assert w.heap_bytes_in_use == before


def test_worker_alloc_is_freed_when_garbage_collected():
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1) as w:
        before = w.heap_bytes_in_use
        x = w.alloc((4, 256), np.float32)
        view = x[1]
        assert w.heap_bytes_in_use == before + 4096
        del x
        assert w.heap_bytes_in_use == before + 4096, "a view keeps the buffer"
        del view
        assert w.heap_bytes_in_use == before


def test_process_mode_rejects_chip_tensors_outside_the_heap(slow_add):
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=0, mode="process") as w:
        a, b = np.zeros(8, np.int64), np.zeros(8, np.int64)
        with pytest.raises(pto.InvalidArgumentError, match="not in the worker's host heap"):
            w.run(lambda o: o.submit_chip(slow_add, io_args(a, b), chip=0))


def test_killed_chip_process_fails_its_task_and_the_chip_is_replaced(slow_add):
    with pto.Worker(level=3, device_ids=[0, 1], num_sub_workers=1, mode="process") as w:
        a, b, c, d = (w.alloc(32, np.int64) for _ in range(4))
        a[:] = 0
        c[:] = 5

        def orch(o):
            o.submit_chip(slow_add, io_args(a, b, sleep_ms=20000), chip=1, name="victim")
            o.submit_sub(lambda ctx: None, inputs=[b], name="after victim")
            o.submit_chip(slow_add, io_args(c, d), chip=0, name="bystander")

        handle = w.submit(orch)
        deadline = time.monotonic() + 5
        while "'victim' (chip): running" not in handle.pending_report():
            assert time.monotonic() < deadline, handle.pending_report()
            time.sleep(0.01)
        victim = w.chip_pid(1)
        assert victim > 1, victim  # os.kill(0 or -1, ...) would kill the test run itself
        os.kill(victim, signal.SIGKILL)
        with pytest.raises(pto.TaskFailedError) as info:
            handle.wait(10)
        message = str(info.value)
        assert f"'victim' failed: chip 1 (device 1, process {victim})" in message
        assert "signal 9" in message and "'after victim'" in message
        assert (d == 6).all(), "the other chip's task completes"
        w.run(lambda o: o.submit_chip(slow_add, io_args(c, b), chip=1), timeout=30)
        assert (b == 6).all()
        assert w.chip_pid(1) != victim


def test_crashing_kernel_in_process_mode_fails_its_task_and_the_chip_is_replaced(
    build_callable, slow_add
):
    segv = build_callable(ONE_TASK_ORCH, {0: SEGV_KERNEL})
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=0, mode="process") as w:
        a, b = w.alloc(8, np.int64), w.alloc(8, np.int64)
        a[:] = 1
        with pytest.raises(pto.TaskFailedError, match="'crasher' failed: chip 0") as info:
            w.run(lambda o: o.submit_chip(segv, io_args(a, b), chip=0, name="crasher"), timeout=30)
        assert "signal 11" in str(info.value) or "exited with status" in str(info.value)
        w.run(lambda o: o.submit_chip(slow_add, io_args(a, b), chip=0), timeout=30)
        assert (b == 2).all()


def test_worker_factory_routes_level_3_and_checks_options():
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=1) as w:
        assert isinstance(w, pto.l3.Worker) and w.level == 3
    with pytest.raises(pto.InvalidArgumentError, match="mode='fibers' is not one of"):
        pto.Worker(level=3, mode="fibers")
    with pytest.raises(pto.InvalidArgumentError, match="options of level 3"):
        pto.Worker(level=2, num_sub_workers=2)


@pytest.mark.parametrize("mode", MODES)
def test_l3_data_parallel_example_matches_numpy(repo_root, mode):
    result = subprocess.run(
        [sys.executable, str(repo_root / "examples/l3_data_parallel/main.py"), "--mode", mode],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ SUCCESS: " in result.stdout, result.stdout
