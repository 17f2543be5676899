"""tests/python/test_tile_examples.py — the PTO-ISA tile-kernel examples' main.py match NumPy.

Each example's main.py runs one case of its scene test with the sizes its flags give, as its own
process, the way a user runs it, and ends with the scene table. The examples' scene tests
(examples/<name>/test_<name>.py: every size and type on both simulated chips and both runtimes,
on every cluster and on one cluster with one AICPU thread; bgemm also through the reference
orchestration API) run in test_example_scenes.py. Here: main.py, as a user runs it, on
a5sim's full geometry, also with --api reference; --save and --portable; --timing. Tile
kernels need a PTO-ISA checkout (PTO_ISA_ROOT) and clang++-19; without them the tests are
skipped, unless PTO_REQUIRE_TILE=1 makes their absence a failure.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("tile_toolchain")

RUNTIMES = ["tensormap_and_ringbuffer", "host_build_graph"]
RUNS = {  # (example, extra arguments): small sizes, seconds each
    "bgemm": ("bgemm", "--groups 3 --grid-k 3 --tile-loop 2 --tile 32".split()),
    "bgemm-float16": (
        "bgemm",
        "--groups 2 --grid-k 2 --tile-loop 2 --tile 64 --dtype float16".split(),
    ),
    "paged_attention": ("paged_attention", "--case small".split()),
    "paged_attention-varseq4-float16": (
        "paged_attention",
        "--case varseq4 --dtype float16".split(),
    ),
}
PASSED_ONE = "passed 1 / attempted 1 / total 1"  # the scene table's last line


def assert_success(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    assert PASSED_ONE in result.stdout.splitlines(), result.stdout


# main.py's default is the platform's full geometry: every cluster (36 on a5sim) and every AICPU
# thread (5), the scene layer's defaults.
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("run", list(RUNS))
def test_tile_example_matches_numpy_on_every_a5sim_thread(run_example, run, runtime):
    example, extra = RUNS[run]
    assert_success(run_example(example, "-p", "a5sim", "-r", runtime, *extra))


def test_bgemm_through_the_reference_orchestration_api_on_every_a5sim_thread(run_example):
    # orchestration_ref.cpp: pto_orchestration_api.h's layer over the tensormap orchestrator.
    extra = "--groups 3 --grid-k 2 --tile-loop 2 --tile 32 --api reference".split()
    assert_success(run_example("bgemm", "-p", "a5sim", *extra))


@pytest.mark.parametrize(
    "example, extra",
    [
        ("bgemm", "--groups 2 --grid-k 2 --tile-loop 2 --tile 64".split()),
        ("bgemm", "--groups 2 --grid-k 2 --tile-loop 2 --tile 32 --dtype float16".split()),
        ("paged_attention", "--case varseq4".split()),
        ("paged_attention", "--case small --dtype float16".split()),
    ],
)
def test_native_and_portable_kernels_give_the_same_bits(run_example, tmp_path, example, extra):
    # Tile kernels are built for this CPU by default (KernelCompiler native=None); the flags keep
    # out what could change a result, so the outputs must equal the portable build's exactly.
    native, portable = tmp_path / "native.npy", tmp_path / "portable.npy"
    assert_success(run_example(example, *extra, "--save", str(native)))
    assert_success(run_example(example, *extra, "--portable", "--save", str(portable)))
    assert native.read_bytes() == portable.read_bytes()


# --timing: a second run in the sim's timing mode, each tile kernel priced by PTO-ISA's cost
# model (docs/design/sim_execution.md); small sizes, both runtimes share the kernels' twins.
BGEMM_TIMED = "--groups 2 --grid-k 2 --tile 64 --block-dim 4 --timing".split()


def predicted_makespan(result: subprocess.CompletedProcess) -> float:
    """The ``predicted makespan: <X> us`` line's X; the run must have succeeded."""
    assert_success(result)
    lines = [line for line in result.stdout.splitlines() if line.startswith("predicted makespan:")]
    assert len(lines) == 1, result.stdout
    value, unit = lines[0].split(":")[1].split()
    assert unit == "us", lines[0]
    return float(value)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("example", ["bgemm", "paged_attention"])
def test_tile_example_timing_predicts_and_writes_both_swimlanes(
    run_example, tmp_path, example, runtime
):
    extra = BGEMM_TIMED if example == "bgemm" else ["--timing"]
    result = run_example(example, "-r", runtime, *extra, "-o", str(tmp_path))
    assert predicted_makespan(result) > 0
    # The table ends with "swimlanes of <case> on <platform>: <dir>/<stem>.compare.html".
    pages = re.findall(r"^swimlanes of .*: (.*)\.compare\.html$", result.stdout, re.MULTILINE)
    assert len(pages) == 1, result.stdout
    stem = Path(pages[0])
    assert stem.parent == tmp_path, pages
    for page in ("measured", "predicted", "compare"):
        assert Path(f"{stem}.{page}.html").stat().st_size > 0
    # Every kernel priced by the model: the predicted page counts the tasks by what priced them.
    assert "host_time 0" in Path(f"{stem}.predicted.html").read_text(encoding="utf-8")


def test_bgemm_timing_predicts_longer_for_twice_the_tiles_per_task(run_example, tmp_path):
    four = predicted_makespan(
        run_example("bgemm", *BGEMM_TIMED, "--tile-loop", "4", "-o", str(tmp_path))
    )
    eight = predicted_makespan(
        run_example("bgemm", *BGEMM_TIMED, "--tile-loop", "8", "-o", str(tmp_path))
    )
    # The kernels' part of the makespan doubles; the runtime's part (the orchestrator's submits,
    # the hand-offs, a few tasks at this size) does not: more than 1.3x, at most 2x.
    assert four * 1.3 < eight <= four * 2, (four, eight)


def test_bgemm_timing_is_reproducible_across_processes(run_example, tmp_path):
    runs = [
        predicted_makespan(run_example("bgemm", *BGEMM_TIMED, "-o", str(tmp_path)))
        for _ in range(2)
    ]
    assert runs[0] == runs[1], runs
