"""tests/python/test_tile_docs.py — docs/tile_kernels.md's first tile kernel runs as written.

The page's code blocks titled with a file name (```cpp title="kernel_add.cpp"```) are written
to a directory as those files and its run.py is run there; it must print a zero error.
"""

from __future__ import annotations

import re
import subprocess
import sys

from test_tile_examples import tile_toolchain  # noqa: F401 (the skip/require fixture, autouse)

BLOCK = re.compile(r'```\w+ title="([^"]+)"\n(.*?)```', re.S)


def test_first_tile_kernel_of_the_docs_runs_as_written(repo_root, tmp_path):
    page = (repo_root / "docs" / "tile_kernels.md").read_text(encoding="utf-8")
    files = dict(BLOCK.findall(page))
    assert {"kernel_add.cpp", "orch.cpp", "run.py"} <= set(files), sorted(files)
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "max error 0.0" in result.stdout, result.stdout
