"""tests/python/test_example_scenes.py — each example's scene test passes, run as a user runs it.

``python examples/<name>/test_<name>.py`` runs every non-manual case the file declares (each size
and type the example offers, on both simulated chips and each runtime, on every cluster and on
one) in a process of its own, exits 0 and ends with ``passed N / attempted N / total N``. N is
pinned per file, so a case that silently stops being selected fails here. The tile examples need
PTO-ISA and clang++-19 (the tile_toolchain fixture).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# example -> its non-manual (case, platform) runs; whether it has tile kernels
SCENES = {
    "basic": (8, False),
    "vector": (4, False),
    "bgemm": (24, True),
    "paged_attention": (28, True),
}


@pytest.mark.parametrize("example", list(SCENES))
def test_example_scene_test_passes_every_case(request, repo_root, example):
    runs, tile = SCENES[example]
    if tile:
        request.getfixturevalue("tile_toolchain")
    result = subprocess.run(
        [sys.executable, f"examples/{example}/test_{example}.py"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    last = result.stdout.splitlines()[-1]
    assert last == f"passed {runs} / attempted {runs} / total {runs}", result.stdout
