"""tests/python/test_interrupt.py — Ctrl-C during a run, and a kernel that crashes a simulated core.

Contract under test: SIGINT during L2 ``ChipWorker.run()`` / ``wait()`` and L3 ``Worker.run()``
(thread and process mode) raises KeyboardInterrupt within 1 s (the binding checks every 50 ms),
aborts the run, and the same worker then runs the basic example correctly. A kernel that
dereferences null at L2 still kills the process (it runs on a thread of it), but stderr first
names the kernel, the task and the core. Each case runs in a child process: the signal and the
crash must not touch the test runner.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

# 4000 tasks of 5 ms on the 2 AIV cores of one cluster: ~10 s of work unless interrupted.
CHILD = textwrap.dedent(
    r'''
    import signal, sys, time
    # A shell that starts a job in the background (no job control) starts it with SIGINT
    # ignored, and Python then installs no KeyboardInterrupt handler; a terminal's Ctrl-C
    # reaches a program with Python's default handler, so install it (CI may run us detached).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, sys.argv[2])
    import numpy as np
    import pto_runtime as pto
    from basic_graph import basic_callable, run_basic

    mode = sys.argv[1]
    kc = pto.KernelCompiler("a2a3sim")
    orch = kc.compile_orchestration_source("host_build_graph", """
    #include "pto/host_graph.h"
    PTO_ORCHESTRATION(g, args) {
      (void)args;
      for (int i = 0; i < 4000; ++i) g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(5)});
    }
    """, "interrupt_long_orch")
    sleep = kc.compile_incore_source("""
    #include <time.h>
    #include "pto/kernel.h"
    PTO_KERNEL(args) {
      struct timespec ts = {0, static_cast<long>(args[0]) * 1000000L};
      nanosleep(&ts, nullptr);
    }
    """, "interrupt_sleep", pto.CoreType.AIV)
    long_run = pto.ChipCallable(orch, [(0, pto.CoreType.AIV, sleep)])
    basic = basic_callable("host_build_graph")

    def l3_basic(w):
        n = 1024
        a, b, f = w.alloc(n), w.alloc(n), w.alloc(n)
        a[:] = 2.0
        b[:] = 3.0
        f[:] = 0.0
        args = pto.ChipStorageTaskArgs()
        args.add_tensor(a, pto.Direction.INPUT)
        args.add_tensor(b, pto.Direction.INPUT)
        args.add_tensor(f, pto.Direction.OUTPUT)
        w.run(lambda o: o.submit_chip(basic, args, chip=0))
        return bool((f == 42.0).all())

    if mode == "l2" or mode == "l2-wait":
        w = pto.Worker(level=2)
        cfg = pto.ChipCallConfig(timeout_ms=0)  # no time limit: only Ctrl-C ends it
        print("RUNNING", flush=True)
        try:
            if mode == "l2":
                w.run(long_run, pto.ChipStorageTaskArgs(), cfg)
            else:
                w.start(long_run, pto.ChipStorageTaskArgs(), cfg)
                w.wait()
            print("FINISHED", flush=True)
        except KeyboardInterrupt:
            print("CAUGHT", time.monotonic(), flush=True)
        print("BUSY", w.busy, flush=True)
        print("BASIC", run_basic(w), flush=True)
        w.finalize()
    else:
        w = pto.Worker(level=3, mode=mode.split("-")[1], num_sub_workers=1)
        cfg = pto.ChipCallConfig(timeout_ms=0)
        print("RUNNING", flush=True)
        try:
            w.run(lambda o: o.submit_chip(long_run, pto.ChipStorageTaskArgs(), cfg, chip=0))
            print("FINISHED", flush=True)
        except KeyboardInterrupt:
            print("CAUGHT", time.monotonic(), flush=True)
        print("BASIC", l3_basic(w), flush=True)
        w.close()
    '''
)


def _read_line(proc: subprocess.Popen[str], deadline: float) -> str:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.1)
        if ready:
            return proc.stdout.readline().strip()
        if proc.poll() is not None:
            return proc.stdout.readline().strip()
        if proc.poll() is not None:
            break
    return ""


def _stderr_if_done(proc: subprocess.Popen[str]) -> str:
    return proc.stderr.read() if proc.stderr and proc.poll() is not None else ""


@pytest.mark.parametrize("mode", ["l2", "l2-wait", "l3-thread", "l3-process"])
def test_ctrl_c_mid_run_raises_keyboard_interrupt_and_the_worker_runs_again(mode: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(HERE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _read_line(proc, time.monotonic() + 120)  # kernel compiles on a cold cache
        assert line == "RUNNING", f"child did not start: {line!r}\n{_stderr_if_done(proc)}"
        time.sleep(0.5)  # the run is well under way (it needs ~10 s)
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        caught = _read_line(proc, sent + 10)
        assert caught.startswith("CAUGHT"), f"{caught!r}; stderr: {_stderr_if_done(proc)}"
        assert float(caught.split()[1]) - sent < 1.0, (
            "KeyboardInterrupt came more than 1 s after SIGINT"
        )
        rest = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = _read_line(proc, deadline)
            if not line and proc.poll() is not None:
                break
            rest.append(line)
        out = "\n".join(rest)
        proc.wait(timeout=10)
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "BASIC True" in out, f"stdout: {out!r}\nstderr: {err}"
    if mode.startswith("l2"):
        assert "BUSY False" in out
    assert proc.returncode == 0, err


SEGV_CHILD = textwrap.dedent(
    r'''
    import pto_runtime as pto
    kc = pto.KernelCompiler("a2a3sim")
    orch = kc.compile_orchestration_source("host_build_graph", """
    #include "pto/host_graph.h"
    PTO_ORCHESTRATION(g, args) {
      (void)args;
      g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(0)});
    }
    """, "segv_one_task_orch")
    segv = kc.compile_incore_source("""
    #include "pto/kernel.h"
    PTO_KERNEL(args) {
      volatile int64_t *p = reinterpret_cast<volatile int64_t *>(args[0]);
      *p = 1;
    }
    """, "null_deref_kernel", pto.CoreType.AIV)
    w = pto.Worker(level=2)
    print("RUNNING", flush=True)
    w.run(pto.ChipCallable(orch, [(0, pto.CoreType.AIV, segv)]), pto.ChipStorageTaskArgs())
    print("SURVIVED", flush=True)
    '''
)


def test_a_kernel_that_dereferences_null_names_itself_before_the_process_dies() -> None:
    env = dict(os.environ)
    env.pop("PYTHONFAULTHANDLER", None)
    proc = subprocess.run(
        [sys.executable, "-c", SEGV_CHILD], capture_output=True, text=True, timeout=300, env=env
    )
    assert "RUNNING" in proc.stdout and "SURVIVED" not in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == -signal.SIGSEGV, f"exit {proc.returncode}; stderr: {proc.stderr}"
    assert "SIGSEGV" in proc.stderr, proc.stderr
    assert "kernel 'null_deref_kernel'" in proc.stderr, proc.stderr
    assert "task 0" in proc.stderr, proc.stderr
    assert "on core" in proc.stderr and "(AIV)" in proc.stderr, proc.stderr


def test_l2_wait_times_out_with_a_typed_error_and_abort_leaves_the_worker_usable() -> None:
    import pto_runtime as pto
    from basic_graph import run_basic

    kc = pto.KernelCompiler("a2a3sim")
    sleep = kc.compile_incore_source(
        '#include <time.h>\n#include "pto/kernel.h"\nPTO_KERNEL(args) {\n'
        "  struct timespec ts = {0, static_cast<long>(args[0]) * 1000000L};\n"
        "  nanosleep(&ts, nullptr);\n}\n",
        "interrupt_sleep",
        pto.CoreType.AIV,
    )
    orch = kc.compile_orchestration_source(
        "host_build_graph",
        '#include "pto/host_graph.h"\nPTO_ORCHESTRATION(g, args) {\n  (void)args;\n'
        "  for (int i = 0; i < 400; ++i)\n"
        "    g.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(5)});\n}\n",
        "interrupt_wait_orch",
    )
    w = pto.Worker(level=2)
    try:
        with pytest.raises(pto.InvalidArgumentError, match="without a started run"):
            w.wait()
        w.start(pto.ChipCallable(orch, [(0, pto.CoreType.AIV, sleep)]), pto.ChipStorageTaskArgs())
        with pytest.raises(pto.InvalidArgumentError, match="timeout"):
            w.wait(-1.0)
        with pytest.raises(pto.RunTimeoutError, match=r"ChipWorker.wait: .*timeout=0.05 s"):
            w.wait(0.05)
        assert w.busy
        w.abort()
        assert not w.busy
        assert run_basic(w)
    finally:
        w.finalize()
