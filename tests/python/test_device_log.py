"""tests/python/test_device_log.py — device logs: DEV_* macros, per-device files, levels."""

from __future__ import annotations

import pto_runtime as pto
import pytest
from basic_graph import run_basic

LOG_KERNEL = """
#include "pto/device_log.h"
#include "pto/kernel.h"
static int evaluated = 0;
static int touch() { return ++evaluated; }
PTO_KERNEL(args) {
  DEV_DEBUG(args, "debug line %d", touch());
  DEV_INFO(args, "info line %lld", static_cast<long long>(args[0]));
  DEV_WARN(args, "warn line");
  DEV_ERROR(args, "error line (debug arguments evaluated %d times)", evaluated);
}
"""

ORCH = """
#include "pto/host_graph.h"
PTO_ORCHESTRATION(graph, args) {
  graph.add_task(0, PTO_CORE_AIV, {pto::TaskArg::of_i64(args.scalar(0))});
}
"""

TMR_ORCH = """
#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(o) {
  DEV_INFO(o, "orchestration submits %u task(s)", 1u);
  o.submit_task(0, PTO_CORE_AIV, {pto::Arg::i64(o.scalar(0))});
}
"""


@pytest.fixture()
def log_dir(tmp_path, monkeypatch):
    # Read when a device context is created, so each test's workers write here.
    monkeypatch.setenv("PTO_LOG_DIR", str(tmp_path))
    return tmp_path


def run_logging_kernel(kernel_compiler, runtime, device_id, level, value=7, tag=""):
    """Runs LOG_KERNEL once; a distinct `tag` compiles a fresh copy (its own `evaluated`)."""
    kc = kernel_compiler
    orch = TMR_ORCH if runtime == "tensormap_and_ringbuffer" else ORCH
    c = pto.ChipCallable(kc.compile_orchestration_source(runtime, orch, "log_orch"))
    source = f"// {tag}\n" + LOG_KERNEL
    c.add_kernel(0, pto.CoreType.AIV, kc.compile_incore_source(source, "log", pto.CoreType.AIV))
    args = pto.ChipStorageTaskArgs()
    args.add_scalar(value)
    with pto.Worker(level=2, runtime=runtime, device_id=device_id) as w:
        w.run(c, args, pto.ChipCallConfig(log_level=level))


def lines(log_dir, device_id):
    path = log_dir / f"device-{device_id}" / "device.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize(
    "level, expected",
    [
        (
            0,
            ["debug line 1", "info line 7", "warn line", "error line (debug arguments evaluated 1"],
        ),
        (1, ["info line 7", "warn line", "error line (debug arguments evaluated 0"]),
        (2, ["warn line", "error line (debug arguments evaluated 0"]),
        (3, ["error line (debug arguments evaluated 0"]),
        (4, []),
    ],
)
def test_levels_below_the_threshold_are_dropped_unevaluated(
    kernel_compiler, log_dir, level, expected
):
    run_logging_kernel(kernel_compiler, "host_build_graph", 3, level, tag=f"level {level}")
    # The kernel's lines (at DEBUG the AICPU scheduler logs too).
    messages = [line.split("] ", 2)[-1] for line in lines(log_dir, 3) if "[core " in line]
    assert len(messages) == len(expected), messages
    for message, want in zip(messages, expected):
        assert message.startswith(want), (message, want)


def test_each_line_names_level_core_and_source_location(kernel_compiler, log_dir):
    run_logging_kernel(kernel_compiler, "host_build_graph", 4, 2, tag="format")
    warn, error = lines(log_dir, 4)
    # "2026-11-22 02:10:11.123456 WARN  [core 24] log:10] warn line"
    assert " WARN  [core " in warn and "] log:10] warn line" in warn, warn
    assert " ERROR [core " in error and "] log:11] error line" in error, error


def test_logs_are_kept_per_device_id(kernel_compiler, log_dir):
    run_logging_kernel(kernel_compiler, "host_build_graph", 1, 1, value=11)
    run_logging_kernel(kernel_compiler, "host_build_graph", 2, 1, value=22)
    assert any("info line 11" in line for line in lines(log_dir, 1))
    assert not any("info line 22" in line for line in lines(log_dir, 1))
    assert any("info line 22" in line for line in lines(log_dir, 2))


def test_device_orchestration_and_failing_tasks_log_from_the_aicpu(kernel_compiler, log_dir):
    run_logging_kernel(kernel_compiler, "tensormap_and_ringbuffer", 5, 1)
    got = lines(log_dir, 5)
    assert any("[aicpu " in line and "orchestration submits 1 task(s)" in line for line in got), got
    fail = pto.ChipCallable(
        kernel_compiler.compile_orchestration_source("host_build_graph", ORCH, "log_orch")
    )
    fail.add_kernel(
        0,
        pto.CoreType.AIV,
        kernel_compiler.compile_incore_source(
            '#include "pto/kernel.h"\nPTO_KERNEL(args) { pto::fail(args, 9); }\n',
            "fail9",
            pto.CoreType.AIV,
        ),
    )
    args = pto.ChipStorageTaskArgs()
    args.add_scalar(0)
    with pto.Worker(level=2, device_id=6) as w, pytest.raises(pto.TaskFailedError):
        w.run(fail, args)
    assert any(
        " ERROR [aicpu " in line and "task 0 (kernel 0) failed with status 9" in line
        for line in lines(log_dir, 6)
    ), lines(log_dir, 6)


def test_log_level_outside_the_range_is_rejected(worker, kernel_compiler):
    with pytest.raises(pto.InvalidArgumentError, match="log_level=7 is outside 0..4"):
        run_logging_kernel(kernel_compiler, "host_build_graph", 6, 7)
    assert run_basic(worker)
