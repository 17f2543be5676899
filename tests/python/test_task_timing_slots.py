"""tests/python/test_task_timing_slots.py — task timing slots, their [STRACE] markers, and capfd.

Claims: a task tagged with a timing slot (the reference API's set_task_timing_slot) has its
dispatch and finish folded into that slot, min(dispatch) and max(finish) over every task tagged
alike and every block of an SPMD task, on both runtimes; a consumer's slot starts no earlier
than its producer's ends; in timing mode the slots are virtual times that contain the kernels'
priced durations; a slot outside 0..15 fails the submit naming it; the scene worker prints the
slots as the reference's ``[STRACE]`` ``task_slot_<N>`` markers on stderr; the scene runner's
``capfd`` captures file descriptors 1 and 2; PTO_LOG_STDERR=1 echoes the device log (the
AICPU's INFO line) to stderr.
"""

from __future__ import annotations

import ctypes
import os
import re

import numpy as np
import pto_runtime as pto
import pytest
from orch_snippets import ADD_KERNEL, SET_BLOCKS
from pto_runtime.scene.capture import FdCapture
from pto_runtime.scene.workers import ChipSceneWorker
from pto_runtime.timing import Prediction, strace_lines

TMR = "tensormap_and_ringbuffer"
RUNTIMES = [TMR, "host_build_graph"]
N = 1024
SEEDED = os.environ.get("PTO_SIM_EXEC") != "threads"  # timing mode needs the fiber pool

# scalar 0 == 0: the chain t0 (slot 3) -> t1, t2 (both slot 7) -> t3 (SPMD, 4 blocks, slot 15),
# out = a + 4b, and an untagged task beside it. scalar 0 == 1: one task tagged scalar 1.
ORCH = (
    r"""
#include "pto_orchestration_api.h"
"""
    + SET_BLOCKS
    + r"""
extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &out = args.tensor(2).ref();
  if (args.scalar(0) == 1) {
    CoreTaskArgs t;
    t.add_input(a, b);
    t.add_output(out);
    t.set_task_timing_slot(static_cast<int32_t>(args.scalar(1)));
    rt_submit_aiv_task(0, t);
    return;
  }
  uint32_t shapes[1] = {a.shapes[0]};
  TensorCreateInfo ci(shapes, 1, DataType::FLOAT32);
  const int32_t chain_slots[3] = {3, 7, 7};
  TaskOutputTensors outs[3];
  const ChipTensor *prev = &a;
  for (int i = 0; i < 3; ++i) {
    CoreTaskArgs t;
    t.add_input(*prev, b);
    t.add_output(ci);
    t.set_task_timing_slot(chain_slots[i]);
    outs[i] = rt_submit_aiv_task(0, t);
    prev = &outs[i].get_ref(0);
  }
  const ChipTensor &e = *prev;
  CoreTaskArgs t3;
  t3.add_input(e, b);
  t3.add_output(out);
  set_blocks(t3.launch_spec, 4);
  t3.set_task_timing_slot(15);
  rt_submit_aiv_task(0, t3);
  CoreTaskArgs untagged;
  untagged.add_input(a, b);
  untagged.add_output(ci);
  rt_submit_aiv_task(0, untagged);
}
"""
)

CONFIG = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3)


def slots_callable(platform: str, runtime: str) -> pto.ChipCallable:
    kc = pto.KernelCompiler(platform)
    c = pto.ChipCallable(kc.compile_orchestration_source(runtime, ORCH, "timing_slots_orch"))
    c.add_kernel(
        0,
        pto.CoreType.AIV,
        kc.compile_incore_source(ADD_KERNEL, "timing_slots_add", pto.CoreType.AIV),
    )
    return c


def slot_args(mode: int = 0, slot: int = 0) -> tuple[pto.ChipStorageTaskArgs, np.ndarray]:
    a = np.arange(N, dtype=np.float32)
    b = np.full(N, 0.5, dtype=np.float32)
    out = np.full(N, -1.0, dtype=np.float32)
    args = pto.ChipStorageTaskArgs()
    args.add_tensor(a)
    args.add_tensor(b)
    args.add_tensor(out, "out")
    args.add_scalar_i64(mode)
    args.add_scalar_i64(slot)
    return args, out


def run_chain(runtime: str, config: pto.ChipCallConfig) -> dict[int, tuple[int, int]]:
    with pto.Worker(level=2, platform="a2a3sim", runtime=runtime) as w:
        args, out = slot_args()
        stats = w.run(slots_callable("a2a3sim", runtime), args, config)
    np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32) + 2.0)  # a + 4b
    return {s: (d, f) for s, d, f in stats.task_timing_slots}


def assert_chain_order(slots: dict[int, tuple[int, int]]) -> None:
    assert sorted(slots) == [3, 7, 15], slots  # the untagged task takes no slot
    for s, (d, f) in slots.items():
        assert 0 < d < f, f"slot {s}: dispatch {d} must precede finish {f}"
    # Each consumer is dispatched after its producer finished.
    assert slots[3][1] <= slots[7][0], slots
    assert slots[7][1] <= slots[15][0], slots


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_tagged_tasks_fold_into_their_slots_in_dependency_order(runtime):
    assert_chain_order(run_chain(runtime, CONFIG))


@pytest.mark.skipif(not SEEDED, reason="timing mode needs the sim's fiber pool")
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_in_timing_mode_slots_are_virtual_times_holding_their_kernels(runtime, monkeypatch):
    # Every kernel is priced 2000 ns: slot 3 holds one, slot 7 two in a row (t1 and t2 merged
    # into one window), slot 15 the SPMD task's blocks; the same seed predicts the same slots.
    monkeypatch.setenv("PTO_SIM_KERNEL_COSTS", "0=2000")
    config = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3, sim_seed=1, sim_timing=True)
    slots = run_chain(runtime, config)
    assert_chain_order(slots)
    assert slots[3][1] - slots[3][0] >= 2000, slots
    assert slots[7][1] - slots[7][0] >= 4000, slots
    assert slots[15][1] - slots[15][0] >= 2000, slots
    assert run_chain(runtime, config) == slots


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("slot", [16, -2])
def test_a_timing_slot_outside_0_to_15_is_refused_naming_it(runtime, slot):
    with pto.Worker(level=2, platform="a2a3sim", runtime=runtime) as w:
        args, _ = slot_args(mode=1, slot=slot)
        with pytest.raises(
            pto.InvalidArgumentError, match=rf"task timing slot {slot} \(0 \.\. 15 are allowed"
        ):
            w.run(slots_callable("a2a3sim", runtime), args, CONFIG)


STRACE = re.compile(r"^\[STRACE\] v=1 .* name=(?P<name>\S+) ts=(?P<ts>\d+) dur=(?P<dur>\d+)")


def markers(text: str) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for line in text.splitlines():
        if m := STRACE.match(line):
            out.setdefault(m["name"], []).append((int(m["ts"]), int(m["dur"])))
    return out


def test_strace_lines_give_each_slot_its_span_on_the_device_walls_origin():
    p = Prediction(
        10.0, 0.0, 0.0, 0.0, TMR, slots=((0, 100, 350), (4, 400, 900)), source="measured"
    )
    got = markers("\n".join(strace_lines(p, 5, 7, 1)))
    wall = "chip.run.runner_run.device_wall"
    assert got == {
        wall: [(0, 10000)],
        f"{wall}.task_slot_0": [(100, 250)],
        f"{wall}.task_slot_4": [(400, 500)],
        "chip.run": [(5, 7)],
    }


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_scene_chip_run_prints_its_slots_as_strace_markers_on_stderr(runtime):
    worker = ChipSceneWorker("a2a3sim", runtime)
    try:
        args, _ = slot_args()
        with FdCapture().active() as cap:
            worker.run(slots_callable("a2a3sim", runtime), args, CONFIG)
            err = cap.readouterr().err
    finally:
        worker.close()
    got = markers(err)
    wall = "chip.run.runner_run.device_wall"
    assert got["chip.run"][0][1] > 0 and got[wall][0][1] > 0, err
    slots = {s: got[f"{wall}.task_slot_{s}"][0] for s in (3, 7, 15)}
    assert not any(f"{wall}.task_slot_{s}" in got for s in range(16) if s not in slots), err
    assert slots[3][0] + slots[3][1] <= slots[7][0], slots
    assert slots[7][0] + slots[7][1] <= slots[15][0], slots


def test_capfd_captures_descriptors_1_and_2_from_python_and_native_code():
    libc = ctypes.CDLL(None)
    with FdCapture().active() as outer:
        with FdCapture().active() as cap:
            print("py-out")
            os.write(2, b"fd-err\n")
            libc.write(2, b"native-err\n", 11)
            first = cap.readouterr()
            with cap.disabled():
                os.write(1, b"passed-by\n")
            os.write(1, b"second\n")
            second = cap.readouterr()
        seen = outer.readouterr()
    assert first.out == "py-out\n" and first.err == "fd-err\nnative-err\n", first
    assert second.out == "second\n" and second.err == "", second  # only what came since
    # What the inner capture read went on to the stream it replaced, in order.
    assert seen.out == "py-out\npassed-by\nsecond\n" and seen.err == "fd-err\nnative-err\n", seen


def test_pto_log_stderr_echoes_the_aicpus_info_line_to_stderr(monkeypatch):
    config = pto.ChipCallConfig(block_dim=2, aicpu_thread_num=3)
    config.log_level = pto.LogLevel.INFO
    with pto.Worker(level=2, platform="a2a3sim", runtime=TMR) as w:
        callable_ = slots_callable("a2a3sim", TMR)
        for echo in ("0", "1"):
            monkeypatch.setenv("PTO_LOG_STDERR", echo)
            args, _ = slot_args()
            with FdCapture().active() as cap:
                w.run(callable_, args, config)
                err = cap.readouterr().err
            assert ("AicpuExecutor: Initializing" in err) == (echo == "1"), err
