"""tests/python/test_examples_tmr.py — the tensormap_and_ringbuffer examples match NumPy.

Each example (vector pipeline, tiled matmul, three-stage softmax, MIX tile pipeline) runs as its
own process, the way a user runs it, on both simulated chips with the smallest and the full
geometry: the full one puts every scheduler thread and core to work, so a missed dependency
shows up as a wrong element rather than passing by luck of a serial schedule. vector's main.py
runs one case of its scene test (examples/vector/test_vector.py), so it ends with the scene
table; the others print a ✓ SUCCESS line.
"""

from __future__ import annotations

import pytest

EXAMPLES = ["vector", "matmul", "softmax", "mix_pipeline"]
GEOMETRIES = {
    "a2a3sim": ["-p", "a2a3sim"],
    "a5sim": ["-p", "a5sim"],
    "a2a3sim-full-geometry": ["-p", "a2a3sim", "--block-dim", "24", "--aicpu-threads", "4"],
    "a5sim-full-geometry": ["-p", "a5sim", "--block-dim", "36", "--aicpu-threads", "5"],
}


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_matches_numpy(run_example, example, geometry):
    result = run_example(example, *GEOMETRIES[geometry])
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    if example == "vector":
        assert lines[-1] == "passed 1 / attempted 1 / total 1", result.stdout
    else:
        assert any(line.startswith("✓ SUCCESS: ") for line in lines), result.stdout
