"""tests/python/test_scene.py — scene tests: declared, selected, run, compared, and reported.

The scene files under scene_files/ are small programs (scalar kernels, seconds) that pass, fail
each way a runner must survive (wrong golden, crash, hang, missing feature), race, or are
written against the reference implementation's import names. Each front end runs them as a
user would: ``python test_x.py``, ``python -m pto_runtime.scene``, pytest with the plugin.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pto_runtime import Direction
from pto_runtime.scene import Scalar, TaskArgsBuilder, TensorArg
from pto_runtime.scene.execute import build_chip_args, scalar_bits
from pto_runtime.scene.spec import validate_cases

FILES = Path(__file__).resolve().parent / "scene_files"
SEEDED = os.environ.get("PTO_SIM_EXEC") != "threads"  # seeded runs need the fiber pool


def run(*args: str, cwd: Path = FILES, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def runner(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "scene.json"
    result = run("-m", "pto_runtime.scene", *args, "--json", str(out))
    records = {}
    if out.exists():
        for r in json.loads(out.read_text())["cases"]:
            records[(r["cls"], r["case"], r["platform"])] = r
    return result, records


# ----- what a test declares -----


def test_builder_keeps_order_and_reads_by_name():
    a, f = np.ones(4, np.float32), np.zeros(4, np.float32)
    args = TaskArgsBuilder(TensorArg("a", a), TensorArg("f", f), Scalar("n", 4))
    assert args.a is a and args.f is f and args.n == 4
    assert args.tensor_names() == ["a", "f"]
    assert [s.name for s in args.specs] == ["a", "f", "n"]


def test_builder_refuses_a_tensor_after_a_scalar_and_duplicate_names():
    args = TaskArgsBuilder(Scalar("n", 1))
    with pytest.raises(ValueError, match="after a scalar"):
        args.add_tensor("a", np.zeros(1))
    with pytest.raises(ValueError, match="duplicate"):
        args.add_scalar("n", 2)
    with pytest.raises(ValueError, match="shadow"):
        args.add_scalar("clone", 2)


def test_builder_clone_copies_every_tensor():
    args = TaskArgsBuilder(TensorArg("a", np.zeros(3, np.float32)), Scalar("n", 3))
    copy = args.clone()
    copy.a[:] = 7
    assert (args.a == 0).all() and copy.a.dtype == np.float32 and copy.n == 3


def test_cases_are_checked_when_the_class_is_declared():
    class Bad:
        CASES = [{"name": "x", "platforms": ["a2a3sim"], "config": {"ring_size": 4}}]

    with pytest.raises(ValueError, match=r"unknown keys ring_size; allowed: aicpu_thread_num"):
        validate_cases(Bad)
    Bad.CASES = [{"name": "x", "platforms": "a2a3sim"}]
    with pytest.raises(ValueError, match="'platforms' must be a non-empty list"):
        validate_cases(Bad)


def test_scalars_are_the_bits_the_kernel_reads():
    assert scalar_bits(1.5) == 0x3FC00000  # a Python float is float32
    assert scalar_bits(ctypes.c_float(1.5)) == 0x3FC00000
    assert scalar_bits(ctypes.c_double(1.5)) == 0x3FF8000000000000
    assert scalar_bits(-1) == 2**64 - 1
    assert scalar_bits(ctypes.c_int64(-2)) == 2**64 - 2
    with pytest.raises(TypeError, match="not an int"):
        scalar_bits("3")


def test_signature_gives_each_tensor_its_direction_and_names_the_outputs():
    args = TaskArgsBuilder(
        TensorArg("a", np.zeros(2, np.float32)), TensorArg("f", np.zeros(2, np.float32))
    )
    chip, outputs = build_chip_args(args, [Direction.INPUT, Direction.OUTPUT])
    assert len(chip) == 2 and outputs == ["f"]
    with pytest.raises(ValueError, match="has no entry in the orchestration's signature"):
        build_chip_args(args, [Direction.INPUT])


# ----- python test_x.py -----


def test_a_scene_file_runs_as_a_script_and_ends_with_the_table():
    result = run("test_pipeline.py")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "passed 3 / attempted 3 / total 3"
    header = next(line for line in lines if line.startswith("case "))
    assert header.split() == ["case", "platform", "result", "wall", "s", "tasks", "worst", "error"]
    assert any(line.startswith("TestPipeline::small") and "a5sim" in line for line in lines)


def test_script_options_select_cases_and_manual_ones():
    result = run("test_pipeline.py", "-p", "a2a3sim", "--manual", "only")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "passed 1 / attempted 1 / total 1"
    assert "TestPipeline::big" in result.stdout
    result = run("test_pipeline.py", "--case", "nope")
    assert result.returncode == 2 and "no case 'nope'" in result.stderr


def test_torch_tensors_are_arguments_and_golden():
    pytest.importorskip("torch", reason="torch is optional; this test needs it")
    result = run("test_torch_args.py")
    assert result.returncode == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("TestTorchArgs::"))
    assert row.split()[2] == "PASSED" and row.split()[-1] == "0"


def test_a_wrong_golden_fails_the_script_with_the_worst_error():
    result = run("test_broken.py", "--case", "wrong_golden")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "golden mismatch on 'y': 16 of 16 elements" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("TestBroken::"))
    assert row.split()[2] == "FAILED" and row.split()[-1] == "1"  # worst error |3 - 2|


# ----- python -m pto_runtime.scene -----


def test_runner_survives_a_crash_a_hang_and_a_wrong_golden(tmp_path):
    result, records = runner(tmp_path, ".", "--timeout", "20")
    assert result.returncode == 1
    passed = sum(r["result"] == "PASSED" for r in records.values())
    assert passed >= 6 and len(records) >= 10  # + the torch file's case when torch is there
    assert result.stdout.splitlines()[-1] == (
        f"passed {passed} / attempted {len(records)} / total {len(records)}"
    )

    def result_of(cls, case, platform="a2a3sim"):
        return records[(cls, case, platform)]["result"]

    assert result_of("TestBroken", "wrong_golden") == "FAILED"
    assert result_of("TestBroken", "crash") == "CRASHED"
    assert result_of("TestBroken", "hang") == "TIMEOUT"
    assert result_of("TestBroken", "passes") == "PASSED"  # after the crash and the hang
    assert result_of("TestPipeline", "small", "a5sim") == "PASSED"
    assert ("TestPipeline", "big", "a2a3sim") not in records  # manual: excluded by default
    assert ("TestPipeline", "hardware_only", "a2a3") not in records  # not a sim platform
    assert "SIGSEGV" in records[("TestBroken", "crash", "a2a3sim")]["message"]


def test_run_timeout_bounds_each_chip_run(tmp_path):
    # Under the runner a run's limit defaults to the case's (--timeout), not the runtime's 60 s,
    # which stopped a long reference case its own sim runs to the end (highperf s4096).
    _, records = runner(tmp_path, "test_broken.py", "--case", "slow_run", "--run-timeout", "0.5")
    slow = records[("TestSlowRun", "slow_run", "a2a3sim")]
    assert slow["result"] == "ERROR", slow
    assert "time limit of 500 ms" in slow["message"], slow["message"]
    _, records = runner(tmp_path, "test_broken.py", "--case", "slow_run")
    assert records[("TestSlowRun", "slow_run", "a2a3sim")]["result"] == "PASSED"


def test_runner_runs_a_reference_file_unchanged_and_names_what_is_missing(tmp_path):
    result, records = runner(tmp_path, "fake_reference/tests")
    assert result.stdout.splitlines()[-1] == "passed 1 / attempted 2 / total 2", result.stdout
    assert records[("TestReferenceStyle", "runs", "a2a3sim")]["result"] == "PASSED"
    missing = records[("TestReferenceStyle", "needs_comm", "a2a3sim")]
    assert missing["result"] == "NOT_SUPPORTED"
    assert (
        missing["feature"]
        == "the reference's global communication domains (its L4 of remote L3 workers)"
    )
    assert "GlobalCommDomainHandle" in missing["message"]
    assert "Traceback" not in result.stdout


@pytest.mark.skipif(not SEEDED, reason="seeded runs need the sim's fiber pool")
def test_fuzz_schedules_names_the_seed_of_a_racy_orchestration(tmp_path):
    result, records = runner(
        tmp_path, "test_racy.py", "test_pipeline.py", "--fuzz-schedules", "20", "-p", "a2a3sim"
    )
    racy = records[("TestRacy", "racy", "a2a3sim")]
    assert racy["result"] == "FAILED" and racy["divergent_seed"] is not None
    assert f"replay it with --sim-seed {racy['divergent_seed']}" in racy["message"]
    assert records[("TestPipeline", "small", "a2a3sim")]["fuzz_seeds"] == 20
    assert records[("TestPipeline", "small", "a2a3sim")]["result"] == "PASSED"


@pytest.mark.skipif(not SEEDED, reason="timing mode needs the sim's fiber pool")
def test_timing_adds_the_predicted_makespan_and_the_swimlanes(tmp_path):
    result, records = runner(
        tmp_path,
        "test_pipeline.py",
        "--timing",
        "--timing-dir",
        str(tmp_path / "lanes"),
        "-p",
        "a2a3sim",
        "--case",
        "small",
    )
    rec = records[("TestPipeline", "small", "a2a3sim")]
    assert rec["result"] == "PASSED", result.stdout
    assert rec["predicted_makespan_us"] > 0
    assert Path(rec["swimlane"]).stat().st_size > 0
    assert "predicted us" in result.stdout


SUITE = Path(
    os.environ.get(
        "PTO_REFERENCE_SUITE", Path(__file__).resolve().parents[3] / "shared/third_party/simpler"
    )
)


@pytest.mark.skipif(not SEEDED, reason="timing mode needs the sim's fiber pool")
def test_a_chip_name_predicts_its_cases_on_the_sim_twin_as_the_references_markers(
    tmp_path, monkeypatch
):
    # -p a2a3 selects the cases that list the chip itself, runs each round in timing mode on
    # a2a3sim, and prints the rounds as the reference's [STRACE] markers. Its scalar kernels
    # have no cost model: a cost table fixes their time, so every round predicts the same.
    monkeypatch.setenv("PTO_SIM_KERNEL_COSTS", "0=2000,1=3000")
    result, records = runner(tmp_path, "test_pipeline.py", "-p", "a2a3", "--rounds", "2")
    assert {case for (_, case, _) in records} == {"hardware_only"}, result.stdout
    rec = records[("TestPipeline", "hardware_only", "a2a3sim")]
    assert rec["result"] == "PASSED", result.stdout
    p = rec["predicted"]
    assert p["device_us"] > p["effective_us"] > 0  # the device preamble and teardown
    assert 0 < p["orch_us"] <= p["effective_us"]  # tensormap: the device orchestrator's window
    assert "not a measurement" in result.stdout
    log = tmp_path / "run.log"
    log.write_text(result.stdout)
    strace = [line for line in result.stdout.splitlines() if line.startswith("[STRACE] ")]
    assert len(strace) == 2 * 4, result.stdout  # chip.run, device_wall, .orch, .sched per round
    tool = SUITE / "simpler_setup" / "tools" / "strace_timing.py"
    if not tool.is_file():
        pytest.skip(f"no reference suite at {SUITE} (set PTO_REFERENCE_SUITE)")
    table = run(str(tool), str(log), "--rounds-table")
    assert table.returncode == 0, table.stderr
    # Every round predicts the same times: the reference's own tool reads them back.
    assert f"Avg Device: {p['device_us']:.1f} us [2/2]" in table.stdout, table.stdout
    assert f"Avg Effective: {p['effective_us']:.1f} us" in table.stdout, table.stdout
    assert f"Avg Orch: {p['orch_us']:.1f} us" in table.stdout, table.stdout


# ----- pytest -----


def run_plugin(path: str) -> subprocess.CompletedProcess:
    """pytest with the scene plugin on ``path``, verbose, with skip reasons."""
    plugin = ("-p", "pto_runtime.scene.pytest_plugin")
    return run("-m", "pytest", *plugin, path, "-v", "-rs", "-p", "no:cacheprovider")


def test_pytest_plugin_makes_each_case_a_test_and_says_why_it_skips():
    result = run_plugin("test_pipeline.py")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "test_run[small-a2a3sim] PASSED" in out and "test_run[small-a5sim] PASSED" in out
    assert "manual on a2a3sim: --manual include (or only) runs it" in out
    assert "lists no sim platform (a2a3)" in out
    assert "passed 3 / attempted 3 / total 3" in out


def test_the_package_declares_what_its_bfloat16_examples_import():
    # examples/paged_attention runs bfloat16 by default through ml_dtypes: after `pip install .`
    # it must be there without the test extras (it died with ModuleNotFoundError before).
    from importlib.metadata import requires

    runtime = [r for r in requires("pto-runtime") or [] if "extra ==" not in r]
    assert any(r.split(";")[0].strip().startswith("ml_dtypes") for r in runtime), runtime
    assert not any(r.startswith("torch") for r in runtime), "torch must stay optional"


def test_a_level_3_scene_runs_a_chip_task_then_a_sub_task_that_reads_it(tmp_path):
    # z = y / 2 is computed by the SUB from the chip task's y: right only if the SUB waited.
    result, records = runner(tmp_path, "test_l3_pipeline.py")
    rec = records[("TestL3Pipeline", "chip_then_sub", "a2a3sim")]
    assert rec["result"] == "PASSED", result.stdout
    assert rec["level"] == 3 and rec["tasks"] == 2 and rec["worst_error"] == 0


# ----- the reference's example programs (plain test functions driving a Worker) -----


def test_runner_runs_example_programs_and_selects_them_by_their_marks(tmp_path):
    result, records = runner(tmp_path, "fake_reference/examples", "--manual", "include")
    assert result.stdout.splitlines()[-1] == "passed 1 / attempted 3 / total 3", result.stdout
    ok = records[("test_bump_double", "program", "a2a3sim")]
    assert ok["result"] == "PASSED", ok["message"]
    assert ok["level"] == 3  # from its folder, l3
    wrong = records[("test_wrong_on_purpose", "program", "a2a3sim")]
    assert wrong["result"] == "FAILED"
    assert "a program whose check fails is FAILED" in wrong["message"]
    missing = records[("test_needs_a_fixture_we_lack", "program", "a5sim")]
    assert (missing["result"], missing["feature"]) == ("NOT_SUPPORTED", "pytest fixtures")
    assert "st_network1_peer" in missing["message"]
    # Manual marks: the default leaves out both manual programs (one on every platform, one on
    # a5sim only); a function without the platforms mark is not a program.
    result, records = runner(tmp_path, "fake_reference/examples")
    assert list(records) == [("test_bump_double", "program", "a2a3sim")], result.stdout


def _buffer_worker():
    from pto_runtime.scene.workers import NodeSceneWorker

    return NodeSceneWorker("a2a3sim", "tensormap_and_ringbuffer", [0, 1], 0)


def test_buffer_handles_name_host_and_chip_memory_and_refuse_what_does_not_fit():
    from pto_runtime.comm import DeviceTensor
    from pto_runtime.errors import InvalidArgumentError

    w = _buffer_worker()
    try:
        host = w.create_buffer(64)
        assert host.nbytes == 64 and bytes(host.shm.buf[:4]) == b"\0\0\0\0"
        host.shm.buf[:4] = b"\x01\x02\x03\x04"
        view = host.tensor((4, 2), "float32")
        assert view.shape == (4, 2) and view.ctypes.data == host.base
        from pto_runtime import DType

        assert host.tensor((16,), DType.UINT8).dtype == np.uint8  # our DType ...
        assert host.tensor((16,), 0).dtype == np.float32  # ... or the reference's int values
        assert host.tensor((16,), 9).dtype == np.uint16
        with pytest.raises(InvalidArgumentError, match="needs 68 bytes; the memory has 64"):
            host.tensor((17,), "float32")
        with pytest.raises(InvalidArgumentError, match="nbytes = 0"):
            w.create_buffer(0)

        dev = w.alloc_child_tensor(1, (4,), "float32")
        assert dev.shm is None and dev.owner_worker_id == 1
        t = dev.tensor((4,), "float32")
        assert isinstance(t, DeviceTensor) and t.address == dev.base and t.nbytes == 16
        src = np.arange(4, dtype=np.float32)
        w.copy_to(dev, src)
        back = np.zeros(4, np.float32)
        w.copy_from(back, dev)
        assert np.array_equal(back, src)
        with pytest.raises(InvalidArgumentError, match="32 bytes exceed the 16-byte"):
            w.copy_to(dev, np.zeros(8, np.float32))
        with pytest.raises(InvalidArgumentError, match="expected a chip's memory"):
            w.copy_to(host, src)
        with pytest.raises(IndexError, match="worker_id 2 out of range"):
            w.alloc_child_tensor(2, (4,), "float32")
        with pytest.raises(TypeError, match="L2-only"):
            w.malloc(16)

        # A failed run leaves the handles (and the heap they live in) usable.
        def failing(_orch, _args, _cfg):
            raise RuntimeError("the orchestration fails")

        with pytest.raises(Exception, match="the orchestration fails"):
            w.run(failing)
        assert bytes(host.shm.buf[:4]) == b"\x01\x02\x03\x04"
        w.copy_from(back, dev)
        assert np.array_equal(back, src)

        w.free(dev)
        with pytest.raises(InvalidArgumentError, match="was closed"):
            dev.tensor((4,), "float32")
        assert w.make_tensor_arg(src, shapes=(2, 2), dtype=0).shape == (2, 2)
        from pto_runtime.errors import NotSupportedError

        with pytest.raises(NotSupportedError, match="Buffer.backend_kind"):
            _ = host.backend_kind
    finally:
        w.close()


def test_a_chip_outside_a_domain_is_a_key_error_naming_the_members():
    from pto_runtime.comm import NotAMemberError
    from pto_runtime.errors import InvalidArgumentError
    from pto_runtime.l3 import Worker

    seen = {}

    def orch(o):
        with o.allocate_domain("tail", workers=[1], window_size=4096) as d:
            assert d[1].domain_rank == 0
            with pytest.raises(KeyError) as e:
                _ = d[0]
            seen["e"] = e.value

    with Worker(device_ids=[0, 1], platform="a2a3sim", runtime="tensormap_and_ringbuffer") as w:
        w.run(orch)
    assert isinstance(seen["e"], NotAMemberError) and isinstance(seen["e"], InvalidArgumentError)
    assert str(seen["e"]) == "domain 'tail': chip 0 is not one of its workers [1]"


def test_pytest_plugin_runs_example_programs_with_their_fixtures():
    result = run_plugin("fake_reference/examples")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "test_bump_double[a2a3sim] PASSED" in out
    assert "manual on a2a3sim: --manual include (or only) runs it" in out  # test_wrong_on_purpose
    assert "test_not_a_program PASSED" in out  # an ordinary test stays pytest's
    assert "passed 1 / attempted 1 / total 1" in out
