"""tests/python/test_example.py — examples/basic/main.py prints seed 000's output on each chip."""

from __future__ import annotations

import re

import pytest

SUCCESS = "✓ SUCCESS: All 16384 elements are correct (42.0)"
SEED_000_OUTPUT = [
    "=== Creating and Initializing Runtime ===",
    "Formula: (a + b + 1)(a + b + 2)",
    "=== Executing Runtime on Device ===",
    "=== Validating Results and Cleaning Up ===",
    SUCCESS,
    "Formula verified: (a + b + 1)(a + b + 2) = (2+3+1)*(2+3+2) = 42",
]


@pytest.mark.parametrize(
    "args",
    [
        ["-p", "a2a3sim"],
        ["-p", "a5sim"],
        ["-p", "a2a3sim", "--block-dim", "24", "--aicpu-threads", "4"],
        ["-p", "a5sim", "--block-dim", "36", "--aicpu-threads", "5"],
        ["-r", "tensormap_and_ringbuffer"],
        ["-p", "a5sim", "-r", "tensormap_and_ringbuffer"],
        ["-r", "tensormap_and_ringbuffer", "--block-dim", "24", "--aicpu-threads", "4"],
        [
            "-p",
            "a5sim",
            "-r",
            "tensormap_and_ringbuffer",
            "--block-dim",
            "36",
            "--aicpu-threads",
            "5",
        ],
    ],
    ids=[
        "a2a3sim",
        "a5sim",
        "a2a3sim-full-geometry",
        "a5sim-full-geometry",
        "tmr-a2a3sim",
        "tmr-a5sim",
        "tmr-a2a3sim-full-geometry",
        "tmr-a5sim-full-geometry",
    ],
)
def test_example_prints_seed_000_output(run_example, args):
    result = run_example("basic", *args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == SEED_000_OUTPUT


def test_example_reports_the_time_of_repeated_runs(run_example):
    result = run_example("basic", "--runs", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert SUCCESS in result.stdout
    times = re.findall(r"^Run (\d+): ([0-9.]+) ms$", result.stdout, re.MULTILINE)
    assert [run for run, _ in times] == ["2", "3"]
